"""Pass 2 of the wikitext conversion (:mod:`pelt.corpus.wikipedia.wikitext`): templates, template parameters and
tables are cut, nested, in time and memory linear in the page, and the templates that show words of
the sentence keep them. What each of those shows is one table of name -> renderer
(``INLINE_TEMPLATES``, ``PREFIXED_TEMPLATES``: quotations, dates, quantities, chemical formulas,
pronunciations, spacing, ship and interlanguage links, ...), so that it grows in one place, apart
from the passes.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from operator import itemgetter

from pelt.corpus.wikipedia.titles import LANGUAGE_CODE, WS_RUN

logger = logging.getLogger(__name__)

# "\{\{+" rather than "\{{2,}": a pattern whose alternatives open with a literal is searched for
# those characters in C; one that opens with a repeat is tried at every character of the page.
_BRACES = re.compile(r"\{\{+|\}\}+")


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
    if len(pos) > 1 and LANGUAGE_CODE.fullmatch(pos[0]):
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


# French and German templates that print words of the sentence (issue 30 item 5), met on real pages.
_MOIS = "janvier février mars avril mai juin juillet août septembre octobre novembre décembre".split()


def _mois(month: str) -> int | None:
    """A French month's number, from its name or its number; None when it is neither."""
    if month.isdecimal():
        return int(month) if 1 <= int(month) <= 12 else None
    return _MOIS.index(month.lower()) + 1 if month.lower() in _MOIS else None


def _date_fr(day: str = "", month: str = "", year: str = "") -> str:
    """``11|novembre|1866`` -> ``11 novembre 1866``: a month's number becomes its name and day 1 the
    ``1er`` French writes (``1er mai 1900``), as the French date templates show them; empty parts are
    left out (``|mars|1900`` -> ``mars 1900``)."""
    if month.isdecimal() and _mois(month):
        month = _MOIS[int(month) - 1]
    if day.isdecimal():
        day = "1er" if int(day) == 1 else str(int(day))
    return " ".join(part for part in (day, month, year) if part)


def _date_de_naissance(pos: list[str], named: dict[str, str]) -> str:
    """``{{Date de naissance|11|novembre|1866}}`` -> ``11 novembre 1866``; the age (``âge=oui``) is left
    out, as English ages of the living are: it changes with the day of reading."""
    return _date_fr(*pos[:3])


def _date_de_deces(pos: list[str], named: dict[str, str]) -> str:
    """``{{Date de décès|13|novembre|1936|11|novembre|1866}}`` -> ``13 novembre 1936 (à 70 ans)``:
    with the birth date, the template shows the age at death, which never changes."""
    text = _date_fr(*pos[:3])
    if len(pos) < 6 or not all(part.isdecimal() for part in pos[0:6:3] + pos[2:6:3]):
        return text
    died, born = (int(pos[2]), _mois(pos[1]), int(pos[0])), (int(pos[5]), _mois(pos[4]), int(pos[3]))
    if died[1] is None or born[1] is None:
        return text
    return f"{text} (à {died[0] - born[0] - (died[1:] < born[1:])} ans)"


def _date_either(pos: list[str], named: dict[str, str]) -> str:
    """``{{date}}`` is English's (``{{date|2006-01-15}}``, ``{{date|2006-01-15|mdy}}``) with up to two
    arguments and French's (``{{date|11|novembre|1866}}``) with three or more: one table serves every
    language, and the arguments tell the two apart."""
    return _date_fr(*pos[:3]) if len(pos) >= 3 else _date_dmy(pos, named)


def _siecle(after: str) -> _Render:
    """``{{s|XIX}}`` -> ``XIXe``, ``{{s-|XIX}}`` -> ``XIXe siècle``, ``{{-s-|V}}`` -> ``Ve siècle av. J.-C.``;
    a second argument is the ordinal's ending (``{{s-|I|er}}``), ``er`` after ``I`` by default."""

    def siecle(pos: list[str], named: dict[str, str]) -> str:
        if not pos or not pos[0]:
            return ""
        ending = pos[1] if len(pos) > 1 and pos[1] else ("er" if pos[0].upper() == "I" else "e")
        return f"{pos[0]}{ending}{after}"

    return siecle


def _exponent_or_e(pos: list[str], named: dict[str, str]) -> str:
    """French ``{{e}}`` (``XIX{{e}}``: a superscript ``e``) has no argument; English ``{{e|5}}`` is ``×10^5``."""
    return f"×10^{pos[0]}" if pos else "e"


