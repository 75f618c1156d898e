"""What reruns after a change: a finished run has nothing to do; a changed
setting reruns only what depends on it; a new corpus file or task entity is the only one parsed or
encoded (a second run from the same inputs, and a rerun after a kill: test_operations.py).

Each test reads the suite's demo run (the session fixture ``finished`` of tests/demo_run.py) or
works on a copy of it (``copy_of``). What reruns is read from Snakemake's own plan: ``snakemake
-n`` prints one ``rule NAME:`` (or ``localrule NAME:``) block per job.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml
from conftest import REPO
from demo_run import (
    CORPUS_FILE,
    DUMP,
    ENCODING,
    SHARD,
    TABLE,
    copy_of,
    jobs_of,
    planned,
    snakemake,
    table_rows,
    write_config,
    write_dump,
)

from pelt import registry


def test_finished_run_has_nothing_to_do(finished):
    assert planned(finished) == Counter()


def test_a_job_per_run_instead_of_a_setting_reruns_the_finetuning_alone(finished):
    """The suite's run has a setting's fine-tuning runs in one job (`finetuning_jobs: setting`, the
    default); with a job per run each run is planned again, a job of its own of the kind's rule (the
    jobs' inputs and params differ), and what reads the runs; nothing before them (docs/running.md)."""
    runs = list((finished / "results" / "eval").glob("*/demo/*/*/seed*.json"))
    assert {path.relative_to(finished).parts[2] for path in runs} == {"fewrel", "fewrel2", "wiki80"}
    jobs = planned(finished, "--config", "finetuning_jobs=run")
    assert jobs["fewrel"] + jobs["wiki80"] == len(runs), jobs
    report = {"finetuning_summary", "finetuning_plot", "headline", "stage_times_plot", "all"}
    assert set(jobs) <= {"fewrel", "wiki80", *report}, jobs


def rerun_before_evaluation(workdir: Path, change: dict, tmp_path: Path) -> tuple[Counter[str], str]:
    """The jobs a config change reruns outside the evaluation and the report (which always rerun after
    them), and the dry run's output. The change is a file merged over the run's config that keeps
    its run (`run: ""`), not a run of its own."""
    overlay = tmp_path / "change.yaml"
    overlay.write_text(yaml.safe_dump({"run": "", **change}))
    run = snakemake(workdir, "-n", "--configfile", "config/config.yaml", str(overlay))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    jobs = jobs_of(run.stdout)
    assert jobs["lama"] == 5 and jobs["lama_summary"] == jobs["all"] == 1, jobs  # baseline, pelt, 3 controls
    rules = REPO / "workflow" / "rules"
    evaluation = [
        rule
        for path in (rules / "evaluation.smk", rules / "report.smk", *(rules / "tasks").glob("*.smk"))
        for rule in re.findall(r"^rule (\w+):", path.read_text(), re.M)
    ]
    # the template's rules: a kind's (a job per run) or a task's (a job per setting, the suite's)
    tasks = yaml.safe_load((workdir / "config" / "config.yaml").read_text())["tasks"]
    kinds = registry.kinds_with_rules(registry.FINETUNING_RULES)
    evaluation += [kind.name for kind in kinds]
    evaluation += [name for name, task in tasks.items() if registry.kind_of(name, task) in kinds]
    return Counter({rule: n for rule, n in jobs.items() if rule not in {*evaluation, "all"}}), run.stdout


@pytest.mark.parametrize(
    ("change", "reruns"),
    [
        # An evaluation setting: the evaluation only, not the sampling or the encoding.
        ({"tasks": {"lama": {"batch_size": 7}}}, {}),
        # The sample size: the sampling and after, of both domains (Wikipedia, biomed); not the
        # corpus, the linking or the task entities.
        ({"sampling": {"max_sentences_per_entity": 3}}, {"sample_mentions": 2, "encode_shard": 4, "entity_table": 2}),
        # The encoding: the shards and after, of both domains.
        ({"encoding": {"max_seq_len": 32}}, {"encode_shard": 4, "entity_table": 2}),
        # L: the evaluations only; a table records its model family's L, not the configured one.
        ({"models": [{"name": "demo", "norm": 3.0}]}, {}),
    ],
    ids=["evaluation", "sampling", "encoding", "norm"],
)
def test_a_changed_setting_reruns_only_what_depends_on_it(finished, tmp_path, change, reruns):
    assert rerun_before_evaluation(finished, change, tmp_path)[0] == reruns


