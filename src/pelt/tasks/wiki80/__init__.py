"""Wiki80 (Han et al. 2019), a task kind: supervised relation classification. Its data files
(:mod:`pelt.tasks.wiki80.data`), its runner (:mod:`pelt.tasks.wiki80.run`), its summary
(:mod:`pelt.tasks.wiki80.summary`), and here its registry entry and what the registry asks of a
Wiki80 task (pure Python: the Snakefile imports it)."""

from __future__ import annotations

from collections.abc import Mapping

from pelt.registry import FINETUNING_RULES, TaskKind, register
from pelt.tasks.relation import FINETUNING_HYPERPARAMETERS


def check_epochs(name: str, task: Mapping) -> None:
    """A training setting without its epochs is a config error."""
    missing = sorted(set(task["train"]) - set(task["epochs"]))
    if missing:
        raise ValueError(f"tasks.{name}.epochs: no epochs for the training settings {missing}")


def wiki80_run_files(task: Mapping, setting: str) -> dict[str, str]:
    """The files of one Wiki80 run: evaluated on ``test`` with the epoch best on ``dev`` (the paper's
    protocol) when a test file is configured, else on ``dev`` with the last epoch."""
    files = {"train": task["train"][setting], "label2id": task["label2id"]}
    if "test" in task:
        return dict(files, eval=task["test"], select_on=task["dev"])
    return dict(files, eval=task["dev"])


def wiki80_files(task: Mapping) -> list[str]:
    """Every data file of a Wiki80 task: its training settings' files, dev and test."""
    return [*task["train"].values(), task["dev"], *([task["test"]] if "test" in task else [])]


KIND = register(
    TaskKind(
        "wiki80",
        rules=FINETUNING_RULES,
        script="workflow/scripts/wiki80.py",
        schema="workflow/schemas/tasks/wiki80.yaml",
        data_keys=("train", "dev", "test"),
        file_keys=("train", "dev", "test", "label2id"),
        grid_keys=("seeds", "control_seeds"),  # and the training settings, the keys of `train`
        hyperparameters=(*FINETUNING_HYPERPARAMETERS, "epochs"),
        runner="pelt.tasks.wiki80.run:run_wiki80",
        settings="pelt.tasks.wiki80.settings:Wiki80Settings",
        paper="pelt.tasks.wiki80.paper:PAPER_RESULTS",
        entity_reader="pelt.tasks.wiki80.data:wiki80_entities",
        benchmarks={"wiki80": "Wiki80"},
        summaries={"wiki80": "pelt.tasks.wiki80.summary:write_wiki80_summary"},
        figures={"wiki80": "pelt.report.figures:plot_finetuning"},
        run_files=lambda name, task, tasks, setting: wiki80_run_files(task, setting),
        check=check_epochs,
        settings_key="train",
        meaning="Wiki80: relation classification fine-tuned on 1 %, 10 % or 100 % of the training data; the "
        "difference shows whether the table still helps as supervision grows.",
        demo_rows="pelt.tasks.wiki80.summary:DEMO_ROWS",
    )
)
