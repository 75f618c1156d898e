"""pelt.corpus: the Wikipedia corpus stage on the real dump sample, and on multistream / broken dumps."""

from __future__ import annotations

import bz2
import gzip
import html
import io
import re
import time
from collections import Counter
from pathlib import Path

import pytest

import pelt.corpus.wikipedia.build as corpus
from pelt.corpus.documents import (
    DOCUMENTS_SCHEMA,
    PAGES_SCHEMA,
    count_duplicate_titles,
    expand_paths,
    read_pages,
    read_wikipedia_documents,
)
from pelt.corpus.wikipedia.build import build_wikipedia_corpus, parse_page_props
from pelt.corpus.wikipedia.dump import iter_dump_pages
from pelt.corpus.wikipedia.multistream import iter_multistream_pages
from pelt.corpus.wikipedia.pages import DumpPage, DumpStats
from pelt.corpus.wikipedia.site import SiteInfo
from pelt.corpus.wikipedia.titles import normalize_title
from pelt.corpus.wikipedia.wikitext import wikitext_to_plain
from pelt.logs import write_counts
from pelt.report.stages import input_quality_rows

SAMPLE = "wikipedia_dump_sample/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
# Titles of the sample's pages that carry a disambiguation template (checked by hand in the dump).
SAMPLE_DISAMBIGUATION = {
    "Alien",
    "Austin (disambiguation)",
    "Ada",
    "Aberdeen (disambiguation)",
    "Argument (disambiguation)",
    "Animal (disambiguation)",
    "Asia Minor (disambiguation)",
    "Aa River",
}


@pytest.fixture(scope="module")
def sample_path(shared_data: Path) -> Path:
    return shared_data / SAMPLE


