"""pelt.corpus.wikipedia.titles, templates, wikitext, dump, bz2_blocks: titles, wikitext -> plain text + anchor spans,
dump streaming (pure Python, fast)."""

from __future__ import annotations

import bz2
import io
import os
import random
import re
import string
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pelt.corpus.wikipedia.pages
from pelt.corpus.wikipedia.build import WorkItem, _page_rows, multistream_without_index, wikipedia_work_items
from pelt.corpus.wikipedia.bz2_blocks import bz2_block_ranges
from pelt.corpus.wikipedia.dump import iter_bz2_range_pages, iter_dump_pages, iter_pages_from_chunks
from pelt.corpus.wikipedia.multistream import iter_multistream_pages, multistream_index_path, multistream_ranges
from pelt.corpus.wikipedia.pages import DumpStats
from pelt.corpus.wikipedia.titles import is_disambiguation, normalize_title, redirect_target
from pelt.corpus.wikipedia.wikitext import Link, wikitext_to_plain


def anchors(wikitext: str) -> tuple[str, list[tuple[str, str]]]:
    """Plain text and (visible text, target) per anchor, checking that every span is exact."""
    text, links = wikitext_to_plain(wikitext)
    for link in links:
        assert 0 <= link.start < link.end <= len(text)
    return text, [(text[link.start : link.end], link.target) for link in links]


# ---------------------------------------------------------------------------- titles


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("foo_bar", "Foo bar"),
        ("  Foo \t  bar_ ", "Foo bar"),
        ("foo#History", "Foo"),
        ("#History", ""),
        ("", ""),
        ("AT&amp;T", "AT&T"),
        ("ébola virus", "Ébola virus"),
        ("iPhone", "IPhone"),
    ],
)
def test_normalize_title(raw: str, expected: str) -> None:
    assert normalize_title(raw) == expected


def test_redirect_target() -> None:
    assert redirect_target("#REDIRECT [[computer_accessibility#History]]\n{{R from move}}") == "Computer accessibility"
    assert redirect_target("  #redirect:[[Foo|bar]]") == "Foo"
    assert redirect_target("Text that mentions #REDIRECT [[Foo]] later") is None
    assert redirect_target("Plain article") is None


@pytest.mark.parametrize(
    "wikitext",
    [
        "'''Ada''' may refer to:\n{{disambiguation}}",
        "{{Disambig|geo}}",
        "x {{dab}}",
        "{{hndis|Smith, John}}",
        "{{geodis}}",
        "{{Human name disambiguation}}",
        "{{disambiguation cleanup|date=May 2020}}",
    ],
)
def test_is_disambiguation(wikitext: str) -> None:
    assert is_disambiguation(wikitext)


@pytest.mark.parametrize(
    "wikitext",
    [
        "A [[bank]]{{disambiguation needed|date=2020}} article",
        "{{Infobox disease}}",
        "{{distinguish|Foo}}",
        "no templates",
    ],
)
def test_is_not_disambiguation(wikitext: str) -> None:
    assert not is_disambiguation(wikitext)


# ---------------------------------------------------------------------------- wikitext -> plain


def test_piped_plain_links_and_trails() -> None:
    text, links = anchors("The [[bus]]es and [[Foo_bar#Sec|the ''foo'']] stop at [[paris]].")
    assert text == "The buses and the foo stop at paris."
    assert links == [("buses", "Bus"), ("the foo", "Foo bar"), ("paris", "Paris")]
    assert wikitext_to_plain("[[bus]]es")[1] == [Link(0, 5, "Bus")]


def test_link_trail_stops_at_nowiki_and_non_letters() -> None:
    assert anchors("[[Foo]]<nowiki/>s and [[Bar]]'s [[Baz]]-like") == (
        "Foos and Bar's Baz-like",
        [("Foo", "Foo"), ("Bar", "Bar"), ("Baz", "Baz")],
    )


def test_nested_templates_removed_and_inline_templates_kept() -> None:
    text, links = anchors(
        "A {{outer|x={{inner|y}}|[[Gone]]}} B {{nowrap|{{convert|5|km|mi}} away}} "
        "{{lang|fr|[[Paris|la ville]]}} {{lang-de|Haus}} {{convert|3|-|4|m}} {{as of|2010|lc=y}}{{'}}s C"
    )
    assert text == "A B 5 km away la ville Haus 3–4 m As of 2010's C"
    assert links == [("la ville", "Paris")]


def test_template_parameters_and_stray_braces() -> None:
    assert anchors("a {{{1|default}}} b }} c {{x|{y}}} d") == ("a b c d", [])
    # An unclosed template loses its braces only, as MediaWiki shows it; later markup is still handled.
    assert anchors("start {{broken|x\nmore\n\n{{gone}} after [[Link]]") == (
        "start broken|x\nmore\nafter Link",
        [("Link", "Link")],
    )
    assert anchors("{{{{x}} y {{{nowrap|z}}") == ("y z", [])  # the innermost braces close first


def test_refs_removed_with_their_content() -> None:
    text, links = anchors(
        'Fact.<ref name="a">Cite {{cite web|url=x}} [[Hidden]]</ref> More<ref name=a/>.<ref group="n">N</ref>'
        " End.\n<references/>"
    )
    assert (text, links) == ("Fact. More. End.", [])


def test_tables_removed_nested_and_unclosed() -> None:
    text, links = anchors(
        "Before [[A]]\n{| class=wikitable\n|-\n| [[Cell]] || {{x}}\n|\n{|\n| inner\n|}\n|}\nAfter\n"
        ":{| indented\n| [[Z]]\n|}\nEnd\n\n{| unclosed\nrow\n\nNext [[B]]"
    )
    assert text == "Before A\nAfter\nEnd\nrow\nNext B"  # an unclosed table loses its opening line only
    assert links == [("A", "A"), ("B", "B")]


