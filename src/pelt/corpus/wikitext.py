"""Wikitext, in pure Python: titles, redirects and disambiguation pages; wikitext into plain text + anchors.

Why not mwparserfromhell: on the real dump sample (``../shared/data/wikipedia_dump_sample``) its
parse alone runs at about 0.65 M chars/s, below the whole corpus budget of 1 M chars/s/core for
parse + split + link. Plain-text extraction only needs the bracket structure (templates, tables,
links) and a few line-level rules, so this module finds brackets with C-speed regular expressions
and loops in Python once per bracket, never once per character. The hostile pages found so far take
time and memory linear in the page (paired tags are matched in one scan, not by a regex that
rescans to the end for each unclosed tag; headings by one greedy group; nested templates hold
spans, not copies), recursion is bounded by MediaWiki's template depth limit, and
``tests/test_wikitext.py`` times them as the input doubles. Markup it does not model is
removed conservatively: the contract is that no ``[[``, ``]]``, ``{{``, ``}}`` or ``<ref`` reaches
``text``.

The conversion runs in passes over the wikitext: (1) comments and extension tags such as ``<ref>``
are cut; (2) templates and tables are cut, the templates that show text keep it, as one table of
name -> renderer says (``INLINE_TEMPLATES``, ``PREFIXED_TEMPLATES``: quotations, dates, chemical
formulas, pronunciations, spacing, ship and interlanguage links, ...), and an unclosed ``{{`` or
``{|`` loses only its own markup; (3) line-level markup (headings, lists, bold/italic read line by
line as MediaWiki does, HTML tags, external links, whose label may hold links) is rewritten; (4)
wiki links become text pieces whose spans are recorded while the plain text is joined; (5)
whitespace is collapsed and the recorded spans are shifted accordingly.
"""

from __future__ import annotations

import bisect
import html
import re
from collections.abc import Callable
from dataclasses import dataclass

# --------------------------------------------------------------------------------------------
# Titles, redirects, disambiguation pages
# --------------------------------------------------------------------------------------------

_WS_RUN = re.compile(r"[\s_]+")


def normalize_title(title: str) -> str:
    """MediaWiki title normalisation, so that link targets, page titles and redirects compare equal.

    ``_`` and whitespace runs become one space, ``#fragment`` is dropped (a section link points at
    its page), HTML entities are decoded (``[[AT&amp;T]]``) and the first letter is upper-cased
    (English Wikipedia is ``first-letter`` case). Returns ``""`` when nothing is left.
    """
    if "&" in title:
        title = html.unescape(title)
    title = _WS_RUN.sub(" ", title.split("#", 1)[0]).strip()
    return title[:1].upper() + title[1:]


_REDIRECT = re.compile(r"\A\s*#\s*redirect\s*:?\s*\[\[([^\[\]|]*)", re.IGNORECASE)


def redirect_target(wikitext: str) -> str | None:
    """Normalised target of a ``#REDIRECT [[X]]`` page, for dumps whose ``<redirect>`` tag is absent."""
    match = _REDIRECT.match(wikitext)
    if match is None:
        return None
    return normalize_title(match.group(1)) or None


_TEMPLATE_NAME = re.compile(r"\{\{\s*([^{}|\n]+?)\s*(?:\||\}\})")
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
    for match in _TEMPLATE_NAME.finditer(wikitext):
        name = _WS_RUN.sub(" ", match.group(1)).strip().lower()
        if name in _DAB_NAMES or _DAB_SUFFIX.search(name):
            return True
    return False


# --------------------------------------------------------------------------------------------
# Wikitext -> plain text with anchors
# --------------------------------------------------------------------------------------------


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
_PROTECTED = re.compile("[\ue000-\ue00d]")  # a scan in C: translate() looks up every character
# What <nowiki/>, a cut tag and a quote run after a link leave (MediaWiki's strip markers): it
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


def _protect_nowiki(content: str) -> str:
    return content.translate(_PROTECT)


