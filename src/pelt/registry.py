"""The task kinds, one entry each: what the workflow needs to know of a task, in one place.

A ``tasks:`` entry of the config is of a registered kind: five come with pelt (LAMA, mLAMA, FewRel,
Wiki80, and an entity list that only asks for a table), and a package of one's own adds more
(:func:`register`, the config's ``task_kinds``; docs/task-kinds.md); FewRel 2.0 is a FewRel task
under another key. Each kind names the config keys that hold its data files (whose entities the
table needs, and the reader that finds them), those that span its grid of runs, its
hyper-parameters (passed by name to its runner), the runner itself and its settings, how a run's
setting reads, the benchmarks under which the paper's numbers stand beside its results, and its
part of the workflow: its rules file and its schema block. A corpus kind (:class:`CorpusKind`,
a ``corpora:`` entry's) likewise names its rules file, its schema block and whether it has pages;
a package of one's own adds more alike (the config's ``corpus_kinds``). The shared Snakemake
rules only map config to paths and ask this module the rest, so that the protocol is unit-tested,
not only dry-run.

Pure Python on purpose: the Snakefile imports it, in whatever environment Snakemake runs.
"""

from __future__ import annotations

import glob
import importlib
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class TaskKind:
    name: str
    data_keys: tuple[str, ...]  # keys naming files whose entities the table needs
    runner: str | None  # module:function; None: the task only asks for a table, nothing is evaluated
    entity_reader: str  # module:function, a data file -> the (name, QID) of each entity it mentions
    # The kind's part of the workflow, each a path relative to the workflow's folder (the one that
    # holds the Snakefile) or absolute: its rules (a .smk file the Snakefile includes; None: the kind
    # runs no job of its own) and its schema block (a YAML file: the ``properties`` and
    # ``patternProperties`` it adds under ``tasks:``, the ``$defs`` they use).
    rules: str | None = None
    schema: str | None = None
    file_keys: tuple[str, ...] = ()  # every key naming a file the runs read
    grid_keys: tuple[str, ...] = ()  # keys spanning the runs (one job each)
    hyperparameters: tuple[str, ...] = ()  # keys passed as is to the runner, by these names
    benchmarks: tuple[str, ...] = ()  # what its results report, the keys of the paper's numbers
    settings: str | None = None  # module:class, the frozen dataclass of its runs' settings
    paper: str | None = None  # module:name, the paper's numbers of its benchmarks (pelt.report.paper)
    reader_keys: tuple[str, ...] = ()  # keys passed by name to the entity reader (an entity list's CSV column)
    summaries: tuple[str, ...] = ()  # the summary tables of its results (results/eval/summary/<name>.*)
    figures: tuple[str, ...] = ()  # the report's figures of its results (results/eval/report/<name>.svg)
    # Results the default target asks for besides the summaries and figures: paths with {task} and
    # {model} wildcards, one of each configured task of the kind and model, under the run's results
    # folder (``eval/{task}/x.json``: results/eval/... or runs/<run>/results/eval/..., common.smk).
    results: tuple[str, ...] = ()
    # (name, task, tasks) -> {data key: files}, where a key the task leaves out has a default (FewRel:
    # Wiki80's files); None: each data key's files as configured.
    default_files: Callable[[str, Mapping, Mapping], dict[str, list[str]]] | None = None
    # (name, task, tasks, setting) -> the files of one run, by the names its rule's inputs take.
    run_files: Callable[[str, Mapping, Mapping, str | None], dict[str, str | list[str]]] | None = None
    # (name, task) -> raises ValueError: a config error the schema cannot express
    check: Callable[[str, Mapping], None] | None = None
    # The key whose entries are the settings a fine-tuning kind runs, one job each (FewRel's N-K
    # list, Wiki80's training settings); None: the kind is not fine-tuned per setting and seed.
    settings_key: str | None = None
    # (name, setting) -> what the setting tells the runner (FewRel: N, K and the benchmark's name);
    # None: the setting's name, as ``setting``.
    setting_options: Callable[[str, str], dict] | None = None
    # Its results the whole run leans on, paths like ``results`` (under the run's results folder):
    # ``norm_sweep`` ({task}, {model}), a model's sweep of L, which chooses L for every run with the
    # table where the config sets none (LAMA's: the paper picks L on the knowledge probe, section
    # 3.1); ``headline`` ({task}, {model}, {variant}), the results the report's headline leads with,
    # each model's without and with the table (LAMA's P@1). None: the kind has none.
    norm_sweep: str | None = None
    headline: str | None = None


