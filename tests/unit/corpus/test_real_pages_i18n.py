"""Real pages of the German, French, Japanese, Chinese, Arabic, Hebrew, Urdu and Persian Wikipedias
(``../shared/data/wikitext_pages_i18n``, 49 pages and two XML excerpts: its README says where each
comes from) read as the corpus job reads them, with their language's site facts (issue 54 item 1).

No markup reaches the text (localised file, category and template names included); every anchor is
one that an independent reading of the page shows (mwparserfromhell's tree, with each wiki's link
trail and link prefix as its MediaWiki writes them); the disambiguation pages, and only they, are
flagged; the two XML excerpts are read through the dump reader with their own ``<siteinfo>``; and
what the corpus job counts of each language's pages is fixed."""

from __future__ import annotations

import html
import re
from collections import Counter
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import mwparserfromhell
import pytest
from mwparserfromhell.nodes import ExternalLink, Heading, Tag, Template, Text, Wikilink
from mwparserfromhell.wikicode import Wikicode

from pelt.corpus.wikipedia.build import _page_rows
from pelt.corpus.wikipedia.dump import dump_site, iter_dump_pages
from pelt.corpus.wikipedia.pages import DumpStats
from pelt.corpus.wikipedia.site import SiteInfo
from pelt.corpus.wikipedia.titles import is_disambiguation
from pelt.corpus.wikipedia.wikitext import wikitext_to_plain

# The pages of each language, as the data's README counts them (Japanese and French have an XML
# excerpt besides): a missing page fails, it is not skipped.
PAGES = {"de": 12, "fr": 8, "ja": 12, "zh": 10, "ar": 1, "he": 1, "ur": 4, "fa": 1}
DISAMBIGUATION_PAGES = {
    "de/Zerfall.wiki",
    "de/Fisch.wiki",
    "de/Zwilling_(Begriffsklärung).wiki",
    "ja/EU_(曖昧さ回避).wiki",
}
# Each wiki's link trail and link prefix characters as its API's siteinfo says them (general.linktrail,
# general.linkprefixcharset; Parsoid's baseconfig/<xx>wiki.json), or its MessagesXx.php where that
# is not at hand (he, ur): written as MediaWiki writes them, read here by php_character_class.
LINK_TRAILS = {
    "de": "/^([äöüßa-z]+)(.*)$/sDu",
    "fr": "/^([a-zàâçéèêîôûäëïöüùÇÉÂÊÎÔÛÄËÏÖÜÀÈÙ]+)(.*)$/sDu",
    "ja": "/^([a-z]+)(.*)$/sD",
    "zh": "/^()(.*)$/sD",
    "ar": "/^([a-zء-ي\\x{0610}-\\x{061A}\\x{064B}-\\x{065F}\\x{0670}\\x{06D6}-\\x{06DC}\\x{06DF}-\\x{06E4}"
    "\\x{06E7}\\x{06E8}\\x{06EA}-\\x{06ED}]+)(.*)$/sDu",
    "he": "/^([a-zא-ת]+)(.*)$/sDu",
    "ur": "/^([ابپتٹثجچحخدڈذرڑزژسشصضطظعغفقکگلمنوؤہھیئےآأءۃ]+)(.*)$/sDu",
    "fa": "/^([ابپتثجچحخدذرزژسشصضطظعغفقکگلمنوهیآأئؤة\u200c]+)(.*)$/sDu",
}
LINK_PREFIXES = {
    "ar": "a-zA-Zء-ي\\x{0610}-\\x{061A}\\x{064B}-\\x{065F}\\x{0670}\\x{06D6}-\\x{06DC}\\x{06DF}-\\x{06E4}"
    "\\x{06E7}\\x{06E8}\\x{06EA}-\\x{06ED}"
}
# Each wiki's own names of its file, category and template namespaces (its siteinfo), besides the
# canonical English ones: a page's text holds none of them before a colon, whatever the site facts say.
LOCAL_NAMES = {
    "de": ("Datei", "Bild", "Kategorie", "Vorlage"),
    "fr": ("Fichier", "Catégorie", "Modèle"),
    "ja": ("ファイル", "画像", "カテゴリ", "テンプレート"),
    "zh": ("文件", "檔案", "图像", "圖像", "分类", "分類", "模板"),
    "ar": ("ملف", "صورة", "تصنيف", "قالب"),
    "he": ("קובץ", "תמונה", "קטגוריה", "תבנית"),
    "fa": ("پرونده", "تصویر", "رده", "الگو"),
    "ur": ("فائل", "تصویر", "زمرہ", "سانچہ"),
}
# MediaWiki's fallbacks of zh: the variant of -{zh-hans:...; zh-hant:...}- a reader of the
# unconverted page is shown.
ZH_FALLBACKS = ("zh", "zh-hans", "zh-hant", "zh-cn", "zh-tw", "zh-hk", "zh-sg", "zh-mo", "zh-my")
# Extension tags whose content is not prose: their links are none of the text's.
NOT_PROSE = {"ref", "references", "gallery", "math", "chem", "ce", "syntaxhighlight", "source", "timeline", "score"}
NOT_PROSE |= {"imagemap", "graph", "templatedata", "mapframe", "maplink", "hiero", "inputbox", "categorytree"}
NOT_PROSE |= {"charinsert", "indicator", "section", "nowiki"}


