"""mLAMA's settings (how runs parse and record settings: :mod:`pelt.eval.settings`): LAMA's, since a
language is probed as LAMA is. Its defaults are the config schema's (:func:`pelt.config.config_schema`)."""

from __future__ import annotations

from dataclasses import dataclass

from pelt.tasks.lama.settings import LamaSettings


@dataclass(frozen=True)
class MlamaSettings(LamaSettings):
    """The probe's batch size (prompts, several per fact), input length and what a subject the table
    lacks becomes."""