def _lazy(path: str) -> Callable:
    """The function a ``module:function`` path names, imported on its first call: a kind's own
    helpers live in its package (``pelt.tasks.<kind>``), which imports this module."""

    def call(*args, **kwargs):
        return resolve(path)(*args, **kwargs)

    call.__qualname__ = call.__name__ = path
    return call


_FINETUNING = ("batch_size", "lr", "warmup", "max_length", "missing", "markers", "read_at", "precision")
KINDS: dict[str, TaskKind] = {
    "lama": TaskKind(
        "lama",
        rules="workflow/rules/tasks/lama.smk",
        schema="workflow/schemas/tasks/lama.yaml",
        data_keys=("facts",),
        file_keys=("facts", "relations", "common_vocab", "common_vocab_lowercased"),
        hyperparameters=("batch_size", "max_length", "missing"),
        runner="pelt.tasks.lama.run:run_lama",
        settings="pelt.tasks.lama.settings:LamaSettings",
        paper="pelt.tasks.lama.paper:PAPER_RESULTS",
        entity_reader="pelt.tasks.lama.data:lama_entities",
        benchmarks=("lama", "lama_frequency"),
        summaries=("lama", "norm_sweep"),
        figures=("norm_sweep", "lama_buckets"),
        run_files=_lazy("pelt.tasks.lama:run_files"),
        norm_sweep="eval/{task}/{model}/norm_sweep.json",
        headline="eval/{task}/{model}/{variant}.json",
    ),
    "fewrel": TaskKind(
        "fewrel",
        rules="workflow/rules/tasks/fewrel.smk",
        schema="workflow/schemas/tasks/fewrel.yaml",
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
        runner="pelt.tasks.fewrel.run:run_fewrel",
        settings="pelt.tasks.fewrel.settings:FewRelSettings",
        paper="pelt.tasks.fewrel.paper:PAPER_RESULTS",
        entity_reader="pelt.tasks.fewrel.data:fewrel_entities",
        benchmarks=("fewrel1", "fewrel2"),
        summaries=("fewrel",),
        figures=("fewrel",),
        default_files=_lazy("pelt.tasks.fewrel:default_files"),
        run_files=_lazy("pelt.tasks.fewrel:run_files"),
        settings_key="settings",
        setting_options=_lazy("pelt.tasks.fewrel:setting_options"),
    ),
    "wiki80": TaskKind(
        "wiki80",
        rules="workflow/rules/tasks/wiki80.smk",
        schema="workflow/schemas/tasks/wiki80.yaml",
        data_keys=("train", "dev", "test"),
        file_keys=("train", "dev", "test", "label2id"),
        grid_keys=("seeds", "control_seeds"),  # and the training settings, the keys of `train`
        hyperparameters=(*_FINETUNING, "epochs"),
        runner="pelt.tasks.wiki80.run:run_wiki80",
        settings="pelt.tasks.wiki80.settings:Wiki80Settings",
        paper="pelt.tasks.wiki80.paper:PAPER_RESULTS",
        entity_reader="pelt.tasks.wiki80.data:wiki80_entities",
        benchmarks=("wiki80",),
        summaries=("wiki80",),
        figures=("wiki80",),
        run_files=lambda name, task, tasks, setting: resolve("pelt.tasks.wiki80:wiki80_run_files")(task, setting),
        check=lambda name, task: resolve("pelt.tasks.wiki80:check_epochs")(task),
        settings_key="train",
    ),
    # mLAMA (Kassner et al. 2021): one task per language, `mlama_<language>`, each with the table of
    # its language's corpus (docs/languages.md).
    "mlama": TaskKind(
        "mlama",
        rules="workflow/rules/tasks/mlama.smk",
        schema="workflow/schemas/tasks/mlama.yaml",
        data_keys=("facts",),  # the language's fact files in `release` (pelt.tasks.mlama)
        file_keys=("release",),
        hyperparameters=("batch_size", "max_length", "missing"),
        runner="pelt.tasks.mlama.run:run_mlama",
        settings="pelt.tasks.mlama.settings:MlamaSettings",
        entity_reader="pelt.tasks.lama.data:lama_entities",  # LAMA's layout: sub_label, sub_uri
        summaries=("mlama",),
        figures=("mlama",),
        default_files=_lazy("pelt.tasks.mlama:default_files"),
        run_files=_lazy("pelt.tasks.mlama:run_files"),
    ),
    # Your own entities: a table for them, no evaluation (docs/own-entities.md).
    "entities": TaskKind(
        "entities",
        schema="workflow/schemas/tasks/entities.yaml",
        data_keys=("entities",),
        file_keys=("entities",),
        runner=None,
        entity_reader="pelt.tasks.entities.data:listed_entities",
        reader_keys=("column", "qid_column"),
    ),
}


