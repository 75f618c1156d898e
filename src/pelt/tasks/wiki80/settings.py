"""What a Wiki80 run is told: epochs, batches and the classifier's dropout, with the shared encoder and
optimiser groups (:mod:`pelt.eval.settings`); its defaults are the config schema's
(:func:`pelt.config.config_schema` takes them from here; the config's epochs, one per training setting,
are its schema block's)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pelt.eval.settings import EncoderSettings, OptimizerSettings


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