def test_files_with_captions_categories_interlanguage_comments() -> None:
    text, links = anchors(
        "[[File:X.jpg|thumb|A [[caption link]] and [[Other|x]]]] Text [[Image:Y.png|left]] here.<!-- [[Note]] -->\n"
        "[[Category:Foo| ]]\n[[fr:Bar]]\n[[zh-min-nan:Baz]]"
    )
    assert (text, links) == ("Text here.", [])


def test_visible_links_outside_the_main_namespace_have_no_anchor() -> None:
    text, links = anchors("[[wikt:word|word]], [[:Category:Cats|cats]], [[s:Book]], [[Star Trek: Voyager]]")
    assert text == "word, cats, s:Book, Star Trek: Voyager"
    assert links == [("Star Trek: Voyager", "Star Trek: Voyager")]


def test_bold_italic_headings_lists_html_and_entities() -> None:
    text, links = anchors(
        "'''Bold''' and ''it'' and '''''both''''' and l''''amour'''\n"
        "== History of [[X]] ==\n"
        "* item one\n# item two\n----\n"
        "H<sub>2</sub>O is <span style='x'>wet</span><br/>next &amp; AT&amp;T&nbsp;now __NOTOC__"
    )
    assert text == "Bold and it and both and l'amour\nHistory of X\nitem one\nitem two\nH2O is wet\nnext & AT&T now"
    assert links == [("X", "X")]


def test_external_links_keep_their_label() -> None:
    assert anchors("See [http://example.com/a?b=c the site] and [https://x.org] or http://bare.org.") == (
        "See the site and or http://bare.org.",
        [],
    )


def test_nowiki_content_is_literal() -> None:
    assert anchors("a <nowiki>[[x]] ''y'' {{z}}</nowiki> [[B]]") == ("a [[x]] ''y'' {{z}} B", [("B", "B")])


def test_literal_brackets_around_a_link() -> None:
    assert anchors("(bilingual) [''[[The Art]]''] [[Foo|bar]]]") == (
        "(bilingual) [The Art] bar]",
        [("The Art", "The Art"), ("bar", "Foo")],
    )


def test_whitespace_collapsed_and_spans_follow() -> None:
    text, links = anchors("  a\n\n\n  b   {{x}}  [[c]] \t d\n \n[[e|E]]  ")
    assert text == "a\nb c d\nE"
    assert links == [("c", "C"), ("E", "E")]


def test_anchor_label_whitespace_stays_outside_the_span() -> None:
    text, links = anchors("x[[Foo| bar ]] y [[#Section|here]] [[Baz|]]")
    assert text == "x bar y here"
    assert links == [("bar", "Foo")]


def test_unbalanced_link_brackets_leave_no_markup() -> None:
    text, links = anchors("a [[unclosed and [[Real]] b ]] c")
    assert "[[" not in text and "]]" not in text
    assert text == "a unclosed and Real b c"
    assert links == [("Real", "Real")]


# ---------------------------------------------------------------------------- dump reading

NS = 'xmlns="http://www.mediawiki.org/xml/export-0.10/"'


def page_xml(page_id: int, title: str, text: str, ns: int = 0, redirect: str | None = None) -> str:
    redirect_tag = f'<redirect title="{redirect}" />' if redirect else ""
    return (
        f"<page><title>{title}</title><ns>{ns}</ns><id>{page_id}</id>{redirect_tag}"
        f'<revision><id>{page_id + 1000}</id><text xml:space="preserve">{text}</text></revision></page>\n'
    )


PAGES = [
    page_xml(1, "Alpha", "'''Alpha''' is a [[letter]]."),
    page_xml(2, "Beta_redirect", "#REDIRECT [[Beta]]", redirect="Beta"),
    page_xml(3, "Talk:Alpha", "talk", ns=1),
    page_xml(4, "Gamma", "#REDIRECT [[gamma ray]]"),
]


def dump(pages: list[str], namespace: str = NS) -> bytes:
    head = f"<mediawiki {namespace}><siteinfo><sitename>W</sitename></siteinfo>\n"
    return (head + "".join(pages) + "</mediawiki>\n").encode()


@pytest.mark.parametrize("namespace", [NS, 'xmlns="http://www.mediawiki.org/xml/export-0.11/"', ""])
def test_iter_dump_pages_fields_any_schema_version(namespace: str) -> None:
    stats = DumpStats()
    pages = list(iter_dump_pages(io.BytesIO(dump(PAGES, namespace)), stats))
    assert [(p.page_id, p.ns, p.title, p.redirect_to) for p in pages] == [
        (1, 0, "Alpha", None),
        (2, 0, "Beta_redirect", "Beta"),
        (3, 1, "Talk:Alpha", None),
        (4, 0, "Gamma", None),
    ]
    assert pages[0].text == "'''Alpha''' is a [[letter]]."
    assert (stats.pages, stats.errors, stats.bad_pages) == (4, [], [])


def test_iter_dump_pages_bz2_path(tmp_path: Path) -> None:
    path = tmp_path / "dump.xml.bz2"
    path.write_bytes(bz2.compress(dump(PAGES)))
    plain = tmp_path / "dump.xml"
    plain.write_bytes(dump(PAGES))
    assert [p.title for p in iter_dump_pages(path)] == [p.title for p in iter_dump_pages(plain)]
    assert len(list(iter_dump_pages(str(path)))) == 4


def test_truncated_bz2_keeps_pages_before_the_break(caplog: pytest.LogCaptureFixture) -> None:
    # Two bz2 streams (as Wikimedia's multistream files): the second is cut in half.
    xml = dump(PAGES)
    cut = xml.index(b"<page><title>Talk:Alpha")
    data = bz2.compress(xml[:cut]) + bz2.compress(xml[cut:])[:40]
    stats = DumpStats()
    pages = list(iter_dump_pages(bz2.BZ2File(io.BytesIO(data)), stats))
    assert [p.page_id for p in pages] == [1, 2]
    assert stats.pages == 2
    assert len(stats.errors) == 1 and "EOFError" in stats.errors[0]
    assert "dump read stopped after 2 pages" in caplog.text