def register(kind: TaskKind | CorpusKind) -> TaskKind | CorpusKind:
    """Adds a task kind (to :data:`KINDS`) or a corpus kind (to :data:`CORPUS_KINDS`) from outside
    pelt (a package the config's ``task_kinds`` or ``corpus_kinds`` names, which calls this when
    imported): from then on it is a kind like the built-in ones, to the registry and the workflow
    (docs/task-kinds.md). A name already taken is refused, not replaced."""
    kinds, key = (CORPUS_KINDS, "corpus_kinds") if isinstance(kind, CorpusKind) else (KINDS, "task_kinds")
    if kinds.get(kind.name, kind) != kind:
        what = key.removesuffix("_kinds")
        raise ValueError(f"{key}: a {what} kind named {kind.name!r} is already registered")
    kinds[kind.name] = kind
    return kind


def import_kinds(modules: list[str], key: str = "task_kinds") -> None:
    """Imports the packages the config's ``task_kinds`` (or ``corpus_kinds``, the ``key``) names,
    each registering its kinds: before the config is validated, since each kind's schema block is
    part of the schema."""
    for module in modules if isinstance(modules, list) else []:  # anything else: the schema says what
        try:
            importlib.import_module(module)
        except ImportError as err:
            raise ValueError(f"{key}: cannot import {module!r} ({err})") from None


@dataclass(frozen=True)
class CorpusKind:
    """A ``corpora:`` entry's kind. Its rules file (a path like :attr:`TaskKind.rules`, which the
    Snakefile includes) holds its corpus job, ``corpus_<name>``, one job per corpus file writing
    ``documents`` and ``counts.json`` (and, with pages, ``pages``) under ``corpus/{domain}/files/{file}/``
    (restricted to the domains of its kind: ``domains_of_kind``). What follows depends only on whether
    it has pages: a corpus with pages (titles, redirects, anchors) is linked by its own linker, also in
    its rules file (``linking/{domain}/``: ``aliases``, ``mentions``, ``counts.json``), and a task's
    entity resolves through its pages; a corpus without is linked by the shared string linker, which
    matches the task entities' names, each name its own entity. Its schema block (a YAML file, a
    path like :attr:`TaskKind.schema`; None: none) holds the ``properties`` (and the ``$defs`` they
    use) that a corpus of the kind may have besides every corpus's (``kind``, ``path``,
    ``language``, ``kinds``): its own files (Wikipedia's ``page_props``)."""

    name: str
    has_pages: bool
    rules: str
    schema: str | None = None


