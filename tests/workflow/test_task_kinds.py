"""A task kind is a plug-in (issue 27): the toy kind of docs/task-kinds.md, written from that page,
registers itself from a package outside pelt, and the workflow plans and runs it."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import yaml
from conftest import REPO
from demo_run import planned_jobs, snakemake, write_config

DOC = REPO / "docs" / "task-kinds.md"
# A file of the page: its path in backquotes ending a line, then its fenced block.
FILE = re.compile(r"^`(kinds/[^`]+)`[^\n]*:\n\n```\w*\n(.*?)^```", re.M | re.S)
CONFIG = re.compile(r"^With these lines added to `config/config.yaml`:\n\n```yaml\n(.*?)^```", re.M | re.S)


def _write_toy_kind(workdir: Path, monkeypatch) -> None:
    """The page's files under ``workdir``, its config lines merged into the demo config, and
    ``kinds/`` on the PYTHONPATH that Snakemake and its jobs inherit."""
    text = DOC.read_text()
    files = dict(FILE.findall(text))
    names = ("__init__.py", "count_words.py", "rules.smk", "schema.yaml")
    assert sorted(files) == [f"kinds/toy_words/{name}" for name in names]
    for path, content in files.items():
        (workdir / path).parent.mkdir(parents=True, exist_ok=True)
        (workdir / path).write_text(content)
    (workdir / "words.txt").write_text("Valdoria\nMarbeck\n")
    added = yaml.safe_load(CONFIG.search(text).group(1))
    config = write_config(workdir)
    config["task_kinds"] = added["task_kinds"]
    config["tasks"].update(added["tasks"])
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(workdir / "kinds"), os.environ.get("PYTHONPATH", "")]))


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
