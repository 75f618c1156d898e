"""FewRel 1.0 and 2.0 (Han et al. 2018, Gao et al. 2019), a task kind: N-way K-shot relation
classification. Its data files (:mod:`pelt.tasks.fewrel.data`), its runner
(:mod:`pelt.tasks.fewrel.run`), its summary (:mod:`pelt.tasks.fewrel.summary`), and here its registry
entry and what the registry asks of a FewRel task (pure Python: the Snakefile imports it)."""

from __future__ import annotations

from collections.abc import Mapping

from pelt.registry import FINETUNING_RULES, TaskKind, data_files, expand_globs, register
from pelt.tasks.relation import FINETUNING_HYPERPARAMETERS
from pelt.tasks.wiki80 import wiki80_files

# The config keys of FewRel tasks and the benchmark each reports (the paper's Table 2); a FewRel task
# under another key (its `kind: fewrel`) reports under that key.
BENCHMARKS = {"fewrel": "fewrel1", "fewrel2": "fewrel2"}


def run_files(name: str, task: Mapping, tasks: Mapping[str, Mapping], setting: str | None = None) -> dict:
    """The files a FewRel run reads: its training files (Wiki80's when it sets none), val, test and
    the files whose relations it excludes."""
    files = {part: expand_globs(task.get(part, []), f"tasks.{name}.{part}") for part in ("val", "test", "exclude")}
    return {"train": data_files(name, task, tasks)["train"], **files}


def default_files(name: str, task: Mapping, tasks: Mapping[str, Mapping]) -> dict[str, list[str]]:
    """The data files a FewRel task that leaves them out reads: Wiki80's for training."""
    return {"train": fewrel_default_training(name, task, tasks)}


def setting_options(name: str, setting: str) -> dict:
    """What a FewRel setting tells its runner: N, K and the benchmark the task reports."""
    n_way, k_shot = fewrel_setting(setting)
    return {"n_way": n_way, "k_shot": k_shot, "dataset": BENCHMARKS.get(name, name)}


def fewrel_setting(setting: str) -> tuple[int, int]:
    """N and K of an ``N-K`` setting (N-way K-shot)."""
    n_way, sep, k_shot = setting.partition("-")
    if not (sep and n_way.isdigit() and k_shot.isdigit() and int(n_way) > 0 and int(k_shot) > 0):
        raise ValueError(f"FewRel setting {setting!r}: expected N-K, two positive integers")
    return int(n_way), int(k_shot)


def fewrel_default_training(name: str, task: Mapping, tasks: Mapping[str, Mapping]) -> list[str]:
    """The training files of a FewRel task that sets no ``train``: the Wiki80 task's (Wiki80 is
    FewRel's train + val, and the runner drops every relation the test data holds); none when it
    does not train (``steps`` 0); a config error when it trains and nothing is there to train on."""
    if "wiki80" in tasks:
        return wiki80_files(tasks["wiki80"])
    if task["steps"] > 0:
        raise ValueError(
            f"tasks.{name}.train: not set, and there is no tasks.wiki80 to train on"
            " (or set steps: 0 to test the pre-trained model)"
        )
    return []


def episode_chance(setting: str, classes: int | None) -> float:
    """Accuracy of guessing an N-way episode: 1/N."""
    return 1.0 / fewrel_setting(setting)[0]


KIND = register(
    TaskKind(
        "fewrel",
        rules=FINETUNING_RULES,
        script="workflow/scripts/fewrel.py",
        schema="workflow/schemas/tasks/fewrel.yaml",
        data_keys=("train", "val", "test"),
        file_keys=("train", "val", "test", "exclude"),
        grid_keys=("settings", "seeds", "control_seeds"),
        hyperparameters=(
            *FINETUNING_HYPERPARAMETERS,
            "steps",
            "eval_every",
            "val_episodes",
            "test_episodes",
            "n_query",
            "train_n_query",
            "val_relations",
            "dropout",
            "warmup_steps",
            "bias_correction",
            "max_grad_norm",
            "first_eval",
        ),
        runner="pelt.tasks.fewrel.run:run_fewrel",
        settings="pelt.tasks.fewrel.settings:FewRelSettings",
        paper="pelt.tasks.fewrel.paper:PAPER_RESULTS",
        entity_reader="pelt.tasks.fewrel.data:fewrel_entities",
        benchmarks={"fewrel1": "FewRel 1.0", "fewrel2": "FewRel 2.0"},
        summaries={"fewrel": "pelt.tasks.fewrel.summary:write_fewrel_summary"},
        figures={"fewrel": "pelt.report.figures:plot_finetuning"},
        default_files=default_files,
        run_files=run_files,
        settings_key="settings",
        setting_options=setting_options,
        aliases=tuple(key for key in BENCHMARKS if key != "fewrel"),
        chance_level=episode_chance,
        meaning="FewRel: N-way K-shot relation classification after fine-tuning with the table frozen; the "
        "difference is what entity knowledge adds when a relation is learnt from a few examples.",
        demo_rows="pelt.tasks.fewrel.summary:DEMO_ROWS",
    )
)
