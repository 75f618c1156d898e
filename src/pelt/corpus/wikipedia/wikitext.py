"""Wikitext into the plain text a reader sees plus an anchor span per link, in pure Python: the
conversion the corpus stage runs on every article, so its speed and its contract are what it is for.

Why not mwparserfromhell: on the real dump sample (``../shared/data/wikipedia_dump_sample``) its
parse alone runs at about 0.65 M chars/s, below the whole corpus budget of 1 M chars/s/core for
parse + split + link. Plain-text extraction only needs the bracket structure (templates, tables,
links) and a few line-level rules, so the passes find brackets with C-speed regular expressions
and loops in Python once per bracket, never once per character. Every construct takes time and
memory linear in the page, by design (``docs/wikitext.md``): no regex has two adjacent unbounded
quantifiers that match the same character, nor rescans to the end for each unclosed opener (paired
tags, external links and nested links are matched from tables built in one scan); what templates
show is capped (:mod:`pelt.corpus.wikipedia.templates`); nesting is held in explicit stacks, never Python's;
``tests/unit/corpus/test_wikitext_complexity.py`` times every construct as the input doubles. Markup it does
not model is removed conservatively: the contract is that no ``[[``, ``]]``, ``{{``, ``}}`` or
``<ref`` reaches ``text`` but from ``<nowiki>`` sections, whose content is literal.

Directional marks (U+200E, U+200F, U+202A-U+202E, U+2066-U+2069: the invisible characters that
order right-to-left and left-to-right runs on screen) are removed before anything else, from the
text and so from every anchor and link target: they carry no word, a name followed by one is
another token than the name (the linking stage would not find it), and MediaWiki drops them from
titles too. The offsets count characters of the text without them.

The conversion runs in passes over the wikitext: (0) directional marks are removed; (1) comments
and extension tags such as ``<ref>`` are cut; (2) templates and tables are cut
(:mod:`pelt.corpus.wikipedia.templates`), the templates that show text keep it, as one table of
name -> renderer says (``INLINE_TEMPLATES``, ``PREFIXED_TEMPLATES``: quotations, dates, chemical
formulas, pronunciations, spacing, ship and interlanguage links, ...), and an unclosed ``{{`` or
``{|`` loses only its own markup; (3) line-level markup (headings, lists, bold/italic read line by
line as MediaWiki does, HTML tags, external links, whose label may hold links, and on wikis with
language variants the conversion markup ``-{...}-``) is rewritten; (4) wiki links become text
pieces whose spans are recorded while the plain text is joined, with the site's link trail after
them and its link prefix before them, their targets read by :mod:`pelt.corpus.wikipedia.titles`;
(5) whitespace is collapsed and the recorded spans are shifted accordingly.
"""

from __future__ import annotations

import bisect
import html
import re
from collections.abc import Callable
from dataclasses import dataclass

from pelt.corpus.wikipedia.site import DIRECTIONAL_MARKS, ENGLISH, SiteInfo
from pelt.corpus.wikipedia.templates import Cut, cut_tables, cut_templates, outermost
from pelt.corpus.wikipedia.titles import link_target_kind, normalize_title


@dataclass(frozen=True)
class Link:
    """An anchor: ``text[start:end]`` is its visible text, ``target`` its normalised target title."""

    start: int
    end: int
    target: str


# Pass 1 -------------------------------------------------------------------------------------

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
# Extension tags whose content is not prose: cut with their content.
_DROPPED_TAGS = (
    "ref|references|gallery|math|chem|ce|syntaxhighlight|source|timeline|score|imagemap|graph|"
    "templatedata|mapframe|maplink|hiero|inputbox|categorytree|charinsert|indicator|section"
)
_DROPPED_SELF_CLOSING = re.compile(rf"<(?:{_DROPPED_TAGS})\b[^<>]*/>", re.IGNORECASE)
_DROPPED_OPEN = re.compile(rf"<({_DROPPED_TAGS})\b[^<>]*>", re.IGNORECASE)
_DROPPED_CLOSE = re.compile(rf"</({_DROPPED_TAGS})\s*>", re.IGNORECASE)
_NOWIKI_OPEN = re.compile(r"<(nowiki)\s*>", re.IGNORECASE)
_NOWIKI_CLOSE = re.compile(r"</(nowiki)\s*>", re.IGNORECASE)
_NOWIKI_EMPTY = re.compile(r"<nowiki\s*/>", re.IGNORECASE)
# <nowiki> content is literal: its markup characters are swapped for private-use characters that
# no later pass matches, and swapped back at the end (one for one, so spans do not move).
_PROTECT = str.maketrans({c: chr(0xE000 + i) for i, c in enumerate("[]{}|'<>=&*#:;")})
_UNPROTECT = str.maketrans({chr(0xE000 + i): c for i, c in enumerate("[]{}|'<>=&*#:;")})
# Whether a text holds one: a substring test per character, each a memchr-like scan in C (and none at
# all in a text of narrower characters), several times faster than one regex scan of a class.
_PROTECTED = tuple(chr(0xE000 + i) for i in range(len("[]{}|'<>=&*#:;")))
# What <nowiki/>, a cut tag, a removed template and a quote run after a link leave (MediaWiki's strip markers): it
# keeps quote runs apart and stops a link trail, then vanishes with the whitespace pass.
_BREAK = "\ue0ff"