# File names are titles with spaces, "/" and ":" written "_": the one title with either.
TITLES = {"Projet_Bretagne_Ébauches_Bretagne": "Projet:Bretagne/Ébauches Bretagne"}


@pytest.fixture(scope="module")
def i18n(shared_data: Path) -> Path:
    """The pages' folder (tests/real_data.tsv lists each file with its sha256)."""
    return shared_data / "wikitext_pages_i18n"


def pages(root: Path, language: str) -> list[Path]:
    """The ``.wiki`` pages of one language."""
    found = sorted((root / language).glob("*.wiki"))
    assert len(found) == PAGES[language], f"{language}: {len(found)} pages, the data's README lists {PAGES[language]}"
    return found


def title(page: Path) -> str:
    return TITLES.get(page.stem, page.stem.replace("_", " "))


# ---------------------------------------------------------------------- the independent reading


def php_character_class(rule: str) -> re.Pattern[str] | None:
    """A MediaWiki link-trail regex (``/^([a-z]+)(.*)$/sD``) or prefix character set (``a-zA-Z``) as
    a Python pattern of the letters it takes; None where it takes none."""
    letters = rule.removeprefix("/^(").partition(")(.*)$/")[0].strip("[]+") if rule.startswith("/") else rule
    letters = re.sub(r"\\x\{([0-9A-Fa-f]+)\}", lambda code: chr(int(code[1], 16)), letters)
    return re.compile(f"[{letters}]+") if letters else None


def unconverted(wikitext: str) -> str:
    """``-{...}-`` blocks (Chinese language conversion) as a reader of the unconverted page sees
    them: the first of ZH_FALLBACKS a block names, nothing for a rule (``H``), else its text."""
    out, pos = [], 0
    while (start := wikitext.find("-{", pos)) >= 0 and (end := wikitext.find("}-", start)) >= 0:
        body = wikitext[start + 2 : end]
        if body.startswith("H|"):
            body = ""
        variants = dict(part.split(":", 1) for part in body.split(";") if ":" in part)
        variants = {code.strip(): text.strip() for code, text in variants.items()}
        if variants and set(variants) <= set(ZH_FALLBACKS):
            body = next(variants[code] for code in ZH_FALLBACKS if code in variants)
        out += [wikitext[pos:start], body]
        pos = end + 2
    return "".join(out) + wikitext[pos:]


def reference_title(title: str) -> str:
    """A link target as MediaWiki names its page: entities decoded, the section dropped, spaces and
    underscores one space, the first letter upper case."""
    title = " ".join(html.unescape(title).split("#", 1)[0].replace("_", " ").split())
    return title[:1].upper() + title[1:]


