"""Which variant a run is (``baseline``, ``pelt`` or a control) and which norm L it injects at:
checked and chosen alike by every task runner, LAMA and the fine-tuning tasks.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence

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


def resolve_norm(norm: float | None, sweep_json: str | os.PathLike[str] | None, family_norm: float) -> float:
    """L of a run with the table: the configured ``norm``, else the LAMA sweep's chosen L, else the
    model family's (:attr:`pelt.encoding.models.Family.norm`). The one place L is decided; every runner
    asks it, and a table records only its family's L, so changing L reruns the evaluations and
    never the encoding.

    The paper picks L on the knowledge probe and uses it everywhere (section 3.1): the LAMA runs
    with the table and its controls, and the fine-tuning. A norm set in the config is the user's
    decision and wins over the sweep, which is then not read.
    """
    if norm is not None:
        return float(norm)
    if sweep_json is None:
        return float(family_norm)
    with open(sweep_json, encoding="utf-8") as fh:
        sweep = json.load(fh)
    if sweep.get("task") != "lama_norm_sweep" or not isinstance(sweep.get("chosen_norm"), (int, float)):
        raise ValueError(f"{sweep_json}: not a LAMA norm sweep with a chosen_norm")
    logger.info("norm L = %g, chosen by the LAMA sweep %s", sweep["chosen_norm"], sweep_json)
    return float(sweep["chosen_norm"])