def _drop(content: str) -> str:
    """A cut tag leaves a break, as MediaWiki's strip marker does: the quotes around it stay apart
    (``'''x'''<ref>r</ref>'''y'''`` is two bold words, not five quotes), and a link trail stops
    there. The break vanishes with the whitespace pass."""
    return _BREAK


# Pass 2: templates and tables -----------------------------------------------------------------

_BRACES = re.compile(r"\{{2,}|\}{2,}")


def _split_top_level(inner: str) -> list[str]:
    """Split template content on ``|`` outside nested ``{{ }}`` and ``[[ ]]``."""
    parts: list[str] = []
    depth = 0
    begin = 0
    for match in re.finditer(r"\{\{|\}\}|\[\[|\]\]|\|", inner):
        token = match.group()
        if token in ("{{", "[["):
            depth += 1
        elif token in ("}}", "]]"):
            depth = max(depth - 1, 0)
        elif depth == 0:
            parts.append(inner[begin : match.start()])
            begin = match.end()
    parts.append(inner[begin:])
    return parts


_ARG_NAME = re.compile(r"[\w -]+")


def _arguments(args: list[str]) -> tuple[list[str], dict[str, str]]:
    """Positional arguments and named ``key=value`` ones (keys lower-cased), stripped.

    The key is what comes before the first ``=``, so that telling them apart costs one pass over
    the argument: a pattern like ``\\s*[\\w -]+\\s*=`` backtracks over every run of spaces.
    """
    positional: list[str] = []
    named: dict[str, str] = {}
    for arg in args:
        key, equals, value = arg.partition("=")
        key = key.strip()
        if equals and _ARG_NAME.fullmatch(key):
            named[key.lower()] = value.strip()
        else:
            positional.append(arg.strip())
    return positional, named


# A renderer gets a template's positional and named arguments and returns its visible text, as
# wikitext (converted further like the page's own).
_Render = Callable[[list[str], dict[str, str]], str]

_RANGE_WORDS = {"-": "–", "–": "–", "to": " to ", "and": " and ", "or": " or ", "by": " by "}


def _convert(pos: list[str], named: dict[str, str]) -> str:
    """``{{convert|5|km|mi}}`` -> ``5 km``; ``{{convert|5|-|10|km}}`` -> ``5–10 km`` (unit code as written)."""
    if len(pos) >= 4 and pos[1] in _RANGE_WORDS:
        return f"{pos[0]}{_RANGE_WORDS[pos[1]]}{pos[2]} {pos[3]}"
    return " ".join(pos[:2])


def _pick(index: int, *keys: str) -> _Render:
    """The first of the named arguments ``keys`` that is given, else positional ``index``."""

    def pick(pos: list[str], named: dict[str, str]) -> str:
        for key in keys:
            if named.get(key):
                return named[key]
        return pos[index] if -len(pos) <= index < len(pos) else ""

    return pick


def _join(separator: str, before: str = "", after: str = "") -> _Render:
    """All positional arguments joined: ``{{chem|H|2|O}}`` -> ``H2O``."""
    return lambda pos, named: f"{before}{separator.join(pos)}{after}" if pos else ""


def _constant(text: str) -> _Render:
    return lambda pos, named: text


_MONTHS = "January February March April May June July August September October November December".split()
_ISO_DATE = re.compile(r"(\d{4})-(\d{1,2})(?:-(\d{1,2}))?")


def _date_text(year: str, month: str = "", day: str = "", day_first: bool = False) -> str:
    """A date as English Wikipedia shows one: ``January 2, 2000``, or ``2 January 2000`` day first."""
    if month.isdecimal() and 1 <= int(month) <= 12:
        month = _MONTHS[int(month) - 1]
    day = str(int(day)) if day.isdecimal() else day
    if not month:
        return year
    if not day:
        return f"{month} {year}"
    return f"{day} {month} {year}" if day_first else f"{month} {day}, {year}"


