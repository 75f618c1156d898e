"""The fine-tuning template's job of a setting (pelt.tasks.finetuning, config ``finetuning_jobs:
setting``): a setting's runs in one process, each by its kind's job script with a ``snakemake`` object
of that run alone, each writing what it writes as a job of its own (issue 57). The workflow's side,
both modes planned and run: tests/workflow/test_task_kinds.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import REPO
from relation_data import records, write_wiki80

import pelt.logs
from pelt.eval.settings import TableInputs, parse
from pelt.tasks.finetuning import Named, run_each
from pelt.tasks.wiki80.run import Wiki80Files, run_wiki80
from pelt.tasks.wiki80.settings import Wiki80Settings

# A kind's job script that records what its `snakemake` object holds, and imports a module of its
# own folder (found there, as a job script's is) that counts how often it is imported.
RECORDING_SCRIPT = """import json

import counted_module

json.dump(
    {
        "input": dict(snakemake.input),
        "train": snakemake.input.train,
        "select_on": snakemake.input.get("select_on"),
        "params": dict(snakemake.params),
        "wildcards": dict(snakemake.wildcards),
        "log": snakemake.log[0],
        "threads": snakemake.threads,
    },
    open(snakemake.output[0], "w"),
)
"""


def _job(tmp_path: Path) -> SimpleNamespace:
    """A Snakemake job's object as a script gets it, for the wiki80 task's 1 % setting."""
    return SimpleNamespace(
        input=["every run's inputs"],
        output=["every run's results"],
        params=SimpleNamespace(model="tiny", norm=None, runs="the runs", script="the script"),
        wildcards=SimpleNamespace(task="wiki80", model="demo", setting="1%"),
        log=[str(tmp_path / "job.log")],
        threads=1,
        resources=SimpleNamespace(gpu=1),
        config={},
        rule="wiki80",
    )


def _runs(tmp_path: Path, inputs: dict[str, dict]) -> list[dict]:
    return [
        {
            "variant": variant,
            "seed": seed,
            "input": inputs[variant],
            "output": str(tmp_path / f"{variant}-{seed}.json"),
            "options": {"seed": seed, "variant": variant, "epochs": 2},
        }
        for variant, seed in [("baseline", 42), ("baseline", 43), ("pelt", 42)]
    ]


def test_each_run_gets_a_snakemake_object_of_its_own_and_the_imports_are_shared(tmp_path, monkeypatch, caplog):
    kind = tmp_path / "kind"
    kind.mkdir()
    (kind / "counted_module.py").write_text(f"open({str(tmp_path / 'imports')!r}, 'a').write('x')\n")
    (kind / "job.py").write_text(RECORDING_SCRIPT)
    monkeypatch.setattr(sys, "path", list(sys.path))  # run_each adds the script's folder
    monkeypatch.delitem(sys.modules, "counted_module", raising=False)
    inputs = {"baseline": {"train": "a.jsonl"}, "pelt": {"train": "a.jsonl", "norm_sweep": "sweep.json"}}
    runs = _runs(tmp_path, inputs)
    caplog.set_level("INFO", logger="pelt.tasks.finetuning")
    run_each(_job(tmp_path), str(kind / "job.py"), runs)
    assert (tmp_path / "imports").read_text() == "x"  # imported by the first run, found by the next
    for run in runs:
        seen = json.loads(Path(run["output"]).read_text())
        assert seen["input"] == inputs[run["variant"]] and seen["train"] == "a.jsonl" and seen["select_on"] is None
        assert seen["params"] == {"model": "tiny", "norm": None, "options": run["options"]}
        assert seen["wildcards"] == {
            "task": "wiki80",
            "model": "demo",
            "setting": "1%",
            "variant": run["variant"],
            "seed": str(run["seed"]),
        }
        assert (seen["log"], seen["threads"]) == (str(tmp_path / "job.log"), 1)
    started = [r.getMessage() for r in caplog.records if r.getMessage().endswith(".json")]
    assert started == [f"run {i} of 3 ({r['variant']}, seed {r['seed']}): {r['output']}" for i, r in enumerate(runs, 1)]


def test_a_failing_run_fails_the_job_before_the_next(tmp_path):
    (tmp_path / "job.py").write_text(
        "open(snakemake.output[0], 'w').write('')\nassert snakemake.wildcards.seed != '43', 'seed 43 fails'\n"
    )
    runs = _runs(tmp_path, {"baseline": {}, "pelt": {}})
    with pytest.raises(AssertionError, match="seed 43 fails"):
        run_each(_job(tmp_path), str(tmp_path / "job.py"), runs)
    assert [Path(run["output"]).exists() for run in runs] == [True, True, False]


def test_named_reads_by_attribute_key_and_get():
    named = Named(train="a.jsonl")
    assert named.train == named["train"] == named.get("train") == "a.jsonl" and named.get("dev") is None
    with pytest.raises(AttributeError, match="dev"):
        _ = named.dev


def test_wiki80_runs_in_one_job_write_what_each_writes_alone(tiny_model_dirs, tmp_path, monkeypatch):
    """Wiki80's own job script, run for two seeds in one process, writes the second seed's result as
    a run of it alone writes it: each run seeds its own random streams, whatever ran before it."""
    relations = ["P19", "P36", "P108"]
    (tmp_path / "label2id.json").write_text(json.dumps({r: i for i, r in enumerate(relations)}))
    files = {
        "train": write_wiki80(tmp_path / "train.jsonl", [(r, records(r, 4)) for r in relations]),
        "eval": write_wiki80(tmp_path / "dev.jsonl", [(r, records(r, 2, offset=60)) for r in relations]),
        "label2id": str(tmp_path / "label2id.json"),
    }
    monkeypatch.setattr(pelt.logs, "start_job", lambda log, threads=None: None)  # the test's output stays pytest's
    monkeypatch.setattr(sys, "path", list(sys.path))  # run_each adds the script's folder
    model = str(tiny_model_dirs["roberta"])
    alone = tmp_path / "alone.json"
    run_wiki80(
        model,
        Wiki80Files(files["train"], files["eval"], files["label2id"]),
        str(alone),
        tables=TableInputs("baseline"),
        settings=parse(Wiki80Settings, {"epochs": 2, "batch_size": 4}),
        seed=43,
        setting="100%",
    )
    options = {"epochs": 2, "batch_size": 4, "variant": "baseline", "setting": "100%"}
    runs = [
        {
            "variant": "baseline",
            "seed": seed,
            "input": files,
            "output": str(tmp_path / f"seed{seed}.json"),
            "options": dict(options, seed=seed),
        }
        for seed in (42, 43)
    ]
    job = _job(tmp_path)
    job.params.model = model
    run_each(job, str(REPO / "workflow" / "scripts" / "wiki80.py"), runs)
    assert (tmp_path / "seed43.json").read_text() == alone.read_text()
    assert (tmp_path / "seed42.json").read_text() != alone.read_text()  # the seed tells them apart
