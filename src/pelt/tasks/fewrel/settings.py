"""The settings of a FewRel run, Proto's schedule and episodes, over the encoder and optimiser groups
that Wiki80 shares (:mod:`pelt.eval.settings`); its defaults are the config schema's
(:func:`pelt.config.config_schema` takes them from here)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pelt.eval.settings import EncoderSettings, OptimizerSettings


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