def shown(text: str) -> str:
    """Visible text compared: entities decoded, whitespace runs one space."""
    return " ".join(html.unescape(text).replace("\xa0", " ").split())


def reference_anchors(wikitext: str, site: SiteInfo, language: str) -> tuple[Counter, Counter]:
    """(text, target) of the links of the page's prose by mwparserfromhell's tree, and of the links
    inside templates (which a template that prints its argument may show).

    A link is prose unless it sits in a template, a wiki table, a non-prose extension tag or
    another link (a file's caption); files, categories, other namespaces and interwiki links are
    not anchors. The text is the label, or the target, with the wiki's link trail after it and its
    link prefix before it. Tables indented with ":" are made plain tables first: mwparserfromhell
    reads only ``{|`` at a line's start as one, MediaWiki both.
    """
    trail = php_character_class(LINK_TRAILS[language])
    prefix = php_character_class(LINK_PREFIXES.get(language, ""))
    tree = mwparserfromhell.parse(re.sub(r"(?m)^:+(?=\{\|)", "", unconverted(wikitext)))
    prose: Counter = Counter()
    templated: Counter = Counter()

    def walk(code: Wikicode, where: Counter | None) -> None:
        nodes = code.nodes
        for i, node in enumerate(nodes):
            if isinstance(node, Wikilink):
                target = str(node.title).strip()
                forced = target.startswith(":")
                bare = target[1:] if forced else target
                namespace = " ".join(bare.split(":", 1)[0].replace("_", " ").split()).lower() if ":" in bare else ""
                article = not namespace or not (
                    namespace in site.hidden_prefixes
                    or namespace in site.other_prefixes
                    or re.fullmatch(r"[a-z]{2,3}(?:-[a-z0-9]+)*|simple", namespace)
                )
                text = node.text.strip_code() if node.text is not None else bare
                after = nodes[i + 1] if i + 1 < len(nodes) else None
                before = nodes[i - 1] if i else None
                if trail and isinstance(after, Text) and (letters := trail.match(str(after.value))):
                    text += letters.group()
                if prefix and isinstance(before, Text) and (letters := prefix.match(str(before.value)[::-1])):
                    text = letters.group()[::-1] + text
                if article and where is not None and shown(text) and reference_title(bare):
                    where[(shown(text), reference_title(bare))] += 1
                if node.text is not None:
                    walk(node.text, None)
            elif isinstance(node, Tag) and node.contents is not None:
                tag = str(node.tag).lower()
                walk(node.contents, None if tag in NOT_PROSE or node.wiki_markup == "{|" else where)
            elif isinstance(node, Template):
                for parameter in node.params:
                    walk(parameter.value, templated if where is not None else None)
            elif isinstance(node, ExternalLink) and node.title is not None:
                walk(node.title, where)
            elif isinstance(node, Heading):
                walk(node.title, where)

    walk(tree, prose)
    return prose, templated


def check_anchors(wikitext: str, site: SiteInfo, language: str, name: str) -> int:
    """The page's anchors against the reference: each prose link exactly once, nothing else but
    links a template printed. Returns the number of anchors."""
    text, links = wikitext_to_plain(wikitext, site)
    ours = Counter((shown(text[link.start : link.end]), link.target) for link in links)
    assert all(text[link.start : link.end] == text[link.start : link.end].strip() for link in links), name
    prose, templated = reference_anchors(wikitext, site, language)
    assert not prose - ours, f"{name}: anchors the page's prose has and the text lacks: {prose - ours}"
    assert not (ours - prose) - templated, f"{name}: anchors no link of the page gives: {(ours - prose) - templated}"
    return len(links)


# ---------------------------------------------------------------------- markup left in the text

MARKUP = re.compile(r"\[\[|\]\]|\{\{|\}\}|\{\||\|\}|<ref|''|-\{|\}-|__[A-Z]+__|\S\|\S|\b\d+ ?px\b", re.IGNORECASE)