def test_malformed_xml_costs_only_its_page() -> None:
    broken = PAGES[:2] + ["<page><title>Bad</title><<oops>\n"] + PAGES[2:]
    stats = DumpStats()
    pages = list(iter_dump_pages(io.BytesIO(dump(broken)), stats))
    assert [p.page_id for p in pages] == [1, 2, 3, 4]  # it used to stop the read: pages 3 and 4 were lost
    assert len(stats.bad_pages) == 1 and "'Bad'" in stats.bad_pages[0] and "malformed XML" in stats.bad_pages[0]
    assert stats.errors == [] and stats.pages_started == 5


def test_bytes_that_are_not_utf8_are_replaced_counted_and_every_page_kept(tmp_path: Path) -> None:
    pages = [page_xml(1, "Alpha", "caf\u00e9 AAA"), page_xml(2, "Beta", "BBB and CCC"), PAGES[3]]
    data = dump(pages).replace(b"AAA", b"\xff\xfe").replace(b"CCC", b"\xc3(")  # 2 bad bytes, a cut sequence
    stats = DumpStats()
    one_byte_chunks = iter_pages_from_chunks((data[i : i + 1] for i in range(len(data))), stats)
    got = [(p.page_id, p.text) for p in one_byte_chunks]  # every multibyte character split over chunks
    assert got == [(1, "caf\u00e9 \ufffd\ufffd"), (2, "BBB and \ufffd("), (4, "#REDIRECT [[gamma ray]]")]
    assert stats.bad_utf8 == 3 and stats.errors == [] and stats.pages == 3
    whole = DumpStats()
    assert [(p.page_id, p.text) for p in iter_pages_from_chunks([data], whole)] == got and whole.bad_utf8 == 3
    (tmp_path / "bad.xml").write_bytes(data)
    rows = list(_page_rows((str(tmp_path / "bad.xml"), None, None), namespace=0))
    assert [row[0] for row in rows if row[7] is None] == [1, 2, 4]  # kept as pages
    notices = [row for row in rows if row[7] == "bad_utf8"]
    assert len(notices) == 1 and "3 bytes that are not UTF-8" in notices[0][8]


def test_characters_xml_forbids_are_replaced_counted_and_every_page_kept(tmp_path: Path) -> None:
    # one control character or reference to one used to end the file: every page after it was lost
    pages = [page_xml(1, "Alpha", "bell \x07 here"), page_xml(2, "Beta", "ref &#1; and &#x1F; kept &#233;"), PAGES[3]]
    data = dump(pages)
    expected = [(1, "bell \ufffd here"), (2, "ref \ufffd and \ufffd kept \u00e9"), (4, "#REDIRECT [[gamma ray]]")]
    for chunking in (1, 3, len(data)):  # references cut by every possible chunk boundary
        stats = DumpStats()
        chunks = (data[i : i + chunking] for i in range(0, len(data), chunking))
        assert [(p.page_id, p.text) for p in iter_pages_from_chunks(chunks, stats)] == expected, chunking
        assert stats.bad_xml_chars == 3 and stats.errors == [] and stats.pages == 3
    (tmp_path / "bad.xml").write_bytes(data)
    rows = list(_page_rows((str(tmp_path / "bad.xml"), None, None), namespace=0))
    assert [row[0] for row in rows if row[7] is None] == [1, 2, 4]
    notices = [row for row in rows if row[7] == "bad_xml_chars"]
    assert len(notices) == 1 and "3 characters that XML forbids" in notices[0][8]


def test_page_without_id_is_counted_not_fatal() -> None:
    bad = "<page><title>NoId</title><ns>0</ns><revision><text>x</text></revision></page>\n"
    stats = DumpStats()
    pages = list(iter_dump_pages(io.BytesIO(dump([PAGES[0], bad, PAGES[3]])), stats))
    assert [p.page_id for p in pages] == [1, 4]
    assert len(stats.bad_pages) == 1 and "NoId" in stats.bad_pages[0]
    assert stats.errors == []


def write_multistream(
    directory: Path, pages: list[str], per_stream: int, name: str = "x-multistream.xml.bz2", level: int = 9
) -> Path:
    """A multistream dump as Wikimedia writes it: header stream, streams of pages, trailer; plus its
    index. ``level``: bz2's block size in 100 kB (a stream of more text holds several blocks)."""
    path = directory / name
    header = f"<mediawiki {NS}><siteinfo><sitename>W</sitename></siteinfo>\n".encode()
    blobs = [bz2.compress(header)]
    index_lines = []
    offset = len(blobs[0])
    for i in range(0, len(pages), per_stream):
        group = pages[i : i + per_stream]
        blob = bz2.compress("".join(group).encode(), compresslevel=level)
        index_lines += [f"{offset}:{i + j}:page {i + j}\n" for j in range(len(group))]
        blobs.append(blob)
        offset += len(blob)
    blobs.append(bz2.compress(b"</mediawiki>\n"))
    path.write_bytes(b"".join(blobs))
    index = directory / name.replace("multistream", "multistream-index").replace(".xml", ".txt")
    index.write_bytes(bz2.compress("".join(index_lines).encode()))
    return path


def test_multistream_ranges_cover_every_page_once(tmp_path: Path) -> None:
    pages = [page_xml(i, f"Page {i}", f"text [[link {i}]] " * 20) for i in range(1, 12)]
    path = write_multistream(tmp_path, pages, per_stream=2)
    index = multistream_index_path(str(path))
    assert index == str(tmp_path / "x-multistream-index.txt.bz2")
    ranges = multistream_ranges(str(path), index, target_bytes=1)
    assert len(ranges) == 6  # one range per stream of pages; the trailer rides with the last
    assert ranges[-1][1] == os.path.getsize(path)
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    assert [pages for _, _, streams in ranges for _, pages in streams] == [2, 2, 2, 2, 2, 1]  # from the index
    assert all(streams[0][0] == start for start, _, streams in ranges)
    got = [
        p.page_id for start, end, streams in ranges for p in iter_multistream_pages(path, start, end, streams=streams)
    ]
    assert got == list(range(1, 12))
    (whole,) = multistream_ranges(str(path), index, target_bytes=1 << 30)
    assert [p.page_id for p in iter_multistream_pages(path, whole.start, whole.end, streams=whole.streams)] == list(
        range(1, 12)
    )