def _reversed(value):
    """Every mapping of a config with its keys in the opposite order (lists kept as they are)."""
    if isinstance(value, dict):
        return {key: _reversed(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [_reversed(item) for item in value]
    return value


def test_moved_keys_and_speed_settings_rerun_nothing(finished, tmp_path):
    """A config whose keys only moved, or whose changes only make jobs faster or slower (Spark's JVM
    options, memory, splits; encoding's host workers), reruns nothing: Snakemake compares params by
    repr, so the rules pass their settings with sorted keys and the speed-only ones apart
    (pelt.config.canonical, SpeedOnly)."""
    work = copy_of(finished, tmp_path / "work")
    config_path = work / "config" / "config.yaml"
    config = _reversed(yaml.safe_load(config_path.read_text()))
    config["spark"].update(java_options="-XX:+UseSerialGC", driver_memory="3g", split_bytes=1 << 20)
    config["encoding"]["host_workers"] = 1
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    assert planned(work) == Counter()
    config["encoding"]["max_seq_len"] = 32  # a setting that changes the table still reruns its jobs
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    assert planned(work)["encode_shard"] == 4


def test_a_new_corpus_file_is_the_only_one_parsed(finished, tmp_path):
    """The corpus stage runs one job per file: a second dump adds one corpus job, for that file
    alone, and reruns what reads the union of the files (the linking and after; not the demo model,
    which trains on its own pretraining text). Run up to the linking, the first file's outputs are untouched and the
    mentions hold the new file's article."""
    work = copy_of(finished, tmp_path / "work")
    (work / "extra").mkdir()  # the test's own inputs, beside the run
    second = write_dump(work / "extra" / "second-pages-articles.xml.bz2", ["Westmarch"])
    os.utime(second, (946_684_800, 946_684_800))  # older than every output: not an mtime trigger
    change = {"corpora": {"wikipedia": {"path": [str(DUMP), str(second)]}}}
    jobs, output = rerun_before_evaluation(work, change, tmp_path)
    assert jobs == {
        "corpus_wikipedia": 1,
        "link_wikipedia": 1,
        "entity_ids": 1,
        "task_entities": 1,
        "sample_mentions": 1,
        **ENCODING,
    }
    new_file = "results/corpus/wikipedia/files/second-pages-articles.xml.bz2"
    blocks = re.split(r"\n(?=(?:local)?rule \w+:\n)", output)
    corpus_jobs = [block for block in blocks if re.search(r"^rule corpus_wikipedia:$", block, re.M)]
    assert len(corpus_jobs) == 1 and f"{new_file}/documents" in corpus_jobs[0], corpus_jobs
    (report,) = [block for block in blocks if re.search(r"^(?:local)?rule input_quality:$", block, re.M)]
    assert f"{new_file}/counts.json" in report and f"{CORPUS_FILE}/counts.json" in report, report

    config = yaml.safe_load((work / "config" / "config.yaml").read_text())
    config["corpora"]["wikipedia"]["path"] = change["corpora"]["wikipedia"]["path"]
    (work / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    first = sorted(work.joinpath(CORPUS_FILE).rglob("*"))
    mtimes = {path: path.stat().st_mtime_ns for path in first}
    run = snakemake(work, "--cores", "2", "results/linking/wikipedia/mentions")
    assert run.returncode == 0, (run.stdout + run.stderr)[-5000:]
    assert jobs_of(run.stdout + run.stderr) == {"corpus_wikipedia": 1, "link_wikipedia": 1}
    assert sorted(work.joinpath(CORPUS_FILE).rglob("*")) == first
    assert {path: path.stat().st_mtime_ns for path in first} == mtimes
    counts = json.loads((work / new_file / "counts.json").read_text())
    assert (counts["source"], counts["counts"]["articles"]) == (str(second), 1)
    mentions = pq.read_table(work / "results" / "linking" / "wikipedia" / "mentions").to_pylist()
    assert ("Corvel", "anchor") in {(m["entity_id"], m["method"]) for m in mentions if m["doc_id"] == "990000"}
    assert {m["doc_id"] for m in mentions} > {"990000"}  # and the first file's documents are still linked


def test_corpus_files_with_one_name_are_a_config_error(tmp_path):
    """Two corpus files with the same name in different folders would write the same outputs: the
    run is refused before anything runs, naming both."""
    config = write_config(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    twin = write_dump(tmp_path / "elsewhere" / DUMP.name, ["Westmarch"])
    config["corpora"]["wikipedia"]["path"] = [str(DUMP), str(twin)]
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0
    out = run.stdout + run.stderr
    assert f"{str(DUMP)!r} and {str(twin)!r} would both be written to" in out, out[-3000:]
    assert "results/corpus/wikipedia/files/demo-pages-articles.xml.bz2/" in out


def test_a_new_task_entity_is_the_only_one_encoded(finished, tmp_path):
    """A task gains an entity (Saltmere: in the corpus, in no task yet): the sampling and the shards
    rerun, but each shard encodes only the new entity's mentions; every other entity's sums come
    from the encoding cache, so their rows are the previous table's, bit for bit."""
    work = copy_of(finished, tmp_path / "work")
    facts = work / "extra" / "P36.jsonl"
    facts.parent.mkdir()  # the test's own inputs, beside the run
    fact = {"sub_label": "Saltmere", "sub_uri": "Q990000023", "obj_label": "Corvel", "predicate_id": "P36"}
    facts.write_text(json.dumps(fact) + "\n")
    config = yaml.safe_load((work / "config" / "config.yaml").read_text())
    config["tasks"]["lama"]["facts"].append(str(facts))
    (work / "config" / "config.yaml").write_text(yaml.safe_dump(config))

    run = snakemake(work, "--cores", "2", TABLE)
    assert run.returncode == 0, (run.stdout + run.stderr)[-5000:]
    assert jobs_of(run.stdout + run.stderr) == {"task_entities": 1, "sample_mentions": 1, **ENCODING}
    logs = [(work / "logs" / "tables" / "wikipedia" / "demo" / f"shard-{i}-of-2.log").read_text() for i in range(2)]
    reports = [re.search(r"encoding cache: (\d+) entities reused, (\d+) encoded", log) for log in logs]
    assert all(reports), logs
    before, after = table_rows(finished / TABLE), table_rows(work / TABLE)
    assert after.keys() == before.keys() | {"Saltmere"} and "Saltmere" not in before
    assert sum(int(r.group(2)) for r in reports) == sum(
        1 for i in range(2) if "Saltmere" in table_rows(work / SHARD.format(i))
    )  # each shard encoded the new entity (where it has mentions) and nothing else
    for entity, row in before.items():
        assert np.array_equal(after[entity]["vector_sum"], row["vector_sum"]), entity
        assert after[entity]["n_sentences"] == row["n_sentences"]