def _sub_paired(text: str, opening: re.Pattern[str], closing: re.Pattern[str], keep: Callable[[str], str]) -> str:
    """Replace each ``<tag ...>content</tag>`` by ``keep(content)``: an opening tag pairs with the first
    closing tag of its name after it, scanning left to right, as the regex ``<(tag)...>.*?</\\1>``
    would, but in time linear in the text (the regex rescans to the end for every unclosed opening
    tag: quadratic on ``"<ref>x " * 16000``). Unclosed opening tags stay for later passes."""
    closings: dict[str, list[int]] = {}
    ends: dict[int, int] = {}
    for match in closing.finditer(text):
        closings.setdefault(match.group(1).lower(), []).append(match.start())
        ends[match.start()] = match.end()
    if not closings:
        return text
    out: list[str] = []
    pos = 0
    for match in opening.finditer(text):
        if match.start() < pos:
            continue
        starts = closings.get(match.group(1).lower(), [])
        i = bisect.bisect_left(starts, match.end())
        if i == len(starts):
            continue
        out += [text[pos : match.start()], keep(text[match.end() : starts[i]])]
        pos = ends[starts[i]]
    out.append(text[pos:])
    return "".join(out)


# Markup the text never holds but in <nowiki> sections, which are literal: what character references
# spell out is not let through as such (``&lt;ref``).
_NEVER_IN_TEXT = re.compile(r"\[\[|\]\]|\{\{|\}\}|<ref", re.IGNORECASE)


def _protect_nowiki(content: str) -> str:
    return content.translate(_PROTECT)


def _drop(content: str) -> str:
    """A cut tag leaves a break, as MediaWiki's strip marker does: the quotes around it stay apart
    (``'''x'''<ref>r</ref>'''y'''`` is two bold words, not five quotes), and a link trail stops
    there. The break vanishes with the whitespace pass."""
    return _BREAK


# Pass 3: line-level markup --------------------------------------------------------------------

