"""The workflow as a user runs it: lint, formatting, config errors, and the demo end to end."""

from __future__ import annotations

import bz2
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from conftest import REPO

SNAKEMAKE = [sys.executable, "-m", "snakemake"]
DEMO = REPO / "resources" / "demo"


def snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), *args],
        capture_output=True,
        text=True,
        cwd=workdir,
    )


def write_config(workdir: Path, **overrides) -> dict:
    """The default config with the demo inputs made absolute (the run happens in a temp dir)."""
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    wikipedia = config["corpora"]["wikipedia"]
    for key in ("path", "page_props"):
        wikipedia[key] = str(REPO / wikipedia[key])
    lama = config["tasks"]["lama"]
    for key in ("relations", "common_vocab"):
        lama[key] = str(REPO / lama[key])
    lama["facts"] = [str(REPO / pattern) for pattern in lama["facts"]]
    for section, values in overrides.items():
        config.setdefault(section, {}).update(values)
    (workdir / "config").mkdir(parents=True, exist_ok=True)
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    return config


def test_lint_is_clean():
    run = subprocess.run([*SNAKEMAKE, "--lint"], capture_output=True, text=True, cwd=REPO)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Lints for" not in run.stdout + run.stderr, run.stdout + run.stderr


def test_snakefmt_is_clean():
    files = ["Snakefile", *map(str, sorted((REPO / "workflow" / "rules").glob("*.smk")))]
    run = subprocess.run(
        [sys.executable, "-m", "snakefmt", "--check", *files], capture_output=True, text=True, cwd=REPO
    )
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize(
    ("section", "values", "named"),
    [
        ("corpora", {"wikipedia": {"kind": "wikipeda", "path": "x"}}, "'kind'"),
        ("sampling", {"max_sentences_per_entiti": 3}, "max_sentences_per_entiti"),
        ("encoding", {"precision": "fp8"}, "'precision'"),
    ],
)
def test_bad_config_names_the_key(tmp_path, section, values, named):
    write_config(tmp_path, **{section: values})
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0
    out = run.stdout + run.stderr
    assert "Error validating config file" in out, out
    assert named in out, out
    assert "Traceback" not in out, out


def _demo_dump_counts() -> tuple[int, int]:
    """Articles and redirects of the main namespace, read directly from the XML."""
    articles = redirects = 0
    with bz2.open(DEMO / "wikipedia" / "demo-pages-articles.xml.bz2") as f:
        for _, elem in ET.iterparse(f):
            if elem.tag.endswith("}page"):
                ns = next(c.text for c in elem if c.tag.endswith("}ns"))
                if ns == "0":
                    if any(c.tag.endswith("}redirect") for c in elem):
                        redirects += 1
                    else:
                        articles += 1
                elem.clear()
    return articles, redirects


def test_demo_end_to_end(tmp_path):
    """The whole DAG on the demo, then a second run that has nothing to do."""
    config = write_config(tmp_path, demo_model={"steps": 20, "hidden_size": 64}, spark={"threads": 2})
    run = snakemake(tmp_path, "--cores", "2")
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-5000:]
    results = tmp_path / "results"

    articles, redirects = _demo_dump_counts()
    documents = pq.read_table(results / "corpus" / "wikipedia" / "documents").to_pylist()
    assert len(documents) == articles >= 40
    pages = pq.read_table(results / "corpus" / "wikipedia" / "pages").to_pylist()
    assert sum(p["is_redirect"] for p in pages) == redirects > 0
    for doc in documents:
        assert "[[" not in doc["text"] and "{{" not in doc["text"]
        for link in doc["links"]:
            assert 0 <= link["start"] < link["end"] <= len(doc["text"])

    mentions = pq.read_table(results / "linking" / "wikipedia" / "mentions").to_pylist()
    methods = {m["method"] for m in mentions}
    assert {"anchor", "heuristic"} <= methods
    for m in mentions:
        assert 0 <= m["start"] < m["end"] <= len(m["sentence"])

    resolved = pq.read_table(results / "samples" / "wikipedia" / "task_entities.parquet").to_pylist()
    wanted = {r["entity_id"] for r in resolved if r["entity_id"] is not None}
    assert wanted, "no task entity was found in the demo corpus"

    cap = config["sampling"]["max_sentences_per_entity"]
    table = pq.read_table(results / "tables" / "wikipedia" / "demo" / "table.parquet")
    rows = table.to_pylist()
    assert rows and {r["entity_id"] for r in rows} <= wanted
    hidden = json.loads((results / "models" / "demo" / "config.json").read_text())["hidden_size"]
    for row in rows:
        assert len(row["vector_sum"]) == hidden
        assert 1 <= row["n_sentences"] <= min(cap, row["frequency"])

    scores = {}
    for variant in ("baseline", "pelt"):
        result = json.loads((results / "eval" / "lama" / "demo" / f"{variant}.json").read_text())
        assert result["variant"] == variant
        scores[variant] = result
    summary = (results / "eval" / "summary" / "lama.md").read_text()
    assert "baseline" in summary and "pelt" in summary
    assert (results / "eval" / "summary" / "lama.csv").read_text().count("\n") >= 3

    sweep = json.loads((results / "eval" / "lama" / "demo" / "norm_sweep.json").read_text())
    norms = config["tasks"]["lama"].get("norms", list(range(1, 11)))
    assert [entry["norm"] for entry in sweep["norms"]] == norms
    assert sweep["chosen_norm"] in norms
    assert "demo" in (results / "eval" / "summary" / "norm_sweep.md").read_text()

    again = snakemake(tmp_path, "--cores", "2", "-n")
    assert again.returncode == 0, again.stderr
    assert "Nothing to be done" in again.stdout + again.stderr


def test_s2orc_domain_is_linked_by_string_matching(tmp_path):
    """A task on an S2ORC corpus: S2ORC parsing, task entities by name, string linking."""
    config = write_config(tmp_path)
    config["corpora"] = {"biomed": {"kind": "s2orc", "path": str(DEMO / "s2orc" / "demo.jsonl")}}
    config["tasks"]["lama"]["domain"] = "biomed"
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake(tmp_path, "-n", "results/samples/biomed/sentences")
    assert run.returncode == 0, run.stdout + run.stderr
    jobs = {line.split()[-1].rstrip(":") for line in run.stdout.splitlines() if line.startswith(("rule ", "localrule "))}
    assert jobs == {"corpus_s2orc", "task_entities_by_name", "link_strings", "sample_mentions"}, run.stdout
