"""A Wiki80-like task kind from outside pelt (issue 53): fine-tuned per training setting and seed, with
its own summary, figure and headline sentence. Everything it takes is here: its package, five files,
and one config line that names it (``task_kinds``); no file of pelt is edited. Its rules are pelt's
template of the fine-tuning kinds (``pelt.registry.FINETUNING_RULES``): one for each of its tasks,
named after the task, a job per setting (or, with ``finetuning_jobs: run``, one named after the kind,
a job per run), which runs its job script once a run.
"""

from __future__ import annotations

import json
from pathlib import Path

PACKAGE = "toy_relations"
KIND = "toyrel"
FILES = {
    "__init__.py": '''"""A toy task kind like Wiki80: relation classification, here by the training file's most
frequent relation, with its own summary and figure."""

import json
import os
from collections import Counter

from pelt.registry import FINETUNING_RULES, TaskKind, register

HERE = os.path.dirname(__file__)


def relations(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line)["relation"] for line in fh if line.strip()]


def run_toy(model, train, test, output, *, seed, variant, setting):
    """The runner: the training file's most frequent relation, guessed for every test instance."""
    guess = Counter(relations(train)).most_common(1)[0][0]
    gold = relations(test)
    result = {"task": "toyrel", "model": model, "variant": variant, "seed": seed, "setting": setting}
    result.update(accuracy=gold.count(guess) / len(gold), n=len(gold), classes=len(set(gold)))
    with open(output, "w", encoding="utf-8") as fh:
        json.dump(result, fh)


KIND = register(
    TaskKind(
        "toyrel",
        rules=FINETUNING_RULES,  # pelt's template gives it its rules, named `toyrel`
        script=os.path.join(HERE, "job.py"),
        schema=os.path.join(HERE, "schema.yaml"),
        data_keys=("train", "test"),
        file_keys=("train", "test"),
        grid_keys=("seeds", "control_seeds"),
        runner="toy_relations:run_toy",
        entity_reader="pelt.tasks.wiki80.data:wiki80_entities",  # Wiki80's file layout
        run_files=lambda name, task, tasks, setting: {"train": task["train"][setting], "test": task["test"]},
        settings_key="train",
        benchmarks={"toyrel": "Toy relations"},
        summaries={"toyrel": "toy_relations.summary:write_toy_summary"},
        figures={"toyrel": "toy_relations.figures:plot_toy"},
        chance_level=lambda setting, classes: 0.5,  # its test data have two relations
        meaning="Toy relations: the most frequent training relation, guessed; the table cannot help it.",
    )
)
''',
    "summary.py": '''"""The toy kind's summary: accuracy over seeds per training setting, in pelt's layout."""

from pelt.report.finetuning_summary import write_seed_summary
from pelt.report.tables import load_results


def write_toy_summary(result_jsons, out_csv, out_md, out_html=None):
    results = load_results(result_jsons, "toyrel", {"model", "variant", "seed", "setting", "accuracy", "n"})
    title = "Toy relations accuracy (%), mean ± std over seeds."
    write_seed_summary(results, lambda r: "toyrel", title, out_csv, out_md, out_html)
''',
    "figures.py": '''"""The toy kind's figure: accuracy per training setting and variant, in the report's style."""

import csv

from pelt.report.figures import WIDTH, plt, save_figure


def plot_toy(summary_csv, out_svg):
    with open(summary_csv, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    fig, ax = plt.subplots(figsize=(WIDTH, 4))
    ax.bar([f"{r['setting']} {r['variant']}" for r in rows], [100 * float(r["accuracy_mean"]) for r in rows])
    ax.set_title("Toy relations: accuracy by setting and variant")
    save_figure(fig, out_svg)
''',
    "job.py": """from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from toy_relations import run_toy

options = snakemake.params.options
run_toy(
    snakemake.params.model,
    snakemake.input.train,
    snakemake.input.test,
    snakemake.output[0],
    seed=options["seed"],
    variant=options["variant"],
    setting=options["setting"],
)
""",
    "schema.yaml": """properties:
  toyrel:
    type: object
    additionalProperties: false
    required: [domain, train, test]
    properties:
      domain: {type: string}
      train:
        description: Training setting -> file.
        type: object
        additionalProperties: {type: string}
      test: {type: string}
      seeds: {$ref: "#/$defs/seeds", default: [1, 2]}
      control_seeds: {$ref: "#/$defs/control_seeds"}
""",
}
# The config lines a run of it takes: the one that names the kind, and its task.
CONFIG_LINE = {"task_kinds": [PACKAGE]}


def write_kind(folder: Path) -> Path:
    """The package under ``folder`` (to be put on the path), its five files; the package's folder."""
    package = folder / PACKAGE
    package.mkdir(parents=True)
    for name, text in FILES.items():
        (package / name).write_text(text, encoding="utf-8")
    return package


def write_task(folder: Path, domain: str) -> dict:
    """Its data (Wiki80's layout: two relations) under ``folder``, and a task of it on ``domain``."""
    records = [
        {
            "token": ["Valdoria", "borders", "Marbeck"],
            "h": {"name": "Valdoria", "pos": [0, 1]},
            "t": {"name": "Marbeck", "pos": [2, 3]},
            "relation": rel,
        }
        for rel in ("borders", "borders", "contains")
    ]
    for name, rows in (("train_small.jsonl", records[:2]), ("train.jsonl", records), ("test.jsonl", records[1:])):
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    train = {"50%": str(folder / "train_small.jsonl"), "100%": str(folder / "train.jsonl")}
    return {"domain": domain, "train": train, "test": str(folder / "test.jsonl")}
