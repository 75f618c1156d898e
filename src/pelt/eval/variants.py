"""Which variant a run is (``baseline``, ``pelt`` or a control) and which norm L it injects at:
checked and chosen alike by every task runner, LAMA and the fine-tuning tasks.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from enum import Enum

logger = logging.getLogger(__name__)


def resolve_variant(
    variant: str | None,
    table_path: str | None,
    task_entities_path: str | None,
    what: str,
    injecting: Sequence[str] = ("pelt",),
) -> str:
    """``baseline`` or one of ``injecting`` (``pelt``, the default when a table is given), checked
    against the table arguments.

    Shared by every task runner (``what`` names it in errors), so that all accept the same
    combinations; LAMA also takes the control variants (:mod:`pelt.eval.controls`), which inject
    a control table exactly as ``pelt`` injects the real one.
    """
    variant = variant or ("pelt" if table_path else "baseline")
    if variant not in ("baseline", *injecting):
        raise ValueError(f"{what}: variant must be one of {['baseline', *injecting]}, not {variant!r}")
    if (table_path is None) != (task_entities_path is None):
        raise ValueError(f"{what}: table_path and task_entities_path go together")
    if variant != "baseline" and table_path is None:
        raise ValueError(f"{what}: the {variant} variant needs a table")
    return variant


class NormSource(Enum):
    """What decides a run's L (:func:`norm_source`)."""

    CONFIG = "config"  # the config's norm
    SWEEP = "sweep"  # the norm sweep's chosen L
    FAMILY = "family"  # the model family's default


def norm_source(norm: float | None, swept: bool) -> NormSource:
    """What decides L of a run with the table, given the configured ``norm`` and whether a norm sweep
    is there to choose one (``swept``): a norm set in the config is the user's decision and wins over
    the sweep, which is then neither planned as the run's input nor read; else the sweep (the paper
    picks L on the knowledge probe and uses it everywhere, section 3.1); else the model family's.

    The one place this precedence is decided: the workflow asks it when it plans a run
    (:func:`pelt.registry.norm_sweep`, whether the run waits for the sweep) and the runner when it
    runs (:func:`resolve_norm`), so that the two never disagree on which L a run takes."""
    if norm is not None:
        return NormSource.CONFIG
    return NormSource.SWEEP if swept else NormSource.FAMILY


def resolve_norm(norm: float | None, sweep_json: str | os.PathLike[str] | None, family_norm: float) -> float:
    """L of a run with the table, from what decides it (:func:`norm_source`): the configured
    ``norm``, the sweep's chosen L (``sweep_json``) or the model family's
    (:attr:`pelt.encoding.models.Family.norm`). Every runner asks it, and a table records only its
    family's L, so changing L reruns the evaluations and never the encoding."""
    source = norm_source(norm, sweep_json is not None)
    if source is NormSource.CONFIG:
        return float(norm)
    if source is NormSource.FAMILY:
        return float(family_norm)
    from pelt.registry import norm_sweep_tasks  # here: the registry imports this module (norm_source)

    with open(sweep_json, encoding="utf-8") as fh:
        sweep = json.load(fh)
    if sweep.get("task") not in norm_sweep_tasks() or not isinstance(sweep.get("chosen_norm"), (int, float)):
        raise ValueError(f"{sweep_json}: not a norm sweep with a chosen_norm")
    logger.info("norm L = %g, chosen by the norm sweep %s", sweep["chosen_norm"], sweep_json)
    return float(sweep["chosen_norm"])