def _day_first(named: dict[str, str]) -> bool:
    return named.get("df", "").lower() in ("y", "yes") or named.get("format", "").lower() == "dmy"


def _ymd(pos: list[str]) -> list[str]:
    """Year, month, day from ``2000|1|2`` or ``2000-01-02``; other text as one item."""
    iso = _ISO_DATE.fullmatch(pos[0]) if pos else None
    if iso is not None:
        return [part or "" for part in iso.groups()]
    return pos[:3] if pos and pos[0].isdecimal() else [" ".join(pos)]


def _date(pos: list[str], named: dict[str, str]) -> str:
    """``{{birth date|2000|1|2}}``, ``{{dts|2000|1|2}}`` -> ``January 2, 2000`` (``df=y``: day first)."""
    return _date_text(*_ymd(pos), day_first=_day_first(named))


def _date_dmy(pos: list[str], named: dict[str, str]) -> str:
    """``{{date|2006-01-15}}`` -> ``15 January 2006``: Template:Date puts the day first unless told ``mdy``."""
    return _date_text(*_ymd(pos[:1]), day_first=pos[1:2] != ["mdy"])


def _death_date_and_age(pos: list[str], named: dict[str, str]) -> str:
    """``{{death date and age|2000|1|2|1950|5|3}}`` -> ``January 2, 2000 (aged 49)``."""
    death, birth = pos[:3], pos[3:6]
    text = _date_text(*(death or [""]), day_first=_day_first(named))
    if len(death) == len(birth) == 3 and all(part.isdecimal() for part in death + birth):
        year, month, day = map(int, death)
        born_year, born_month, born_day = map(int, birth)
        text += f" (aged {year - born_year - ((month, day) < (born_month, born_day))})"
    return text


def _frac(pos: list[str], named: dict[str, str]) -> str:
    """``{{frac|1|2}}`` -> ``1/2``, ``{{frac|3|1|2}}`` -> ``3 1/2``, ``{{frac|4}}`` -> ``1/4``."""
    if len(pos) == 1:
        return f"1/{pos[0]}"
    return f"{pos[0]} {pos[1]}/{pos[2]}" if len(pos) >= 3 else "/".join(pos)


def _val(pos: list[str], named: dict[str, str]) -> str:
    """``{{val|1.5|u=kg}}`` -> ``1.5 kg``, ``{{val|6.2|e=18}}`` -> ``6.2×10^18`` (a superscript in MediaWiki)."""
    if not pos:
        return ""
    exponent = f"×10^{named['e']}" if named.get("e") else ""
    unit = named.get("u") or named.get("ul") or ""
    return f"{pos[0]}{exponent} {unit}".strip()


def _interlanguage_link(pos: list[str], named: dict[str, str]) -> str:
    """``{{ill|Target|de|Ziel|lt=label}}``: a link to the English article, as MediaWiki shows it; the
    older form names the language first (``{{ill|de|Target|...}}``)."""
    if len(pos) > 1 and _LANGUAGE_CODE.fullmatch(pos[0]):
        pos = pos[1:]
    if not pos or not pos[0]:
        return ""
    label = named.get("lt") or pos[0]
    return f"[[{pos[0]}|{label}]]"


def _ship(prefix: str) -> _Render:
    """``{{HMS|Victory|1765}}`` -> a link ``HMS Victory`` to ``HMS Victory (1765)``."""

    def ship(pos: list[str], named: dict[str, str]) -> str:
        if not pos or not pos[0]:
            return prefix
        target = f"{prefix} {pos[0]} ({pos[1]})" if len(pos) > 1 and pos[1] else f"{prefix} {pos[0]}"
        return f"[[{target}|{prefix} ''{pos[0]}'']]"

    return ship


def _ship_with_prefix(pos: list[str], named: dict[str, str]) -> str:
    """``{{ship|HMS|Victory|1765}}``: the prefix is the first argument."""
    return _ship(pos[0])(pos[1:], named) if pos else ""


