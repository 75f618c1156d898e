"""The report's figures (matplotlib SVG, text kept as text) show the numbers they are given on axes that
fit them; its tables: coverage in names and entities, input quality, the headline page; time per stage
from the job logs."""

from __future__ import annotations

import csv
import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jinja2
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from docutils.core import publish_parts
from html_pages import html_rows

from pelt.linking.task_entities import TASK_ENTITIES_SCHEMA
from pelt.logs import write_counts
from pelt.report.figures import plot_coverage, plot_finetuning, plot_frequencies, plot_stage_times
from pelt.report.headline import write_headline
from pelt.report.stages import language_totals, stage_times, write_coverage, write_input_quality
from pelt.table import write_table
from pelt.tasks.lama.figures import plot_lama_buckets, plot_norm_sweep
from pelt.tasks.wiki80.summary import write_wiki80_summary

SVG = "{http://www.w3.org/2000/svg}"


def svg_texts(svg: str | os.PathLike[str]) -> list[str]:
    """Every text of a figure (tick labels, bar labels, titles, legend), in drawing order."""
    return ["".join(t.itertext()) for t in ET.parse(svg).getroot().iter(f"{SVG}text")]


def assert_legible(svg: str | os.PathLike[str]) -> None:
    """The report's width (figures.WIDTH, 720 pt: shown 1:1 in the report's content panel at a 1,280 px
    window) and no text under 10 pt: figures were once 14 in wide, shrunk by the report, with 8 px labels."""
    root = ET.parse(svg).getroot()
    assert root.get("width") == "720pt", root.get("width")
    sizes = [float(m) for m in re.findall(r"font-size: ([\d.]+)px", ET.tostring(root, encoding="unicode"))]
    assert sizes and min(sizes) >= 10, sorted(set(sizes))


def _y_ticks(texts: list[str], label: str) -> list[float]:
    """The numeric tick labels just before the y axis label (matplotlib draws the y axis after the x axis)."""
    end = texts.index(label)
    ticks = []
    for text in reversed(texts[:end]):
        try:
            ticks.append(float(text.replace("\u2212", "-")))
        except ValueError:
            break
    return sorted(ticks)


def _lama_result(path: Path, model: str, variant: str, correct: list[int], macro: list[float | None]) -> str:
    """A LAMA result whose buckets hold 4, 6 and 0 facts, ``correct`` of them right."""
    buckets = {
        b: {"facts": n, "correct": c, "macro_p_at_1": m}
        for b, n, c, m in zip(["[0,10)", "[10,50)", "[100,+)"], [4, 6, 0], correct, macro)
    }
    path.write_text(json.dumps({"model": model, "variant": variant, "buckets": buckets}))
    return str(path)


def test_lama_bucket_plot_has_each_variant_and_bucket_on_an_axis_that_fits(tmp_path: Path):
    files = [
        _lama_result(tmp_path / "b.json", "/m/roberta-base", "baseline", [0, 1, 0], [0.05, 0.10, None]),
        _lama_result(tmp_path / "p.json", "/m/roberta-base", "pelt", [1, 0, 0], [0.14, 0.125, None]),
    ]
    plot_lama_buckets(files, tmp_path / "b.svg")
    assert_legible(tmp_path / "b.svg")
    texts = svg_texts(tmp_path / "b.svg")
    # the bars are P@1 per fact (0/4, 1/6; 1/4, 0/6), as the paper's Table 5; the macro values are marks, unlabelled
    labels = ("0.0", "16.7", "25.0", "5.0", "10.0", "14.0", "12.5")
    assert [t for t in texts if t in labels] == ["0.0", "16.7", "25.0", "0.0"]
    assert "macro over relations (ours)" in texts
    assert "n=4" in texts and "n=6" in texts and "n=0" not in texts  # the empty bucket is left out
    assert "paper pelt" in texts  # roberta-base: the paper's Table 5 beside ours
    # ours reach 25 %, the paper's 24.8 % ([10,50), pelt): the axis ends a little above, far below 100
    assert 25 <= max(_y_ticks(texts, "P@1 per fact (%), as the paper")) <= 30
    (tmp_path / "plain.json").write_text(json.dumps({"model": "m", "variant": "baseline", "buckets": None}))
    with pytest.raises(ValueError, match="no LAMA result has frequency buckets"):
        plot_lama_buckets([str(tmp_path / "plain.json")], tmp_path / "c.svg")


