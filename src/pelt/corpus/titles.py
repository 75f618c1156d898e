"""What a title or link target means, apart from the markup passes: linking compares titles without converting markup.

One normalisation makes page titles, link targets and redirects compare equal; redirect and
disambiguation pages are recognised from their wikitext; a link target's namespace or interwiki
prefix says whether the link shows and whether it points at an article. The corpus job
(:mod:`pelt.corpus.wikipedia`), the markup passes (:mod:`pelt.corpus.wikitext`,
:mod:`pelt.corpus.templates`) and linking (:mod:`pelt.linking.entities`) rely on them.
"""

from __future__ import annotations

import html
import re

# A run of whitespace and underscores: one space in a title, a namespace prefix or a template's name.
WS_RUN = re.compile(r"[\s_]+")


def normalize_title(title: str) -> str:
    """MediaWiki title normalisation, so that link targets, page titles and redirects compare equal.

    ``_`` and whitespace runs become one space, ``#fragment`` is dropped (a section link points at
    its page), HTML entities are decoded (``[[AT&amp;T]]``) and the first letter is upper-cased
    (English Wikipedia is ``first-letter`` case). Returns ``""`` when nothing is left.
    """
    if "&" in title:
        title = html.unescape(title)
    title = WS_RUN.sub(" ", title.split("#", 1)[0]).strip()
    return title[:1].upper() + title[1:]


# No two adjacent quantifiers match the same character: "\s*:?\s*" made "#REDIRECT" and a run of
# spaces quadratic (each split of the run between the two was tried).
_REDIRECT = re.compile(r"\A\s*#\s*redirect\s*(?::\s*)?\[\[([^\[\]|]*)", re.IGNORECASE)


def redirect_target(wikitext: str) -> str | None:
    """Normalised target of a ``#REDIRECT [[X]]`` page, for dumps whose ``<redirect>`` tag is absent."""
    match = _REDIRECT.match(wikitext)
    if match is None:
        return None
    return normalize_title(match.group(1)) or None


# What a template holds before its first "|" or its "}}"; the name is that, stripped, when it has no
# newline. One quantifier: "\{\{\s*([^{}|\n]+?)\s*" split a run of spaces every way between its
# three parts, cubic in the run ("{{" and 2,000 spaces: 11 s).
_TEMPLATE_HEAD = re.compile(r"\{\{([^{}|]*)(?:\||\}\})")
# Names of the disambiguation-page templates of English Wikipedia (and their redirects); any
# template whose name ends in "disambiguation" (e.g. "Human name disambiguation", "Disambiguation
# cleanup") is one too. "Disambiguation needed" is an inline clean-up tag, not one of them.
_DAB_NAMES = frozenset(
    {
        "disambig",
        "dab",
        "disamb",
        "dbig",
        "hndis",
        "geodis",
        "numberdis",
        "mathdab",
        "schooldis",
        "hospitaldis",
        "roaddis",
        "shipindex",
        "set index",
        "letter-numbercombdisambig",
    }
)
_DAB_SUFFIX = re.compile(r"(?:^|\s)disambiguation(?:\s+cleanup)?$")


def is_disambiguation(wikitext: str) -> bool:
    """Whether the page carries a disambiguation template (``{{disambiguation}}``, ``{{dab}}``, ...)."""
    for match in _TEMPLATE_HEAD.finditer(wikitext):
        name = match.group(1).strip()
        if "\n" in name:
            continue
        name = WS_RUN.sub(" ", name).strip().lower()
        if name in _DAB_NAMES or _DAB_SUFFIX.search(name):
            return True
    return False


# Links to these namespaces are not shown in the text (the page is filed, or the file embedded).
_HIDDEN_NAMESPACES = frozenset({"category", "file", "image"})
# Namespaces and interwiki prefixes of visible links that do not point at an article.
_OTHER_PREFIXES = frozenset(
    {
        "media",
        "talk",
        "user",
        "user talk",
        "wikipedia",
        "wp",
        "project",
        "wikipedia talk",
        "file talk",
        "image talk",
        "mediawiki",
        "template",
        "template talk",
        "help",
        "help talk",
        "category talk",
        "portal",
        "portal talk",
        "book",
        "draft",
        "education program",
        "timedtext",
        "module",
        "gadget",
        "special",
        "wikt",
        "wiktionary",
        "s",
        "wikisource",
        "q",
        "wikiquote",
        "n",
        "wikinews",
        "b",
        "wikibooks",
        "v",
        "wikiversity",
        "voy",
        "wikivoyage",
        "species",
        "wikispecies",
        "d",
        "wikidata",
        "c",
        "commons",
        "m",
        "meta",
        "metawiki",
        "mw",
        "mediawikiwiki",
        "foundation",
        "wmf",
        "w",
        "incubator",
        "outreach",
        "phab",
        "doi",
        "hdl",
        "arxiv",
        "rfc",
        "google",
        "imdbname",
        "imdbtitle",
    }
)
# Interlanguage links ([[fr:Paris]]) are hidden; language codes are lower-case letters and hyphens.
LANGUAGE_CODE = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]+)*|simple")


def link_target_kind(target: str) -> tuple[str, str]:
    """Classify a link target: ("hidden"|"other"|"article", the target without a leading colon)."""
    forced = target.startswith(":")
    target = target[1:] if forced else target
    if ":" in target:
        prefix = WS_RUN.sub(" ", target.split(":", 1)[0]).strip()
        lower = prefix.lower()
        if lower in _HIDDEN_NAMESPACES:
            return ("other" if forced else "hidden"), target
        if lower in _OTHER_PREFIXES:
            return "other", target
        if LANGUAGE_CODE.fullmatch(prefix):
            return ("other" if forced else "hidden"), target
    return "article", target