_BEHAVIOR_SWITCH = re.compile(r"__[A-Z]+__")
# One greedy group, stripped afterwards: "[ \t]*(.+?)[ \t]*" is ambiguous over a run of spaces,
# which made "=" + " " * 5000 + "x" cubic.
# The "=" first and the line start checked after it (a look-behind over the "=" and what precedes it):
# a pattern that opens with a literal is searched for that literal in C, whereas "^" is tried at
# every character of the page.
_HEADING = re.compile(r"(=(?<![^\n]=)={0,5})(.+)\1[ \t]*$", re.MULTILINE)
# Markers at a line's start: after a newline (the literal first, as above), and at the text's start.
_LIST_MARKER = re.compile(r"\n(?:[*#:;]+[ \t]*|-{4,})")
_FIRST_LIST_MARKER = re.compile(r"[*#:;]+[ \t]*|-{4,}")
# "(?<!\[)\[" written as "\[(?<!\[\[)": the literal first, see _BRACES in pelt.corpus.wikipedia.templates.
_EXTERNAL_OPEN = re.compile(r"\[(?<!\[\[)(?:https?:|ftp:|//|mailto:|irc:|news:)")
_URL_END = re.compile(r"[\s\]<>]")
_LABEL_SPACE = re.compile(r"[ \t]+")
# What a label's walk meets: a simple internal link it passes over, the "]" that closes it, or what
# leaves it unclosed (a newline, a "[[" that opens no simple link).
_LABEL_TOKEN = re.compile(r"\[\[[^\[\]\n]*\]\]|\]|\n|\[\[")
# HTML tags MediaWiki lets through (its Sanitizer list), minus those cut with their content above.
_HTML_TAGS = (
    "abbr|b|bdi|bdo|big|blockquote|br|caption|center|cite|code|data|dd|del|dfn|div|dl|dt|em|font|"
    "h[1-6]|hr|i|ins|kbd|li|mark|ol|onlyinclude|includeonly|noinclude|p|poem|pre|q|rb|rp|rt|rtc|ruby|"
    "s|samp|small|span|strike|strong|sub|sup|table|td|th|time|tr|tt|u|ul|var|wbr|ref|references"
)
_BR = re.compile(r"<br\s*(?:/\s*)?>", re.IGNORECASE)  # "\s*/?\s*": quadratic on "<br" and spaces
_HTML_TAG = re.compile(rf"</?(?:{_HTML_TAGS})\b[^<>]*>", re.IGNORECASE)
# A reference tag that only removing HTML tags put together (``NetBSD<</span>ref>`` in a real page):
# the tag when it is short and closed, else its first four characters, never the text after it.
_STRAY_REF = re.compile(r"</?ref\b[^<>\n]{0,200}>|<ref", re.IGNORECASE)
_QUOTES = re.compile(r"''+")  # not "'{2,}": the literal first, see _BRACES in templates
# A break that neither touches a quote nor follows a bracket changes nothing: dropped before it costs
# the whitespace pass a match per cut <ref>.
_IDLE_BREAK = re.compile(f"{_BREAK}(?<![\\]']{_BREAK})(?!')")  # the literal first: a fast scan


def _apostrophes(text: str) -> str:
    """Bold and italic quotes vanish and the apostrophes among them stay, line by line as MediaWiki's
    doQuotes reads them: four quotes are an apostrophe and bold, more than five show the extra
    ones, and on a line with an odd number of both bold and italic runs one bold run is an
    apostrophe and italics (``''Iliad'''s`` -> ``Iliad's``). A run right after a link's ``]]``
    leaves a break, so that the link trail stops there (``'''[[Foo]]'''s``: the anchor is ``Foo``).
    One loop over the runs: each is written as it shows on a balanced line, the rare unbalanced
    line has one run rewritten at its end.
    """
    if "''" not in text:
        return text
    out: list[str] = []
    pos = 0
    line_end = -1
    bold_runs: list[tuple[int, int]] = []  # this line's bold runs: (index of their piece in out, start)
    italics = bold = 0
    for run in _QUOTES.finditer(text):
        start, end = run.span()
        if start > line_end:
            if italics % 2 and bold % 2:
                _bold_read_as_apostrophe(text, bold_runs, out)
            bold_runs = []
            italics = bold = 0
            line_end = text.find("\n", start)
            line_end = len(text) if line_end < 0 else line_end
        size = end - start
        out.append(text[pos:start])
        if size == 2:
            italics += 1
            piece = ""
        elif size < 5:
            bold += 1
            piece = "'" if size == 4 else ""
            bold_runs.append((len(out), start))
        else:
            italics += 1
            bold += 1
            piece = "'" * (size - 5)
        out.append(piece or (_BREAK if start >= 2 and text.startswith("]]", start - 2) else ""))
        pos = end
    if italics % 2 and bold % 2:
        _bold_read_as_apostrophe(text, bold_runs, out)
    out.append(text[pos:])
    return "".join(out)


def _bold_read_as_apostrophe(text: str, bold_runs: list[tuple[int, int]], out: list[str]) -> None:
    """MediaWiki's choice of the bold run read as an apostrophe and italics: the first after a
    one-letter word, else the first after a longer word, else the first after a space."""
    if not bold_runs:
        return
    line_start = text.rfind("\n", 0, bold_runs[0][1]) + 1
    after_word = after_space = None
    for index, start in bold_runs:
        shown = out[index] if out[index] != _BREAK else ""
        before = text[max(start - 2, line_start) : start] + shown
        if before[-1:] == " ":
            after_space = index if after_space is None else after_space
        elif before[-2:-1] == " ":
            out[index] = shown + "'"
            return
        elif after_word is None:
            after_word = index
    chosen = after_word if after_word is not None else after_space
    if chosen is not None:
        out[chosen] = (out[chosen] if out[chosen] != _BREAK else "") + "'"


