"""Config mistakes said in a few lines: the key, the problem and, for a misspelt key, the key meant.

Snakemake's own validation message dumps the whole schema and config (hundreds of lines for one
wrong letter); the Snakefile asks here first and stops with this short form. Paths built from the
config or from data are confined here too (:func:`confined`), and model ids made unique
(:func:`model_ids`). Importing this module needs no workflow extra (the schema's packages are
imported where the schema is read), so that the library's own modules confine their paths alike.
"""

from __future__ import annotations

import difflib
import os
import posixpath
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pelt.registry import TaskKind

_LONGEST = 200  # characters of a problem's description


def canonical(value: object) -> object:
    """``value`` with every mapping's keys sorted, at any depth: a rule's params as Snakemake compares
    them (by ``repr``), so that a config whose keys only moved reruns nothing."""
    if isinstance(value, Mapping):
        return {key: canonical(value[key]) for key in sorted(value, key=str)}
    if isinstance(value, list | tuple):
        return type(value)(canonical(item) for item in value)
    return value


class SpeedOnly(dict):
    """Settings that change how fast a job runs, never what it writes (Spark's memory and JVM
    options, partitions, host workers): a job's params like any other, but one that Snakemake's
    rerun check, which compares params by ``repr``, sees as unchanged whatever they hold. Lives
    here, not in the rules, so that a job's script can unpickle it."""

    def __repr__(self) -> str:
        return "SpeedOnly(...)"


def yaml_problem(path: str | os.PathLike[str]) -> str | None:
    """The first syntax error of a YAML file, as ``file:line:column: what``; None when it parses.

    Snakemake's own message for a config file that does not parse names neither the file nor the
    place ("Config file is not valid JSON or YAML"); a user editing config/config.yaml needs both.
    """
    import yaml

    try:
        with open(path, encoding="utf-8") as fh:
            yaml.safe_load(fh)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"{os.fspath(path)}:{mark.line + 1}:{mark.column + 1}" if mark else os.fspath(path)
        return f"{where}: invalid YAML: {err.problem or err.context}"
    return None