def test_norm_sweep_plot_marks_the_chosen_l_and_its_ties(tmp_path: Path):
    sweep = {
        "model": "m",
        "chosen_norm": 2.0,
        "baseline": {"macro_p_at_1": 0.1},
        "norms": [{"norm": float(n), "macro_p_at_1": p} for n, p in zip(range(1, 5), [0.1, 0.3, 0.3, 0.2])],
    }
    (tmp_path / "s.json").write_text(json.dumps(sweep))
    plot_norm_sweep([tmp_path / "s.json"], tmp_path / "s.svg")
    assert_legible(tmp_path / "s.svg")
    texts = svg_texts(tmp_path / "s.svg")
    i = texts.index("chosen L = 2, a tie of 2")
    assert texts[i + 1] == "(30.0 %)" and texts[:4] == ["1", "2", "3", "4"]  # L on whole-number ticks


def test_finetuning_plot_draws_means_stds_and_the_papers_numbers(tmp_path: Path):
    runs = []
    for variant, seed, accuracy in (("baseline", 1, 0.5), ("baseline", 2, 0.7), ("pelt", 1, 0.65), ("pelt", 2, 0.65)):
        path = tmp_path / f"{variant}{seed}.json"
        path.write_text(
            json.dumps(
                {
                    "task": "wiki80",
                    "model": "roberta-base",
                    "variant": variant,
                    "seed": seed,
                    "setting": "1%",
                    "accuracy": accuracy,
                    "n": 50,
                    "classes": 80,
                    "eval_file": "test.jsonl",
                }
            )
        )
        runs.append(path)
    write_wiki80_summary(runs, tmp_path / "w.csv", tmp_path / "w.md")
    plot_finetuning(tmp_path / "w.csv", tmp_path / "w.svg")
    assert_legible(tmp_path / "w.svg")
    texts = svg_texts(tmp_path / "w.svg")
    assert "60.0" in texts and "65.0" in texts  # the two means
    assert "baseline (± std over seeds)" in texts and "paper pelt" in texts and "chance" in texts
    assert "roberta-base: Wiki80 accuracy by setting, read at markers" in texts  # a panel per model, named
    # the highest thing drawn is the paper's pelt, 65.6 + 1.0 (and the baseline's mean + std, 60 + 14.1)
    assert 70 <= max(_y_ticks(texts, "accuracy (%)")) <= 90


