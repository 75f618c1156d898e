"""The settings of a task's run, each a frozen dataclass parsed once from the run's options.

A run's hyper-parameters used to travel as 25 to 40 keyword arguments, each spelled again in the
runner's signature, its training loop and its result. Here each is written once: the workflow's
job script parses the options the registry gives it (:func:`pelt.registry.runner_options`) into
these objects, the runner reads them, and the result records them whole (:func:`as_record`).
Their defaults are the config schema's (``tests/unit/test_registry.py`` keeps them in step), so that a
library user calling a runner gets what the workflow would run.

Pure Python, no torch: the numbers are checked when the settings are made, before a model is
loaded; the named choices (markers, read_at, missing, precision) where they are looked up.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
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


@dataclass(frozen=True)
class LamaSettings:
    """The LAMA probe's batch size, input length and what a subject the table lacks becomes."""

    batch_size: int = 32
    max_length: int = 128
    missing: str = "plain"


@dataclass(frozen=True)
class FewRelSettings:
    """Proto on N-way K-shot episodes (the protocol: :mod:`pelt.tasks.fewrel.run`). ``train_n_way``
    None: N. ``warmup_steps`` (instead of the optimiser's ``warmup`` share), ``bias_correction``,
    the optimiser's ``max_grad_norm`` None and ``first_eval`` give the paper code's schedule."""

    n_way: int = 5
    k_shot: int = 1
    steps: int = 1500
    batch_size: int = 32
    eval_every: int = 250
    val_episodes: int = 6400
    test_episodes: int = 64000
    n_query: int = 1
    train_n_way: int | None = None
    train_n_query: int = 5
    val_relations: int | None = None
    dropout: float = 0.5
    warmup_steps: int | None = None
    bias_correction: bool = True
    first_eval: int = 0
    eval_batch_size: int = 64
    encoder: EncoderSettings = field(default_factory=EncoderSettings)
    optimizer: OptimizerSettings = field(default_factory=lambda: OptimizerSettings(lr=2e-5, weight_decay=0.01))

    def __post_init__(self) -> None:
        counts = (self.n_way, self.k_shot, self.n_query, self.training_n_way, self.train_n_query, self.batch_size)
        if min(*counts, self.eval_every) < 1 or self.steps < 0:
            raise ValueError("FewRel: N, K, queries, batch size and eval_every must be positive, steps >= 0")
        if not 0 <= self.dropout < 1 or self.first_eval > self.steps:
            raise ValueError(
                f"FewRel: dropout must be in [0, 1) and first_eval ({self.first_eval}) at most steps ({self.steps})"
            )

    @property
    def training_n_way(self) -> int:
        return self.train_n_way or self.n_way

    @property
    def setting(self) -> str:
        return f"{self.n_way}-{self.k_shot}"


@dataclass(frozen=True)
class Wiki80Settings:
    """Supervised fine-tuning of a classifier over the two start markers' states (Wiki80)."""

    epochs: int = 5
    batch_size: int = 32
    dropout: float = 0.1
    eval_batch_size: int = 64
    encoder: EncoderSettings = field(default_factory=EncoderSettings)
    optimizer: OptimizerSettings = field(default_factory=OptimizerSettings)

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.batch_size < 1:
            raise ValueError("Wiki80: epochs and batch_size must be positive")


S = TypeVar("S", LamaSettings, FewRelSettings, Wiki80Settings)
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


def as_record(settings: LamaSettings | FewRelSettings | Wiki80Settings, **resolved: Any) -> dict[str, Any]:
    """The settings as a result records them: flat, as the config writes them, with what the run
    resolved (the precision ``auto`` became) in place of the request."""
    record = asdict(settings)
    for name in GROUPS:
        record.update(record.pop(name, {}))
    record.update(resolved)
    return record