def config_schema(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> dict:
    """The config's JSON schema: the workflow's (``path``) with each registered task kind's block
    (:attr:`pelt.registry.TaskKind.schema`, relative to ``root``, the workflow's folder) under
    ``tasks:``, so that a kind brings the keys of its tasks and the workflow's schema names none (its
    hyper-parameters' defaults from its settings: :func:`_settings_defaults`);
    and under ``corpora:`` the registered corpus kinds, the values a corpus's ``kind`` takes, each
    with the keys of its block (:attr:`pelt.registry.CorpusKind.schema`) beside every corpus's, so
    that a corpus kind is one registry entry, not also a schema edit."""
    from pelt.registry import CORPUS_KINDS, KINDS

    schema = _load_yaml(path)
    tasks = schema["properties"]["tasks"]
    for kind in KINDS.values():
        if kind.schema is not None:
            block = _load_yaml(os.path.join(root, kind.schema))
            _settings_defaults(block, kind)
            for key in ("properties", "patternProperties"):
                tasks.setdefault(key, {}).update(block.get(key, {}))
            schema.setdefault("$defs", {}).update(block.get("$defs", {}))
    corpus = schema["properties"]["corpora"]["additionalProperties"]
    corpus["properties"]["kind"]["enum"] = list(CORPUS_KINDS)
    for kind in CORPUS_KINDS.values():
        block = {} if kind.schema is None else _load_yaml(os.path.join(root, kind.schema))
        schema.setdefault("$defs", {}).update(block.get("$defs", {}))
        # the shared keys are checked once, by the entry's own properties; a kind's own keys only
        # for the corpora of the kind; any other key is unknown, named as one (config_problems)
        own = {key: {} for key in corpus["properties"]} | block.get("properties", {})
        corpus.setdefault("allOf", []).append(
            {
                "if": {"properties": {"kind": {"const": kind.name}}, "required": ["kind"]},
                "then": {"properties": own, "additionalProperties": False},
            }
        )
    return schema


def _settings_defaults(block: dict, kind: TaskKind) -> None:
    """The defaults of a kind's hyper-parameters in its schema block, where its tasks take them: its
    settings dataclass's (:attr:`pelt.registry.TaskKind.settings`, flattened by
    :func:`pelt.eval.settings.as_record`), the one place each is written, so that the config and a
    library user calling the runner get the same run. A key the dataclass leaves unset (None) has
    none; a default the block gives itself stays (Wiki80's epochs, one per training setting)."""
    from pelt.eval.settings import as_record
    from pelt.registry import resolve

    if kind.settings is None:
        return
    defaults = as_record(resolve(kind.settings)())
    for entry in [*block.get("properties", {}).values(), *block.get("patternProperties", {}).values()]:
        if "$ref" in entry:  # a definition of the block's own (FewRel's two keys share one)
            entry = block["$defs"][entry["$ref"].removeprefix("#/$defs/")]
        for key in kind.hyperparameters:
            if key in entry.get("properties", {}) and defaults.get(key) is not None:
                entry["properties"][key].setdefault("default", defaults[key])


def _load_yaml(path: str | os.PathLike[str]) -> dict:
    import yaml  # the workflow's extras; the rest of this module is pure Python

    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def fill_defaults(config: dict, schema: Mapping) -> None:
    """The schema's defaults written into ``config`` where it leaves a key out, at any depth, as
    Snakemake's ``validate`` does (the jsonschema FAQ's recipe); here because the schema is built
    (:func:`config_schema`), and Snakemake's validates only a file. Call it on a valid config."""
    import copy

    from jsonschema import Draft202012Validator, validators

    check_properties = Draft202012Validator.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        for name, subschema in properties.items():
            if "default" in subschema and isinstance(instance, dict):
                instance.setdefault(name, copy.deepcopy(subschema["default"]))
        yield from check_properties(validator, properties, instance, schema)

    validators.extend(Draft202012Validator, {"properties": set_defaults})(schema).validate(config)


def config_problems(config: Mapping, schema: Mapping) -> list[str]:
    """One line per problem of ``config`` against the schema (:func:`config_schema`), in the order of the keys."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(schema)
    problems = []
    for error in sorted(validator.iter_errors(config), key=lambda e: [str(p) for p in e.absolute_path]):
        where = ".".join(str(p) for p in error.absolute_path)
        if error.validator == "additionalProperties" and isinstance(error.instance, Mapping):
            allowed = list(error.schema.get("properties", {}))
            patterns = list(error.schema.get("patternProperties", {}))
            for key in error.instance:
                if key in allowed or any(re.search(p, key) for p in patterns):
                    continue
                meant = difflib.get_close_matches(key, allowed, n=1)
                hint = f"did you mean {meant[0]!r}?" if meant else f"known keys: {', '.join(allowed)}"
                problems.append(f"{'.'.join(filter(None, [where, key]))}: unknown key; {hint}")
            continue
        message = error.message
        if error.validator == "anyOf" and error.context:  # jsonschema's "not valid under any": each one's reason
            message = "; or ".join(dict.fromkeys(sub.message for sub in error.context))
        message = message if len(message) <= _LONGEST else message[: _LONGEST - 3] + "..."
        problems.append(f"{where or 'config'}: {message}")
    return problems


def check_files(paths: Sequence[str | os.PathLike[str]], root: str | os.PathLike[str]) -> list[str]:
    """What the workflow would refuse in the config files ``paths`` (merged in order, as Snakemake
    merges ``--configfile`` files), one ``file: key: problem`` line each: YAML syntax, the schema
    (:func:`config_schema` of the workflow in ``root``, the folder holding its Snakefile: unknown keys
    with the closest known one, values out of range, missing keys), and each task's own checks
    (:func:`pelt.registry.check_task`: data files not there, settings that do not fit). Paths
    relative to the folder the workflow would run in, the current one."""
    from pelt import registry

    if problems := [p for path in paths if (p := yaml_problem(path))]:
        return problems
    layers = [(os.fspath(path), _load_yaml(path) or {}) for path in paths]
    config: dict = {}
    for _, layer in layers:
        _merge(config, layer)

    def where(key_path: str) -> str:
        """The last file that sets the key (or its nearest parent), as the merge let it win."""
        for depth in range(len(parts := key_path.split(".")), 0, -1):
            for name, layer in reversed(layers):
                value: object = layer
                for part in parts[:depth]:
                    value = value.get(part, _ABSENT) if isinstance(value, Mapping) else _ABSENT
                if value is not _ABSENT:
                    return name
        return layers[-1][0]

    problems = []
    for key in ("task_kinds", "corpus_kinds"):
        try:
            registry.import_kinds(config.get(key, []), key)
        except (ValueError, ImportError) as err:
            problems.append(f"{where(key)}: {key}: {err}")
    schema = config_schema(os.path.join(root, "workflow", "schemas", "config.schema.yaml"), root)
    for problem in config_problems(config, schema):
        key_path = problem.split(":", 1)[0]
        problems.append(f"{where(key_path)}: {problem}")
    if problems:
        return problems
    fill_defaults(config, schema)
    downloads = "files" in config.get("download", {})
    for name, task in config["tasks"].items():
        try:
            registry.check_task(name, task, config["tasks"], lambda p: downloads and p.startswith("data/"))
        except (ValueError, FileNotFoundError) as err:
            problems.append(f"{where(f'tasks.{name}')}: tasks.{name}: {err}")
    return problems


_ABSENT = object()


def starter_config(entities: str, root: str | os.PathLike[str]) -> dict:
    """A config that builds a table for the list ``entities`` on the demo's Wikipedia corpus and
    model, and evaluates nothing: the demo config's corpus and ``demo_model`` blocks as they are, so
    that the shipped model is taken as ``make demo`` takes it (``models: - name: demo`` alone would
    train one, 10 to 20 minutes) and the table answers at once. Paths as the demo config writes them,
    relative to the workflow's folder ``root``, where the run starts. The demo's corpus with pages
    (its Wikipedia) is the one taken: titles and QIDs resolve through pages."""
    from pelt.registry import CORPUS_KINDS
    from pelt.tasks.entities import KIND  # the entity-list kind's entry names its key and its file key

    demo = _load_yaml(os.path.join(root, "config", "config.yaml"))
    corpus = next(name for name, c in demo["corpora"].items() if CORPUS_KINDS[c["kind"]].has_pages)
    return {
        "corpora": {corpus: demo["corpora"][corpus]},
        "models": [{"name": "demo"}],
        "demo_model": demo["demo_model"],
        "tasks": {KIND.name: {"domain": corpus, KIND.data_keys[0]: os.fspath(entities)}},
    }


def _merge(config: dict, layer: Mapping) -> None:
    """``layer`` over ``config``, mappings merged key by key at any depth (Snakemake's update_config)."""
    for key, value in layer.items():
        if isinstance(value, Mapping) and isinstance(config.get(key), dict):
            _merge(config[key], value)
        else:
            config[key] = value


def confined(base: str, relative: str, key: str) -> str:
    """``base/relative``, refused unless it lies strictly inside ``base``: the one check of every path
    that the config or the data names under a folder of the workflow (a ``download.files`` key under
    data/, a model id under its outputs' folders, an archive member under its release folder).

    A path is refused when it is absolute, has a ``..`` part, or is the folder itself (empty, ``.``):
    each would write outside the folder or over it, where a file of another key (or of nobody) is.
    Raises ValueError in one line naming ``key``, the config entry (or file) that named the path.
    """
    parts = relative.replace("\\", "/").split("/")
    if posixpath.isabs(relative) or ".." in parts or posixpath.normpath(relative) in (".", ""):
        raise ValueError(f"{key}: {relative!r} is not a path inside {base}/ (absolute, '..' or the folder itself)")
    return posixpath.join(base, relative)


def model_id(model: Mapping) -> str:
    """The model's name in output paths: its ``id``, or its ``name`` made path-safe (org/name -> org--name)."""
    return model.get("id", re.sub(r"[^\w.-]+", "--", model["name"]))


def model_ids(models: Sequence[Mapping]) -> dict[str, Mapping]:
    """Id -> model of the ``models:`` list, each id confined to one folder. Two models with one id
    (``org/x`` and ``org--x``, or one name twice) would write the same files, one silently lost: a
    config error naming both entries and the id."""
    ids: dict[str, int] = {}
    for i, model in enumerate(models):
        mid = model_id(model)
        confined("results/tables/<domain>", mid, f"models[{i}].id")
        if mid in ids:
            first = ids[mid]
            raise ValueError(
                f"models[{first}] ({models[first]['name']!r}) and models[{i}] ({model['name']!r}) both get the id"
                f" {mid!r}, the folder of their outputs; give one of them another `id:`"
            )
        ids[mid] = i
    return {mid: models[i] for mid, i in ids.items()}


# A model hub repository id: `name` or `org/name`, each part a letter or digit then letters, digits,
# `.`, `_` or `-` (the hub's own rule, less its length limit).
_HUB_NAME = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")


def is_hub_name(name: str) -> bool:
    """Shaped like a model hub repository id (``name`` or ``org/name``), whether or not it exists."""
    return bool(_HUB_NAME.fullmatch(name)) and ".." not in name and "--" not in name


def check_model_names(models: Sequence[Mapping]) -> None:
    """Refuse, before the first job, a model ``name`` that nothing could load: not ``demo``, not an
    existing local path, and not shaped like a hub name (``org/name``): a mistyped folder
    (``./models/robrta``, ``/data/x``) would otherwise fail only when its encoding job starts, after
    the corpus, linking and sampling jobs. A hub name is not looked up (that needs the network)."""
    for i, model in enumerate(models):
        name = model["name"]
        if name == "demo" or os.path.exists(name):
            continue
        if not is_hub_name(name):
            raise ValueError(
                f"models[{i}].name: {name!r} is no local path that exists, nor a model hub name (org/name)"
            )


# A run's name, one folder under runs/: letters, digits, `.`, `_`, `+` and `-` (a corpus file's id too).
_RUN_NAME = re.compile(r"[\w.+-]+")


def run_name(
    run: str | None, configfiles: Sequence[str | os.PathLike[str]], default: str | os.PathLike[str]
) -> str | None:
    """The name of the run a config asks for, whose outputs and logs go under ``runs/<name>/``, so
    that a second config (an entity list, the paper's) never writes over another's outputs nor makes
    a switch back rerun them: ``run`` as configured, else the stem of the last config file Snakemake
    was given (``--configfile config/paper.yaml``: ``paper``, its other characters made ``_``).
    None, outputs in ``results/`` and ``logs/`` as the docs show them, for the default config: no
    config file given, or only ``default`` itself; and for ``run: ""``, with which a file merged over
    the default config (a faster Spark's settings) keeps the default run's outputs instead of
    starting its own.

    A configured name that is not one folder name (``a/b``, ``..``, a space) is refused in one line.
    """
    if run == "":
        return None
    key = "run"
    if run is None:
        if not configfiles or [os.path.realpath(f) for f in configfiles] == [os.path.realpath(default)]:
            return None
        run = re.sub(r"[^\w.+-]", "_", os.path.splitext(os.path.basename(configfiles[-1]))[0])
        key = f"--configfile {configfiles[-1]}"
    if not _RUN_NAME.fullmatch(run):
        raise ValueError(
            f"run: {run!r} is not a folder name (letters, digits, '.', '_', '+' and '-'), the folder of"
            " this run's outputs under runs/"
        )
    confined("runs", run, key)  # '.' and '..' are folder names of no run
    return run