class _LabelEnds:
    """Where an external link's label ends, for any start on one line, without walking it again.

    A label's walk passes over text and simple internal links until a "]" closes it, or a newline
    or a "[[" that opens no simple link leaves it unclosed: from a token on, the outcome is the
    same whatever came before, so it is worked out once for every token, from the last. No token
    holds a newline, so a line's tokens are the same read from its start as from the page's, and
    a walk never leaves its line: only the lines that hold a label are read.
    """

    def __init__(self, text: str, line_start: int, line_end: int) -> None:
        self.line_end = line_end
        tokens = [match.span() for match in _LABEL_TOKEN.finditer(text, line_start, line_end)]
        self.starts = [start for start, _ in tokens]
        self.ends = [end for _, end in tokens]
        self.closes = [-1] * (len(tokens) + 1)  # -1: unclosed
        for i in range(len(tokens) - 1, -1, -1):
            start, end = tokens[i]
            if text[start] == "]":
                self.closes[i] = start
            elif end - start > 2:  # a simple internal link: the label goes on after it
                self.closes[i] = self.closes[i + 1]

    def close(self, start: int) -> int:
        """The "]" closing a label that starts at ``start`` (after a space), or -1."""
        i = bisect.bisect_right(self.ends, start)  # the first token that ends after the start
        if i < len(self.starts) and self.starts[i] < start:  # within an internal link: at its "]]"
            return self.ends[i] - 2
        return self.closes[i]


def _external_links(text: str) -> str:
    """``[url label]`` -> its label (nothing without one). The label may hold internal links:
    ``[http://x.org the [[Foo]] site]`` shows "the Foo site"; it ends at the first "]" outside them
    on its line, else the link is no link and stays as text.

    The links found are those of the regex ``(?<!\\[)\\[url(?:[ \\t]+label)?\\]`` read left to right,
    but an unclosed link costs no rescan of its line: the regex walked to the line's end again for
    each ``[http://x`` on it (quadratic), whereas here a label's end is looked up (_LabelEnds) and a
    URL that starts inside another URL ends where that one does, with the same outcome.
    """
    out: list[str] = []
    pos = 0
    url_end = -1  # where the last URL read ends
    labels: _LabelEnds | None = None  # built for the line of the label read last
    for opener in _EXTERNAL_OPEN.finditer(text):
        if opener.start() < max(pos, url_end):  # inside a link, or in a URL read already
            continue
        stop = _URL_END.search(text, opener.end())
        url_end = stop.start() if stop is not None else len(text)
        if text.startswith("]", url_end):
            label_start = close = url_end
        elif (space := _LABEL_SPACE.match(text, url_end)) is not None:
            label_start = space.end()
            if labels is None or label_start > labels.line_end:  # labels start further on each time
                line_end = text.find("\n", label_start)
                labels = _LabelEnds(text, text.rfind("\n", 0, label_start) + 1, len(text) if line_end < 0 else line_end)
            close = labels.close(label_start)
        else:
            continue
        if close >= 0:
            out += [text[pos : opener.start()], text[label_start:close]]
            pos = close + 1
    out.append(text[pos:])
    return "".join(out)


# Language conversion markup (Chinese): ``-{text}-`` shows its text unconverted, ``-{zh-hans:A;
# zh-hant:B}-`` the variant a reader of the unconverted text sees, and with the flags H, T or - it
# sets a rule or the title and shows nothing. No brace inside: one scan, however many are unclosed.
_CONVERSION = re.compile(r"-\{([^{}]*)\}-")
_CONVERSION_FLAGS = re.compile(r"\s*[ADHNRT-](?:\s*;\s*[ADHNRT-])*\s*;?\s*")
_VARIANT_SPLIT = re.compile(r";\s*(?=[a-z]{2,3}(?:-[a-z]+)*\s*:)")
_VARIANT_RULE = re.compile(r"\s*([a-z]{2,3}(?:-[a-z]+)*)\s*:(.*?);?\s*", re.DOTALL)


def _language_conversion(text: str, variants: tuple[str, ...]) -> str:
    """``-{...}-`` blocks replaced by what a reader of the wiki's unconverted variant sees: the
    first of ``variants`` (MediaWiki's fallback order) that the block names, or its text as written."""

    def shown(match: re.Match[str]) -> str:
        flags, bar, body = match.group(1).partition("|")
        if not bar or not _CONVERSION_FLAGS.fullmatch(flags):
            body = match.group(1)
        elif {"H", "T", "-"} & set(flags):
            return ""
        elif "R" in flags:
            return body
        rules = [_VARIANT_RULE.fullmatch(part) for part in _VARIANT_SPLIT.split(body)]
        texts = {rule.group(1): rule.group(2).strip() for rule in rules if rule is not None}
        if len(texts) < len(rules) or not texts.keys() <= set(variants):  # no rules: the text as written
            return body
        return next(texts[variant] for variant in variants if variant in texts)

    return _CONVERSION.sub(shown, text)


