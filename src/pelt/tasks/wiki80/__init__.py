"""Wiki80 (Han et al. 2019), a task kind: supervised relation classification. Its data files
(:mod:`pelt.tasks.wiki80.data`), its runner (:mod:`pelt.tasks.wiki80.run`), and here what the
registry asks of a Wiki80 task (pure Python: the Snakefile imports it)."""

from __future__ import annotations

from collections.abc import Mapping


def check_epochs(task: Mapping) -> None:
    """A training setting without its epochs is a config error."""
    missing = sorted(set(task["train"]) - set(task["epochs"]))
    if missing:
        raise ValueError(f"tasks.wiki80.epochs: no epochs for the training settings {missing}")


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