def leaked_markup(text: str, site: SiteInfo, language: str) -> list[str]:
    """Markup in the text: brackets, braces, quotes, conversion blocks, behaviour switches, file
    options (``thumb|right``, ``250px``), and a file, category or template prefix in any of the
    site's names or the wiki's own (``[[קטגוריה:...]]`` read as an article link would show
    ``קטגוריה:...``)."""
    names = {name for key in (6, 10, 14) for name in site.names(key)} | set(LOCAL_NAMES[language])
    prefixes = "|".join(re.escape(name) for name in sorted(names))
    namespaced = re.compile(rf"(?:{prefixes})\s*:(?!\s)", re.IGNORECASE)
    return [
        text[max(m.start() - 20, 0) : m.end() + 20] for pattern in (MARKUP, namespaced) for m in pattern.finditer(text)
    ]


@pytest.mark.parametrize("language", PAGES)
def test_every_page_reads_without_markup_and_with_exact_anchors(i18n: Path, language: str) -> None:
    site = SiteInfo.for_language(language)
    for page in pages(i18n, language):
        name = f"{language}/{page.name}"
        wikitext = page.read_text()
        text, _ = wikitext_to_plain(wikitext, site)
        assert not leaked_markup(text, site, language), f"{name}: {leaked_markup(text, site, language)[:5]}"
        check_anchors(wikitext, site, language, name)
        flagged = is_disambiguation(wikitext, site)
        assert flagged == (name in DISAMBIGUATION_PAGES), f"{name}: disambiguation {flagged}"


def test_language_rules_on_the_real_pages(i18n: Path) -> None:
    """What each language's own rules decide, where the pages show it."""

    def anchors(path: str) -> list[tuple[str, str]]:
        text, links = wikitext_to_plain((i18n / path).read_text(), SiteInfo.for_language(path[:2]))
        return [(text[link.start : link.end], link.target) for link in links]

    assert ("クロロフィルa", "クロロフィル") in anchors("ja/コケ植物.wiki")  # Latin letters are jawiki's trail
    assert ("Kernreaktoren", "Kernreaktor") in anchors("de/Americium.wiki")
    arabic = anchors("ar/برلين.wiki")
    assert ("وباريس", "باريس") in arabic  # و[[باريس]]: the letters before the link join it
    hebrew = anchors("he/ברלין.wiki")
    assert ("לונדון", "לונדון") in hebrew and ("רחובות", "רחוב") in hebrew  # ו[[לונדון]], [[רחוב]]ות
    text, _ = wikitext_to_plain((i18n / "zh/柏林.wiki").read_text(), SiteInfo.for_language("zh"))
    assert "德国十六个联邦州之一" in text and "德国联邦议院" in text  # -{zh-hans:联邦州; zh-hant:邦}-, 联-{}-邦


@pytest.mark.parametrize("language", ["ar", "he", "fa", "ur"])
def test_directional_marks_change_nothing_on_right_to_left_pages(i18n: Path, language: str) -> None:
    """The pages hold no directional marks; marks written where editors leave them (after spaces,
    around link targets and labels) are removed, and text and anchors are those of the page without
    them, to the offset."""
    site = SiteInfo.for_language(language)
    marks = "\u200f\u200e\u202b\u202c\u2067\u2069\u202a\u202e\u202d\u2066\u2068"
    for page in pages(i18n, language):
        wikitext = page.read_text()
        pieces = re.split(r"(\s+|\[\[|\]\]|\|)", wikitext)
        marked = "".join(piece + marks[i % len(marks)] for i, piece in enumerate(pieces))
        assert marked.count(marks[0]) > 10
        assert wikitext_to_plain(marked, site) == wikitext_to_plain(wikitext, site), page.name


# ---------------------------------------------------------------------- dumps and counts