# Pass 4: wiki links -------------------------------------------------------------------------

# A whole link with no bracket inside (most links: one token, no stack), or a bracket pair of the
# nesting walk. In "[[[x]]]" the first "[" is literal.
_LINK_TOKENS = re.compile(r"\[\[(?!\[)[^\[\]]*\]\]|\[\[(?!\[)|\]\]")
_NESTED_LINK = re.compile(r"\[\[(?:[^\[\]|]*\|)?([^\[\]]*)\]\]")


def _unescape(text: str) -> str:
    """Character references decoded; markup they spell (``&lt;ref``, ``&#91;&#91;``) is text, not
    markup, but the contract keeps it out of the text all the same."""
    return _NEVER_IN_TEXT.sub("", html.unescape(text)) if "&" in text else text


def _link_cuts(text: str) -> list[Cut]:
    """The links and the brackets to drop, outermost, in order (payload "link" for a link).

    Unmatched ``[[`` and ``]]`` are dropped (their words stay). ``[[a [[B]] c]]`` is no link, as a
    ``[[`` before the first ``|`` says: its two brackets are dropped and what they hold is read
    as text, ``B`` a link. Deciding that once per pair, from the next ``[[`` after it, keeps deep
    nesting (``"[[a " * n``) linear and off the Python stack. A link that holds no bracket is one
    token: its ``[[`` is closed by its own ``]]`` whatever is open around it.
    """
    cuts: list[Cut] = []
    opens: list[int] = []  # every [[, in order
    stack: list[int] = []  # indices in opens of the [[ still open
    for match in _LINK_TOKENS.finditer(text):
        start, end = match.span()
        if end - start > 2:  # [[...]]: pushed and popped at once
            opens.append(start)
            cuts.append((start, end, "link"))
        elif text[start] == "[":
            stack.append(len(opens))
            opens.append(start)
        elif stack:
            i = stack.pop()
            opened = opens[i]
            nested = opens[i + 1] if i + 1 < len(opens) else None  # opened after, hence inside
            if nested is not None and text.find("|", opened + 2, nested) < 0:
                cuts += [(opened, opened + 2, None), (start, end, None)]
            else:
                cuts.append((opened, end, "link"))
        else:
            cuts.append((start, end, None))
    cuts.extend((opens[i], opens[i] + 2, None) for i in stack)
    return outermost(cuts)


def _convert_links(text: str, site: SiteInfo) -> tuple[str, list[tuple[int, int, str]]]:
    """Turn ``[[links]]`` into visible text; anchors to articles get their span recorded, with the
    letters of the site's link trail after the link (none in Chinese) and of its link prefix
    before it (Arabic only). Returns the text and the spans (start, end, normalised target).

    An anchor's span is its visible text without surrounding whitespace; character references
    are decoded in every piece (:func:`_unescape`)."""
    trails = site.link_trail_pattern
    prefixes = site.link_prefix_pattern
    pieces: list[str] = []
    length = 0  # of the pieces so far
    links: list[tuple[int, int, str]] = []
    pos = 0  # end of what has been emitted
    for start, end, kind in _link_cuts(text):
        if start < pos:  # brackets right after a link trail cannot be: the trail is letters only
            continue
        before = text[pos:start]
        pos = end
        target, bar, label = text[start + 2 : end - 2].partition("|")
        if kind is None:
            link_kind, bare = "", ""
        elif ":" in (target := target.strip()):  # a namespace, an interwiki link or a leading colon
            link_kind, bare = link_target_kind(target, site)
        else:
            link_kind, bare = "article", target
        if link_kind == "article":
            visible = (_NESTED_LINK.sub(r"\1", label) if "[[" in label else label) if bar else bare
        elif link_kind == "other":
            before += _NESTED_LINK.sub(r"\1", label) if bar else bare
        if link_kind != "article":
            if "&" in before:
                before = _unescape(before)
            pieces.append(before)
            length += len(before)
            continue
        if prefixes is not None and (prefix := prefixes.match(before[::-1])) is not None:
            # the segment since the last link, reversed: linear in the page
            visible = before[len(before) - prefix.end() :] + visible
            before = before[: len(before) - prefix.end()]
        if "&" in before:
            before = _unescape(before)
        pieces.append(before)
        length += len(before)
        if trails is not None and (trail := trails.match(text, pos)) is not None:
            visible += trail.group()
            pos = trail.end()
        target = normalize_title(bare)
        if "&" in visible:
            visible = _unescape(visible)
        core = visible.strip()
        if _BREAK in core:  # a break at an edge vanishes with the whitespace next to it
            core = core.strip(_BREAK).strip()
        if core and target:
            lead = visible.find(core)  # core starts with neither whitespace nor a break
            links.append((length + lead, length + lead + len(core), target))
        elif "&" in visible:  # shown as text, decoded once more
            visible = _unescape(visible)
        pieces.append(visible)
        length += len(visible)
    rest = text[pos:]
    pieces.append(_unescape(rest) if "&" in rest else rest)
    return "".join(pieces), links