def test_multistream_range_cut_inside_a_stream_is_an_error(tmp_path: Path) -> None:
    pages = [page_xml(i, f"Page {i}", "text") for i in range(1, 5)]
    path = write_multistream(tmp_path, pages, per_stream=2)
    (start, _, _), (second, _, _) = multistream_ranges(str(path), multistream_index_path(str(path)), 1)[:2]
    stats = DumpStats()
    got = list(iter_multistream_pages(path, start, second + 10, stats))
    assert [p.page_id for p in got] == [1, 2]
    assert len(stats.errors) == 1 and "cut short" in stats.errors[0]


def _flipped(data: bytes, at: int, n: int = 16) -> bytes:
    """``data`` with the ``n`` bytes from ``at`` inverted: a corrupt bz2 block there."""
    return data[:at] + bytes(b ^ 0xFF for b in data[at : at + n]) + data[at + n :]


def test_a_corrupt_stream_is_skipped_to_the_next_the_index_lists_and_its_pages_counted(tmp_path: Path) -> None:
    pages = [page_xml(i, f"Page {i}", f"text [[link {i}]] " * 20) for i in range(1, 13)]
    path = write_multistream(tmp_path, pages, per_stream=3)
    (whole,) = multistream_ranges(str(path), multistream_index_path(str(path)), target_bytes=1 << 30)
    (second, _), (third, _) = whole.streams[1:3]
    path.write_bytes(_flipped(path.read_bytes(), (second + third) // 2))
    stats = DumpStats()
    got = [p.page_id for p in iter_multistream_pages(path, whole.start, whole.end, stats, streams=whole.streams)]
    assert got == [1, 2, 3, 7, 8, 9, 10, 11, 12]  # every page of the other streams
    assert stats.pages_unread == 3 and stats.cut_pages == []  # the index says the stream held 3 pages
    assert len(stats.errors) == 1 and f"bz2 stream at byte {second} does not decode" in stats.errors[0]
    assert stats.bytes_unread == third - second  # the stream gave nothing: all its bytes are skipped
    rows = list(_page_rows(WorkItem(str(path), whole.start, whole.end, streams=whole.streams), namespace=0))
    assert [row[0] for row in rows if row[7] is None] == got
    assert sum(row[-1] for row in rows if row[7] == "page_cut") == 3
    assert sum(row[-1] for row in rows if row[7] == "unread_bytes") == third - second
    # Without the index's streams: resumed at the next stream header in the bytes, the skip an error.
    blind = DumpStats()
    assert [p.page_id for p in iter_multistream_pages(path, whole.start, whole.end, blind)] == got
    assert (blind.errors, blind.bytes_unread, blind.pages_unread) == (stats.errors, stats.bytes_unread, 0)


def test_a_stream_whose_header_is_corrupt_is_skipped_not_taken_for_the_files_end(tmp_path: Path) -> None:
    pages = [page_xml(i, f"Page {i}", "text") for i in range(1, 10)]
    path = write_multistream(tmp_path, pages, per_stream=3)
    (whole,) = multistream_ranges(str(path), multistream_index_path(str(path)), target_bytes=1 << 30)
    path.write_bytes(_flipped(path.read_bytes(), whole.streams[1][0], 3))  # "BZh" no more
    stats = DumpStats()
    got = [p.page_id for p in iter_multistream_pages(path, whole.start, whole.end, stats, streams=whole.streams)]
    assert got == [1, 2, 3, 7, 8, 9] and stats.pages_unread == 3 and stats.trailing_bytes == 0


def test_a_stream_corrupt_in_a_later_block_keeps_its_earlier_pages_and_counts_the_rest(tmp_path: Path) -> None:
    letters = random.Random(7)  # text bz2 hardly compresses: a stream of several reads and blocks
    pages = [page_xml(i, f"Page {i}", "".join(letters.choices(string.ascii_lowercase, k=20_000))) for i in range(1, 41)]
    path = write_multistream(tmp_path, pages, per_stream=20, level=1)  # 400 kB a stream: 4 blocks
    (whole,) = multistream_ranges(str(path), multistream_index_path(str(path)), target_bytes=1 << 30)
    (first, listed), (second, _) = whole.streams
    path.write_bytes(_flipped(path.read_bytes(), second - 200))  # in the first stream's last block
    stats = DumpStats()
    got = [p.page_id for p in iter_multistream_pages(path, whole.start, whole.end, stats, streams=whole.streams)]
    kept = [page_id for page_id in got if page_id <= 20]
    assert 0 < len(kept) < 20 and kept == list(range(1, len(kept) + 1))  # the pages of its whole blocks
    assert got[len(kept) :] == list(range(21, 41))  # and every page of the next stream
    assert len(kept) + len(stats.cut_pages) + stats.pages_unread == listed  # the rest counted, none twice
    assert len(stats.errors) == 1 and 0 < stats.bytes_unread < second - first


def test_split_multistream_index_name(tmp_path: Path) -> None:
    dump_path = tmp_path / "enwiki-20240101-pages-articles-multistream1.xml-p1p41242.bz2"
    index = tmp_path / "enwiki-20240101-pages-articles-multistream-index1.txt-p1p41242.bz2"
    dump_path.write_bytes(b"")
    assert multistream_index_path(str(dump_path)) is None  # no index beside it: one task per file
    index.write_bytes(b"")
    assert multistream_index_path(str(dump_path)) == str(index)
    assert multistream_index_path(str(tmp_path / "enwiki-pages-articles.xml.bz2")) is None


SAMPLE_DUMP = "wikipedia_dump_sample/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"


@pytest.fixture(scope="module")
def single_stream(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real dump sample as one bz2 stream of 100k blocks (compresslevel 1): 61 blocks."""
    path = tmp_path_factory.mktemp("bz2") / "enwiki-pages-articles.xml.bz2"
    path.write_bytes(bz2.compress(bz2.decompress((shared_data / SAMPLE_DUMP).read_bytes()), compresslevel=1))
    return path


def block_split(path: Path, n_ranges: int, stats: DumpStats | None = None) -> list:
    """The pages of every range, in order, ``n_ranges`` ranges of bz2 blocks."""
    ranges = bz2_block_ranges(path, os.path.getsize(path) // n_ranges + 1)
    assert len(ranges) == n_ranges
    return [page for start, end in ranges for page in iter_bz2_range_pages(path, start, end, stats)]


def test_single_stream_bz2_split_by_blocks_gives_the_pages_read_whole(single_stream: Path) -> None:
    whole = list(iter_dump_pages(single_stream))
    assert len(whole) == 206
    stats = DumpStats()
    # Ranges of ~84 KB for 61 blocks: some hold no block start, most no page start.
    assert block_split(single_stream, 23, stats) == whole
    assert stats.errors == [] and stats.pages == 206
    items = wikipedia_work_items([str(single_stream)], split_bytes=1)
    assert [item.reader for item in items] == ["blocks", "blocks"]  # ranges of at least 1 MiB
    assert [page for item in items for page in iter_bz2_range_pages(*item[:3])] == whole


def test_truncated_single_stream_keeps_the_pages_of_whole_blocks(single_stream: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut.xml.bz2"
    cut.write_bytes(single_stream.read_bytes()[: os.path.getsize(single_stream) * 2 // 3])
    whole = list(iter_dump_pages(cut))
    stats = DumpStats()
    pages = block_split(cut, 3, stats)
    assert len(stats.errors) == 1 and "cut short" in stats.errors[0]
    assert len(pages) > 100 and pages == whole[: len(pages)]


def test_multistream_without_index_is_warned_and_split_by_blocks(tmp_path: Path, caplog) -> None:
    pages = [page_xml(i, f"Page {i}", f"text [[link {i}]] " * 20) for i in range(1, 30)]
    path = write_multistream(tmp_path, pages, per_stream=3)
    indexed = write_multistream(tmp_path, pages, per_stream=3, name="y-multistream.xml.bz2")
    os.remove(multistream_index_path(str(path)))
    single = tmp_path / "single.xml.bz2"
    single.write_bytes(bz2.compress(bz2.decompress(path.read_bytes())))
    assert multistream_without_index([str(path), str(indexed), str(single)]) == [str(path)]
    assert "multistream dump without its -index.txt.bz2" in caplog.text
    assert [p.page_id for p in block_split(path, 4)] == list(range(1, 30))
    # Cut inside the stream after the last page (the trailer's): every page is kept, the cut is the one error.
    trailer = len(bz2.compress(b"</mediawiki>\n"))
    path.write_bytes(path.read_bytes()[:-trailer] + bz2.compress(b"</mediawiki>\n" * 100)[:30])
    stats = DumpStats()
    assert [p.page_id for p in block_split(path, 1, stats)] == list(range(1, 30))
    assert len(stats.errors) == 1 and "cut short" in stats.errors[0]


# ---------------------------------------------------------------------------- the visible text (issue 15)


@pytest.mark.parametrize(
    ("wikitext", "expected"),
    [
        # quotations: their text, not the attribution
        ("A {{quote|text=To be.|author=X}} B", "A To be. B"),
        ("{{cquote|Said so.|Y}} {{quotation|Q.}} {{blockquote|quote=R.}}", "Said so. Q. R."),
        # text-bearing inline templates
        ("{{chem|H|2|O}} {{chem2|CO2}} 1{{eqm}}2", "H2O CO2 1⇌2"),
        ("''Eagle''{{'s}} pad, ''x''{{'}}s", "Eagle's pad, x's"),
        ("{{IPA|[dʒ]}} {{IPA-de|ˈhaʊs|lang}} {{IPAc-en|pron|ˈ|eɪ|b_|l|}}", "[dʒ] ˈhaʊs /ˈeɪb l/"),
        ("{{angbr|a}} {{sc|bc}} {{smallcaps|Ad}} {{abbr|UK|United Kingdom}}", "⟨a⟩ bc Ad UK"),
        (
            "{{lang|fr|texte}} {{lang-de|Haus}} {{transl|ar|ALA|al-lāh}} {{nihongo|Aikido|合気道}}",
            "texte Haus al-lāh Aikido",
        ),
        (
            "{{convert|5|km|mi}} {{frac|3|1|2}} {{frac|2}} {{val|6.2|e=18}} {{val|3|u=kg}}",
            "5 km 3 1/2 1/2 6.2×10^18 3 kg",
        ),
        ("{{hlist|a|b}}; {{ubl|c|d}}; {{keypress|Ctrl|C}}", "a · b; c\nd; Ctrl+C"),
        # dates as shown by default, the day first with df=y; no age that changes with the day of reading
        (
            "{{birth date|1950|5|3}}; {{birth date|1950|5|3|df=y}}; {{birth date and age|1950|5|3}}",
            "May 3, 1950; 3 May 1950; May 3, 1950",
        ),
        (
            "{{death date and age|2000|1|2|1950|5|3}}; {{death date and age|2000|5|3|1950|5|3|df=yes}}",
            "January 2, 2000 (aged 49); 3 May 2000 (aged 50)",
        ),
        (
            "{{date|2006-01-15}}; {{dts|1990|5|3}}; {{dts|May 1990}}; {{formatdate|2001-09-11}}",
            "15 January 2006; May 3, 1990; May 1990; September 11, 2001",
        ),
        # spacing and punctuation: today "15September"
        (
            "15{{nbsp}}September 2.5{{nbsp}}million a{{mdash}}b a{{ndash}}b a{{snd}}b PDF{{·}}DJVU",
            "15 September 2.5 million a—b a–b a – b PDF · DJVU",
        ),
        # magic words: dropped, like every template not in the registry (their value depends on the day)
        ("in {{CURRENTYEAR}} dollars, {{PAGENAME}} {{#if:x|y}} end", "in dollars, end"),
    ],
)
def test_templates_that_show_text(wikitext: str, expected: str) -> None:
    assert anchors(wikitext) == (expected, [])


def test_templates_that_make_links_give_exact_anchors() -> None:
    text, links = anchors(
        "{{HMS|Ajax|22|6}}, {{ship|USS|Hornet|CV-12}}, {{ill|Ziel Stadt|de|Zielstadt}}, {{ill|de|Alt|Alt}}"
    )
    assert text == "HMS Ajax, USS Hornet, Ziel Stadt, Alt"
    assert links == [
        ("HMS Ajax", "HMS Ajax (22)"),
        ("USS Hornet", "USS Hornet (CV-12)"),
        ("Ziel Stadt", "Ziel Stadt"),
        ("Alt", "Alt"),
    ]


@pytest.mark.parametrize(
    ("wikitext", "expected"),
    [
        ("the ''Iliad'''s hero", ("the Iliad's hero", [])),  # odd bold and italics: a bold run is ' + italics
        ("l''''amour'''", ("l'amour", [])),
        ("''''''x'''''", ("'x", [])),  # more than five quotes show the extra ones
        (
            "'''[[Foo]]'''s and [[Bar]]''s''",
            ("Foos and Bars", [("Foo", "Foo"), ("Bar", "Bar")]),
        ),  # no trail across quotes
        ("a.'''<ref>r</ref>''' b ''c''", ("a. b c", [])),  # a cut ref keeps the quotes apart
        (
            "[http://x.org the [[Foo|foo]] site] and [http://y.org [[Bar]]]",
            ("the foo site and Bar", [("foo", "Foo"), ("Bar", "Bar")]),
        ),
    ],
)
def test_quotes_link_trails_and_external_labels(wikitext: str, expected: tuple) -> None:
    assert anchors(wikitext) == expected


# Each class of issue 15 item 3 on the real samples: (page, text now shown, text shown before the fix)
REAL_PAGE_CLASSES = {
    "quote template": (
        "dump/Abraham Lincoln",
        "Southern states:\nApprehension seems to exist",
        "Southern states:\nThe President",
    ),
    "quotation template": ("dump/Anthropology", 'Geertz,\n"anthropology is perhaps the last', "Geertz,\nSociocultural"),
    "cquote template": ("wiki/Direct-representation", "Mistress:\nSuppose instead of election", "Mistress:\nSee also"),
    "nbsp": ("dump/Animal Farm", "on 15 September 1972", "on 15September 1972"),
    "'s template": ("dump/Apollo 11", "hanging from Eagle's footpads", "hanging from Eagle footpads"),
    "italic then bold": ("dump/Achilles", "the Iliad's description", "the Iliads description"),
    "IPAc-en": ("dump/Alabama", "Alabama (/ˌæləˈbæmə/) is", "Alabama () is"),
    "IPA-xx": ("wiki/julia_kristeva", "Kristeva (kʁisteva; ", "Kristeva (; "),
    "angbr": ("dump/A", "the letter ⟨a⟩ represents", "the letter represents"),
    "chem": ("dump/Alkali metal", "ammonium ion (NH4+) has", "ammonium ion () has"),
    "eqm": ("dump/Acid", "written as HA+ ⇌ H+ + A.", "written as HA+ H+ + A."),
    "HMS": ("dump/Achilles", "alongside HMS Ajax and HMS Exeter.", "alongside and ."),
    "ill": ("dump/Arthur Schopenhauer", "gymnasium (Gymnasium Ernestinum Gotha) in", "gymnasium () in"),
    "external link label with a link": (
        "dump/Aldous Huxley",
        "(talk at UC Berkeley, 20 March 1962)",
        "Berkeley], 20 March 1962)]",
    ),
    "quotes around a cut ref": (
        "wiki/raith_rovers",
        "*Scottish First Division: **Winners",
        "*'Scottish First Division': **",
    ),
    "magic word": ("dump/Academy Awards", "($ in dollars)", "CURRENTYEAR"),
}


@pytest.fixture(scope="module")
def real_pages(shared_data: Path) -> dict[str, str]:
    """Wikitext of every real sample article: ``wiki/<file stem>`` and ``dump/<title>``."""
    pages = {f"wiki/{p.stem}": p.read_text(encoding="utf-8") for p in (shared_data / "wikitext_pages").glob("*.wiki")}
    (dump_path,) = (shared_data / "wikipedia_dump_sample").glob("*.bz2")
    for page in iter_dump_pages(dump_path):
        if page.ns == 0 and page.redirect_to is None and redirect_target(page.text) is None:
            pages[f"dump/{page.title}"] = page.text
    return pages


@pytest.mark.parametrize("kind", REAL_PAGE_CLASSES)
def test_visible_text_classes_on_real_pages(real_pages: dict[str, str], kind: str) -> None:
    page, shown, not_shown = REAL_PAGE_CLASSES[kind]
    text, links = anchors(real_pages[page])
    assert shown in text
    assert not_shown not in text


def test_real_pages_anchor_the_links_that_templates_and_external_labels_make(real_pages: dict[str, str]) -> None:
    assert {("HMS Ajax", "HMS Ajax (22)"), ("HMS Exeter", "HMS Exeter (68)")} <= set(
        anchors(real_pages["dump/Achilles"])[1]
    )
    schopenhauer = anchors(real_pages["dump/Arthur Schopenhauer"])[1]
    assert ("Gymnasium Ernestinum Gotha", "Gymnasium Ernestinum Gotha") in schopenhauer
    assert ("UC Berkeley", "University of California, Berkeley") in anchors(real_pages["dump/Aldous Huxley"])[1]


@pytest.mark.parametrize("stray", ["{{", "{|\n"])
def test_a_stray_opener_in_a_real_list_page_costs_only_itself(real_pages: dict[str, str], stray: str) -> None:
    # one unclosed {{ used to delete up to the next blank line (63 % of a list page); now only it goes
    page = real_pages["dump/Animal Farm"]
    cut = page.index("\n*") + 1  # before a list, at the start of a line (where {| opens a table)
    assert anchors(page[:cut] + stray + page[cut:]) == anchors(page)


# ---------------------------------------------------------------------------- properties (Hypothesis)

# Markup fragments, hostile ones included: unclosed and stray brackets, tags, quote runs, tables.
FRAGMENTS = [
    "{{",
    "}}",
    "{{{",
    "}}}",
    "[[",
    "]]",
    "[",
    "]",
    "{|",
    "\n{|\n",
    "\n|}\n",
    "|",
    "||",
    "<ref>",
    "</ref>",
    "<ref name=a/>",
    "<nowiki>",
    "</nowiki>",
    "<nowiki/>",
    "<!--",
    "-->",
    "''",
    "'''",
    "'''''",
    "=",
    "\n==",
    "==\n",
    "\n* ",
    "\n# ",
    "\n\n",
    " ",
    "&amp;",
    "&nbsp;",
    "&#39;",
    "[http://x.org ",
    "http://y.org",
    "{{quote|",
    "{{lang|fr|",
    "{{nbsp}}",
    "{{'s}}",
    "{{HMS|",
    "{{ill|",
    "{{convert|5|",
    "[[File:x.jpg|",
    "[[Category:",
    "[[fr:",
    "[[:Category:",
    "__NOTOC__",
    "<br/>",
    "<span>",
    "</span>",
    "<math>",
    "</math>",
    "word",
    "Word",
    "é",
    "s",
    "\t",
    "#",
    ":",
    ";",
    "*",
    "~",
]
LABEL = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
BALANCED = st.recursive(
    st.sampled_from(["word", " ", "\n", "''", "'''", "&amp;", "{{nbsp}}", "<ref name=a/>", "[[Category:C]]"]),
    lambda inner: st.one_of(
        st.builds(lambda a, b: f"{{{{cite web|url={a}|title={b}}}}}", inner, inner),
        st.builds(lambda a: f"{{{{nowrap|{a}}}}}", inner),
        st.builds(lambda a: f"<ref>{a}</ref>", inner),
        st.builds(lambda a: f"\n{{|\n| {a}\n|}}\n", inner),
        st.builds(lambda a: f"<!-- {a} -->", inner),
        st.builds(lambda a, b: a + b, inner, inner),
    ),
    max_leaves=6,
)


NOWIKI_SECTION = re.compile(r"<nowiki\s*>.*?</nowiki\s*>", re.IGNORECASE | re.DOTALL)


def assert_well_formed(wikitext: str) -> tuple[str, list[Link]]:
    """Invariants for any input: no markup of links, templates or refs leaks (but from <nowiki>
    sections, which are literal: test_nowiki_content_is_literal); anchors are exact."""
    text, links = wikitext_to_plain(wikitext)
    unliteral = wikitext_to_plain(NOWIKI_SECTION.sub("", wikitext))[0] if NOWIKI_SECTION.search(wikitext) else text
    for markup in ("[[", "]]", "{{", "}}"):
        assert markup not in unliteral, markup
    assert "<ref" not in unliteral.lower()
    previous_end = 0
    for link in links:
        assert previous_end <= link.start < link.end <= len(text)
        visible = text[link.start : link.end]
        assert visible == visible.strip() and link.target, link
        previous_end = link.end
    return text, links


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40))
def test_any_fragment_soup_parses_without_leaking_markup(fragments: list[str]) -> None:
    assert_well_formed("".join(fragments))


@settings(max_examples=150, derandomize=True, database=None, deadline=None)
@given(st.lists(st.tuples(BALANCED, LABEL, LABEL), min_size=1, max_size=6))
def test_anchors_equal_the_visible_link_text(parts: list[tuple[str, str, str]]) -> None:
    # links between well-formed constructs: each shows its label, exactly, in order
    wikitext = "".join(f"{noise} [[T{target}|{label}]] " for noise, target, label in parts)
    text, links = assert_well_formed(wikitext)
    assert [(text[link.start : link.end], link.target) for link in links] == [
        (label, f"T{target}") for _, target, label in parts
    ]


@settings(max_examples=60, derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_real_pages_parse_without_leaking_markup(real_pages: dict[str, str], data: st.DataObject) -> None:
    names = sorted(real_pages)
    page = real_pages[data.draw(st.sampled_from(names))]
    start = data.draw(st.integers(0, max(len(page) - 4000, 0)))
    window = page[start : start + 4000]
    for _ in range(data.draw(st.integers(1, 6))):
        at = data.draw(st.integers(0, len(window)))
        window = window[:at] + data.draw(st.sampled_from(FRAGMENTS)) + window[at:]
    assert_well_formed(window)


QUOTE_RUN = re.compile("'{2,}")
# An apostrophe written as a character reference is text, not markup: "'&#39;" shows two.
APOSTROPHE_REFERENCE = re.compile(r"&(?:#0*39|#x0*27|apos);", re.IGNORECASE)
# Where a window begins: at markup, so that it cuts constructs open (an opener's closer outside it,
# a closer without its opener), or anywhere.
MARKUP = re.compile(r"\{\{|\}\}|\[\[|\]\]|<ref|''|\||\{\|")


def assert_no_quote_markup(wikitext: str, text: str) -> None:
    """No run of bold or italic quotes shows: a run of n > 5 quotes shows n - 5 apostrophes (MediaWiki's
    doQuotes), so the text's runs are shorter by 5 than the longest of the wikitext."""
    if APOSTROPHE_REFERENCE.search(wikitext):
        return
    longest = max((len(run.group()) for run in QUOTE_RUN.finditer(wikitext)), default=0)
    shown = max((len(run.group()) for run in QUOTE_RUN.finditer(text)), default=0)
    assert shown == 0 or shown <= longest - 5, text


@settings(
    max_examples=300, derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.data())
def test_windows_of_real_pages_leak_no_markup(real_pages: dict[str, str], data: st.DataObject) -> None:
    """Any window of a real page, hostile input that cuts templates, links, refs and quotes open."""
    page = real_pages[data.draw(st.sampled_from(sorted(real_pages)))]
    size = data.draw(st.sampled_from([80, 400, 2000, 6000]))
    marks = [match.start() for match in MARKUP.finditer(page)]
    start = data.draw(st.sampled_from(marks) | st.integers(0, len(page))) + data.draw(st.integers(0, 2))
    window = page[start : start + size]
    text, _ = assert_well_formed(window)
    assert_no_quote_markup(window, text)


@pytest.mark.parametrize(
    ("wikitext", "shown"),
    [
        # a real infobox cut open (Agriculture): its flag templates are removed, the quotes around them stay bold
        ("| label1 = (01) '''{{CHN}}''' | data1 = 1,088", "| label1 = (01) | data1 = 1,088"),
        ("| label3 = (—) '''''{{EU}}''''' | data3 = 333", "| label3 = (—) | data3 = 333"),
        ("'''{{ {{{1}}} }}''' and ''{{{p}}}'' and ''}}''", "and and"),
    ],
)
def test_quotes_around_a_removed_template_stay_apart(wikitext: str, shown: str) -> None:
    text, _ = assert_well_formed(wikitext)
    assert text == shown
    assert_no_quote_markup(wikitext, text)


def test_zero_padded_character_references_are_judged_by_value() -> None:
    pages = [page_xml(1, "Alpha", "a &#00000000001; b &#x0000000041; c &#0000000000000000000065;"), PAGES[3]]
    data = dump(pages)
    for chunking in (1, 7, len(data)):  # padded references cut by chunk boundaries
        stats = DumpStats()
        chunks = (data[i : i + chunking] for i in range(0, len(data), chunking))
        assert [(p.page_id, p.text) for p in iter_pages_from_chunks(chunks, stats)] == [
            (1, "a \ufffd b A c A"),
            (4, "#REDIRECT [[gamma ray]]"),
        ], chunking
        assert (stats.bad_xml_chars, stats.errors) == (1, [])


def test_an_unclosed_page_is_a_counted_cut_in_bounded_memory() -> None:
    """A <page> without </page>: the pages after it are read, it is counted, and it does not keep them."""
    unclosed = PAGES[0].replace("</page>", "")
    pages = [page_xml(i, f"P{i}", "wikitext " * 200) for i in range(10, 2010)]  # 3.6 MB
    stats = DumpStats()
    tracemalloc.start()
    try:
        read = sum(1 for _ in iter_dump_pages(io.BytesIO(dump([unclosed, *pages])), stats))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert read == 2000 and stats.cut_pages == ["Alpha"] and stats.pages_started == 2001
    assert peak < 12_000_000  # the input's 3.6 MB, twice, and not the pages kept inside Alpha


def test_a_page_over_the_cap_is_cut_and_the_next_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pelt.corpus.wikipedia.pages, "MAX_PAGE_CHARS", 3000)
    endless = page_xml(5, "Endless", "x" * 10_000).replace("</text></revision></page>", "")
    data = dump([PAGES[0], endless + "y" * 10_000, PAGES[3]])
    stats = DumpStats()
    chunks = (data[i : i + 1000] for i in range(0, len(data), 1000))
    assert [p.page_id for p in iter_pages_from_chunks(chunks, stats)] == [1, 4]
    assert stats.cut_pages == ["Endless"] and "over 3000 characters" in stats.errors[0]


def test_a_long_page_that_ends_is_cut_and_said_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """A page over the cap with its </page> (a 50 MB page against 32 Mi characters) is cut and counted
    like an unclosed one, and the message says so, not that its </page> is missing."""
    monkeypatch.setattr(pelt.corpus.wikipedia.pages, "MAX_PAGE_CHARS", 3000)
    data = dump([PAGES[0], page_xml(5, "Huge", "x" * 10_000), PAGES[3]])
    stats = DumpStats()
    chunks = (data[i : i + 1000] for i in range(0, len(data), 1000))
    assert [p.page_id for p in iter_pages_from_chunks(chunks, stats)] == [1, 4]
    assert stats.cut_pages == ["Huge"] and stats.errors == [
        "a <page> over 3000 characters (the most one page may hold): cut there, the rest of it skipped, "
        "reading on from the next <page>"
    ]


def test_a_corrupt_block_is_skipped_by_every_reader(single_stream: Path, tmp_path: Path) -> None:
    data = bytearray(single_stream.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 16] = bytes(16)
    path = tmp_path / "corrupt.xml.bz2"
    path.write_bytes(bytes(data))
    whole = DumpStats()
    pages = list(iter_dump_pages(path, whole))
    split = DumpStats()
    assert block_split(path, 3, split) == pages and 150 < len(pages) < 206
    for stats in (whole, split):
        assert len(stats.errors) == 1 and "does not decode" in stats.errors[0]
        assert len(stats.cut_pages) == 1 and 0 < stats.bytes_unread < 100_000
    assert pages[-1].page_id == list(iter_dump_pages(single_stream))[-1].page_id  # read to the end


def test_whitespace_runs_are_those_of_the_plain_alternation() -> None:
    """_collapse_runs finds, in two scans that skip single spaces, the runs of the plain alternation
    that it documents (all but a lone newline, which is replaced by itself)."""
    import random
    import re

    from pelt.corpus.wikipedia.wikitext import _BREAK, _SPACE, _collapse_runs

    plain = re.compile(rf"{_SPACE}*\n[\s{_BREAK}]*|{_SPACE}{{2,}}|[\t\u00a0{_BREAK}]|\[\[|\]\]|\{{\{{|\}}\}}")
    rng = random.Random(57)
    alphabet = [" ", " ", " ", "\t", "\u00a0", _BREAK, "\n", "[", "]", "{", "}", "a", "\r", "\u2028"]
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        expected = [m.span() for m in plain.finditer(text) if m.group() != "\n"]
        assert _collapse_runs(text) == expected, repr(text)
