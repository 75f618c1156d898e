"""pelt.corpus.s2orc: S2ORC metadata / full-text records -> documents, on the real samples."""

from __future__ import annotations

import gzip
import json
import tracemalloc
from collections import Counter
from pathlib import Path

import pelt.corpus.s2orc
from pelt.corpus.documents import DOCUMENTS_SCHEMA
from pelt.corpus.s2orc import _record_rows, build_s2orc_corpus, iter_s2orc_records, paper_text


def records(path: Path) -> list[dict]:
    return [record for record, _, _ in iter_s2orc_records(str(path))]


def test_metadata_sample_has_488_abstracts(shared_data: Path) -> None:
    sample = records(shared_data / "s2orc_sample" / "sample.jsonl")
    assert len(sample) == 1000
    texts = [paper_text(r)[1] for r in sample]
    assert sum(bool(t) for t in texts) == 488
    first = next(r for r in sample if r.get("abstract"))
    assert paper_text(first) == (first["title"], first["abstract"].strip())


def test_2019_full_text_layout(shared_data: Path) -> None:
    (paper,) = records(shared_data / "s2orc_sample" / "example_paper.json")  # pretty-printed, one document
    title, text = paper_text(paper)
    assert title == paper["metadata"]["title"]
    lines = text.split("\n")
    assert len(lines) == 1 + 22  # metadata abstract, then the 22 GROBID body paragraphs
    assert lines[0] == paper["metadata"]["abstract"].strip()
    assert lines[1:] == [p["text"].strip() for p in paper["grobid_parse"]["body_text"]]
    assert paper_text(paper, include_body=False) == (title, lines[0])


def test_doc2json_layouts(shared_data: Path) -> None:
    papers = {p.stem: records(p)[0] for p in (shared_data / "s2orc_sample" / "doc2json_tests").glob("*/*.json")}
    assert len(papers) == 8
    paper = papers["18980380"]  # 2020 layout: top-level abstract/body_text lists, no title
    title, text = paper_text(paper)
    assert title == ""
    assert text.split("\n") == [p["text"].strip() for p in paper["abstract"] + paper["body_text"]]
    no_abstract = papers["f2235cd28c171f9f3b6a8bcebe246159c464980c"]
    assert paper_text(no_abstract, include_body=False)[1] == ""
    assert paper_text(no_abstract)[1].count("\n") == len(no_abstract["body_text"]) - 1


def test_latex_parse_preferred_over_grobid() -> None:
    record = {
        "paper_id": "1",
        "metadata": {"title": "T", "abstract": None},
        "grobid_parse": {"abstract": [{"text": "grobid abs"}], "body_text": [{"text": "grobid body"}]},
        "latex_parse": {"abstract": [], "body_text": [{"text": "latex body"}, {"text": "  "}]},
    }
    assert paper_text(record) == ("T", "grobid abs\nlatex body")


def test_bad_input_lines(tmp_path: Path) -> None:
    path = tmp_path / "shard.jsonl.gz"
    lines = [
        json.dumps({"paper_id": "1", "title": "ok", "abstract": "Fine."}).encode(),
        b"",
        b'{"paper_id": "2", "abstract": "caf\xe9 au lait"}',  # Latin-1 byte: replaced, kept
        b"{not json",
        json.dumps({"title": "no id", "abstract": "x"}).encode(),
    ]
    path.write_bytes(gzip.compress(b"\n".join(lines)))
    got = list(iter_s2orc_records(str(path)))
    assert [record for record, _, _ in got] == [
        {"paper_id": "1", "title": "ok", "abstract": "Fine."},
        {"paper_id": "2", "abstract": "caf\ufffd au lait"},
        None,
        {"title": "no id", "abstract": "x"},
    ]
    assert [bad for _, bad, _ in got] == [False, True, False, False]
    assert got[2][2].startswith(f"{path}:4: ")


