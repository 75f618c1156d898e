"""The task kinds, one entry each: what the workflow needs to know of a task, in one place.

A ``tasks:`` entry of the config is of a registered kind. Each kind registers itself from its own
package with :func:`register`: the five that come with pelt (LAMA, mLAMA, FewRel, Wiki80, and an
entity list that only asks for a table) from theirs, ``pelt.tasks.<kind>``, which this module
imports; a package of one's own alike, named by the config's ``task_kinds`` (docs/task-kinds.md).
Each kind names the config keys that hold its data files (whose entities the table needs, and the
reader that finds them), those that span its grid of runs, its hyper-parameters (passed by name to
its runner), the runner itself and its settings, how a run's setting reads, the keys that name its
tasks, the benchmarks under which the paper's numbers stand beside its results, its summaries and
figures, and its part of the workflow: its rules file and its schema block. A corpus kind
(:class:`CorpusKind`, a ``corpora:`` entry's) likewise names its rules file, its schema block and
whether it has pages; a package of one's own adds more alike (the config's ``corpus_kinds``). The
shared Snakemake rules and the shared report only map config to paths and ask this module the
rest, so that the protocol is unit-tested, not only dry-run, and no shared file names a kind.

Pure Python on purpose: the Snakefile imports it, in whatever environment Snakemake runs.
"""

from __future__ import annotations

import glob
import importlib
import os
import pkgutil
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from pelt.eval.variants import NormSource, norm_source


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
    # What its results report: each benchmark (the key of the paper's numbers and of a summary's
    # `benchmark` column) -> how the tables name it ("fewrel1" -> "FewRel 1.0").
    benchmarks: Mapping[str, str] = field(default_factory=dict)
    settings: str | None = None  # module:class, the frozen dataclass of its runs' settings
    paper: str | None = None  # module:name, the paper's numbers of its benchmarks (pelt.report.paper)
    reader_keys: tuple[str, ...] = ()  # keys passed by name to the entity reader (an entity list's CSV column)
    # Its summary tables (results/eval/summary/<name>.*), each with the module:function that writes
    # one from the results (result files, CSV, Markdown, HTML), and its report figures
    # (results/eval/report/<name>.svg), each with the module:function that draws one from its rule's
    # named inputs and ``out_svg``: the shared summary and figure jobs find them here by name.
    summaries: Mapping[str, str] = field(default_factory=dict)
    figures: Mapping[str, str] = field(default_factory=dict)
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
    # The ``task`` value its norm sweep's file holds, by which a runner that reads L from it knows the
    # file for a sweep (:func:`norm_sweep_tasks`); set with ``norm_sweep``.
    norm_sweep_task: str | None = None
    headline: str | None = None
    # module:function, (the headline's results, the norm sweeps) -> the kind's part of the landing
    # page (pelt.report.headline.HeadlinePart); a kind with ``headline`` leads the page with it.
    headline_part: str | None = None
    # The config keys that name a task of the kind besides its own name: other keys (FewRel 2.0's
    # ``fewrel2``) and a prefix, ``<prefix><anything>`` (an mLAMA language's ``mlama_de``).
    aliases: tuple[str, ...] = ()
    prefix: str | None = None
    # (setting, number of classes) -> the accuracy of guessing, for the chance flags; None: a
    # classifier's, 1/classes.
    chance_level: Callable[[str, int | None], float | None] | None = None
    # The landing page's sentence on what the difference between its variants means.
    meaning: str | None = None
    # module:name, its rows of the README's table of the demo's results (pelt.report.demo_table).
    demo_rows: str | None = None
    # The release archives its data come in, each path under data/ -> the folder it unpacks to there
    # (the download rules, config key `download`).
    archives: Mapping[str, str] = field(default_factory=dict)
    # The job script of one run, a path like ``rules``, for a kind whose rules are the shared
    # template of the kinds fine-tuned per setting and seed (:data:`FINETUNING_RULES`).
    script: str | None = None
    # module:function, (task name, its data files, the domain's names not found -> closest names) ->
    # the lines the terminal shows for the task when a run ends (an entity list: found / not found).
    end_of_run: str | None = None


