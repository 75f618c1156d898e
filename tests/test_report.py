"""Report figures: the SVG bar chart draws what it is given, to scale; buckets and coverage counts;
the input-quality table."""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pelt.eval.report import (
    bar_chart_svg,
    plot_lama_buckets,
    write_coverage,
    write_input_quality,
)
from pelt.logs import write_counts
from pelt.table import write_table
from pelt.task_entities import TASK_ENTITIES_SCHEMA

SVG = "{http://www.w3.org/2000/svg}"


def _bars(svg: str) -> list[tuple[str, float]]:
    """(tooltip, height) of each data bar; legend swatches have no tooltip."""
    root = ET.fromstring(svg)
    return [
        (rect.findtext(f"{SVG}title"), float(rect.get("height")))
        for rect in root.iter(f"{SVG}rect")
        if rect.find(f"{SVG}title") is not None
    ]


def test_bar_chart_draws_each_value_to_scale():
    svg = bar_chart_svg(["a", "b"], {"x": [10.0, None], "y": [20.0, 5.0]}, "T & t", "P@1 (%)", y_max=40.0)
    bars = _bars(svg)
    assert [name for name, _ in bars] == ["x: 10", "y: 20", "y: 5"]  # None leaves a gap, not a zero bar
    heights = [h for _, h in bars]
    assert heights[1] == pytest.approx(2 * heights[0], abs=0.2) and heights[1] == pytest.approx(4 * heights[2], abs=0.2)
    assert "T &amp; t" in svg  # text is escaped: the file stays valid XML
    with pytest.raises(ValueError, match="one value per group"):
        bar_chart_svg(["a"], {"x": [1.0, 2.0]}, "t", "y")


def test_lama_bucket_plot_has_a_bar_per_variant_and_bucket(tmp_path: Path):
    def result(variant: str, p: list[float | None]) -> str:
        path = tmp_path / f"{variant}.json"
        buckets = {b: {"facts": 4, "macro_p_at_1": v, "p_at_1": 0.0} for b, v in zip(["[0,10)", "[10,+)"], p)}
        path.write_text(json.dumps({"model": "/m/demo", "variant": variant, "buckets": buckets}))
        return str(path)

    plot_lama_buckets([result("baseline", [0.25, None]), result("pelt", [0.5, 0.75])], tmp_path / "b.svg")
    assert [name for name, _ in _bars((tmp_path / "b.svg").read_text())] == [
        "demo baseline: 25",
        "demo pelt: 50",
        "demo pelt: 75",
    ]
    (tmp_path / "plain.json").write_text(json.dumps({"model": "m", "variant": "baseline", "buckets": None}))
    with pytest.raises(ValueError, match="no LAMA result has frequency buckets"):
        plot_lama_buckets([str(tmp_path / "plain.json")], tmp_path / "c.svg")


def test_coverage_counts_linking_methods_and_table_rows(tmp_path: Path):
    rows = [
        ("Ann", "Q1", "Q1", "qid"),
        ("Bob", None, "Bob", "title"),
        ("Bobby", None, "Bob", "alias"),
        ("Cy", "Q3", "Q3", "qid"),
        ("Dee", None, None, None),
    ]
    pq.write_table(
        pa.Table.from_pylist([dict(zip(TASK_ENTITIES_SCHEMA.names, r)) for r in rows], schema=TASK_ENTITIES_SCHEMA),
        tmp_path / "te.parquet",
    )
    meta = {
        "model": "m",
        "revision": "local",
        "hidden_size": 4,
        "representation": "test",
        "max_seq_len": 8,
        "norm": 7.0,
    }
    write_table(tmp_path / "t.parquet", ["Bob", "Q1"], np.ones((2, 4)), [1, 2], [1, 2], meta)  # Q3 has no sentence
    out = write_coverage(
        {"wiki": tmp_path / "te.parquet"},
        {("wiki", "demo"): tmp_path / "t.parquet"},
        tmp_path / "c.csv",
        tmp_path / "c.svg",
    )
    expected = {
        "domain": "wiki",
        "model": "demo",
        "wanted": 5,
        "found_by_alias": 1,
        "found_by_qid": 2,
        "found_by_title": 1,
        "not_found": 1,
        "entities_found": 3,
        "entities_in_table": 2,
    }
    assert out == [expected]
    assert list(csv.DictReader((tmp_path / "c.csv").open())) == [{k: str(v) for k, v in expected.items()}]
    assert len(_bars((tmp_path / "c.svg").read_text())) == 5  # alias, qid, title, not found, in table


def test_input_quality_lists_every_count_and_flags_the_skips_that_happened(tmp_path: Path):
    """Each stage's counts file becomes rows in file order, zero counts included; skip counts are
    marked whether or not they are zero, and only the non-zero ones are highlighted in the HTML."""
    corpus, linking = tmp_path / "corpus.json", tmp_path / "linking.json"
    write_counts(
        corpus,
        {"articles": 3, "skipped_dump_error": 1, "skipped_other_namespace": 2, "files_without_documents": 0},
        stage="corpus_wikipedia",
        domain="wiki",
        source="d/a.xml.bz2",
    )
    write_counts(
        linking,
        {"anchors_disambiguation": 0, "mentions_anchor": 5, "how_missing": 2},
        stage="link_wikipedia",
        domain="wiki",
    )
    assert not list(tmp_path.glob("*.partial"))
    rows = write_input_quality([corpus, linking], tmp_path / "q.csv", tmp_path / "q.html")
    expected = [
        ("corpus_wikipedia", "d/a.xml.bz2", "articles", 3, 0),
        ("corpus_wikipedia", "d/a.xml.bz2", "skipped_dump_error", 1, 1),
        ("corpus_wikipedia", "d/a.xml.bz2", "skipped_other_namespace", 2, 0),  # skipped by design
        ("corpus_wikipedia", "d/a.xml.bz2", "files_without_documents", 0, 1),
        ("link_wikipedia", "", "anchors_disambiguation", 0, 1),
        ("link_wikipedia", "", "mentions_anchor", 5, 0),
        ("link_wikipedia", "", "how_missing", 2, 1),
    ]
    assert [(r["stage"], r["source"], r["count"], r["value"], r["skip"]) for r in rows] == expected
    assert {r["domain"] for r in rows} == {"wiki"}
    assert list(csv.DictReader((tmp_path / "q.csv").open())) == [
        {"domain": "wiki", "stage": stage, "source": source, "count": name, "value": str(value), "skip": str(skip)}
        for stage, source, name, value, skip in expected
    ]
    html = (tmp_path / "q.html").read_text()
    highlighted = [tr.split("<td>")[4].removesuffix("</td>") for tr in html.split('<tr class="skipped">')[1:]]
    assert highlighted == ["skipped_dump_error", "how_missing"]
    assert html.count("<tr>") == 1 + len(expected) - 2  # the header and the rows without a skip
    assert "2 of 4 skip counts are not zero" in html
