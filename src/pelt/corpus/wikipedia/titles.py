"""What a title or link target means, apart from the markup passes: linking compares titles without converting markup.

One normalisation makes page titles, link targets and redirects compare equal; redirect and
disambiguation pages are recognised from their wikitext; a link target's namespace or interwiki
prefix says whether the link shows and whether it points at an article. The corpus job
(:mod:`pelt.corpus.wikipedia.build`), the markup passes (:mod:`pelt.corpus.wikipedia.wikitext`,
:mod:`pelt.corpus.wikipedia.templates`) and linking (:mod:`pelt.linking.entities`) rely on them.
"""

from __future__ import annotations

import html
import re

from pelt.corpus.wikipedia.site import DIRECTIONAL_MARKS, ENGLISH, LANGUAGE_CODE, WS_RUN, SiteInfo, template_key

# What normalize_title changes but the first letter: an entity, a fragment, an underscore, a
# directional mark, whitespace but single spaces between words.
_TO_NORMALIZE = re.compile(rf"[&#_]|{DIRECTIONAL_MARKS.pattern}|[^\S ]|  |^ | $").search


def normalize_title(title: str) -> str:
    """MediaWiki title normalisation, so that link targets, page titles and redirects compare equal.

    ``_`` and whitespace runs become one space, ``#fragment`` is dropped (a section link points at
    its page), HTML entities are decoded (``[[AT&amp;T]]``), directional marks are removed (as
    MediaWiki does: they slip into titles copied from right-to-left text) and the first letter is
    upper-cased (English Wikipedia is ``first-letter`` case). Returns ``""`` when nothing is left.
    """
    if _TO_NORMALIZE(title) is None:  # one scan: most link targets need only their first letter
        return title[:1].upper() + title[1:]
    if "&" in title:
        title = html.unescape(title)
    if not title.isascii():  # a flag of the string, no scan: most titles of most wikis are skipped
        title = DIRECTIONAL_MARKS.sub("", title)
    title = WS_RUN.sub(" ", title.split("#", 1)[0]).strip()
    return title[:1].upper() + title[1:]


def redirect_target(wikitext: str, site: SiteInfo = ENGLISH) -> str | None:
    """Normalised target of a ``#REDIRECT [[X]]`` page (in any of the site's redirect words:
    ``#WEITERLEITUNG``), for dumps whose ``<redirect>`` tag is absent."""
    match = site.redirect_pattern.match(wikitext)
    if match is None:
        return None
    return normalize_title(match.group(1)) or None


# What a template holds before its first "|" or its "}}"; the name is that, stripped, when it has no
# newline. One quantifier: "\{\{\s*([^{}|\n]+?)\s*" split a run of spaces every way between its
# three parts, cubic in the run ("{{" and 2,000 spaces: 11 s).
_TEMPLATE_HEAD = re.compile(r"\{\{([^{}|]*)(?:\||\}\})")


def is_disambiguation(wikitext: str, site: SiteInfo = ENGLISH) -> bool:
    """Whether the page carries one of the site's disambiguation templates (``{{disambiguation}}``,
    ``{{dab}}``; ``{{Begriffsklärung}}`` in German, ``{{曖昧さ回避}}`` in Japanese)."""
    for match in _TEMPLATE_HEAD.finditer(wikitext):
        name = match.group(1).strip()
        if "\n" in name:
            continue
        if site.is_disambiguation_template(template_key(name)):
            return True
    return False


def link_target_kind(target: str, site: SiteInfo = ENGLISH) -> tuple[str, str]:
    """Classify a link target: ("hidden"|"other"|"article", the target without a leading colon).

    Files and categories (in the site's names, its aliases or the canonical English ones) are
    hidden, other namespaces and interwiki prefixes shown without an anchor."""
    forced = target.startswith(":")
    target = target[1:] if forced else target
    if ":" in target:
        prefix = WS_RUN.sub(" ", target.split(":", 1)[0]).strip()
        lower = prefix.lower()
        if lower in site.hidden_prefixes:
            return ("other" if forced else "hidden"), target
        if lower in site.other_prefixes:
            return "other", target
        if LANGUAGE_CODE.fullmatch(prefix):
            return ("other" if forced else "hidden"), target
    return "article", target