# The task kinds by name: the built-in kinds' (each registered by its package, pelt.tasks.<kind>,
# which this module imports last) in the order of their names, then those of the packages the
# config's `task_kinds` names, as they register.
KINDS: dict[str, TaskKind] = {}
# The rules template of the kinds fine-tuned per setting and seed whose job has one shape (a run's
# files, the table, L, the options of its setting and seed): a kind's entry points its ``rules``
# here and names its job ``script``; the template gives each such kind its rule, named after it.
FINETUNING_RULES = "workflow/rules/tasks/finetuning.smk"


def register(kind: TaskKind | CorpusKind) -> TaskKind | CorpusKind:
    """Adds a task kind (to :data:`KINDS`) or a corpus kind (to :data:`CORPUS_KINDS`), as its package
    calls it when imported: pelt's own task kinds' (``pelt.tasks.<kind>``) and the packages the
    config's ``task_kinds`` or ``corpus_kinds`` names alike, so that a kind from outside pelt is a kind
    like the built-in ones, to the registry, the workflow and the report (docs/task-kinds.md). A name
    already taken is refused, not replaced."""
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
    ``language``, ``kinds``): its own files (Wikipedia's ``page_props``). Its ``license`` (a Hub
    licence id; None: unknown) is that of its text, which the vectors of a table built from it carry
    (``pelt table push``'s dataset card)."""

    name: str
    has_pages: bool
    rules: str
    schema: str | None = None
    license: str | None = None


CORPUS_KINDS = {
    kind.name: kind
    for kind in (
        CorpusKind(
            "wikipedia",
            has_pages=True,
            rules="workflow/rules/corpora/wikipedia.smk",
            schema="workflow/schemas/corpora/wikipedia.yaml",
            license="cc-by-sa-4.0",  # Wikipedia's text is CC BY-SA 4.0
        ),
        # S2ORC's papers are released under ODC-By.
        CorpusKind("s2orc", has_pages=False, rules="workflow/rules/corpora/s2orc.smk", license="odc-by"),
    )
}


def domains_with_pages(corpora: Mapping[str, Mapping], has_pages: bool) -> list[str]:
    """The configured domains whose corpus kind has pages (or has none): which linker and which
    task-entity resolver serve them."""
    return [name for name, corpus in corpora.items() if CORPUS_KINDS[corpus["kind"]].has_pages == has_pages]


# Keys every task may carry besides its kind's: the corpus whose table it uses (and, FewRel 2.0,
# whose table serves training), and an explicit kind.
DOMAIN_KEYS = ("domain", "train_domain", "kind")


def kind_of(name: str, task: Mapping | None = None) -> TaskKind:
    """The kind of the task configured under ``name``: its ``kind`` field, else the kind its key
    names (:func:`kind_named`)."""
    kind = (task or {}).get("kind") or kind_named(name)
    if kind not in KINDS:
        raise ValueError(f"tasks.{name}: unknown task kind {kind!r}; expected one of {sorted(KINDS)}")
    return KINDS[kind]


def kind_named(key: str) -> str:
    """The kind a task's key names: the kind of that name, else the kind that takes it as one of its
    ``aliases`` (FewRel 2.0's key names a FewRel task), else the kind whose ``prefix`` it starts with
    (``entities_<anything>`` an entity list, ``mlama_<language>`` an mLAMA language); else the key
    itself, which no kind answers to."""
    if key in KINDS:
        return key
    named = [kind.name for kind in KINDS.values() if key in kind.aliases]
    named += [kind.name for kind in KINDS.values() if kind.prefix and key.startswith(kind.prefix)]
    return named[0] if named else key


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


def summary_writer(name: str) -> str:
    """The module:function that writes the summary table ``name`` (its kind's ``summaries``): what
    the shared summary job calls."""
    return _named(name, "summaries")


def figure_writer(name: str) -> str:
    """The module:function that draws the report figure ``name`` (its kind's ``figures``): what the
    shared figure job calls."""
    return _named(name, "figures")


def _named(name: str, part: str) -> str:
    found = [getattr(kind, part)[name] for kind in KINDS.values() if name in getattr(kind, part)]
    if not found:
        raise ValueError(f"no registered task kind has {part} named {name!r}")
    return found[0]


def kinds_with_rules(rules: str) -> list[TaskKind]:
    """The kinds whose entries point at the rules file ``rules`` (:data:`FINETUNING_RULES`, a
    template): those it gives a rule each."""
    return [kind for kind in KINDS.values() if kind.rules == rules]


def benchmark_kind(benchmark: str) -> TaskKind | None:
    """The kind whose results report ``benchmark`` (its ``benchmarks``; a kind without the paper's
    numbers reports under its own name); None where no kind does."""
    return next((kind for kind in KINDS.values() if benchmark in kind.benchmarks), KINDS.get(benchmark))


def benchmark_label(benchmark: str) -> str:
    """How the tables, figures and the landing page name a benchmark ("fewrel1": "FewRel 1.0"); an
    unknown one by its key."""
    kind = benchmark_kind(benchmark)
    return kind.benchmarks.get(benchmark, benchmark) if kind else benchmark


def archives() -> dict[str, str]:
    """The release archives the kinds' data come in (path under data/ -> the folder it unpacks to):
    what the download rules unpack."""
    return {path: folder for kind in KINDS.values() for path, folder in kind.archives.items()}


def norm_sweeps(tasks: Mapping[str, Mapping]) -> list[str]:
    """The norm sweeps of the configured tasks (paths with a {model} wildcard; a kind's
    ``norm_sweep``), the first the one that chooses L (:func:`norm_sweep`)."""
    return [
        kind.norm_sweep.format(task=name, model="{model}")
        for name, task in tasks.items()
        if (kind := kind_of(name, task)).norm_sweep is not None
    ]


def norm_sweep_tasks() -> set[str]:
    """The ``task`` values a norm sweep's file may hold (each kind's ``norm_sweep_task``): what the
    runners check a sweep against before taking its L (:func:`pelt.eval.variants.resolve_norm`), so
    that no shared module names the kind whose sweep it is."""
    return {kind.norm_sweep_task for kind in KINDS.values() if kind.norm_sweep_task is not None}


def norm_sweep(model: Mapping, tasks: Mapping[str, Mapping]) -> str | None:
    """The sweep (a path with a {model} wildcard) whose best L a model's runs with the table take,
    and so wait for: the first configured task's whose kind sweeps L (LAMA's: the paper picks L on
    the knowledge probe, section 3.1), where it decides L (:func:`pelt.eval.variants.norm_source`:
    not where the config sets a norm); None where it does not, or no task sweeps (L is then the
    table's default, the model family's)."""
    sweeps = norm_sweeps(tasks)
    return sweeps[0] if norm_source(model.get("norm"), bool(sweeps)) is NormSource.SWEEP else None


def headline_results(tasks: Mapping[str, Mapping]) -> list[str]:
    """The results the report's headline leads with (paths with {model} and {variant} wildcards; a
    kind's ``headline``), of each configured task whose kind has them, in config order."""
    return [
        kind.headline.format(task=name, model="{model}", variant="{variant}")
        for name, task in tasks.items()
        if (kind := kind_of(name, task)).headline is not None
    ]


def _register_builtin_kinds() -> None:
    """Imports every package of :mod:`pelt.tasks`, each built-in kind's registering it as a package
    from outside pelt does (``relation``, what two kinds share, registers none), so that a new
    package is a new kind with no list to add it to; then orders :data:`KINDS` by name, whichever
    package imported another first (FewRel's imports Wiki80's). ``pelt.tasks`` comes from
    ``importlib``: where a kind's module is imported first, it is still being imported, and not yet
    an attribute of ``pelt``."""
    tasks = importlib.import_module("pelt.tasks")
    for package in pkgutil.iter_modules(tasks.__path__, f"{tasks.__name__}."):
        if package.ispkg:
            importlib.import_module(package.name)
    for name in sorted(KINDS):
        KINDS[name] = KINDS.pop(name)


_register_builtin_kinds()
