"""pelt.corpus.s2orc: S2ORC metadata / full-text records -> documents, on the real samples."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from pelt.corpus.documents import DOCUMENTS_SCHEMA
from pelt.corpus.s2orc import build_s2orc_corpus, iter_s2orc_records, paper_text


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