# Labels that may open {{IPAc-en}} before the transcription ("pron", "US", ...): not shown as sounds.
_IPAC_LABELS = frozenset({"lang", "local", "pron", "ipa", "uk", "us", "also", "uk also", "us also", "ca", "au", "nz"})


def _ipac(pos: list[str], named: dict[str, str]) -> str:
    """``{{IPAc-en|ˈ|b|ɜr|l|ɪ|n}}`` -> ``/ˈbɜrlɪn/``: the pieces of one transcription, between slashes."""
    sounds = [p for p in pos if p.lower() not in _IPAC_LABELS]
    return f"/{''.join(sounds).replace('_', ' ')}/" if sounds else ""  # "_" is a space between words


_SHIP_PREFIXES = ("HMS", "USS", "SS", "RMS", "HMAS", "HMCS", "HMNZS", "MV", "USNS", "USCGC", "SMS", "HMY", "INS")

# Templates whose visible text is kept (every other template is removed with its content), and how
# each shows. Chosen from the templates of the real samples (``../shared/data``) that carry words of
# the sentence: foreign terms, quantities, dates, quotations, pronunciations, chemical formulas,
# spacing and punctuation; citations, infoboxes, navigation and maintenance tags show none. Magic
# words ({{CURRENTYEAR}}, {{PAGENAME}}) and parser functions ({{#if:}}) are dropped like any
# template not named here: their value depends on the day or the page rendering them, and the same
# wikitext must give the same text.
INLINE_TEMPLATES: dict[str, _Render] = {
    "lang": _pick(1),  # {{lang|fr|texte}} -> texte
    "transl": _pick(-1),  # {{transl|ar|ALA|al-lāh}} -> al-lāh
    "nihongo": _pick(0),  # {{nihongo|Aikido|合気道|Aikidō}} -> Aikido
    "nowrap": _pick(0),
    "nobr": _pick(0),
    "small": _pick(0),
    "smaller": _pick(0),
    "nts": _pick(0),  # sortable number
    "sc": _pick(0),
    "smallcaps": _pick(0),
    "small caps": _pick(0),
    "abbr": _pick(0),  # {{abbr|UK|United Kingdom}} -> UK (the expansion is a tooltip)
    "vanchor": _pick(0),
    "chem2": _pick(0),
    "chem": _join(""),  # {{chem|H|2|O}} -> H2O
    "keypress": _join("+"),  # {{keypress|Ctrl|C}} -> Ctrl+C
    "angbr": _join("", "⟨", "⟩"),
    "hlist": _join(" · "),
    "ubl": _join("\n"),
    "ublist": _join("\n"),
    "unbulleted list": _join("\n"),
    "plainlist": _pick(0),
    "frac": _frac,
    "val": _val,
    "convert": _convert,
    "cvt": _convert,
    "as of": lambda pos, named: f"As of {pos[0]}" if pos else "",  # {{as of|2010}} -> As of 2010
    # quotations: their text, without the attribution
    "quote": _pick(0, "text", "quote"),
    "blockquote": _pick(0, "text", "quote"),
    "cquote": _pick(0, "text", "quote"),
    "bquote": _pick(0, "text", "quote"),
    "quotation": _pick(0, "text", "quote"),
    "quote box": _pick(0, "quote", "text"),
    # pronunciations: the transcription (MediaWiki adds a language label, a link to the key)
    "ipa": _pick(0),
    "ipac-en": _ipac,
    # dates: as shown by default (month first), the day first with df=y; ages that change with
    # the day of reading ({{birth date and age}}) are left out
    "birth date": _date,
    "death date": _date,
    "birth date and age": _date,
    "birth year and age": _pick(0),
    "death year and age": _pick(0),
    "birth-date": _pick(0),
    "death-date": _pick(0),
    "death date and age": _death_date_and_age,
    "dts": _date,
    "formatdate": _date,
    "start date": _date,
    "end date": _date,
    "date": _date_dmy,
    # links made by templates
    "ill": _interlanguage_link,
    "interlanguage link": _interlanguage_link,
    "ship": _ship_with_prefix,
    **{prefix.lower(): _ship(prefix) for prefix in _SHIP_PREFIXES},
    # spacing and punctuation; entities, so that ''x''{{'}}s is not read as bold
    "'": _constant("&#39;"),
    "'s": _constant("&#39;s"),
    "nbsp": _constant("&nbsp;"),  # one space after the whitespace pass
    "thinsp": _constant(" "),
    "hair space": _constant(" "),
    "ndash": _constant("–"),
    "mdash": _constant("—"),
    "snd": _constant(" – "),
    "spnd": _constant(" – "),
    "sndash": _constant(" – "),
    "spaced ndash": _constant(" – "),
    "·": _constant(" · "),
    "dot": _constant(" · "),
    "bull": _constant(" • "),
    "!": _constant("&#124;"),
    "pipe": _constant("&#124;"),
    "=": _constant("="),
    "eqm": _constant("⇌"),  # chemical equilibrium
}
# Families named by a prefix: {{lang-fr|texte}} -> texte, {{IPA-de|ˈhaʊs}} -> ˈhaʊs.
PREFIXED_TEMPLATES: dict[str, _Render] = {"lang-": _pick(0), "ipa-": _pick(0)}