@pytest.fixture(scope="module")
def real_run(spark, sample_path: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("wikipedia")
    counts = build_wikipedia_corpus(spark, [str(sample_path)], str(out / "documents"), str(out / "pages"))
    documents = spark.read.parquet(str(out / "documents"))
    pages = spark.read.parquet(str(out / "pages"))
    return counts, documents, pages


@pytest.fixture(scope="module")
def raw_pages(sample_path: Path) -> dict[int, DumpPage]:
    return {p.page_id: p for p in iter_dump_pages(sample_path)}


def test_counts_on_the_real_sample(real_run) -> None:
    counts, documents, pages = real_run
    # 206 <page>s: 205 in the main namespace (106 articles, 99 redirects) and one redirect in ns 4.
    assert counts == {
        "pages": 205,
        "articles": 106,
        "redirects": 99,
        "disambiguation": 8,
        "pages_read": 206,
        "skipped_other_namespace": 1,
        "skipped_bad_redirect": 0,
        "skipped_text_deleted": 0,
        "skipped_no_text": 0,
        "skipped_no_visible_text": 0,
        "skipped_wikitext_error": 0,
        "skipped_wikitext_timeout": 0,
        "skipped_bad_page": 0,
        "skipped_page_id_overflow": 0,
        "skipped_page_cut": 0,
        "skipped_duplicate_title": 0,
        "skipped_dump_error": 0,
        "skipped_unread_bytes": 0,
        "skipped_trailing_bytes": 0,
        "files_with_bad_utf8": 0,
        "files_with_bad_xml_chars": 0,
        "files_without_documents": 0,
        "files_multistream_without_index": 0,
    }
    assert documents.count() == 106
    assert pages.count() == 205


def test_schemas_are_the_contract(real_run) -> None:
    _, documents, pages = real_run
    assert documents.schema == DOCUMENTS_SCHEMA
    assert pages.schema == PAGES_SCHEMA
    assert DOCUMENTS_SCHEMA.simpleString() == (
        "struct<doc_id:string,title:string,text:string,links:array<struct<start:int,end:int,target:string>>>"
    )
    assert PAGES_SCHEMA.simpleString() == (
        "struct<page_id:bigint,title:string,is_redirect:boolean,redirect_to:string,is_disambiguation:boolean,qid:string,"
        "revision_id:bigint>"
    )


def test_pages_table(real_run, raw_pages: dict[int, DumpPage]) -> None:
    _, _, pages = real_run
    df = pages.toPandas().set_index("page_id")
    assert df.index.is_unique
    main = {i: p for i, p in raw_pages.items() if p.ns == 0}
    assert set(df.index) == set(main)
    for page_id, page in main.items():
        row = df.loc[page_id]
        assert row.title == page.title
        assert row.is_redirect == (page.redirect_to is not None)
        expected_target = normalize_title(page.redirect_to) if page.redirect_to is not None else None
        assert (row.redirect_to if row.is_redirect else None) == expected_target
    assert df.loc[10].redirect_to == "Computer accessibility"  # AccessibleComputing
    assert set(df[df.is_disambiguation].title) == SAMPLE_DISAMBIGUATION
    assert df.qid.isna().all()


def test_documents_are_the_articles(real_run, raw_pages: dict[int, DumpPage]) -> None:
    _, documents, _ = real_run
    df = documents.toPandas()
    articles = {str(i): p for i, p in raw_pages.items() if p.ns == 0 and p.redirect_to is None}
    assert set(df.doc_id) == set(articles)
    assert all(articles[d].title == t for d, t in zip(df.doc_id, df.title))
    assert (df.text.str.len() > 0).all()
    for marker in ("[[", "]]", "{{", "}}", "<ref", "<!--", "{|", "''"):
        assert not df.text.str.contains(marker, regex=False).any(), marker


def test_every_anchor_span_is_exact(real_run, raw_pages: dict[int, DumpPage]) -> None:
    """Each anchor's text[start:end] is the visible text of a link of the raw wikitext to that target.

    The expectation is computed independently, by a regular expression over the raw wikitext:
    label (or target) + link trail, with quotes/HTML tags/entities removed. Links whose label holds
    a template are checked by target only (the template's rendering is the converter's own choice);
    links that templates make (ships, interlanguage links) by their words, each in the template call.
    """
    _, documents, _ = real_run
    raw_link = re.compile(r"\[\[([^\[\]|]+)(?:\|((?:[^\[\]]|\[(?!\[)|\](?!\]))*))?\]\]([a-z]*)")
    link_template = re.compile(r"\{\{\s*(?:ill|interlanguage link|ship|HMS|USS|SS)\s*\|[^{}]*\}\}", re.IGNORECASE)

    def clean(label: str) -> str:
        label = re.sub(r"'{2,}", "", re.sub(r"<[^<>]*>", "", label))
        return re.sub(r"\s+", " ", html.unescape(label)).strip()

    total = 0
    for doc in documents.collect():
        expected: Counter[tuple[str, str]] = Counter()
        templated: set[str] = set()
        for m in raw_link.finditer(raw_pages[int(doc.doc_id)].text):
            target = normalize_title(m.group(1).lstrip(":"))
            label = m.group(1) if m.group(2) is None else m.group(2)
            if "{{" in label:
                templated.add(target)
            expected[(clean(label) + m.group(3), target)] += 1
        calls = [m.group() for m in link_template.finditer(raw_pages[int(doc.doc_id)].text)]
        seen: Counter[tuple[str, str]] = Counter()
        for start, end, target in doc.links:
            total += 1
            visible = doc.text[start:end]
            assert 0 <= start < end <= len(doc.text)
            assert visible == visible.strip() and target == normalize_title(target) != ""
            seen[(visible, target)] += 1
            made = any(all(word in call for word in visible.split()) for call in calls)
            assert seen[(visible, target)] <= expected[(visible, target)] or target in templated or made, (
                doc.title,
                visible,
                target,
            )
    assert total > 22000  # the sample's articles hold ~22.6k anchors outside templates, refs and files


def test_known_anchors_of_the_first_article(real_run) -> None:
    _, documents, _ = real_run
    doc = documents.where("doc_id = '12'").first()  # Anarchism
    assert doc.title == "Anarchism"
    assert doc.text.startswith("Anarchism is a political philosophy that advocates self-governed societies")
    first = [(doc.text[s:e], t) for s, e, t in doc.links[:4]]
    assert first == [
        ("political philosophy", "Political philosophy"),
        ("self-governed", "Self-governance"),
        ("stateless societies", "Stateless society"),
        ("hierarchical", "Hierarchy"),
    ]


def test_wikitext_error_is_a_counted_skip(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(text: str, site: SiteInfo):
        raise RecursionError("too deep")

    monkeypatch.setattr(corpus, "wikitext_to_plain", boom)
    row = corpus._page_row(DumpPage(5, 0, "Broken", None, "x"), namespace=0)
    assert (row[0], row[1], row[-2]) == (5, "Broken", "wikitext_error")
    assert "too deep" in row[-1]
    assert corpus._page_row(DumpPage(6, 0, "R", "", "#REDIRECT [[]]"), namespace=0)[-2] == "bad_redirect"


@pytest.mark.parametrize("slow", ["wikitext_to_plain", "is_disambiguation", "redirect_target"])
def test_a_page_over_its_time_budget_is_a_counted_skip(monkeypatch: pytest.MonkeyPatch, slow: str) -> None:
    # every function that reads the page's wikitext runs inside the budget; the row says why
    real = getattr(corpus, slow)

    def stall(text: str, site: SiteInfo):
        time.sleep(1)
        return real(text, site)

    monkeypatch.setattr(corpus, slow, stall)
    started = time.monotonic()
    row = corpus._page_row(DumpPage(7, 0, "Slow", None, "plain text"), namespace=0, seconds=0.2)
    assert (row[0], row[1], row[-2]) == (7, "Slow", "wikitext_timeout") and time.monotonic() - started < 0.9
    fast = corpus._page_row(DumpPage(8, 0, "Fast", None, "plain text"), namespace=0, seconds=None)
    assert fast[-2] is None  # no budget: the page is read, however long it takes


def test_parse_page_props() -> None:
    line = (
        "INSERT INTO `page_props` VALUES (12,'wikibase_item','Q6199',NULL),(12,'page_image_free','A.jpg',NULL),"
        "(25,'wikibase_item','Q38404',NULL),(39,'defaultsort','Albedo',NULL),(40,'disambiguation','',NULL);"
    )
    assert parse_page_props(line) == [
        (12, "wikibase_item", "Q6199"),
        (25, "wikibase_item", "Q38404"),
        (40, "disambiguation", ""),
    ]
    assert parse_page_props("INSERT INTO `page_props` VALUES (7,'wikibase_item','Q1')") == [(7, "wikibase_item", "Q1")]


def test_expand_paths(tmp_path: Path) -> None:
    for name in ("b.jsonl", "a.jsonl", "dump [de] : ü.jsonl", "dump d : ü.jsonl"):
        (tmp_path / name).write_text("")
    assert expand_paths([str(tmp_path / "[ab].jsonl")]) == [str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]
    # a name with `[` is its own file, not the glob it also reads as (which matches `dump d : ü.jsonl`)
    assert expand_paths([str(tmp_path / "dump [de] : ü.jsonl")]) == [str(tmp_path / "dump [de] : ü.jsonl")]
    with pytest.raises(FileNotFoundError, match="no file matches"):
        expand_paths([str(tmp_path / "missing.xml.bz2")])


def test_an_id_over_64_bits_is_a_counted_skip_not_a_null() -> None:
    """Spark's LongType would make a page id over 64 bits a null (verifySchema off) or fail the job;
    the page is a skip row that says so, and a page_props pair with such an id is None (counted)."""
    huge = 2**64
    row = corpus._page_row(DumpPage(huge, 0, "Huge", None, "plain text"), namespace=0)
    assert (row[0], row[1], row[-2]) == (None, "Huge", "page_id_overflow") and str(huge) in row[-1]
    revision = corpus._page_row(DumpPage(3, 0, "Late", None, "text", revision_id=huge), namespace=0)
    assert revision[-2] == "page_id_overflow" and f"revision id {huge}" in revision[-1]
    assert corpus._page_row(DumpPage(2**63 - 1, 0, "Largest", None, "text"), namespace=0)[-2] is None
    line = f"INSERT INTO `page_props` VALUES ({huge},'wikibase_item','Q1',NULL),(7,'wikibase_item','Q7',NULL);"
    assert parse_page_props(line) == [(None, "wikibase_item", "Q1"), (7, "wikibase_item", "Q7")]


def test_odd_file_names_and_oversized_ids_end_to_end(spark, sample_articles, tmp_path) -> None:
    """A dump and a page_props file whose names hold `[`, `:`, spaces and non-ASCII letters are read
    (the literal name before the glob; page_props by Python's open, not Spark's path parser), and
    the ids over 64 bits in them are counted skips in counts.json, flagged in the input-quality table."""
    pages = [
        _with_text(sample_articles[0], 701, "Kept", 10, b"<text>a kept page</text>"),
        _with_text(sample_articles[1], 2**64, "Huge", 11, b"<text>an id over 64 bits</text>"),
    ]
    dump = tmp_path / "dump [de] : ü.xml.bz2"
    dump.write_bytes(bz2.compress(b"<mediawiki>\n" + b"".join(pages) + b"</mediawiki>\n"))
    (tmp_path / "dump d : ü.xml.bz2").write_bytes(b"not read: the glob's match, not the named file")
    props = tmp_path / "page_props [de] ü.sql.gz"
    props.write_bytes(
        gzip.compress(
            f"INSERT INTO `page_props` VALUES (701,'wikibase_item','Q701',NULL),"
            f"({2**64},'wikibase_item','Q9',NULL);\n".encode()
        )
    )
    counts = build_wikipedia_corpus(
        spark, [str(dump)], str(tmp_path / "docs"), str(tmp_path / "pages"), page_props=[str(props)]
    )
    assert (counts["pages"], counts["pages_read"], counts["pages_with_qid"]) == (1, 2, 1)
    assert counts["skipped_page_id_overflow"] == 1 and counts["skipped_page_props_id_overflow"] == 1
    rows = spark.read.parquet(str(tmp_path / "pages")).collect()
    assert [(row.page_id, row.title, row.qid) for row in rows] == [(701, "Kept", "Q701")]
    record = tmp_path / "counts.json"
    write_counts(record, counts, stage="corpus_wikipedia", domain="wikipedia")
    flagged = {row["count"] for row in input_quality_rows([record]) if row["skip"] and row["value"]}
    assert flagged == {"skipped_page_id_overflow", "skipped_page_props_id_overflow"}


def _sample_page_blobs(sample_path: Path, n: int) -> list[bytes]:
    xml = bz2.decompress(sample_path.read_bytes())
    return re.findall(rb"  <page>.*?</page>\n", xml, re.DOTALL)[:n]


def test_multistream_broken_dump_and_page_props(spark, sample_path: Path, tmp_path: Path) -> None:
    """A multistream dump split over several tasks gives what direct conversion gives; a truncated
    file keeps its readable pages and counts its error; a file without pages is counted (not an
    error: its domain may have others), the multistream dump's ranges as one file; page_props
    fills qid."""
    blobs = _sample_page_blobs(sample_path, 24)
    header = bz2.compress(b'<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">\n<siteinfo></siteinfo>\n')
    streams, index, offset = [header], [], len(header)
    for i in range(0, len(blobs), 4):
        streams.append(bz2.compress(b"".join(blobs[i : i + 4])))
        index.append(f"{offset}:0:x\n")
        offset += len(streams[-1])
    streams.append(bz2.compress(b"</mediawiki>\n"))
    dump = tmp_path / "enwiki-test-pages-articles-multistream.xml.bz2"
    dump.write_bytes(b"".join(streams))
    (tmp_path / "enwiki-test-pages-articles-multistream-index.txt.bz2").write_bytes(
        bz2.compress("".join(index).encode())
    )
    assert len(corpus.wikipedia_work_items([str(dump)], split_bytes=1)) == 6

    good = (
        b"<mediawiki>\n"
        + "".join(
            f"<page><title>Extra {i}</title><ns>0</ns><id>{900000 + i}</id><revision><text>[[Alpha]] {i}</text>"
            "</revision></page>\n"
            for i in range(2)
        ).encode()
    )
    broken = tmp_path / "broken.xml.bz2"
    broken.write_bytes(bz2.compress(good) + bz2.compress(b"<page><title>Lost</title>" * 50)[:30])

    empty = tmp_path / "empty.xml.bz2"
    empty.write_bytes(bz2.compress(b"<mediawiki>\n</mediawiki>\n"))

    props = tmp_path / "page_props.sql.gz"
    props.write_bytes(
        gzip.compress(
            b"INSERT INTO `page_props` VALUES (12,'wikibase_item','Q6199',NULL),"
            b"(25,'wikibase_item','Q38404',NULL),(25,'page_image','x.jpg',NULL),"
            b"(900000,'disambiguation','',NULL);\n"  # MediaWiki's flag on a page without a template
        )
    )

    counts = build_wikipedia_corpus(
        spark,
        [str(dump), str(broken), str(empty)],
        str(tmp_path / "docs"),
        str(tmp_path / "pages"),
        page_props=[str(props)],
        split_bytes=1,
    )
    expected_pages = [p for p in iter_dump_pages(sample_path) if p.ns == 0][:24]
    articles = [p for p in expected_pages if p.redirect_to is None]
    assert counts["skipped_dump_error"] == 1
    assert counts["pages"] == 24 + 2
    assert counts["articles"] == len(articles) + 2
    assert counts["pages_with_qid"] == 2
    assert counts["files_without_documents"] == 1
    # broken.xml.bz2 is two bz2 streams without an index: warned, and read by bz2 blocks (split_bytes=1)
    assert counts["files_multistream_without_index"] == 1

    docs = {row.doc_id: row for row in spark.read.parquet(str(tmp_path / "docs")).collect()}
    for page in articles:
        text, links = wikitext_to_plain(page.text)
        assert docs[str(page.page_id)].text == text
        assert [tuple(link) for link in docs[str(page.page_id)].links] == [(k.start, k.end, k.target) for k in links]
    assert docs["900001"].text == "Alpha 1"

    pages = spark.read.parquet(str(tmp_path / "pages")).toPandas().set_index("page_id")
    assert pages.loc[12].qid == "Q6199" and pages.loc[25].qid == "Q38404"
    assert pages.drop(index=[12, 25]).qid.isna().all()
    assert pages.index.is_unique
    # page_props flags a disambiguation page its text does not (the templates' flags stay)
    assert pages.loc[900000].is_disambiguation and not pages.loc[900001].is_disambiguation
    templates = sum(corpus.is_disambiguation(p.text) for p in expected_pages if p.redirect_to is None)
    assert counts["disambiguation_from_page_props"] == 1 and counts["disambiguation"] == templates + 1


@pytest.fixture(scope="module")
def sample_bytes(sample_path: Path) -> bytes:
    return sample_path.read_bytes()


@pytest.fixture(scope="module")
def sample_articles(sample_path: Path) -> list[bytes]:
    """The first article <page> elements of the sample, as bytes (redirects left out)."""
    return [blob for blob in _sample_page_blobs(sample_path, 120) if b"<redirect" not in blob]


@pytest.fixture(scope="module")
def sample_order(raw_pages: dict[int, DumpPage]) -> list[int]:
    return list(raw_pages)  # page ids in dump order


def _read(tmp_path: Path, data: bytes) -> tuple[list[DumpPage], DumpStats]:
    path = tmp_path / "dump.xml.bz2"
    path.write_bytes(data)
    stats = DumpStats()
    return list(iter_dump_pages(path, stats)), stats


def _corrupt_block(data: bytes) -> tuple[bytes, int]:
    at = len(data) // 2
    return data[:at] + bytes(b ^ 0xFF for b in data[at : at + 16]) + data[at + 16 :], at


def test_a_bz2_cut_mid_block_keeps_its_pages_and_counts_the_one_it_cut(tmp_path, sample_bytes, raw_pages, sample_order):
    pages, stats = _read(tmp_path, sample_bytes[: len(sample_bytes) // 2])
    n = len(pages)
    assert 0 < n < len(sample_order)
    assert [p.page_id for p in pages] == sample_order[:n]
    assert pages[-1] == raw_pages[sample_order[n - 1]]  # the last page before the cut is whole
    assert stats.cut_pages == [raw_pages[sample_order[n]].title]  # the page being read when the file ended
    assert stats.pages_started == n + 1
    assert len(stats.errors) == 1 and "EOFError" in stats.errors[0] and "cut short" in stats.errors[0]
    assert stats.bytes_unread == 0 and stats.trailing_bytes == 0  # the file was read to its end


def test_a_corrupt_bz2_block_is_skipped_and_counted_and_reading_resumes_after_it(
    tmp_path, sample_bytes, raw_pages, sample_order
):
    data, at = _corrupt_block(sample_bytes)
    pages, stats = _read(tmp_path, data)
    ids = [p.page_id for p in pages]
    n = next(i for i, page_id in enumerate(ids) if page_id != sample_order[i])  # the first page after the gap
    assert pages[:n] == [raw_pages[i] for i in sample_order[:n]]
    resumed = sample_order.index(ids[n])
    assert pages[n:] == [raw_pages[i] for i in sample_order[resumed:]]  # every page after the block
    assert stats.cut_pages == [raw_pages[sample_order[n]].title]  # the page the corrupt block cut
    assert len(stats.errors) == 1 and "does not decode (corrupt file)" in stats.errors[0]
    # the compressed bytes skipped: the corrupt block's, which holds the corrupted bytes
    assert 0 < stats.bytes_unread < 1 << 20
    assert stats.pages_started == len(pages) + 1  # the pages wholly inside the block cannot be counted


def test_garbage_after_the_last_bz2_stream_is_counted_not_read(tmp_path, sample_bytes, raw_pages, sample_order):
    garbage = b"\x00garbage that is not bz2\n" * 40  # bz2.open would skip it without a word
    pages, stats = _read(tmp_path, sample_bytes + garbage)
    assert [p.page_id for p in pages] == sample_order
    assert stats.trailing_bytes == len(garbage)
    assert (stats.errors, stats.cut_pages, stats.bytes_unread) == ([], [], 0)
    # a second bz2 stream is read, not taken for garbage; one that is not XML is a counted error
    pages, stats = _read(tmp_path, sample_bytes + bz2.compress(b"<page><title>After</title>"))
    assert len(pages) == len(sample_order) and stats.trailing_bytes == 0
    assert len(stats.errors) == 1 and "ParseError" in stats.errors[0]


def test_a_multistream_range_counts_garbage_after_its_last_stream(sample_articles, tmp_path) -> None:
    streams = [bz2.compress(b"".join(sample_articles[i : i + 2])) for i in range(0, 6, 2)]
    garbage = b"not bz2 " * 9
    path = tmp_path / "x-multistream.xml.bz2"
    path.write_bytes(b"".join(streams) + garbage)
    stats = DumpStats()
    pages = list(iter_multistream_pages(path, 0, path.stat().st_size, stats))
    assert len(pages) == 6 and (stats.trailing_bytes, stats.errors) == (len(garbage), [])
    cut = DumpStats()  # a range that ends inside a stream: the pages before it, the error, the page it cut
    pages = list(iter_multistream_pages(path, 0, len(streams[0]) + len(streams[1]) // 2, cut))
    assert len(pages) == 2 and len(cut.errors) == 1 and "cut short" in cut.errors[0]
    assert cut.pages_started - cut.pages == len(cut.cut_pages) <= 1


def test_a_dump_that_ends_between_streams_is_an_error_not_a_silent_end(tmp_path, sample_bytes, sample_order):
    # as a multistream file whose last streams are missing: every stream is whole, the XML is not
    xml = bz2.decompress(sample_bytes)
    cut = xml.index(b"<page>", len(xml) // 2)
    pages, stats = _read(tmp_path, bz2.compress(xml[:cut]))
    assert [p.page_id for p in pages] == sample_order[: len(pages)] and len(pages) > 100
    assert len(stats.errors) == 1 and "ParseError" in stats.errors[0]
    assert stats.cut_pages == [] and stats.pages_started == len(pages)  # the cut fell between pages


def _with_text(blob: bytes, page_id: int, title: str, revision: int, text: bytes) -> bytes:
    """A real page of the sample with another id, title, revision id and <text> element."""
    blob = re.sub(rb"<title>.*?</title>", b"<title>" + title.encode() + b"</title>", blob, count=1)
    blob = re.sub(rb"<id>\d+</id>", f"<id>{page_id}</id>".encode(), blob, count=1)  # the page's id
    blob = re.sub(rb"(<revision>\s*)<id>\d+</id>", rb"\g<1><id>%d</id>" % revision, blob, count=1)
    return re.sub(rb"<text[^>]*?(?:/>|>.*?</text>)", lambda _: text, blob, count=1, flags=re.DOTALL)


def test_a_title_in_two_dump_files_is_decided_where_they_are_read_together(spark, sample_articles, tmp_path) -> None:
    """The workflow parses each dump file alone; a title in two files (a page moved while a split
    dump was written) keeps its latest revision where the files are read together, whatever their
    order, and the same page in two files gives one document."""
    head, tail = b"<mediawiki>\n", b"</mediawiki>\n"
    dumps = {
        "a": [
            _with_text(sample_articles[0], 601, "Moved", 40, b"<text>the old Moved</text>"),
            _with_text(sample_articles[1], 603, "Twice", 50, b"<text>Twice, in both files</text>"),
            _with_text(sample_articles[2], 605, "Alone", 60, b"<text>only in a</text>"),
        ],
        "b": [
            _with_text(sample_articles[0], 602, "Moved", 41, b"<text>the new Moved</text>"),
            _with_text(sample_articles[1], 603, "Twice", 50, b"<text>Twice, in both files</text>"),
        ],
    }
    outputs = {}
    for name, pages in dumps.items():
        (tmp_path / f"{name}.xml.bz2").write_bytes(bz2.compress(head + b"".join(pages) + tail))
        out = tmp_path / "files" / name
        counts = build_wikipedia_corpus(
            spark, [str(tmp_path / f"{name}.xml.bz2")], str(out / "documents"), str(out / "pages")
        )
        assert counts["skipped_duplicate_title"] == 0  # each file alone has no duplicate
        outputs[name] = out
    for order in (["a", "b"], ["b", "a"]):
        pages_paths = [str(outputs[name] / "pages") for name in order]
        documents_paths = [str(outputs[name] / "documents") for name in order]
        pages = {row.title: (row.page_id, row.revision_id) for row in read_pages(spark, pages_paths).collect()}
        assert pages == {"Moved": (602, 41), "Twice": (603, 50), "Alone": (605, 60)}
        documents = read_wikipedia_documents(spark, documents_paths, pages_paths).collect()
        assert sorted((row.doc_id, row.text) for row in documents) == [
            ("602", "the new Moved"),
            ("603", "Twice, in both files"),
            ("605", "only in a"),
        ]
        assert count_duplicate_titles(spark, pages_paths) == 2
    assert count_duplicate_titles(spark, [str(outputs["a"] / "pages")]) == 0


@pytest.mark.parametrize(
    "text, reason",
    [
        (b'<text bytes="0" deleted="deleted" />', "text_deleted"),
        (b'<text bytes="0" xml:space="preserve" />', "no_text"),
        (b'<text xml:space="preserve">  \n\n </text>', "no_text"),
        (
            b'<text xml:space="preserve">{{Infobox person|name=X}}\n&lt;!-- c --&gt;\n[[Category:X]]</text>',
            "no_visible_text",
        ),
    ],
)
def test_a_page_without_text_is_a_counted_skip_not_an_empty_article(sample_articles, text: bytes, reason: str) -> None:
    blob = _with_text(sample_articles[0], 77, "Hollow", 5, text)
    stats = DumpStats()
    (page,) = iter_dump_pages(io.BytesIO(b"<mediawiki>\n" + blob + b"</mediawiki>\n"), stats)
    assert (page.page_id, page.revision_id, page.text_deleted) == (77, 5, reason == "text_deleted")
    row = corpus._page_row(page, namespace=0)
    assert (row[0], row[1], row[2], row[-2]) == (77, "Hollow", None, reason)


def test_corrupt_dumps_and_duplicate_titles_in_the_counts(spark, sample_articles, tmp_path) -> None:
    """What the corpus job counts for each kind of damage, in counts.json and the input-quality
    table; of two pages with one title the latest revision is kept, whatever the order or file."""
    articles = sample_articles
    head, tail = b"<mediawiki>\n", b"</mediawiki>\n"
    first = _with_text(articles[0], 501, "Twin", 900, b"<text>older twin</text>")
    second = _with_text(articles[1], 502, "Twin", 901, b"<text>newer twin</text>")
    third = _with_text(articles[2], 503, "Pair", 7, b"<text>only pair in a.xml</text>")
    fourth = _with_text(articles[0], 504, "Pair", 8, b"<text>kept pair in b.xml</text>")
    hollow = _with_text(articles[1], 505, "Hollow", 9, b'<text deleted="deleted" />')
    (tmp_path / "a.xml.bz2").write_bytes(bz2.compress(head + second + first + third + hollow + tail))
    (tmp_path / "b.xml.bz2").write_bytes(bz2.compress(head + fourth + tail) + b"junk" * 10)
    # two streams: three articles and half of a fourth, then its rest and two more, corrupted
    xml = head + b"".join(articles[3:9])
    split = xml.index(b"<page>", len(head) + sum(map(len, articles[3:6]))) + 200
    second = bytearray(bz2.compress(xml[split:]))
    second[len(second) // 2 : len(second) // 2 + 16] = bytes(16)
    (tmp_path / "cut.xml.bz2").write_bytes(bz2.compress(xml[:split]) + bytes(second))
    unread = DumpStats()
    read_before_the_error = len(list(iter_dump_pages(tmp_path / "cut.xml.bz2", unread)))
    assert read_before_the_error == 3 and len(unread.cut_pages) == 1
    files = [str(tmp_path / name) for name in ("a.xml.bz2", "b.xml.bz2", "cut.xml.bz2")]
    counts = build_wikipedia_corpus(spark, files, str(tmp_path / "docs"), str(tmp_path / "pages"), namespace=0)

    assert counts["skipped_duplicate_title"] == 2
    assert counts["skipped_text_deleted"] == 1
    assert counts["skipped_page_cut"] == 1 and counts["skipped_dump_error"] == 1
    assert counts["skipped_unread_bytes"] == unread.bytes_unread > 0
    assert counts["skipped_trailing_bytes"] == 40
    assert counts["files_multistream_without_index"] == 1  # cut.xml.bz2: two bz2 streams, no index
    assert counts["pages_read"] == 4 + 1 + read_before_the_error + 1  # every <page> that was started
    assert counts["pages_read"] == counts["pages"] + sum(counts[f"skipped_{r}"] for r in corpus.PAGE_SKIP_REASONS)
    docs = {row.title: row for row in spark.read.parquet(str(tmp_path / "docs")).collect()}
    assert (docs["Twin"].doc_id, docs["Twin"].text) == ("502", "newer twin")
    assert (docs["Pair"].doc_id, docs["Pair"].text) == ("504", "kept pair in b.xml")
    assert "Hollow" not in docs
    pages = spark.read.parquet(str(tmp_path / "pages")).toPandas()
    assert pages.title.is_unique

    record = tmp_path / "counts.json"
    write_counts(record, counts, stage="corpus_wikipedia", domain="wikipedia")
    flagged = {row["count"] for row in input_quality_rows([record]) if row["skip"] and row["value"]}
    assert flagged == {
        "files_multistream_without_index",
        "skipped_duplicate_title",
        "skipped_text_deleted",
        "skipped_page_cut",
        "skipped_dump_error",
        "skipped_unread_bytes",
        "skipped_trailing_bytes",
    }
