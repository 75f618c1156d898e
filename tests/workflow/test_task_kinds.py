"""A task kind is a plug-in (issue 27): the toy kind of docs/task-kinds.md, written from that page,
registers itself from a package outside pelt, and the workflow plans and runs it; so does a corpus
kind, and a kind fine-tuned per setting and seed like Wiki80 (issue 53: tests/toy_kind.py)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import yaml
from conftest import REPO
from demo_run import planned_jobs, snakemake, write_config
from toy_kind import CONFIG_LINE, KIND, write_kind, write_task

DOC = REPO / "docs" / "task-kinds.md"
# A file of the page: its path in backquotes ending a line, then its fenced block.
FILE = re.compile(r"^`(kinds/[^`]+)`[^\n]*:\n\n```\w*\n(.*?)^```", re.M | re.S)
CONFIG = re.compile(r"^With these lines added to `config/config.yaml`[^\n]*:\n\n```yaml\n(.*?)^```", re.M | re.S)


def _write_kind(workdir: Path, monkeypatch, package: str, names: tuple[str, ...]) -> dict:
    """The page's files of ``package`` under ``workdir``, the config lines that name it merged into
    the demo config (each section's entries added to the demo's), and ``kinds/`` on the PYTHONPATH
    that Snakemake and its jobs inherit; the config written."""
    text = DOC.read_text()
    files = {path: content for path, content in FILE.findall(text) if path.startswith(f"kinds/{package}/")}
    assert sorted(files) == [f"kinds/{package}/{name}" for name in sorted(names)]
    for path, content in files.items():
        (workdir / path).parent.mkdir(parents=True, exist_ok=True)
        (workdir / path).write_text(content)
    (added,) = [yaml.safe_load(block) for block in CONFIG.findall(text) if package in block]
    config = write_config(workdir)
    for section, value in added.items():
        if isinstance(value, dict):
            config[section].update(value)
        else:
            config[section] = value
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(workdir / "kinds"), os.environ.get("PYTHONPATH", "")]))
    return config


def _write_toy_kind(workdir: Path, monkeypatch) -> None:
    _write_kind(workdir, monkeypatch, "toy_words", ("__init__.py", "count_words.py", "rules.smk", "schema.yaml"))
    (workdir / "words.txt").write_text("Valdoria\nMarbeck\n")


def test_a_toy_task_kind_is_planned_and_run_from_its_own_package(tmp_path, monkeypatch):
    _write_toy_kind(tmp_path, monkeypatch)
    plan = snakemake(tmp_path, "-n")
    assert plan.returncode == 0, plan.stdout[-3000:] + plan.stderr[-3000:]
    jobs = planned_jobs(plan.stdout)
    assert [job["output"] for job in jobs if job["rule"] == "words"] == [["results/eval/words/count.json"]]
    # its words join the wikipedia table's task entities, read by its own reader
    (entities,) = [job for job in jobs if job["rule"] == "task_entities" and "wikipedia" in job["output"][0]]
    assert "words.txt" in entities["input"], entities
    assert "results/eval/words/count.json" in next(job for job in jobs if job["rule"] == "all")["input"]

    run = snakemake(tmp_path, "--cores", "1", "results/eval/words/count.json")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert json.loads((tmp_path / "results" / "eval" / "words" / "count.json").read_text()) == {"words": 2}
    assert (tmp_path / "logs" / "eval" / "words" / "count.log").exists()


def test_a_toy_task_kinds_schema_block_checks_its_tasks(tmp_path, monkeypatch):
    _write_toy_kind(tmp_path, monkeypatch)
    config = tmp_path / "config" / "config.yaml"
    config.write_text(config.read_text().replace("words: words.txt", "wrods: words.txt"))
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0
    assert "tasks.words.wrods: unknown key; did you mean 'words'?" in run.stdout + run.stderr, run.stderr[-3000:]


def _write_toy_corpus_kind(workdir: Path, monkeypatch) -> dict:
    config = _write_kind(
        workdir, monkeypatch, "toy_lines", ("__init__.py", "lines_corpus.py", "rules.smk", "schema.yaml")
    )
    (workdir / "notes.txt").write_text("Valdoria is a kingdom.\nok\nMarbeck lies in Valdoria.\n")
    (workdir / "names.txt").write_text("Valdoria\n")
    return config


def test_a_toy_corpus_kind_is_planned_from_its_own_package(tmp_path, monkeypatch):
    """A corpus kind is a plug-in too: the toy kind of docs/task-kinds.md registers itself, its own
    key passes the schema (its default filled), and its corpus job feeds the shared string linker."""
    _write_toy_corpus_kind(tmp_path, monkeypatch)
    plan = snakemake(tmp_path, "-n")
    assert plan.returncode == 0, plan.stdout[-3000:] + plan.stderr[-3000:]
    jobs = planned_jobs(plan.stdout)
    (corpus,) = [job for job in jobs if job["rule"] == "corpus_lines"]
    assert corpus["output"] == [
        "results/corpus/notes/files/notes.txt/documents",
        "results/corpus/notes/files/notes.txt/counts.json",
    ], corpus
    (linker,) = [job for job in jobs if job["rule"] == "link_strings" and "/notes/" in job["output"][0]]
    assert "results/corpus/notes/files/notes.txt/documents" in linker["input"], linker
    assert any(job["rule"] == "entity_table" and "/notes/" in job["output"][0] for job in jobs)


def test_a_toy_corpus_kinds_keys_are_its_own(tmp_path, monkeypatch):
    config = _write_toy_corpus_kind(tmp_path, monkeypatch)
    config["corpora"]["biomed"]["min_chars"] = 3  # an S2ORC corpus: not its key
    config["corpora"]["notes"]["min_char"] = config["corpora"]["notes"].pop("min_chars")
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0
    out = run.stdout + run.stderr
    assert "corpora.biomed.min_chars: unknown key; known keys: kind, path, language, kinds" in out, out[-3000:]
    assert "corpora.notes.min_char: unknown key; did you mean 'min_chars'?" in out, out[-3000:]


def _write_toy_finetuning_kind(workdir: Path, monkeypatch) -> None:
    """The toy fine-tuning kind of tests/toy_kind.py and its task in the demo config, the kind's
    package on the PYTHONPATH."""
    write_kind(workdir / "kinds")
    config = write_config(workdir)
    config.update(CONFIG_LINE)
    config["tasks"][KIND] = write_task(workdir, "wikipedia")
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(workdir / "kinds"), os.environ.get("PYTHONPATH", "")]))


def _plan(workdir: Path, *args: str) -> list[dict]:
    plan = snakemake(workdir, "-n", *args)
    assert plan.returncode == 0, plan.stdout[-3000:] + plan.stderr[-3000:]
    return planned_jobs(plan.stdout)


def test_a_wiki80_like_kind_is_planned_from_its_own_package(tmp_path, monkeypatch):
    """Issue 53: the toy fine-tuning kind of tests/toy_kind.py, its package and one config line: pelt's
    template gives its task a rule (named after the task: one job per model and setting, which runs
    every run of the setting, `finetuning_jobs: setting`) and the shared summary, figure and landing
    page take its runs, as they take Wiki80's."""
    _write_toy_finetuning_kind(tmp_path, monkeypatch)
    jobs = _plan(tmp_path)
    runs = sorted(path for job in jobs if job["rule"] == KIND for path in job["output"])
    # one job a setting, each writing its setting's runs
    assert sorted({path.split("/")[5] for path in job["output"]} for job in jobs if job["rule"] == KIND) == [
        {"100%"},
        {"50%"},
    ]
    wiki80 = {path.split("/", 3)[3] for job in jobs if job["rule"] == "wiki80" for path in job["output"]}
    variants = {path.split("/")[1] for path in wiki80}  # as Wiki80's, on the same domain
    assert {"baseline", "pelt", "permuted", "random"} <= variants
    assert runs == sorted(
        f"results/eval/{KIND}/demo/{variant}/{setting}/seed{seed}.json"
        for variant in variants
        for setting in ("50%", "100%")
        for seed in (1, 2)
    )
    (summary,) = [job for job in jobs if job["rule"] == "finetuning_summary" and f"/{KIND}." in job["output"][0]]
    assert sorted(summary["input"]) == runs
    (figure,) = [job for job in jobs if job["rule"] == "finetuning_plot" and f"/{KIND}." in job["output"][0]]
    assert figure["output"] == [f"results/eval/report/{KIND}.svg"]
    (headline,) = [job for job in jobs if job["rule"] == "headline"]
    assert set(runs) <= set(headline["input"])


