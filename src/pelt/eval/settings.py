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
from dataclasses import asdict, dataclass, field, fields
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
class EncoderSettings:
    """How a fine-tuning run reads a sentence (FewRel and Wiki80 share the encoder): the length it
    is cut to, the entity markers and where the entity is read, what a mention the table lacks
    becomes, and the forward's precision and device."""

    max_length: int = 128
    markers: str = "punct"
    read_at: str = "markers"
    missing: str = "plain"
    precision: str = "auto"
    device: str = "auto"


@dataclass(frozen=True)
class LamaSettings:
    """The LAMA probe's batch size, input length and what a subject the table lacks becomes."""

    batch_size: int = 32
    max_length: int = 128
    missing: str = "plain"


@dataclass(frozen=True)
class FewRelSettings:
    """Proto on N-way K-shot episodes (the protocol: :mod:`pelt.eval.fewrel`). ``train_n_way``
    None: N. ``warmup_steps`` (instead of the ``warmup`` share), ``bias_correction``,
    ``max_grad_norm`` (None: no clipping) and ``first_eval`` give the paper code's schedule."""

    n_way: int = 5
    k_shot: int = 1
    steps: int = 1500
    batch_size: int = 32
    lr: float = 2e-5
    eval_every: int = 250
    val_episodes: int = 6400
    test_episodes: int = 64000
    n_query: int = 1
    train_n_way: int | None = None
    train_n_query: int = 5
    val_relations: int | None = None
    warmup: float = 0.1
    weight_decay: float = 0.01
    dropout: float = 0.5
    warmup_steps: int | None = None
    bias_correction: bool = True
    max_grad_norm: float | None = 1.0
    first_eval: int = 0
    eval_batch_size: int = 64
    encoder: EncoderSettings = field(default_factory=EncoderSettings)

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
    lr: float = 3e-5
    warmup: float = 0.1
    weight_decay: float = 0.0
    dropout: float = 0.1
    max_grad_norm: float = 1.0
    eval_batch_size: int = 64
    encoder: EncoderSettings = field(default_factory=EncoderSettings)

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.batch_size < 1:
            raise ValueError("Wiki80: epochs and batch_size must be positive")


S = TypeVar("S", LamaSettings, FewRelSettings, Wiki80Settings)


def parse(cls: type[S], options: Mapping[str, Any]) -> S:
    """``cls`` from flat options (a config entry's keys, as the registry passes them): the keys of
    :class:`EncoderSettings` go to ``encoder``; a key neither knows is an error, not ignored."""
    own = {f.name for f in fields(cls)} - {"encoder"}
    encoder_keys = {f.name for f in fields(EncoderSettings)} if "encoder" in {f.name for f in fields(cls)} else set()
    unknown = sorted(set(options) - own - encoder_keys)
    if unknown:
        raise ValueError(f"{cls.__name__}: unknown settings {unknown}")
    kwargs = {k: v for k, v in options.items() if k in own}
    if encoder_keys:
        kwargs["encoder"] = EncoderSettings(**{k: v for k, v in options.items() if k in encoder_keys})
    return cls(**kwargs)


def as_record(settings: LamaSettings | FewRelSettings | Wiki80Settings, **resolved: Any) -> dict[str, Any]:
    """The settings as a result records them: flat, as the config writes them, with what the run
    resolved (the precision ``auto`` became) in place of the request."""
    record = asdict(settings)
    record.update(record.pop("encoder", {}))
    record.update(resolved)
    return record