# Pass 5: whitespace -------------------------------------------------------------------------

_SPACE = f"[ \\t\\u00a0{_BREAK}]"
# A run with a newline -> "\n"; 2+ spaces -> " "; a lone tab or no-break space -> " "; a lone break
# -> "". Doubled brackets still here came from markup too broken to parse ("[[[[x", unbalanced
# link labels): they are dropped so that no markup reaches the text. The runs are those of
#     {_SPACE}*\n[\s{_BREAK}]*|{_SPACE}{2,}|[\t\u00a0{_BREAK}]|\[\[|\]\]|\{\{|\}\}
# but a lone newline, which is replaced by itself, found in two scans that skip the single spaces
# between words (a regex is tried at every character that may open a match: at every space, the
# alternation above at every character). _NORMALIZE reads the runs that open with another character
# (the class of the first character, then what may follow it, a look-behind on that character saying
# which alternative it opens), the spaces before such a whitespace run are added to it, and the
# runs of spaces alone are found as "  " (_collapse_runs).
_NORMALIZE = re.compile(
    rf"[\t\u00a0{_BREAK}\n\[\]{{}}]"
    rf"(?:(?<=[\t\u00a0{_BREAK}]){_SPACE}*\n[\s{_BREAK}]*|(?<=\n)[\s{_BREAK}]+|(?<= \n)"
    rf"|(?<=[\t\u00a0{_BREAK}]){_SPACE}+|(?<=[\t\u00a0{_BREAK}])|(?<=\[)\[|(?<=\])\]|(?<=\{{)\{{|(?<=\}})\}})"
)
_SPACES = re.compile(" +")
_NOT_SHOWN = _BREAK + "[]{}"


def _collapse_runs(text: str) -> list[tuple[int, int]]:
    """The runs to replace (see _NORMALIZE), in order, as (start, end)."""
    runs: list[tuple[int, int]] = []
    pos = 0  # end of the last run
    double = text.find("  ")  # the next run of spaces alone, or one inside or before a whitespace run
    for match in _NORMALIZE.finditer(text):
        start, end = match.span()
        whitespace = text[start] not in "[]{}"  # the spaces before a whitespace run are part of it
        while 0 <= double < start:
            spaces_end = _SPACES.match(text, double).end()
            if spaces_end == start and whitespace:
                break
            runs.append((double, spaces_end))
            double = text.find("  ", spaces_end)
        if whitespace and start > pos and text[start - 1] == " ":
            start -= 1
            while start > pos and text[start - 1] == " ":
                start -= 1
        runs.append((start, end))
        pos = end
        if 0 <= double < end:
            double = text.find("  ", end)
    while double >= 0:
        spaces_end = _SPACES.match(text, double).end()
        runs.append((double, spaces_end))
        double = text.find("  ", spaces_end)
    return runs