def test_finetuning_plot_of_the_papers_grid_has_a_panel_per_model_and_a_colour_per_variant(tmp_path: Path):
    """Three models, five variants, four settings (the paper's FewRel with controls): every variant its
    colour in each model's panel, values upright where they no longer fit a bar."""
    fields = ["benchmark", "model", "variant", "setting", "read_at", "accuracy_mean", "accuracy_std"]
    fields += ["paper_mean", "paper_std"]
    variants = ("baseline", "pelt", "permuted", "random", "swapped")
    with (tmp_path / "f.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fields)
        writer.writeheader()
        for model in ("roberta-base", "bert-base-uncased", "bart-base"):
            for variant in variants:
                for setting in ("5-1", "5-5", "10-1", "10-5"):
                    writer.writerow(
                        dict(
                            benchmark="fewrel1",
                            model=model,
                            variant=variant,
                            setting=setting,
                            read_at="both",
                            accuracy_mean=0.5,
                            accuracy_std="",
                            paper_mean="",
                            paper_std="",
                        )
                    )
    plot_finetuning(tmp_path / "f.csv", tmp_path / "f.svg")
    assert_legible(tmp_path / "f.svg")
    legend = next(g for g in ET.parse(tmp_path / "f.svg").getroot().iter(f"{SVG}g") if g.get("id") == "legend_1")
    fills = {
        style.split("fill: ")[1].split(";")[0]
        for path in legend.iter(f"{SVG}path")
        if "fill: #" in (style := path.get("style") or "") and "fill: #ffffff" not in style
    }
    assert len(fills) == len(variants), fills
    texts = svg_texts(tmp_path / "f.svg")
    assert [t for t in texts if "accuracy by setting" in t] == [
        f"{m}: FewRel 1.0 accuracy by setting, read at both" for m in ("roberta-base", "bert-base-uncased", "bart-base")
    ]


def test_coverage_counts_linking_methods_and_table_rows(tmp_path: Path):
    rows = [
        ("Ann", "Q1", "Q1", "qid"),
        ("Bob", None, "Bob", "title"),
        ("Bobby", None, "Bob", "alias"),
        ("Cy", "Q3", "Q3", "qid"),
        ("Dee", None, None, "missing", ["Dean", "Deb|bie"]),
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
        "language": "en",
    }
    write_table(tmp_path / "t.parquet", ["Bob", "Q1"], np.ones((2, 4)), [1, 2], [1, 2], meta)  # Q3 has no sentence
    out = write_coverage(
        {"wiki": tmp_path / "te.parquet"},
        {("wiki", "demo"): tmp_path / "t.parquet"},
        tmp_path / "c.csv",
        tmp_path / "c.html",
    )
    expected = {
        "domain": "wiki",
        "model": "demo",
        "language": "en",
        "wanted": 5,
        "found_by_alias": 1,
        "found_by_qid": 2,
        "found_by_title": 1,
        "not_found": 1,
        "names_in_table": 3,  # Ann, Bob and Bobby; Cy's entity has no sentence
        "entities_found": 3,
        "entities_in_table": 2,
    }
    assert out == [expected]
    assert list(csv.DictReader((tmp_path / "c.csv").open())) == [{k: str(v) for k, v in expected.items()}]
    page = (tmp_path / "c.html").read_text()
    assert html_rows(page)[1] == [str(v) for v in expected.values()]
    assert "<tr><td>wiki</td><td>Dee</td><td>Dean, Deb¦bie</td></tr>" in page  # named, with suggestions
    plot_coverage(tmp_path / "c.csv", tmp_path / "c.svg")
    assert_legible(tmp_path / "c.svg")
    texts = svg_texts(tmp_path / "c.svg")
    # one unit: both bars count the 5 names (alias 1, qid 2, title 1, not found 1; then with a vector 3,
    # found without a sentence 1, not found 1), each row's total at its end
    title = "Task entities: how their names were linked, and how many got a vector"
    drawn = texts[texts.index("wiki / demo: vector") + 1 : texts.index(title)]
    assert drawn == ["1", "2", "1", "1", "5", "3", "1", "1", "5"]
    assert "task-entity names" in texts and "found, no sentence" in texts


def test_coverage_of_a_merged_table_says_what_each_language_gave(tmp_path: Path):
    """A table merged over languages: its row says ``multilingual``, and a table below lists each
    corpus's language, entities and sentences, and what it had without a QID, as the metadata holds."""
    row = dict(zip(TASK_ENTITIES_SCHEMA.names, ("Berlin", "Q64", "Q64", "qid")))
    pq.write_table(pa.Table.from_pylist([row], schema=TASK_ENTITIES_SCHEMA), tmp_path / "te.parquet")
    coverage = {
        "wiki_de": {"language": "de", "entities": 5, "sentences": 31, "entities_without_qid": 2},
        "wiki_fr": {"language": "fr", "entities": 4, "sentences": 17, "sentences_without_qid": 3},
    }
    meta = {"model": "m", "revision": "local", "hidden_size": 4, "representation": "test", "max_seq_len": 8}
    meta |= {"norm": 7.0, "language": "multilingual", "languages": ["de", "fr"], "coverage": coverage}
    write_table(tmp_path / "t.parquet", ["Q64"], np.ones((1, 4)), [3], [3], meta)
    (out,) = write_coverage(
        {"wiki_all": tmp_path / "te.parquet"},
        {("wiki_all", "xlmr"): tmp_path / "t.parquet"},
        tmp_path / "c.csv",
        tmp_path / "c.html",
    )
    assert out["language"] == "multilingual" and out["entities_in_table"] == 1
    page = html_rows((tmp_path / "c.html").read_text())
    start = page.index(
        ["domain", "model", "corpus", "language", "entities", "sentences"]
        + ["entities without qid"]
        + ["sentences without qid"]
    )
    assert page[start + 1 : start + 3] == [
        ["wiki_all", "xlmr", "wiki_de", "de", "5", "31", "2", "0"],
        ["wiki_all", "xlmr", "wiki_fr", "fr", "4", "17", "0", "3"],
    ]
    plot_coverage(tmp_path / "c.csv", tmp_path / "c.svg")  # the language column is not a count to draw


def test_each_coverage_series_has_a_colour_of_its_own(tmp_path: Path):
    """Four ways of linking and three vector states: seven series, seven colours in the legend (the
    demo's 'title' and 'with a vector' once shared one)."""
    counts = {"found_by_alias": 1, "found_by_qid": 5, "found_by_string": 2, "found_by_title": 3, "not_found": 1}
    row = {"domain": "wiki", "model": "demo", "wanted": 12, **counts, "names_in_table": 9}
    with (tmp_path / "c.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, row)
        writer.writeheader()
        writer.writerow(row)
    plot_coverage(tmp_path / "c.csv", tmp_path / "c.svg")
    legend = next(g for g in ET.parse(tmp_path / "c.svg").getroot().iter(f"{SVG}g") if g.get("id") == "legend_1")
    names = ["".join(t.itertext()) for t in legend.iter(f"{SVG}text")]
    fills = [
        style.split("fill: ")[1].split(";")[0]
        for path in legend.iter(f"{SVG}path")
        if "fill: " in (style := path.get("style") or "") and "fill: #ffffff" not in style
    ]
    assert len(names) == 7 and len(fills) == 7 and len(set(fills)) == 7, (names, fills)


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
        {
            "domain": "wiki",
            "stage": stage,
            "source": source,
            "count": name,
            "value": str(value),
            "skip": str(skip),
            "language": "",  # no corpus job recorded the site
        }
        for stage, source, name, value, skip in expected
    ]
    html = (tmp_path / "q.html").read_text()
    highlighted = [tr.split("<td>")[4].removesuffix("</td>") for tr in html.split('<tr class="skipped">')[1:]]
    assert highlighted == ["skipped_dump_error", "how_missing"]
    assert html.count("<tr>") == 1 + len(expected) - 2  # the header and the rows without a skip
    assert "2 of 4 skip counts are not zero" in html


def test_input_quality_counts_per_language_when_corpora_have_several(tmp_path: Path):
    """Each row carries its corpus's language, the later stages' rows that of their domain's corpus;
    with two languages the page sums each count per language above the rows per file."""
    paths = []
    for domain, language, files in (("enwiki", "en", ["e1", "e2"]), ("dewiki", "de", ["d1"])):
        for name in files:
            paths.append(tmp_path / f"{name}.json")
            write_counts(
                paths[-1],
                {"articles": 2, "skipped_dump_error": int(name == "d1")},
                stage="corpus_wikipedia",
                domain=domain,
                source=f"{name}.xml.bz2",
                details={"site": {"language": language, "language_from": "dump", "dbname": None}},
            )
        paths.append(tmp_path / f"{domain}.json")
        write_counts(paths[-1], {"anchors_invalid": 1}, stage="link_wikipedia", domain=domain)
    rows = write_input_quality(paths, tmp_path / "q.csv", tmp_path / "q.html")
    assert {(r["domain"], r["language"]) for r in rows} == {("enwiki", "en"), ("dewiki", "de")}
    assert [r["language"] for r in csv.DictReader((tmp_path / "q.csv").open())] == ["en"] * 5 + ["de"] * 3
    totals = {(t["language"], t["stage"], t["count"]): t["value"] for t in language_totals(rows)}
    assert totals == {
        ("en", "corpus_wikipedia", "articles"): 4,
        ("en", "corpus_wikipedia", "skipped_dump_error"): 0,
        ("en", "link_wikipedia", "anchors_invalid"): 1,
        ("de", "corpus_wikipedia", "articles"): 2,
        ("de", "corpus_wikipedia", "skipped_dump_error"): 1,
        ("de", "link_wikipedia", "anchors_invalid"): 1,
    }
    html = (tmp_path / "q.html").read_text()
    per_language, per_file = html.split("<h2>Per file</h2>")
    assert "<h2>Per language</h2>" in per_language
    assert '<tr class="skipped"><td>de</td><td>corpus_wikipedia</td><td>skipped_dump_error</td><td>1</td>' in html
    assert "<tr><td>en</td><td>corpus_wikipedia</td><td>articles</td><td>4</td>" in per_language
    assert "<td>dewiki</td><td>corpus_wikipedia</td><td>d1.xml.bz2</td><td>articles</td><td>2</td>" in per_file
    # one language: no per-language table
    write_input_quality(paths[3:], tmp_path / "one.csv", tmp_path / "one.html")
    assert "Per language" not in (tmp_path / "one.html").read_text()


def test_frequency_plot_counts_every_entity(tmp_path: Path):
    frequencies = [1, 1, 2, 3, 9, 10, 11, 60, 120, 5000]
    pq.write_table(pa.table({"entity_id": [str(i) for i in range(10)], "frequency": frequencies}), tmp_path / "f")
    plot_frequencies({"wiki": tmp_path / "f"}, tmp_path / "f.svg")
    assert_legible(tmp_path / "f.svg")
    assert "wiki: 10 entities, median 9.5 mentions" in svg_texts(tmp_path / "f.svg")


def test_stage_times_from_pelt_and_spark_log_lines(tmp_path: Path):
    logs = tmp_path / "logs"
    (logs / "linking").mkdir(parents=True)
    (logs / "eval" / "lama" / "m").mkdir(parents=True)
    # a Spark job: the JVM's time stamps (yy/MM/dd, no milliseconds) until pelt's line at the end
    (logs / "linking" / "wiki.log").write_text(
        "WARNING: no time here\n26/11/24 00:48:24 WARN Utils: x\n2026-11-24 00:49:13,500 INFO pelt: done\n"
    )
    (logs / "eval" / "lama" / "m" / "pelt.log").write_text(
        "2026-11-24 01:00:00,000 INFO a\nLAMA: 100%|###| 70/70\n2026-11-24 01:00:02,250 INFO b\n"
    )
    (logs / "eval" / "lama" / "m" / "baseline.log").write_text("2026-11-24 01:00:00,000 INFO only one line\n")
    (logs / "eval" / "lama" / "m" / "notes.txt").write_text("2026-11-24 01:00:00,000 not a log\n")
    times = stage_times(logs)
    assert times == {"linking": (pytest.approx(49.5), 1), "eval/lama": (pytest.approx(2.25), 2)}
    plot_stage_times(logs, tmp_path / "t.svg")
    texts = svg_texts(tmp_path / "t.svg")
    assert "50 s, 1 job(s)" in texts and "2 s, 2 job(s)" in texts and "eval/lama" in texts
    assert "seconds, summed over the stage's jobs" in texts  # no stage took two minutes

    # Snakemake's record of a job's start and end wins over its log (imports and the JVM's start count):
    # one record per output, each naming the job's log; a record of another format is passed over
    metadata = tmp_path / ".snakemake" / "metadata"
    metadata.mkdir(parents=True)
    job = {"rule": "link_wikipedia", "log": ["logs/linking/wiki.log"], "starttime": 100.0, "endtime": 241.0}
    (metadata / "a").write_text(json.dumps(job))
    (metadata / "b").write_text(json.dumps(job))
    (metadata / "c").write_text(json.dumps({"rule": "x", "log": ["logs/eval/lama/m/pelt.log"]}))
    (metadata / "d").write_text("not json")
    times = stage_times(logs, metadata)
    assert times == {"linking": (pytest.approx(141.0), 1), "eval/lama": (pytest.approx(2.25), 2)}
    plot_stage_times(logs, tmp_path / "t.svg", metadata)
    assert_legible(tmp_path / "t.svg")
    texts = svg_texts(tmp_path / "t.svg")
    assert "2.4 min, 1 job(s)" in texts and "2 s, 2 job(s)" in texts
    assert "minutes, summed over the stage's jobs" in texts


def test_stage_times_of_a_named_run_take_snakemakes_records(tmp_path: Path):
    """A named run's logs are under runs/<run>/logs/; Snakemake's records name them from the
    workflow's folder, the one holding .snakemake/, not the one holding the logs."""
    logs = tmp_path / "runs" / "mine" / "logs"
    (logs / "linking").mkdir(parents=True)
    (logs / "linking" / "wiki.log").write_text("2026-11-24 00:49:13,500 INFO pelt: done\n")
    metadata = tmp_path / ".snakemake" / "metadata"
    metadata.mkdir(parents=True)
    job = {"log": ["runs/mine/logs/linking/wiki.log"], "starttime": 100.0, "endtime": 160.0}
    (metadata / "a").write_text(json.dumps(job))
    assert stage_times(logs, metadata) == {"linking": (pytest.approx(60.0), 1)}


def _fewrel(tmp_path: Path, variant: str, seed: int, accuracy: float) -> Path:
    path = tmp_path / f"fewrel-{variant}-{seed}.json"
    record = {"task": "fewrel", "dataset": "fewrel1", "model": "/m/roberta-base", "variant": variant}
    path.write_text(json.dumps({**record, "seed": seed, "setting": "5-1", "accuracy": accuracy, "n": 1000}))
    return path


def test_headline_has_each_benchmark_with_the_papers_numbers_meanings_and_flags(tmp_path: Path):
    lama = []
    for variant, scores, rare in (("baseline", [0.05, 0.25, 0.02, 0.17], 1), ("pelt", [0.07, 0.29, 0.03, 0.0], 3)):
        path = tmp_path / f"{variant}.json"
        benchmarks = {b: {"macro_p_at_1": p} for b, p in zip(["G-RE", "T-REx", "UHN G-RE", "UHN T-REx"], scores)}
        path.write_text(
            json.dumps(
                {
                    "model": "/m/roberta-base",
                    "variant": variant,
                    "macro_p_at_1": 0.2,
                    "benchmarks": benchmarks,
                    # [0,10): 1 of 4 facts right without the table, 3 of 4 with; the mean over relations apart;
                    # [10,50): 8 of 10 without, 7 of 10 with; [50,100) and [100,+) without facts
                    "buckets": {
                        "[0,10)": {"facts": 4, "correct": rare, "macro_p_at_1": scores[0]},
                        "[10,50)": {"facts": 10, "correct": 8 if variant == "baseline" else 7, "macro_p_at_1": 0.5},
                        "[50,100)": {"facts": 0, "correct": 0, "macro_p_at_1": None},
                    },
                    "counts": {"facts_evaluated": 1000, "injected": 0 if variant == "baseline" else 40},
                }
            )
        )
        lama.append(path)
    fewrel = [
        _fewrel(tmp_path, "baseline", 1, 0.9),
        _fewrel(tmp_path, "baseline", 2, 0.8),
        _fewrel(tmp_path, "pelt", 1, 0.21),
    ]
    flags = write_headline(lama, [], fewrel, tmp_path / "h.html")
    html = (tmp_path / "h.html").read_text()
    # ours without and with the table, the difference, the paper's three (Table 4: 24.7 -> 27.5)
    rows = html_rows(html)
    macro = "P@1 macro over relations"
    assert [f"LAMA T-REx {macro} (as the paper)", "25.0", "29.0", "+4.0", "24.7", "27.5", "+2.8"] in rows
    # the rare bucket per fact (1/4 -> 3/4) beside the paper's Table 5; the mean over relations as ours, alone
    assert ["LAMA T-REx [0,10) P@1 per fact (as the paper)", "25.0", "75.0", "+50.0", "18.1", "21.9", "+3.8"] in rows
    assert [f"LAMA T-REx [0,10) {macro} (ours)", "5.0", "7.0", "+2.0", "–", "–", "–"] in rows
    # a frequent bucket per fact beside Table 5 (21.1 -> 24.8), no mean over relations; none for empty buckets
    assert ["LAMA T-REx [10,50) P@1 per fact (as the paper)", "80.0", "70.0", "-10.0", "21.1", "24.8", "+3.7"] in rows
    assert not any("[10,50) " + macro in row[0] or "[50,100)" in row[0] or "[100,+)" in row[0] for row in rows)
    assert ["FewRel 1.0 5-1 accuracy", "85.0 ± 7.1", "21.0", "-64.0", "90.4", "92.7", "+2.3"] in rows
    assert (
        "<p>LAMA (Google-RE, T-REx): " in html
        and "<p>LAMA-UHN: " in html
        and "<p>T-REx [10,50) and up: " in html
        and "<p>FewRel: " in html
        and "Wiki80:" not in html
    )
    assert len(flags) == 2 and "only 40 of 1000 facts" in flags[0] and "at chance" in flags[1]
    assert html.count('<p class="flag">') == 2


def test_the_headline_leaves_out_the_papers_columns_for_a_model_it_does_not_report(tmp_path: Path):
    runs = []
    for variant, accuracy in (("baseline", 0.5), ("pelt", 0.6)):
        path = _fewrel(tmp_path, variant, 1, accuracy)
        path.write_text(path.read_text().replace("/m/roberta-base", "results/models/demo"))
        runs.append(path)
    write_headline([], [], runs, tmp_path / "h.html")
    html = (tmp_path / "h.html").read_text()
    assert html_rows(html)[:2] == [
        ["Benchmark", "Baseline", "pelt", "Δ"],
        ["FewRel 1.0 5-1 accuracy", "50.0", "60.0", "+10.0"],
    ]
    assert "Paper" not in html and "the paper reports no result for this model" in html


def test_the_headline_names_a_readout_other_than_the_papers(tmp_path: Path):
    runs = []
    for variant, accuracy in (("baseline", 0.5), ("pelt", 0.6)):
        path = _fewrel(tmp_path, variant, 1, accuracy)
        result = json.loads(path.read_text())
        result["hyperparameters"] = {"read_at": "both"}
        path.write_text(json.dumps(result))
        runs.append(path)
    write_headline([], [], runs, tmp_path / "h.html")
    label = "FewRel 1.0 5-1 accuracy, read at both (not the paper's readout)"
    assert [label, "50.0", "60.0", "+10.0"] == html_rows((tmp_path / "h.html").read_text())[1][:4]


def test_the_landing_text_names_the_configured_tasks():
    """The report's landing text, rendered as Snakemake renders it (its Jinja settings, the config
    as ``snakemake.config``), names the run's tasks and counts; what they add, or that nothing
    evaluates them, is the landing page's, which knows the tasks' kinds (the next test)."""

    class Snakemake:
        config = {
            "tasks": {"lama": {}, "fewrel2": {"kind": "fewrel"}, "mine": {"kind": "entities"}},
            "corpora": {"wikipedia": {}},
            "models": [{"name": "demo"}],
        }

    template = (Path(__file__).parents[3] / "workflow" / "report" / "workflow.rst").read_text()
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    text = env.from_string(template).render(snakemake=Snakemake, categories={}, files=[])
    html = publish_parts(text, writer_name="html")["html_body"]
    flat = " ".join(text.split())
    assert "entity tables built from 1 corpus (corpora) for 1 model(s), for the configured tasks" in flat
    assert "(lama, fewrel2, mine)" in flat and "<p>" in html


def test_the_landing_page_of_an_entity_list_names_its_tables_found_and_misses(tmp_path: Path):
    """A run that evaluates nothing still has a landing page: the tables it wrote, then per list how
    many entries were found and each miss with the closest names (the same lines the terminal shows
    when the run ends); a list whose stage has not run says nothing."""
    from pelt.report.outcome import ListedTask, outcome_lines

    mine = tmp_path / "mine.txt"
    mine.write_text("Marie Curie\nQ42\nMarie Curei\n\nZxq\n", encoding="utf-8")
    counts = tmp_path / "counts.json"
    counts.write_text(
        json.dumps({"details": {"not_found": {"Marie Curei": ["Marie Curie", "Pierre Curie"], "Zxq": []}}})
    )
    task = {"domain": "wikipedia", "entities": str(mine)}
    listed = [ListedTask("entities", task, [str(mine)], str(counts))]
    lines = outcome_lines(["results/tables/wikipedia/demo/table.parquet"], listed)
    assert lines == [
        "table: results/tables/wikipedia/demo/table.parquet",
        "tasks.entities: 2 of 4 entities found",
        "  not found: 'Marie Curei' (closest: 'Marie Curie', 'Pierre Curie')",
        "  not found: 'Zxq' (closest: none close)",
    ]
    assert outcome_lines([], [ListedTask("entities", task, [str(mine)], str(tmp_path / "none.json"))]) == []

    flags = write_headline([], [], [], tmp_path / "h.html", lines)
    html = (tmp_path / "h.html").read_text()
    assert flags == [] and "Baseline" not in html and "No flag raised" not in html
    assert "<p>tasks.entities: 2 of 4 entities found</p>" in html
    assert "No task of this run evaluates the tables" in html
    assert "<p>not found: 'Marie Curei' (closest: 'Marie Curie', 'Pierre Curie')</p>" in html