@pytest.mark.parametrize(
    ("path", "language", "expected"),
    [
        (
            "ja/jawiki-truncated-100k_first-11-pages.xml",
            "ja",
            {"articles": 6, "redirects": 1, "disambiguation": 1, "skipped_other_namespace": 4},
        ),
        ("fr/frwiki-20121230-id3.xml", "fr", {"articles": 1}),
    ],
)
def test_the_xml_excerpts_are_read_with_their_own_siteinfo(
    i18n: Path, path: str, language: str, expected: dict[str, int]
) -> None:
    dump = str(i18n / path)
    site = dump_site(dump)
    assert (site.language, site.language_from) == (language, "dump")
    names = {"ja": ("ファイル", "Category", "Template"), "fr": ("Fichier", "Catégorie", "Modèle")}[language]
    assert [site.names(key)[0] for key in (6, 14, 10)] == list(names)  # the dump's own names first
    stats = DumpStats()
    pages = list(iter_dump_pages(dump, stats))
    assert len(pages) == stats.pages == stats.pages_started and not stats.errors and not stats.bad_pages
    rows = list(_page_rows((dump, None, None), namespace=0, sites={dump: site}))
    assert page_counts(rows) == expected
    for page in pages:
        if page.ns == 0 and page.redirect_to is None:
            check_anchors(page.text, site, language, f"{path}: {page.title}")
    flagged = {row[1] for row in rows if row[4]}
    assert flagged == ({"EU (曖昧さ回避)"} if language == "ja" else set())


def page_counts(rows: list[tuple]) -> dict[str, int]:
    """What the corpus job counts of ``_page_rows``' rows (pelt.corpus.wikipedia.build), the
    counts that are not zero."""
    counts: Counter = Counter()
    for row in rows:
        is_redirect, is_disambiguation, skip = row[2], row[4], row[7]
        if skip is not None:
            counts[f"skipped_{skip}"] += 1
            continue
        counts["redirects" if is_redirect else "articles"] += 1
        counts["disambiguation"] += bool(is_disambiguation)
    return {key: value for key, value in counts.items() if value}


def language_dump(root: Path, language: str, folder: Path) -> Path:
    """The language's pages as one dump file with a header that names its wiki and no namespaces
    (a bare <siteinfo>): what the corpus job reads with the built-in facts alone."""
    site = SiteInfo.for_language(language)
    namespaces = {name.lower(): key for key, names in site.namespaces for name in names}
    written = []
    for number, page in enumerate(pages(root, language), 1):
        prefix = title(page).split(":", 1)[0].lower() if ":" in title(page) else ""
        written.append(
            f"<page><title>{escape(title(page))}</title><ns>{namespaces.get(prefix, 0)}</ns><id>{number}</id>"
            f"<revision><text>{escape(page.read_text())}</text></revision></page>\n"
        )
    header = f"<mediawiki xml:lang={quoteattr(language)}><siteinfo><dbname>{language}wiki</dbname></siteinfo>\n"
    path = folder / f"{language}wiki-pages.xml"
    path.write_text(header + "".join(written) + "</mediawiki>\n")
    return path


# What the corpus job counts per language. French: three of its pages are page heads cut after the
# infobox by the test author (Bruges, Jules César, Madonna: they show nothing) and one is in the
# Projet namespace.
COUNTS = {
    "de": {"articles": 12, "disambiguation": 3},
    "fr": {"articles": 4, "skipped_no_visible_text": 3, "skipped_other_namespace": 1},
    "ja": {"articles": 12, "disambiguation": 1},
    "zh": {"articles": 10},
    "ar": {"articles": 1},
    "he": {"articles": 1},
    "ur": {"articles": 4},
    "fa": {"articles": 1},
}


@pytest.mark.parametrize("language", PAGES)
def test_what_the_corpus_job_counts_per_language(i18n: Path, tmp_path: Path, language: str) -> None:
    dump = str(language_dump(i18n, language, tmp_path))
    site = dump_site(dump)
    assert (site.language, site.language_from, site.dbname) == (language, "dump", f"{language}wiki")
    rows = list(_page_rows((dump, None, None), namespace=0, sites={dump: site}))
    assert len(rows) == PAGES[language]  # one row per page, no read error
    assert page_counts(rows) == COUNTS[language]
    for row in rows:
        text, links = row[5], row[6]
        if text is not None:
            assert links and all(0 <= start < end <= len(text) and target for start, end, target in links)