# French templates named by what they show, one pattern a family rather than a name a number: centuries
# and millennia ({{XIXe siècle}}, {{-Ier siècle}}: before Christ) and ordinals ({{1er}}, {{1re}}, {{3e}},
# {{2nd}}; an argument follows them: {{3e|édition}} -> "3e édition"). Both match in one pass over the name.
_CENTURY = re.compile(r"(-?)([ivxlc]+)(er|e) (siècle|millénaire)")
_ORDINAL = re.compile(r"\d+(?:er|re|ers|res|e|es|nd|nde|nds|ndes)|er|re|ers|res")


def _named_by_pattern(name: str) -> _Render | None:
    """The renderer of a French century or ordinal template, None for any other name."""
    century = _CENTURY.fullmatch(name)
    if century is not None:
        sign, numeral, ending, word = century.groups()
        shown = f"{numeral.upper()}{ending} {word}" + (" av. J.-C." if sign else "")
        return _constant(shown)
    if _ORDINAL.fullmatch(name):
        return lambda pos, named: f"{name} {pos[0]}" if pos and pos[0] else name
    return None


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
    "date": _date_either,  # English {{date|2006-01-15}}, French {{date|11|novembre|1866}}
    # French: dates, centuries ({{s-|XIX}}), the superscript of ordinals (XIX{{e}})
    "date-": _date_either,
    "date de naissance": _date_de_naissance,
    "date de décès": _date_de_deces,
    "s": _siecle(""),
    "s-": _siecle(" siècle"),
    "-s": _siecle(" av. J.-C."),
    "-s-": _siecle(" siècle av. J.-C."),
    "e": _exponent_or_e,
    # German quotations: the quoted text ({{Zitat|Text|Autor}}, {{Zitat-en|text|Übersetzung=...}})
    "zitat": _pick(0, "text"),
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
PREFIXED_TEMPLATES: dict[str, _Render] = {"lang-": _pick(0), "ipa-": _pick(0), "zitat-": _pick(0, "text")}


def _inline_template(inner: str) -> str:
    """Visible text of a template (its wikitext, still to be converted), ``""`` if it shows none.

    Most templates show nothing (citations, infoboxes): their name is read without splitting their
    arguments, unless a bracket before the first ``|`` may hide that bar inside a nested construct.
    """
    bar = inner.find("|")
    head = inner if bar < 0 else inner[:bar]
    args = _split_top_level(inner) if "{" in head or "[" in head else None
    name = WS_RUN.sub(" ", head if args is None else args[0]).strip().lower()
    render = INLINE_TEMPLATES.get(name)
    if render is None and "-" in name:
        render = PREFIXED_TEMPLATES.get(name[: name.index("-") + 1])
    if render is None:
        render = _named_by_pattern(name)
    if render is None:
        return ""
    return render(*_arguments((args or _split_top_level(inner))[1:]))


# [start, end) of text to replace, and the span of what it holds (a plain template's content) or None
Cut = tuple[int, int, tuple[int, int] | None]


def outermost(cuts: list[Cut]) -> list[Cut]:
    """The cuts not inside another, in order.

    Bracket matching yields every closed construct, nested ones included, and they nest properly
    (a closer ends the innermost open construct); only the outermost are replaced.
    """
    kept: list[Cut] = []
    ordered = sorted(cuts, key=itemgetter(1), reverse=True)  # by end, longest first: the sorts are
    ordered.sort(key=itemgetter(0))  # stable, so this is by start, then longest: no key in Python
    for cut in ordered:
        if not kept or cut[0] >= kept[-1][1]:
            kept.append(cut)
    return kept


# MediaWiki's $wgMaxTemplateDepth: inline templates nested deeper show nothing (MediaWiki shows an
# error there).
MAX_TEMPLATE_DEPTH = 40
# What templates may show, at all depths together: EXPANSION_FACTOR characters per character of the
# page, plus EXPANSION_SLACK, as MediaWiki caps a page's post-expand include size. Templates that
# repeat an argument ({{ill}}: target and label; ship names) double their content at each level
# of nesting: 161 bytes of nested {{ill}} became 1 MB of text with 524,288 anchors. A template
# whose text would pass the cap shows nothing (logged, with the number of templates cut), so the
# pass's output is at most (EXPANSION_FACTOR + 1) times the page plus EXPANSION_SLACK, and as each
# shown character is scanned once more for the templates it holds, its time is linear too.
EXPANSION_FACTOR = 3
EXPANSION_SLACK = 1_000


