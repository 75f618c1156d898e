"""LAMA's settings (a frozen dataclass; how runs parse and record settings: :mod:`pelt.eval.settings`).
Its defaults are written here only: the config schema takes them (:func:`pelt.config.config_schema`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LamaSettings:
    """The LAMA probe's batch size, input length and what a subject the table lacks becomes."""

    batch_size: int = 32
    max_length: int = 128
    missing: str = "plain"
