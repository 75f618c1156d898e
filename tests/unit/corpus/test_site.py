"""pelt.corpus.wikipedia.site: a wiki's namespaces, redirect words, disambiguation templates and link trail, from
the dump's <siteinfo> or the built-in table, and the per-page functions reading a German or Japanese
wiki with them (pure Python)."""

from __future__ import annotations

import bz2
import pickle
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pelt.corpus.wikipedia.build import _page_rows
from pelt.corpus.wikipedia.dump import dump_site, iter_dump_pages, read_dump_header
from pelt.corpus.wikipedia.site import ENGLISH, SiteInfo, language_of_dbname
from pelt.corpus.wikipedia.titles import is_disambiguation, redirect_target
from pelt.corpus.wikipedia.wikitext import wikitext_to_plain

# A German dump's header, made by hand: the dump names namespace 6 "Datei"; "Bild", its alias, is
# said here in the API's <namespacealiases> shape (a real dump leaves it to the built-in table).
GERMAN_HEADER = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" xml:lang="de">
  <siteinfo>
    <sitename>Wikipedia</sitename>
    <dbname>dewiki</dbname>
    <case>first-letter</case>
    <namespaces>
      <namespace key="-2" case="first-letter">Medium</namespace>
      <namespace key="0" case="first-letter" />
      <namespace key="6" case="first-letter">Datei</namespace>
      <namespace key="10" case="first-letter">Vorlage</namespace>
      <namespace key="14" case="first-letter">Kategorie</namespace>
    </namespaces>
    <namespacealiases><ns id="6">Bild</ns></namespacealiases>
  </siteinfo>