CORPUS_KINDS = {
    kind.name: kind
    for kind in (
        CorpusKind(
            "wikipedia",
            has_pages=True,
            rules="workflow/rules/corpora/wikipedia.smk",
            schema="workflow/schemas/corpora/wikipedia.yaml",
        ),
        CorpusKind("s2orc", has_pages=False, rules="workflow/rules/corpora/s2orc.smk"),
    )
}


def domains_with_pages(corpora: Mapping[str, Mapping], has_pages: bool) -> list[str]:
    """The configured domains whose corpus kind has pages (or has none): which linker and which
    task-entity resolver serve them."""
    return [name for name, corpus in corpora.items() if CORPUS_KINDS[corpus["kind"]].has_pages == has_pages]


# Config keys of FewRel tasks and the benchmark each reports (the paper's Table 2).
FEWREL_BENCHMARKS = {"fewrel": "fewrel1", "fewrel2": "fewrel2"}
# Keys every task may carry besides its kind's: the corpus whose table it uses (and, FewRel 2.0,
# whose table serves training), and an explicit kind.
DOMAIN_KEYS = ("domain", "train_domain", "kind")


def kind_of(name: str, task: Mapping | None = None) -> TaskKind:
    """The kind of the task configured under ``name``: its ``kind`` field, else its key (FewRel 2.0's
    key names a FewRel task, ``entities_<anything>`` an entity list: one per domain or file layout;
    ``mlama_<language>`` an mLAMA language)."""
    default = "fewrel" if name in FEWREL_BENCHMARKS else name
    for prefix in ("entities_", "mlama_"):
        default = prefix.rstrip("_") if name.startswith(prefix) else default
    kind = (task or {}).get("kind") or default
    if kind not in KINDS:
        raise ValueError(f"tasks.{name}: unknown task kind {kind!r}; expected one of {sorted(KINDS)}")
    return KINDS[kind]


def expand_globs(patterns: str | list[str] | Mapping[str, str], what: str) -> list[str]:
    """Files matched by ``patterns`` (a mapping: its values, by key, so that a config whose keys only
    moved names the same list) in order; a glob that matches nothing is a config error, not an empty
    task. A pattern that names an existing file is that file, before it is read as a glob: a file
    name with ``[`` (``dump [de].xml.bz2``) is a glob that would not match itself."""
    if isinstance(patterns, Mapping):
        patterns = [patterns[key] for key in sorted(patterns)]
    files: list[str] = []
    for pattern in [patterns] if isinstance(patterns, str) else patterns:
        matched = [pattern] if os.path.exists(pattern) else sorted(glob.glob(pattern))
        if not matched:
            raise FileNotFoundError(f"{what}: no file matches {pattern!r}")
        files.extend(matched)
    return files


def data_files(name: str, task: Mapping, tasks: Mapping[str, Mapping]) -> dict[str, list[str]]:
    """Each data key's files (globs expanded), a key the task leaves out filled by its kind's
    default: the files whose entities the table needs, and so the task-entity jobs' inputs."""
    kind = kind_of(name, task)
    files = {key: expand_globs(task[key], f"tasks.{name}.{key}") for key in kind.data_keys if key in task}
    if kind.default_files is not None and set(kind.data_keys) - set(files):
        defaults = kind.default_files(name, task, tasks)
        files.update({key: defaults[key] for key in kind.data_keys if key not in files and key in defaults})
    return files


def run_files(name: str, task: Mapping, tasks: Mapping[str, Mapping], setting: str | None = None) -> dict:
    """The files one evaluation run of the task reads, by the names its rule's inputs take."""
    kind = kind_of(name, task)
    if kind.run_files is None:
        raise ValueError(f"tasks.{name}: a {kind.name} task is not evaluated")
    return kind.run_files(name, task, tasks, setting)