def _inline_template(inner: str) -> str:
    """Visible text of a template (its wikitext, still to be converted), ``""`` if it shows none.

    Most templates show nothing (citations, infoboxes): their name is read without splitting their
    arguments, unless a bracket before the first ``|`` may hide that bar inside a nested construct.
    """
    bar = inner.find("|")
    head = inner if bar < 0 else inner[:bar]
    args = _split_top_level(inner) if "{" in head or "[" in head else None
    name = _WS_RUN.sub(" ", head if args is None else args[0]).strip().lower()
    render = INLINE_TEMPLATES.get(name)
    if render is None and "-" in name:
        render = PREFIXED_TEMPLATES.get(name[: name.index("-") + 1])
    if render is None:
        return ""
    return render(*_arguments((args or _split_top_level(inner))[1:]))


# [start, end) of text to replace, and the span of what it holds (a plain template's content) or None
_Cut = tuple[int, int, tuple[int, int] | None]


def _outermost(cuts: list[_Cut]) -> list[_Cut]:
    """The cuts not inside another, in order.

    Bracket matching yields every closed construct, nested ones included, and they nest properly
    (a closer ends the innermost open construct); only the outermost are replaced.
    """
    kept: list[_Cut] = []
    for cut in sorted(cuts, key=lambda c: (c[0], -c[1])):
        if not kept or cut[0] >= kept[-1][1]:
            kept.append(cut)
    return kept


# MediaWiki's $wgMaxTemplateDepth: inline templates nested deeper show nothing (MediaWiki shows an
# error there), so that the recursion below stays shallow whatever the page.
MAX_TEMPLATE_DEPTH = 40