"""


def page_xml(page_id: int, title: str, text: str, redirect: str | None = None) -> str:
    tag = f'<redirect title="{redirect}" />' if redirect else ""
    return (
        f"<page><title>{title}</title><ns>0</ns><id>{page_id}</id>{tag}"
        f"<revision><id>{page_id}0</id><text>{text}</text></revision></page>\n"
    )


def german_site(header: str = GERMAN_HEADER, language: str | None = None) -> SiteInfo:
    return SiteInfo.from_siteinfo(ET.fromstring(header + "</mediawiki>"), language)


def anchors(wikitext: str, site: SiteInfo) -> tuple[str, list[tuple[str, str]]]:
    text, links = wikitext_to_plain(wikitext, site)
    return text, [(text[link.start : link.end], link.target) for link in links]


def test_siteinfo_gives_language_dbname_and_namespaces_with_english_names() -> None:
    site = german_site()
    assert (site.language, site.language_from, site.dbname) == ("de", "dump", "dewiki")
    assert site.names(6)[:2] == ("Datei", "Bild") and {"File", "Image"} <= set(site.names(6))
    assert {"kategorie", "category", "datei", "bild", "file", "image"} <= site.hidden_prefixes
    assert {"vorlage", "template", "medium", "spezial"} <= site.other_prefixes
    assert pickle.loads(pickle.dumps(site)) == site  # it travels to the executors


def test_language_from_dbname_then_default_and_the_config_wins() -> None:
    no_lang = GERMAN_HEADER.replace(' xml:lang="de"', "")
    assert german_site(no_lang).language == "de"  # from <dbname>dewiki</dbname>
    assert german_site(GERMAN_HEADER.replace("<dbname>dewiki</dbname>", "")).language == "de"  # from xml:lang
    assert german_site(GERMAN_HEADER, "fr").language_from == "config"
    assert german_site(GERMAN_HEADER, "fr").link_trail == SiteInfo.for_language("fr").link_trail
    assert SiteInfo.from_siteinfo(None) == ENGLISH  # no header: English Wikipedia, as before
    assert [language_of_dbname(db) for db in ("dewiki", "zh_yuewiki", "demowiki", "commonswiki", "dewiktionary")] == [
        "de",
        "zh-yue",
        None,
        None,
        None,
    ]


def test_german_files_and_categories_do_not_reach_the_text() -> None:
    wikitext = (
        "[[Datei:x.jpg|mini|Bildtext]]Ein [[Mann]].\n[[Bild:y.png|links|Bildunterschrift]] [[File:z.svg|thumb|Caption]]"
        " [[Image:w.png|Anderes]] Text.\n[[Kategorie:Mann]] [[kategorie:Frau]]"
    )
    text, links = anchors(wikitext, german_site())
    assert text == "Ein Mann.\nText."
    assert links == [("Mann", "Mann")]
    english_text, _ = wikitext_to_plain(wikitext)  # English reads only File:/Image:
    assert "Bildtext" in english_text and "Kategorie" not in text


def test_german_link_trails_take_umlauts_and_eszett() -> None:
    text, links = anchors("Des [[Haus]]es, der [[Straße]]n, ein [[Bär]]ä und [[Foo]]-Bar", german_site())
    assert text == "Des Hauses, der Straßen, ein Bärä und Foo-Bar"
    assert links == [("Hauses", "Haus"), ("Straßen", "Straße"), ("Bärä", "Bär"), ("Foo", "Foo")]
    assert anchors("[[Bär]]ä", ENGLISH)[1] == [("Bär", "Bär")]  # English's trail is [a-z]+


def test_german_redirect_words_and_disambiguation_template() -> None:
    site = german_site()
    assert redirect_target("#WEITERLEITUNG [[Ziel]]", site) == "Ziel"
    assert redirect_target("#weiterleitung:[[ziel#Abschnitt]]", site) == "Ziel"
    assert redirect_target("#REDIRECT [[Ziel]]", site) == "Ziel"  # the English word works everywhere
    assert redirect_target("#WEITERLEITUNG [[Ziel]]") is None  # not an English redirect word
    assert is_disambiguation("'''Bank''' steht für:\n{{Begriffsklärung}}", site)
    assert not is_disambiguation("{{Begriffsklärungshinweis}} Ein Artikel.", site)  # a hatnote
    assert not is_disambiguation("{{Begriffsklärung}}")


def test_french_site_from_the_table() -> None:
    site = SiteInfo.for_language("fr")
    assert anchors("[[Fichier:a.jpg|vignette|Légende]]Le [[café]]ière [[Catégorie:Boisson]]", site) == (
        "Le caféière",
        [("caféière", "Café")],
    )
    assert redirect_target("#REDIRECTION [[Paris]]", site) == "Paris"
    assert is_disambiguation("{{Homonymie}}", site)
    assert is_disambiguation("{{Bandeau standard pour page d'homonymie}}", site)


def test_japanese_link_trail_takes_latin_letters_only() -> None:
    site = SiteInfo.for_language("ja")
    assert anchors("[[東京]]都の[[ファイル:a.jpg|サムネイル|説明]][[Category:日本]][[カテゴリ:東京]]", site) == (
        "東京都の",
        [("東京", "東京")],
    )
    assert anchors("[[Tokyo]]s", site)[1] == [("Tokyos", "Tokyo")]  # jawiki's trail is MediaWiki's default
    assert is_disambiguation("{{曖昧さ回避}}", site) and is_disambiguation("{{Aimai}}", site)
    assert redirect_target("#転送 [[東京都]]", site) == "東京都"


def test_unknown_language_falls_back_to_english_facts(caplog: pytest.LogCaptureFixture) -> None:
    site = SiteInfo.for_language("xx")
    assert site.language == "xx" and site.link_trail == ENGLISH.link_trail
    assert "no built-in site facts" in caplog.text


def test_english_is_unchanged() -> None:
    assert anchors("The [[bus]]es [[File:a.jpg|thumb|cap]][[Category:X]]", ENGLISH) == ("The buses", [("buses", "Bus")])
    assert wikitext_to_plain("[[Datei:a.jpg|mini|Bildtext]]")[0] == "mini|Bildtext"  # an article link in English
    assert redirect_target("#REDIRECT [[Foo]]") == "Foo"
    assert is_disambiguation("{{Human name disambiguation}}")


def german_dump(path: Path, compress: bool) -> Path:
    pages = [
        page_xml(1, "Bank", "'''Bank''' steht für:\n* [[Bank (Möbel)]]\n{{Begriffsklärung}}"),
        page_xml(2, "Mann", "[[Datei:x.jpg|mini|Bildtext]]Ein [[Mann]] der [[Straße]]n.\n[[Kategorie:Mann]]"),
        page_xml(3, "Herr", "#WEITERLEITUNG [[Mann]]"),
        page_xml(4, "Kerl", "#WEITERLEITUNG [[Mann]]", redirect="Mann"),
    ]
    data = (GERMAN_HEADER + "".join(pages) + "</mediawiki>\n").encode()
    path.write_bytes(bz2.compress(data) if compress else data)
    return path


@pytest.mark.parametrize("compress", [True, False])
def test_a_german_dump_is_read_as_german(tmp_path: Path, compress: bool) -> None:
    path = german_dump(tmp_path / ("de.xml.bz2" if compress else "de.xml"), compress)
    header = read_dump_header(path)
    assert header is not None and [child.tag.rsplit("}")[-1] for child in header] == ["siteinfo"]
    assert len(list(iter_dump_pages(path))) == 4  # the header read leaves the pages to the reader
    site = dump_site(path)
    assert (site.language, site.language_from) == ("de", "dump")
    rows = {row[1]: row for row in _page_rows((str(path), None, None), namespace=0, sites={str(path): site})}
    assert rows["Bank"][4] is True  # is_disambiguation
    assert rows["Mann"][5] == "Ein Mann der Straßen." and "Datei" not in rows["Mann"][5]
    assert rows["Mann"][6] == [(4, 8, "Mann"), (13, 20, "Straße")]
    assert rows["Herr"][2:4] == (True, "Mann") and rows["Kerl"][2:4] == (True, "Mann")
    english = {row[1]: row for row in _page_rows((str(path), None, None), namespace=0)}
    assert "Bildtext" in english["Mann"][5] and english["Herr"][2] is False  # what it was before


def test_the_config_language_wins_over_the_dump(tmp_path: Path) -> None:
    path = german_dump(tmp_path / "de.xml", compress=False)
    site = dump_site(path, "ja")
    assert (site.language, site.language_from, site.dbname) == ("ja", "config", "dewiki")
    assert site.link_trail == SiteInfo.for_language("ja").link_trail and "datei" in site.hidden_prefixes
    assert site.describe() == {"language": "ja", "language_from": "config", "dbname": "dewiki"}


def test_a_file_without_header_is_english(tmp_path: Path) -> None:
    path = tmp_path / "pages.xml"
    path.write_text("<pages>" + page_xml(1, "A", "x") + "</pages>")
    assert read_dump_header(path) is None and dump_site(path) == ENGLISH
    (tmp_path / "broken.xml").write_text("<mediawiki><siteinfo><<")
    assert dump_site(tmp_path / "broken.xml") == ENGLISH