def _collapse(text: str, links: list[tuple[int, int, str]]) -> tuple[str, list[Link]]:
    """Collapse whitespace (one space within a line, one newline between paragraphs) and move spans.

    Also drops left-over doubled brackets (see _NORMALIZE); an anchor left empty is dropped.

    A span boundary inside a replaced run lands at the matching place of its replacement; a
    boundary after it moves left by what the run and those before it lost.
    """
    starts: list[int] = []
    old_ends: list[int] = []
    new_starts: list[int] = []
    new_lens: list[int] = []
    lost: list[int] = []  # what the text lost up to the end of each run
    pieces: list[str] = []
    pos = 0
    removed = 0
    for start, end in _collapse_runs(text):
        run = text[start:end]
        replacement = "\n" if "\n" in run else " " if run.strip(_NOT_SHOWN) else ""
        pieces += (text[pos:start], replacement)
        starts.append(start)
        old_ends.append(end)
        new_starts.append(start - removed)
        new_lens.append(len(replacement))
        removed += end - start - len(replacement)
        lost.append(removed)
        pos = end
    pieces.append(text[pos:])
    joined = "".join(pieces)
    plain = joined.strip()
    lead = len(joined) - len(joined.lstrip())
    size = len(plain)
    moved: list[Link] = []
    bisect_right = bisect.bisect_right
    for start, end, target in links:  # each boundary moved as the text around it was
        i = bisect_right(starts, start) - 1
        if i < 0:
            new_start = start
        elif start < old_ends[i]:
            new_start = new_starts[i] + min(start - starts[i], new_lens[i])
        else:
            new_start = start - lost[i]
        i = bisect_right(starts, end, max(i, 0)) - 1
        if i < 0:
            new_end = end
        elif end < old_ends[i]:
            new_end = new_starts[i] + min(end - starts[i], new_lens[i])
        else:
            new_end = end - lost[i]
        new_start = min(max(new_start - lead, 0), size)
        new_end = min(max(new_end - lead, 0), size)
        if new_start < new_end:
            moved.append(Link(new_start, new_end, target))
    return plain, moved


def _heading(match: re.Match[str]) -> str:
    return match.group(2).strip(" \t")


def _list_markers(text: str) -> str:
    """List markers and horizontal rules at the start of a line removed (``^[*#:;]+[ \\t]*|^-{4,}``)."""
    first = _FIRST_LIST_MARKER.match(text)
    if first is not None:
        text = text[first.end() :]
    return _LIST_MARKER.sub("\n", text)


# The directional marks, for substring tests (see _PROTECTED): derived from the pattern, which
# names characters of the General Punctuation block only.
_MARKS = tuple(chr(c) for c in range(0x2000, 0x2070) if DIRECTIONAL_MARKS.fullmatch(chr(c)))


def wikitext_to_plain(wikitext: str, site: SiteInfo = ENGLISH) -> tuple[str, list[Link]]:
    """Plain text of an article and its anchors; ``text[l.start:l.end]`` is each anchor's visible text.

    Templates (except INLINE_TEMPLATES), tables, refs, files, categories, interlanguage links,
    comments and HTML tags are removed; headings keep their words; paragraphs are separated by
    one newline. Spans cover the label, or the target plus link trail (``[[bus]]es`` -> ``buses``).
    ``site`` says which prefixes name files and categories (``Datei:``, ``Kategorie:``), what a
    link trail takes (``[[Straße]]n``), what a link prefix takes (Arabic ``و[[باريس]]``) and which
    language variants ``-{...}-`` shows (Chinese); English Wikipedia unless given. Directional
    marks are removed (module docstring).
    """
    if any(mark in wikitext for mark in _MARKS):
        wikitext = DIRECTIONAL_MARKS.sub("", wikitext)
    text = _COMMENT.sub("", wikitext)
    text = _sub_paired(text, _NOWIKI_OPEN, _NOWIKI_CLOSE, _protect_nowiki)
    text = _NOWIKI_EMPTY.sub(_BREAK, text)
    text = _DROPPED_SELF_CLOSING.sub(_BREAK, text)
    text = _sub_paired(text, _DROPPED_OPEN, _DROPPED_CLOSE, _drop)
    text = cut_tables(cut_templates(text, _BREAK))
    text = _BEHAVIOR_SWITCH.sub("", text)
    text = _HEADING.sub(_heading, text)
    text = _list_markers(text)
    if site.variants and "-{" in text:
        text = _language_conversion(text, site.variants)
    text = _external_links(text)
    text = _BR.sub("\n", text)
    text = _STRAY_REF.sub("", _HTML_TAG.sub("", text))
    if _BREAK in text:
        text = _IDLE_BREAK.sub("", text)
    text = _apostrophes(text)
    plain, links = _collapse(*_convert_links(text, site))
    return (plain.translate(_UNPROTECT) if any(c in plain for c in _PROTECTED) else plain), links