def _outermost_braces(text: str) -> list[Cut]:
    """The outermost ``{{templates}}``, ``{{{parameters}}}``, unclosed openers and stray closers.

    Brace runs are matched like MediaWiki's preprocessor: a closing run closes as many open
    constructs as it can (three braces for a parameter, two for a template), the innermost braces
    of an opening run first; a single left-over brace is literal. The braces of an unclosed opener
    are cut and what follows them stays, as MediaWiki shows it (bar the braces, which would be
    markup in the text): cutting to the paragraph's end lost whole lists to one stray ``{{``. A
    construct holds the span of its content, not a copy: nested ones would copy the text once per
    level.
    """
    cuts: list[Cut] = []  # payload: the content of a plain {{...}}, which may show text
    stack: list[list[int]] = []  # [braces still open in an opening run, where the run starts]
    for match in _BRACES.finditer(text):
        start, end = match.span()
        if text[start] == "{":
            stack.append([end - start, start])
            continue
        if not stack:  # stray closer
            cuts.append((start, end, None))
            continue
        if end - start == 2 and stack[-1][0] == 2:  # most runs: "}}" closing a "{{", as below
            opened = stack.pop()[1]
            cuts.append((opened, end, (opened + 2, start)))
            continue
        left = end - start
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
    return outermost(cuts)


def cut_templates(text: str, blank: str = "") -> str:
    """Remove ``{{templates}}`` and ``{{{parameters}}}``, nested, keeping INLINE_TEMPLATES' text.

    The text a template shows is wikitext that may hold templates in turn: it is expanded from an
    explicit stack, depth first, so that the output keeps the page's order and no input nests the
    Python stack. Each text is read in one pass over its brace runs and one over its outermost
    constructs; the texts templates show are bounded by the expansion cap (EXPANSION_FACTOR).

    A construct that shows nothing and touches a quote leaves ``blank`` there:
    :func:`pelt.corpus.wikipedia.wikitext.wikitext_to_plain` passes its strip marker, so that the quote runs
    around a removed template stay apart (``'''{{CHN}}'''`` is a bold word in MediaWiki, whose flag
    template shows one; without the marker, six quotes showed an apostrophe). Elsewhere it leaves
    nothing, so that a stray ``{{`` before a list's ``*`` leaves the ``*`` at the line's start.
    """
    if "{{" not in text:
        return text
    budget = EXPANSION_FACTOR * len(text) + EXPANSION_SLACK
    refused = 0
    out: list[str] = []
    todo: list[tuple[str, int]] = [(text, 0)]  # wikitext still to expand and its depth, the next on top
    while todo:
        source, depth = todo.pop()
        if "{{" not in source:  # text between constructs, or shown by one without any
            out.append(source)
            continue
        pieces: list[tuple[str, int]] = []
        pos = 0
        for start, end, inner in _outermost_braces(source):
            pieces.append((source[pos:start], depth))
            shown = ""
            if inner is not None and depth < MAX_TEMPLATE_DEPTH:
                shown = _inline_template(source[inner[0] : inner[1]])
                if len(shown) > budget:
                    refused += 1
                    shown = ""
                budget -= len(shown)
            touches_quote = source.startswith("'", end) or (start > 0 and source[start - 1] == "'")
            pieces.append((shown, depth + 1) if shown else (blank if touches_quote else "", depth))
            pos = end
        pieces.append((source[pos:], depth))
        todo.extend(reversed(pieces))
    if refused:
        logger.warning(
            "%d templates not expanded: templates may show %d times a page of %d characters, plus %d",
            refused,
            EXPANSION_FACTOR,
            len(text),
            EXPANSION_SLACK,
        )
    return "".join(out)


# A table's first or last line: "^[ \t:]*(\{\||\|\})" read as the newline before it (a literal first, see
# _BRACES; "^" is tried at every character), and the text's first line apart.
_TABLE_EDGE = re.compile(r"\n[ \t:]*(\{\||\|\})")
_FIRST_TABLE_EDGE = re.compile(r"[ \t:]*(\{\||\|\})")


def cut_tables(text: str) -> str:
    """Remove ``{| ... |}`` tables, nested. An unclosed table loses its opening line only (its
    attributes): the lines after it stay, as for an unclosed template."""
    if "{|" not in text:
        return text
    cuts: list[Cut] = []
    stack: list[int] = []
    first = _FIRST_TABLE_EDGE.match(text)
    edges = [(0, first.end(), first.group(1))] if first is not None else []
    edges += [(match.start() + 1, match.end(), match.group(1)) for match in _TABLE_EDGE.finditer(text)]
    for line_start, end, edge in edges:
        if edge == "{|":
            stack.append(line_start)
        elif stack:
            cuts.append((stack.pop(), end, None))
    for start in stack:
        end = text.find("\n", start)
        cuts.append((start, len(text) if end < 0 else end, None))
    out: list[str] = []
    pos = 0
    for start, end, _ in outermost(cuts):
        out.append(text[pos:start])
        pos = end
    out.append(text[pos:])
    return "".join(out)