def _cut_templates(text: str, depth: int = 0) -> str:
    """Remove ``{{templates}}`` and ``{{{parameters}}}``, nested, keeping INLINE_TEMPLATES' text.

    Brace runs are matched like MediaWiki's preprocessor: a closing run closes as many open
    constructs as it can (three braces for a parameter, two for a template), the innermost braces
    of an opening run first; a single left-over brace is literal. Stray closers are dropped. The
    braces of an unclosed opener are dropped and what follows them stays, as MediaWiki shows it
    (bar the braces, which would be markup in the text): cutting to the paragraph's end lost whole
    lists to one stray ``{{``. One pass over the brace runs, then one over the outermost
    constructs: linear in the text, and in memory (a construct holds the span of its content, not a
    copy: nested ones would copy the text once per level).
    """
    if "{{" not in text:
        return text
    cuts: list[_Cut] = []  # payload: the content of a plain {{...}}, which may show text
    stack: list[list[int]] = []  # [braces still open in an opening run, where the run starts]
    for match in _BRACES.finditer(text):
        run = match.group()
        if run[0] == "{":
            stack.append([len(run), match.start()])
            continue
        if not stack:  # stray closer
            cuts.append((match.start(), match.end(), None))
            continue
        left = len(run)
        while left >= 2 and stack:
            top = stack[-1]
            used = 3 if left >= 3 and top[0] >= 3 else 2
            top[0] -= used
            left -= used
            begin, close = top[1] + top[0], match.end() - left
            inner = (begin + 2, close - 2) if used == 2 else None
            if top[0] < 2:
                stack.pop()
                begin = top[1]  # a single left-over opening brace goes with its construct
                if not stack:  # and left-over closing braces with the outermost construct
                    close = match.end()
            cuts.append((begin, close, inner))
    cuts.extend((start, start + still_open, None) for still_open, start in stack)
    out: list[str] = []
    pos = 0
    for start, end, inner in _outermost(cuts):
        out.append(text[pos:start])
        if inner is not None and depth < MAX_TEMPLATE_DEPTH:
            out.append(_cut_templates(_inline_template(text[inner[0] : inner[1]]), depth + 1))
        pos = end
    out.append(text[pos:])
    return "".join(out)


_TABLE_EDGE = re.compile(r"^[ \t:]*(\{\||\|\})", re.MULTILINE)


def _cut_tables(text: str) -> str:
    """Remove ``{| ... |}`` tables, nested. An unclosed table loses its opening line only (its
    attributes): the lines after it stay, as for an unclosed template."""
    if "{|" not in text:
        return text
    cuts: list[_Cut] = []
    stack: list[int] = []
    for match in _TABLE_EDGE.finditer(text):
        if match.group(1) == "{|":
            stack.append(match.start())
        elif stack:
            cuts.append((stack.pop(), match.end(), None))
    for start in stack:
        end = text.find("\n", start)
        cuts.append((start, len(text) if end < 0 else end, None))
    out: list[str] = []
    pos = 0
    for start, end, _ in _outermost(cuts):
        out.append(text[pos:start])
        pos = end
    out.append(text[pos:])
    return "".join(out)


# Pass 3: line-level markup --------------------------------------------------------------------

_BEHAVIOR_SWITCH = re.compile(r"__[A-Z]+__")
# One greedy group, stripped afterwards: "[ \t]*(.+?)[ \t]*" is ambiguous over a run of spaces,
# which made "=" + " " * 5000 + "x" cubic.
_HEADING = re.compile(r"^(={1,6})(.+)\1[ \t]*$", re.MULTILINE)
_LIST_MARKER = re.compile(r"^[*#:;]+[ \t]*|^-{4,}", re.MULTILINE)
# The label may hold internal links: ``[http://x.org the [[Foo]] site]`` shows "the Foo site".
_EXTERNAL_LINK = re.compile(
    r"(?<!\[)\[(?:https?:|ftp:|//|mailto:|irc:|news:)[^\s\]<>]*"
    r"(?:[ \t]+((?:[^\[\]\n]|\[(?!\[)|\[\[[^\[\]\n]*\]\])*))?\]"
)
# HTML tags MediaWiki lets through (its Sanitizer list), minus those cut with their content above.
_HTML_TAGS = (
    "abbr|b|bdi|bdo|big|blockquote|br|caption|center|cite|code|data|dd|del|dfn|div|dl|dt|em|font|"
    "h[1-6]|hr|i|ins|kbd|li|mark|ol|onlyinclude|includeonly|noinclude|p|poem|pre|q|rb|rp|rt|rtc|ruby|"
    "s|samp|small|span|strike|strong|sub|sup|table|td|th|time|tr|tt|u|ul|var|wbr|ref|references"
)
_BR = re.compile(r"<br\s*/?\s*>", re.IGNORECASE)
_HTML_TAG = re.compile(rf"</?(?:{_HTML_TAGS})\b[^<>]*>", re.IGNORECASE)
_QUOTES = re.compile(r"'{2,}")
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


