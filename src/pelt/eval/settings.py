"""What the settings of the task kinds' runs share: each kind's own is a frozen dataclass of its
package (``pelt.tasks.<kind>.settings``, named by its registry entry), parsed once from the run's
options; here the groups several kinds take (the encoder, the optimiser), the table a run injects,
the parsing and the record.

A run's hyper-parameters used to travel as 25 to 40 keyword arguments, each spelled again in the
runner's signature, its training loop and its result. Here each is written once: the workflow's
job script parses the options the registry gives it (:func:`pelt.registry.runner_options`) into
these objects, the runner reads them, and the result records them whole (:func:`as_record`).
Their defaults are written here and in the kinds' settings only: the config schema takes them
(:func:`pelt.config.config_schema`), so that a library user calling a runner gets what the workflow
would run.

Pure Python, no torch: the numbers are checked when the settings are made, before a model is
loaded; the named choices (markers, read_at, missing, precision) where they are looked up.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, fields, replace
from typing import Any, TypeVar


@dataclass(frozen=True)
class TableInputs:
    """Which table a run injects, and what decides its length L: the variant (``baseline`` injects
    none; its table, when given, only splits the results by the heads' frequency), the table and the
    task entities its mentions resolve against. ``train_table`` and ``train_task_entities`` (FewRel
    2.0) serve the training and validation data, as the authors' loader. ``norm`` is the configured
    L and ``norm_sweep`` the LAMA sweep that chooses one (:func:`pelt.eval.variants.resolve_norm`)."""

    variant: str | None = None
    table: str | None = None
    task_entities: str | None = None
    norm: float | None = None
    train_table: str | None = None
    train_task_entities: str | None = None
    norm_sweep: str | None = None

    def __post_init__(self) -> None:
        if (self.train_table is None) != (self.train_task_entities is None):
            raise ValueError("train_table and train_task_entities go together")


def job_tables(job: Any, variant: str | None = None) -> TableInputs:
    """A Snakemake job's :class:`TableInputs` (``job``: the ``snakemake`` object of its script): the
    variant (its ``variant`` wildcard unless given), L as configured (``params.norm``), and the
    table, task entities, norm sweep and training table its inputs name, each absent where they
    name none."""
    return TableInputs(
        variant=variant or job.wildcards.variant,
        table=job.input.get("table"),
        task_entities=job.input.get("task_entities"),
        norm=job.params.norm,
        norm_sweep=job.input.get("norm_sweep"),
        train_table=job.input.get("train_table"),
        train_task_entities=job.input.get("train_task_entities"),
    )


@dataclass(frozen=True)
class Markers:
    """The words written before and after the head and the tail; ``new_tokens``: added to the
    vocabulary (the paper's code), else words the tokenizer has."""

    head: tuple[str, str]
    tail: tuple[str, str]
    new_tokens: bool = False

    def __post_init__(self) -> None:
        words = (*self.head, *self.tail)
        if len(words) != 4 or not all(isinstance(w, str) and w and w.split() == [w] for w in words):
            raise ValueError(f"markers must be four non-blank words without spaces, got {words!r}")
        if self.head[0] == self.tail[0]:
            raise ValueError(f"the head and the tail need different start markers, got {self.head[0]!r} for both")


MARKERS = {
    "punct": Markers(("@", "@"), ("#", "#")),
    "tokens": Markers(("[unused0]", "[unused1]"), ("[unused2]", "[unused3]"), new_tokens=True),
}


def markers_named(markers: str | Markers) -> Markers:
    """The :data:`MARKERS` entry a config names (with the choices in the error), or a library
    user's own :class:`Markers` as given."""
    if isinstance(markers, Markers):
        return markers
    if markers not in MARKERS:
        raise ValueError(f"unknown markers {markers!r}; expected one of {sorted(MARKERS)}")
    return MARKERS[markers]


# Where the relation encoder reads an entity, each named as the summaries and the report name it:
# the paper reads its start marker; the other two are this project's options beside the protocol.
# The config schema's `read_at` takes these values (tests/unit/test_registry.py checks its enum).
READ_AT = {
    "markers": "at the start markers (the paper's protocol)",
    "slots": "at the slots the table filled, else the start markers (this project's option, not the paper's)",
    "both": "at the start markers and at the slots (this project's option, not the paper's)",
}


@dataclass(frozen=True)
class EncoderSettings:
    """How a fine-tuning run reads a sentence (FewRel and Wiki80 share the encoder): the length it
    is cut to, the entity markers (a :data:`MARKERS` name, as the config gives it, or one's own
    :class:`Markers`) and where the entity is read, what a mention the table lacks becomes, and the
    forward's precision and device."""

    max_length: int = 128
    markers: str | Markers = "punct"
    read_at: str = "markers"
    missing: str = "plain"
    precision: str = "auto"
    device: str = "auto"


@dataclass(frozen=True)
class OptimizerSettings:
    """How a fine-tuning run steps (FewRel and Wiki80 share the optimiser, each with its own
    defaults): AdamW's learning rate and weight decay, the share of the steps spent warming up,
    and the gradient norm clipped at (None: no clipping)."""

    lr: float = 3e-5
    warmup: float = 0.1
    weight_decay: float = 0.0
    max_grad_norm: float | None = 1.0


S = TypeVar("S")  # a task kind's settings: a frozen dataclass of its package (pelt.tasks.<kind>.settings)
# The settings shared by kinds, each a field of theirs that the flat options fill (parse) and the
# records flatten again (as_record), so that a config and a result name every key at one level.
GROUPS = {"encoder": EncoderSettings, "optimizer": OptimizerSettings}


def parse(cls: type[S], options: Mapping[str, Any]) -> S:
    """``cls`` from flat options (a config entry's keys, as the registry passes them): the keys of a
    shared group (:data:`GROUPS`) go to that field, over the kind's own defaults for it; a key no
    field takes is an error, not ignored."""
    own = {f.name: f for f in fields(cls)}
    groups = {name: own.pop(name) for name in GROUPS if name in own}
    group_keys = {name: {f.name for f in fields(GROUPS[name])} for name in groups}
    unknown = sorted(set(options) - set(own) - {k for keys in group_keys.values() for k in keys})
    if unknown:
        raise ValueError(f"{cls.__name__}: unknown settings {unknown}")
    kwargs = {k: v for k, v in options.items() if k in own}
    for name, group in groups.items():
        given = {k: v for k, v in options.items() if k in group_keys[name]}
        default = group.default_factory() if group.default_factory is not MISSING else group.default
        kwargs[name] = replace(default, **given)
    return cls(**kwargs)


def as_record(settings: Any, **resolved: Any) -> dict[str, Any]:
    """The settings as a result records them: flat, as the config writes them, with what the run
    resolved (the precision ``auto`` became) in place of the request."""
    record = asdict(settings)
    for name in GROUPS:
        record.update(record.pop(name, {}))
    record.update(resolved)
    return record
