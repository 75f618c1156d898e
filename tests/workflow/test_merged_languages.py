"""Two languages through the workflow (issue 54 items 3 and 4): docs/languages.md's config of a German
and a French Wikipedia, a domain merged over both by QID, and mLAMA's German facts probed with the
German table, the French one and the merged one, run on the two wikis written for the tests
(tests/two_wikis.py) with a tiny XLM-R, to the mLAMA summary and the input-quality table."""

from __future__ import annotations

import csv
import re

import pyarrow.parquet as pq
import pytest
import yaml
from demo_run import REPO, planned_jobs, snakemake
from html_pages import html_rows
from two_wikis import write_mlama_release, write_wiki

from pelt.table import EntityTable

DATE = "20260101"
# A few pages: one Spark task and partition each, and a JVM that starts without compiling much.
SPARK = {"threads": 1, "shuffle_partitions": 1, "java_options": "-XX:TieredStopAtLevel=1"}


def docs_config() -> dict:
    """docs/languages.md's config block, the one with `merged:`, as a user copies it."""
    text = (REPO / "docs" / "languages.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"^```yaml\n(.*?)^```", text, re.M | re.S) if "\nmerged:" in b]
    return yaml.safe_load(block)


def write_run(workdir, model_dir) -> dict:
    """The docs' config on the two wikis (at the paths its globs name) and a German mLAMA release,
    with the tiny model, two sentences per entity and Spark sized for a few pages."""
    for language in ("de", "fr"):
        stem = workdir / "data" / f"{language}wiki" / f"{language}wiki-{DATE}"
        write_wiki(
            stem.with_name(f"{stem.name}-pages-articles-multistream.xml.bz2"),
            stem.with_name(f"{stem.name}-page_props.sql.gz"),
            language,
        )
    write_mlama_release(workdir / "data" / "mLAMA" / "release")
    config = {
        **docs_config(),
        "models": [{"name": str(model_dir), "id": "tiny"}],
        "sampling": {"max_sentences_per_entity": 2},
        "encoding": {"max_seq_len": 64, "tokens_per_batch": 512, "device": "cpu"},
        "spark": SPARK,
    }
    (workdir / "config").mkdir()
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return config


TARGETS = (
    "results/eval/summary/mlama.md",
    "results/eval/report/mlama.svg",
    "results/eval/report/input_quality.csv",
    "results/eval/report/coverage.html",
)


def test_the_docs_two_languages_plan_a_merged_table_and_mlama_with_each(tmp_path, multilingual_model_dirs):
    """The plan: each corpus resolves and samples the merged domain's task entities too, the merged
    sample reads both corpora's samples, ids and languages, its table its own ids and counts, and
    each mLAMA task the table its `domain` names."""
    config = write_run(tmp_path, multilingual_model_dirs["xlm-roberta"])
    assert config["merged"] == {"wiki_all": {"of": ["wiki_de", "wiki_fr"]}}
    plan = snakemake(tmp_path, "-n", *TARGETS)
    assert plan.returncode == 0, plan.stdout[-3000:] + plan.stderr[-3000:]
    jobs = planned_jobs(plan.stdout)
    (merge,) = [job for job in jobs if job["rule"] == "merge_samples"]
    (merged_entities,) = [job for job in jobs if job["rule"] == "merged_task_entities"]
    for corpus in ("wiki_de", "wiki_fr"):
        assert {f"results/samples/{corpus}/sentences", f"results/linking/{corpus}/ids"} <= set(merge["input"])
        assert f"results/task_entities/{corpus}/task_entities.parquet" in merged_entities["input"]
    assert "results/task_entities/wiki_all/task_entities.parquet" in merge["input"]
    tables = {job["output"][0].split("/")[2]: job for job in jobs if job["rule"] == "entity_table"}
    assert set(tables) == {"wiki_de", "wiki_fr", "wiki_all"}
    assert {"results/samples/wiki_all/ids", "results/samples/wiki_all/counts.json"} <= set(tables["wiki_all"]["input"])
    for job in [job for job in jobs if job["rule"] == "mlama"]:
        task = job["output"][0].split("/")[2]
        domain = config["tasks"][task]["domain"]
        assert "data/mLAMA/release/mlama1.1/de/templates.jsonl" in job["input"]
        assert any(path.startswith(f"results/tables/{domain}/") for path in job["input"]), job
        assert f"results/task_entities/{domain}/task_entities.parquet" in job["input"]
    assert sum(job["rule"] == "mlama" for job in jobs) == 3 * 4  # three tables, without and with, two controls

    # With the merged domain's task alone, each corpus still reads its facts: it resolves their entities.
    config["tasks"] = {"mlama_de_all": config["tasks"]["mlama_de_all"]}
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    plan = snakemake(tmp_path, "-n", "results/tables/wiki_all/tiny/table.parquet")
    assert plan.returncode == 0, plan.stdout[-3000:] + plan.stderr[-3000:]
    resolving = [job for job in planned_jobs(plan.stdout) if job["rule"] == "task_entities"]
    assert {job["output"][0].split("/")[2] for job in resolving} == {"wiki_de", "wiki_fr"}
    for job in resolving:
        assert "data/mLAMA/release/mlama1.1/de/P36.jsonl" in job["input"], job


@pytest.mark.slow  # eleven Spark jobs, each its own JVM: 3-10 minutes on two cores
def test_the_docs_two_languages_run_to_tables_and_mlama_side_by_side(tmp_path, multilingual_model_dirs):
    """The run: each language's table names its language, the merged one its languages and coverage,
    and the mLAMA summary shows the task's language beside each table's."""
    write_run(tmp_path, multilingual_model_dirs["xlm-roberta"])
    run = snakemake(tmp_path, "--cores", "2", *TARGETS)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-5000:]
    results = tmp_path / "results"
    de = EntityTable.open(results / "tables" / "wiki_de" / "tiny" / "table.parquet")
    assert (de.metadata["corpus"], de.metadata["language"]) == ("wiki_de", "de")  # item 3: the dump's language
    assert de.find(["Q64"], by=["qid"]) == ["Berlin"]  # ids are titles, QIDs beside them
    merged = EntityTable.open(results / "tables" / "wiki_all" / "tiny" / "table.parquet")
    assert merged.metadata["languages"] == ["de", "fr"] and set(merged.metadata["coverage"]) == {"wiki_de", "wiki_fr"}
    samples = pq.read_table(results / "samples" / "wiki_all" / "sentences").to_pylist()
    for corpus, given in merged.metadata["coverage"].items():
        assert given["sentences"] == sum(r["corpus"] == corpus for r in samples) > 0
    assert set(merged.ids()) == {"Q64", "Q183", "Q90", "Q1471", "Q142"}  # the facts' subjects, by QID

    with open(results / "eval" / "summary" / "mlama.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    probes = {(r["language"], r["table"], r["table_languages"]) for r in rows}
    assert probes == {("de", "wiki_de", "de"), ("de", "wiki_fr", "fr"), ("de", "wiki_all", "de,fr")}
    assert {r["variant"] for r in rows} == {"baseline", "pelt", "permuted", "random"}
    assert {int(r["injected"]) for r in rows if r["variant"] == "pelt"} == {5}  # every subject, in each table
    md = (results / "eval" / "summary" / "mlama.md").read_text(encoding="utf-8")
    assert "| Language | Table | Table languages | Model |" in md and "| de | `wiki_all` | de,fr | `" in md
    with open(results / "eval" / "report" / "input_quality.csv", newline="", encoding="utf-8") as fh:
        quality = {(r["domain"], r["count"]): int(r["value"]) for r in csv.DictReader(fh)}
    assert quality["wiki_all", "samples"] == len(samples) and ("wiki_all", "skipped_no_qid_entities_wiki_fr") in quality
    page = html_rows((results / "eval" / "report" / "coverage.html").read_text(encoding="utf-8"))
    assert ["wiki_all", "tiny", "multilingual"] in [row[:3] for row in page]  # the merged table's row
    per_language = [row for row in page if row[:2] == ["wiki_all", "tiny"] and row[2] in merged.metadata["coverage"]]
    assert [(row[2], row[3], int(row[5])) for row in per_language] == [
        (corpus, given["language"], given["sentences"]) for corpus, given in merged.metadata["coverage"].items()
    ]