def check_task(
    name: str, task: Mapping, tasks: Mapping[str, Mapping], pending: Callable[[str], bool] | None = None
) -> None:
    """Config errors the schema cannot express, raised before anything runs: a data file that is
    not there, a FewRel task with nothing to train on, a Wiki80 setting without its epochs.

    ``pending``: whether a path is one a download will write (``snakemake download`` fetches the
    paper's files): a task naming one is checked for its files when a job needs them, not before,
    or the download itself could not be planned."""
    if pending is None or not any(pending(path) for path in _paths(task)):
        data_files(name, task, tasks)
    kind = kind_of(name, task)
    if kind.check is not None:
        kind.check(name, task)


def _paths(value: object) -> Iterator[str]:
    """Every string in a config value (a task's files: a glob, a list, a mapping of them)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _paths(item)
    elif isinstance(value, list):
        for item in value:
            yield from _paths(item)


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
    options.update(kind.setting_options(name, setting) if kind.setting_options else {"setting": setting})
    return options


def settings_options(name: str, task: Mapping, setting: str | None = None) -> dict:
    """The kind's hyper-parameters as configured (a mapping, as Wiki80's epochs, holds one per
    training setting): what :func:`pelt.eval.settings.parse` makes the run's settings of."""
    return {
        key: task[key][setting] if isinstance(task[key], Mapping) else task[key]
        for key in kind_of(name, task).hyperparameters
        if key in task
    }


def settings_of(name: str, task: Mapping) -> list[str]:
    """The settings a fine-tuning task runs (its kind's ``settings_key``): FewRel's N-K list, Wiki80's
    training settings."""
    kind = kind_of(name, task)
    if kind.settings_key is None:
        raise ValueError(f"tasks.{name}: a {kind.name} task is not fine-tuned per setting")
    return list(task[kind.settings_key])


def tasks_of_kind(tasks: Mapping[str, Mapping], kind: str) -> list[str]:
    """The configured tasks of one kind, in config order: the tasks its own rule runs."""
    return [name for name, task in tasks.items() if kind_of(name, task).name == kind]


def finetuned_tasks(tasks: Mapping[str, Mapping], summary: str | None = None) -> list[str]:
    """The configured tasks fine-tuned per setting and seed (one result file each), or only those
    whose kind reports in ``summary``: the inputs of a fine-tuning summary and of the headline."""
    return [
        name
        for name, task in tasks.items()
        if (kind := kind_of(name, task)).settings_key is not None and (summary is None or summary in kind.summaries)
    ]


def finetuning_summaries() -> list[str]:
    """The summary tables of the fine-tuning kinds (one rule writes them all, from per-seed results)."""
    return list(dict.fromkeys(s for kind in KINDS.values() if kind.settings_key is not None for s in kind.summaries))


def norm_sweeps(tasks: Mapping[str, Mapping]) -> list[str]:
    """The norm sweeps of the configured tasks (paths with a {model} wildcard; a kind's
    ``norm_sweep``), the first the one that chooses L (:func:`norm_sweep`)."""
    return [
        kind.norm_sweep.format(task=name, model="{model}")
        for name, task in tasks.items()
        if (kind := kind_of(name, task)).norm_sweep is not None
    ]


def norm_sweep(model: Mapping, tasks: Mapping[str, Mapping]) -> str | None:
    """The sweep (a path with a {model} wildcard) whose best L a model's runs with the table take:
    the first configured task's whose kind sweeps L (LAMA's: the paper picks L on the knowledge
    probe, section 3.1); None where a norm in the config wins, or where no task sweeps (L is then
    the table's default, the model family's)."""
    sweeps = norm_sweeps(tasks)
    return sweeps[0] if sweeps and model.get("norm") is None else None


def headline_results(tasks: Mapping[str, Mapping]) -> list[str]:
    """The results the report's headline leads with (paths with {model} and {variant} wildcards; a
    kind's ``headline``), of each configured task whose kind has them, in config order."""
    return [
        kind.headline.format(task=name, model="{model}", variant="{variant}")
        for name, task in tasks.items()
        if (kind := kind_of(name, task)).headline is not None
    ]