# The toy kind's job script, replaced by one that records what each run's `snakemake` object holds
# (its process apart, in a file beside the result; its log is the job's, a run's or a setting's).
RECORDING_JOB = """import json
import os

json.dump(
    {
        "input": dict(snakemake.input.items()),
        "params": {key: snakemake.params[key] for key in ("model", "norm", "options")},
        "wildcards": dict(snakemake.wildcards.items()),
        "threads": snakemake.threads,
    },
    open(snakemake.output[0], "w"),
    sort_keys=True,
)
open(snakemake.output[0] + ".pid", "w").write(str(os.getpid()))
"""


def _run_setting(workdir: Path, outputs: list[str], *args: str) -> tuple[dict[str, bytes], set[str]]:
    """The toy kind's runs of ``outputs`` (one setting's) run afresh; each result file's bytes, and
    the processes that wrote them."""
    for path in outputs:
        (workdir / path).unlink(missing_ok=True)
    run = snakemake(workdir, "--cores", "1", "--allowed-rules", KIND, *args, "--", *outputs)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return {path: (workdir / path).read_bytes() for path in outputs}, {
        (workdir / f"{path}.pid").read_text() for path in outputs
    }


def test_a_settings_runs_in_one_job_get_what_a_job_each_gets(tmp_path, monkeypatch):
    """Issue 57: with `finetuning_jobs: setting` (the default) the template's job of one setting runs
    each run by the kind's job script, one after another in one process, and each run's `snakemake`
    object holds what the job of that run alone holds with `finetuning_jobs: run` (inputs by name,
    options, wildcards, model, norm, threads): the result files are the same bytes either way. The
    baseline reads no norm sweep and the table for the heads' frequencies only, a control its
    control table. Its upstream files are stand-ins (the job script here reads none of them)."""
    _write_toy_finetuning_kind(tmp_path, monkeypatch)
    (tmp_path / "kinds" / "toy_relations" / "job.py").write_text(RECORDING_JOB)
    (job,) = [job for job in _plan(tmp_path) if job["rule"] == KIND and "/50%/" in job["output"][0]]
    for path in job["input"]:
        if not (tmp_path / path).exists():
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            if path.endswith("models/demo"):  # the model: a folder
                (tmp_path / path).mkdir()
            else:
                (tmp_path / path).touch()
    grouped, processes = _run_setting(tmp_path, job["output"])
    assert len(processes) == 1
    log = (tmp_path / "logs" / "eval" / KIND / "demo" / "50%.log").read_text()
    for path in job["output"]:  # the job's log names each run
        variant, seed = path.split("/")[4], path.removesuffix(".json").rsplit("seed", 1)[1]
        assert f"({variant}, seed {seed}): {path}" in log, log

    per_run, processes = _run_setting(tmp_path, job["output"], "--config", "finetuning_jobs=run")
    assert len(processes) == len(job["output"]) == 10  # a job each: 5 variants (swapped too), 2 seeds
    assert per_run == grouped
    sweep, table = "results/eval/lama/demo/norm_sweep.json", "results/tables/wikipedia/demo/table.parquet"
    for path, record in grouped.items():
        record = json.loads(record)
        variant, seed = path.split("/")[4], int(path.removesuffix(".json").rsplit("seed", 1)[1])
        assert record["params"]["options"] == {"seed": seed, "variant": variant, "setting": "50%"}
        assert record["wildcards"]["variant"] == variant and record["wildcards"]["seed"] == str(seed)
        inputs = record["input"]
        assert inputs["train"] == str(tmp_path / "train_small.jsonl") and inputs["test"] == str(tmp_path / "test.jsonl")
        assert ("norm_sweep" in inputs) == (variant != "baseline") and inputs.get("norm_sweep", sweep) == sweep
        control = variant not in ("baseline", "pelt")
        assert inputs["table"] == (table.replace("table.parquet", f"controls/{variant}.parquet") if control else table)