def _external_label(match: re.Match[str]) -> str:
    return match.group(1) or ""


# Pass 4: wiki links -------------------------------------------------------------------------

_LINK_BRACKETS = re.compile(r"\[\[(?!\[)|\]\]")  # in "[[[x]]]" the first "[" is literal
_LINK_TRAIL = re.compile(r"[a-z]+")  # English Wikipedia's $linkTrail
_NESTED_LINK = re.compile(r"\[\[(?:[^\[\]|]*\|)?([^\[\]]*)\]\]")
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
_LANGUAGE_CODE = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]+)*|simple")


def _link_kind(target: str) -> tuple[str, str]:
    """Classify a link target: ("hidden"|"other"|"article", the target without a leading colon)."""
    forced = target.startswith(":")
    target = target[1:] if forced else target
    if ":" in target:
        prefix = _WS_RUN.sub(" ", target.split(":", 1)[0]).strip()
        lower = prefix.lower()
        if lower in _HIDDEN_NAMESPACES:
            return ("other" if forced else "hidden"), target
        if lower in _OTHER_PREFIXES:
            return "other", target
        if _LANGUAGE_CODE.fullmatch(prefix):
            return ("other" if forced else "hidden"), target
    return "article", target


def _unescape(text: str) -> str:
    return html.unescape(text) if "&" in text else text


class _Builder:
    """Joins plain-text pieces and records anchor spans while it goes."""

    __slots__ = ("pieces", "length", "links")

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.length = 0
        self.links: list[tuple[int, int, str]] = []

    def text(self, piece: str) -> None:
        piece = _unescape(piece)
        self.pieces.append(piece)
        self.length += len(piece)

    def anchor(self, visible: str, target: str) -> None:
        """Add visible text; record it as an anchor (without surrounding whitespace) when it has a target."""
        visible = _unescape(visible)
        core = visible.strip()
        if _BREAK in core:  # a break at an edge vanishes with the whitespace next to it
            core = core.strip(_BREAK).strip()
        if not core or not target:
            self.text(visible)
            return
        lead = visible.find(core)  # core starts with neither whitespace nor a break
        start = self.length + lead
        self.links.append((start, start + len(core), target))
        self.pieces.append(visible)
        self.length += len(visible)


def _convert_links(text: str, out: _Builder) -> None:
    """Turn ``[[links]]`` into visible text; anchors to articles get their span recorded.

    Unmatched ``[[`` and ``]]`` are dropped (their words stay).
    """
    cuts: list[_Cut] = []  # payload "link" for a link, None for brackets to drop
    stack: list[int] = []
    for match in _LINK_BRACKETS.finditer(text):
        if match.group() == "[[":
            stack.append(match.start())
        elif stack:
            cuts.append((stack.pop(), match.end(), "link"))
        else:
            cuts.append((match.start(), match.end(), None))
    cuts.extend((start, start + 2, None) for start in stack)
    pos = 0  # end of what has been emitted
    for start, end, kind in _outermost(cuts):
        if start < pos:  # brackets right after a link trail cannot be: the trail is letters only
            continue
        out.text(text[pos:start])
        pos = end
        if kind is None:
            continue
        inner = text[start + 2 : end - 2]
        target, bar, label = inner.partition("|")
        if "[[" in target:  # "[[a [[B]] c]]" is no link: its outer brackets are dropped, B is one
            _convert_links(inner, out)
            continue
        link_kind, bare = _link_kind(target.strip())
        if link_kind == "hidden":
            continue
        visible = _NESTED_LINK.sub(r"\1", label) if bar else bare
        if link_kind == "other":
            out.text(visible)
            continue
        trail = _LINK_TRAIL.match(text, pos)
        if trail is not None:
            visible += trail.group()
            pos = trail.end()
        out.anchor(visible, normalize_title(bare))
    out.text(text[pos:])


# Pass 5: whitespace -------------------------------------------------------------------------