def test_build_s2orc_corpus(spark, shared_data: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(
        b'{"paper_id": 7, "title": "T", "abstract": "na\xefve"}\n{broken\n{"title": "x", "abstract": "y"}\n'
    )
    truncated = tmp_path / "truncated.jsonl.gz"
    lines = b"".join(json.dumps({"paper_id": f"t{i}", "abstract": f"Text {i}."}).encode() + b"\n" for i in range(2))
    truncated.write_bytes(gzip.compress(lines)[:-8])  # the gzip trailer is missing
    root = shared_data / "s2orc_sample"
    paths = [
        str(root / "sample.jsonl"),
        str(root / "example_paper.json"),
        str(root / "doc2json_tests" / "*" / "*.json"),
        str(bad),
        str(truncated),
    ]
    counts = build_s2orc_corpus(spark, paths, str(tmp_path / "documents"))
    # Three doc2json papers are also in the metadata sample: their full text wins over the abstract.
    assert counts == {
        "documents": 488 + 1 + 8 + 1 + 2 - 3,
        "records": 1000 + 1 + 8 + 3 + 2 + 1,
        "bad_utf8": 1,
        "skipped_no_text": 512,
        "skipped_no_paper_id": 1,
        "skipped_bad_json": 1,
        "skipped_read_error": 1,
        "skipped_duplicate": 3,
        "files_without_documents": 0,
    }
    documents = spark.read.parquet(str(tmp_path / "documents"))
    assert documents.schema == DOCUMENTS_SCHEMA
    rows = {row.doc_id: row for row in documents.collect()}
    assert len(rows) == 497
    assert rows["t1"].text == "Text 1."  # read before the truncated file broke off
    assert len(rows["18980380"].text) == len(
        paper_text(records(root / "doc2json_tests" / "20200705" / "18980380.json")[0])[1]
    )
    assert rows["7"].text == "na\ufffdve" and rows["7"].links == []
    assert rows["15772371"].title.startswith("Artificial diets for rearing the Colorado potato beetle")
    assert all(row.text for row in rows.values())


def test_a_hostile_line_costs_that_line_only(tmp_path: Path) -> None:
    """A deeply nested value (RecursionError) or a 5,000-digit number (ValueError) is one bad record."""
    good = json.dumps({"paper_id": "1", "abstract": "Fine."}).encode()
    lines = [good, b"[" * 100_000 + b"]" * 100_000, b'{"paper_id": "2", "n": ' + b"9" * 5000 + b"}", good]
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(b"\n".join(lines))
    rows = list(_record_rows(str(path), include_body=True))
    assert [row[4] for row in rows] == [None, "bad_json", "bad_json", None]
    assert "RecursionError" in rows[1][5] and "ValueError" in rows[2][5]


def test_a_corrupt_first_line_costs_that_line_in_bounded_memory(tmp_path: Path) -> None:
    record = json.dumps({"paper_id": "1", "abstract": "A fine abstract. " * 100}).encode()
    path = tmp_path / "shard.jsonl"
    path.write_bytes(b"{corrupt\n" + b"\n".join([record] * 1000))  # 1.7 MB
    tracemalloc.start()
    try:
        bad = Counter(record is None for record, _, _ in iter_s2orc_records(str(path)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert bad == {False: 1000, True: 1}
    assert peak < 200_000  # one line at a time, not the 1.7 MB file
    first = next(iter_s2orc_records(str(path)))
    assert first[0] is None and first[2].startswith(f"{path}:1: JSONDecodeError")


def test_a_line_over_the_record_limit_is_skipped_unread(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(pelt.corpus.s2orc, "MAX_RECORD_BYTES", 1000)
    good = json.dumps({"paper_id": "1", "abstract": "Fine."}).encode()
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"\n".join([good, b'{"abstract": "' + b"x" * 5000 + b'"}', good]))
    got = list(iter_s2orc_records(str(path)))
    assert [r is None for r, _, _ in got] == [False, True, False] and "line over 1000 bytes" in got[1][2]
    path.write_bytes(b"{\n" + b" " * 2000 + b"}")  # a pretty-printed document over the limit
    assert [(r, w) for r, _, w in iter_s2orc_records(str(path))] == [(None, f"{path}: document over 1000 bytes")]


def test_lone_surrogates_are_bad_utf8_and_two_ids_stay_two_papers(tmp_path: Path) -> None:
    """A JSON ``\\ud800`` escape without its pair parses to a string no UTF-8 writer takes: the record is
    counted as bad UTF-8; text gets U+FFFD, and an id the escape as written, so that two such ids stay
    two papers (replaced by U+FFFD alike, one would be dropped as the other's duplicate)."""
    path = tmp_path / "surrogates.jsonl"
    path.write_text(
        '{"paper_id": "p\\ud800", "title": "A \\udfff title", "abstract": "Lone \\ud800 here."}\n'
        '{"paper_id": "p\\udc00", "abstract": "Another."}\n'
        '{"paper_id": "p\\ud83d\\ude00", "abstract": "A pair is one character \\ud83d\\ude00."}\n',
        encoding="ascii",
    )
    rows = list(_record_rows(str(path), include_body=True))
    assert [(row[0], row[1], row[2], row[6]) for row in rows] == [
        ("p\\ud800", "A \ufffd title", "Lone \ufffd here.", True),
        ("p\\udc00", "", "Another.", True),
        ("p\U0001f600", "", "A pair is one character \U0001f600.", False),
    ]
    for row in rows:
        for value in row[:3]:
            value.encode("utf-8")  # what Spark and Parquet need
