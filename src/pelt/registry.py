"""The task kinds, one entry each: what the workflow needs to know of a task, in one place.

A ``tasks:`` entry of the config is one of four kinds (LAMA, FewRel, Wiki80, and an entity list that
only asks for a table); FewRel 2.0 is a FewRel task under another key. Each kind names the config
keys that hold its data files (whose entities the table needs, and the reader that finds them),
those that span its grid of runs, its hyper-parameters (passed by name to its runner), the runner
itself, how a run's setting reads, and the benchmarks under which the paper's numbers stand beside
its results. The Snakemake rules only map
config to paths and ask this module the rest, so that the protocol is unit-tested, not only dry-run.

Pure Python on purpose: the Snakefile imports it, in whatever environment Snakemake runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class TaskKind:
    name: str
    data_keys: tuple[str, ...]  # keys naming files whose entities the table needs
    file_keys: tuple[str, ...]  # every key naming a file the runs read
    grid_keys: tuple[str, ...]  # keys spanning the runs (one job each)
    hyperparameters: tuple[str, ...]  # keys passed as is to the runner, by these names
    runner: str | None  # module:function; None: the task only asks for a table, nothing is evaluated
    entity_reader: str  # module:function, a data file -> the (name, QID) of each entity it mentions
    benchmarks: tuple[str, ...]  # what its results report, the keys of the paper's numbers
    reader_keys: tuple[str, ...] = ()  # keys passed by name to the entity reader (an entity list's CSV column)


_FINETUNING = ("batch_size", "lr", "warmup", "max_length", "missing", "markers", "read_at", "precision")
KINDS: dict[str, TaskKind] = {
    "lama": TaskKind(
        "lama",
        data_keys=("facts",),
        file_keys=("facts", "relations", "common_vocab", "common_vocab_lowercased"),
        grid_keys=(),
        hyperparameters=("batch_size", "max_length", "missing"),
        runner="pelt.eval.lama:run_lama",
        entity_reader="pelt.tasks:lama_entities",
        benchmarks=("lama", "lama_frequency"),
    ),
    "fewrel": TaskKind(
        "fewrel",
        data_keys=("train", "val", "test"),
        file_keys=("train", "val", "test", "exclude"),
        grid_keys=("settings", "seeds", "control_seeds"),
        hyperparameters=(
            *_FINETUNING,
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
        runner="pelt.eval.fewrel:run_fewrel",
        entity_reader="pelt.tasks:fewrel_entities",
        benchmarks=("fewrel1", "fewrel2"),
    ),
    "wiki80": TaskKind(
        "wiki80",
        data_keys=("train", "dev", "test"),
        file_keys=("train", "dev", "test", "label2id"),
        grid_keys=("seeds", "control_seeds"),  # and the training settings, the keys of `train`
        hyperparameters=(*_FINETUNING, "epochs"),
        runner="pelt.eval.wiki80:run_wiki80",
        entity_reader="pelt.tasks:wiki80_entities",
        benchmarks=("wiki80",),
    ),
    # Your own entities: a table for them, no evaluation (docs/own-entities.md).
    "entities": TaskKind(
        "entities",
        data_keys=("entities",),
        file_keys=("entities",),
        grid_keys=(),
        hyperparameters=(),
        runner=None,
        entity_reader="pelt.tasks:listed_entities",
        benchmarks=(),
        reader_keys=("column", "qid_column"),
    ),
}
# Config keys of FewRel tasks and the benchmark each reports (the paper's Table 2).
FEWREL_BENCHMARKS = {"fewrel": "fewrel1", "fewrel2": "fewrel2"}
# Keys every task may carry besides its kind's: the corpus whose table it uses (and, FewRel 2.0,
# whose table serves training), and an explicit kind.
DOMAIN_KEYS = ("domain", "train_domain", "kind")


def kind_of(name: str, task: Mapping | None = None) -> TaskKind:
    """The kind of the task configured under ``name``: its ``kind`` field, else its key (FewRel 2.0's
    key names a FewRel task, ``entities_<anything>`` an entity list: one per domain or file layout)."""
    default = "fewrel" if name in FEWREL_BENCHMARKS else "entities" if name.startswith("entities_") else name
    kind = (task or {}).get("kind") or default
    if kind not in KINDS:
        raise ValueError(f"tasks.{name}: unknown task kind {kind!r}; expected one of {sorted(KINDS)}")
    return KINDS[kind]


def resolve(path: str) -> Callable:
    """The function a ``module:function`` entry names, imported when first needed (the runners load
    torch; the Snakefile and Spark jobs must not)."""
    module, function = path.split(":")
    return getattr(importlib.import_module(module), function)


def runner_options(name: str, task: Mapping, setting: str, seed: int, variant: str) -> dict:
    """Keyword arguments of a fine-tuning run besides its files: the kind's hyper-parameters as
    configured (a mapping, as Wiki80's epochs, per training setting), seed, variant, and what the
    setting says (FewRel: N, K and the benchmark's name; Wiki80: the training setting's name)."""
    kind = kind_of(name, task)
    options = settings_options(name, task, setting)
    options.update(seed=seed, variant=variant)
    if kind.name == "fewrel":
        n_way, k_shot = fewrel_setting(setting)
        options.update(n_way=n_way, k_shot=k_shot, dataset=FEWREL_BENCHMARKS.get(name, name))
    else:
        options.update(setting=setting)
    return options


def settings_options(name: str, task: Mapping, setting: str | None = None) -> dict:
    """The kind's hyper-parameters as configured (a mapping, as Wiki80's epochs, holds one per
    training setting): what :func:`pelt.eval.settings.parse` makes the run's settings of."""
    return {
        key: task[key][setting] if isinstance(task[key], Mapping) else task[key]
        for key in kind_of(name, task).hyperparameters
        if key in task
    }


def fewrel_setting(setting: str) -> tuple[int, int]:
    """N and K of an ``N-K`` setting (N-way K-shot)."""
    n_way, sep, k_shot = setting.partition("-")
    if not (sep and n_way.isdigit() and k_shot.isdigit() and int(n_way) > 0 and int(k_shot) > 0):
        raise ValueError(f"FewRel setting {setting!r}: expected N-K, two positive integers")
    return int(n_way), int(k_shot)


def settings_of(name: str, task: Mapping) -> list[str]:
    """The settings a fine-tuning task runs: FewRel's N-K list, Wiki80's training settings."""
    return list(task["settings"]) if kind_of(name, task).name == "fewrel" else list(task["train"])


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


def norm_from_sweep(model: Mapping, tasks: Mapping[str, Mapping]) -> bool:
    """Whether a model's runs with the table take L from its LAMA norm sweep: the paper picks L on the
    knowledge probe (section 3.1); a norm in the config wins, and without LAMA there is no sweep (L
    is then the table's default, the model family's)."""
    return model.get("norm") is None and "lama" in tasks