_SPACE = f"[ \\t\\u00a0{_BREAK}]"
# A run with a newline -> "\n"; 2+ spaces -> " "; a lone tab or no-break space -> " "; a lone break
# -> "". Doubled brackets still here came from markup too broken to parse ("[[[[x", unbalanced
# link labels): they are dropped so that no markup reaches the text.
_NORMALIZE = re.compile(rf"{_SPACE}*\n[\s{_BREAK}]*|{_SPACE}{{2,}}|[\t\u00a0{_BREAK}]|\[\[|\]\]|\{{\{{|\}}\}}")


def _replacement(run: str) -> str:
    if "\n" in run:
        return "\n"
    return " " if run.strip(_BREAK + "[]{}") else ""


def _collapse(text: str, links: list[tuple[int, int, str]]) -> tuple[str, list[Link]]:
    """Collapse whitespace (one space within a line, one newline between paragraphs) and move spans.

    Also drops left-over doubled brackets (see _NORMALIZE); an anchor left empty is dropped.

    A span boundary inside a replaced run lands at the matching place of its replacement; a
    boundary after it moves left by what the run lost.
    """
    starts: list[int] = []
    old_ends: list[int] = []
    new_starts: list[int] = []
    new_lens: list[int] = []
    pieces: list[str] = []
    pos = 0
    removed = 0
    for match in _NORMALIZE.finditer(text):
        run = match.group()
        replacement = _replacement(run)
        pieces.append(text[pos : match.start()])
        pieces.append(replacement)
        starts.append(match.start())
        old_ends.append(match.end())
        new_starts.append(match.start() - removed)
        new_lens.append(len(replacement))
        removed += len(run) - len(replacement)
        pos = match.end()
    pieces.append(text[pos:])
    joined = "".join(pieces)
    plain = joined.strip()
    lead = len(joined) - len(joined.lstrip())

    def move(offset: int) -> int:
        i = bisect.bisect_right(starts, offset) - 1
        if i < 0:
            new = offset
        elif offset < old_ends[i]:
            new = new_starts[i] + min(offset - starts[i], new_lens[i])
        else:
            new = new_starts[i] + new_lens[i] + (offset - old_ends[i])
        return min(max(new - lead, 0), len(plain))

    moved = [Link(move(s), move(e), t) for s, e, t in links]
    return plain, [link for link in moved if link.start < link.end]


def _heading(match: re.Match[str]) -> str:
    return match.group(2).strip(" \t")


def wikitext_to_plain(wikitext: str) -> tuple[str, list[Link]]:
    """Plain text of an article and its anchors; ``text[l.start:l.end]`` is each anchor's visible text.

    Templates (except INLINE_TEMPLATES), tables, refs, files, categories, interlanguage links,
    comments and HTML tags are removed; headings keep their words; paragraphs are separated by
    one newline. Spans cover the label, or the target plus link trail (``[[bus]]es`` -> ``buses``).
    """
    text = _COMMENT.sub("", wikitext)
    text = _sub_paired(text, _NOWIKI_OPEN, _NOWIKI_CLOSE, _protect_nowiki)
    text = _NOWIKI_EMPTY.sub(_BREAK, text)
    text = _DROPPED_SELF_CLOSING.sub(_BREAK, text)
    text = _sub_paired(text, _DROPPED_OPEN, _DROPPED_CLOSE, _drop)
    text = _cut_tables(_cut_templates(text))
    text = _BEHAVIOR_SWITCH.sub("", text)
    text = _HEADING.sub(_heading, text)
    text = _LIST_MARKER.sub("", text)
    text = _EXTERNAL_LINK.sub(_external_label, text)
    text = _BR.sub("\n", text)
    text = _HTML_TAG.sub("", text)
    if _BREAK in text:
        text = _IDLE_BREAK.sub("", text)
    text = _apostrophes(text)
    builder = _Builder()
    _convert_links(text, builder)
    plain, links = _collapse("".join(builder.pieces), builder.links)
    return (plain.translate(_UNPROTECT) if _PROTECTED.search(plain) else plain), links
