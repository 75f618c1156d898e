"""The paper's numbers (Ye et al. 2022) and which of them a run compares with: its model, variant,
benchmark and setting.
"""

from __future__ import annotations

import os

from pelt.registry import KINDS, resolve

# The paper's numbers (Ye et al. 2022), each kind's in its package (its registry entry's ``paper``),
# in percent, as (mean, std over 5 seeds); std None where the paper gives none. Only its own models:
# the vanilla PLM (variant baseline) and the same PLM with PELT (variant pelt); keyed by benchmark,
# then (paper model name, variant), then setting.
PAPER_RESULTS: dict[str, dict[tuple[str, str], dict[str, tuple[float, float | None]]]] = {
    benchmark: rows
    for kind in KINDS.values()
    if kind.paper is not None
    for benchmark, rows in resolve(kind.paper).items()
}
# Section 3.1: L searched over 1..10 on the knowledge probe.
PAPER_NORMS = {"roberta-base": 7.0, "bert-base-uncased": 10.0, "bart-base": 3.0}
PAPER_CITATION = "paper (Ye et al. 2022)"


def paper_model(model: str) -> str | None:
    """The paper's model that a run used, if any: ``roberta-base`` for ``roberta-base``, ``FacebookAI/roberta-base``
    or a local ``.../roberta-base``."""
    name = os.path.basename(str(model).rstrip("/"))
    return name if name in PAPER_NORMS else None


def paper_result(benchmark: str, model: str, variant: str, setting: str) -> tuple[float, float | None] | None:
    """The paper's (mean, std) as fractions for a run's benchmark, model, variant and setting; None if it has none."""
    value = PAPER_RESULTS.get(benchmark, {}).get((paper_model(model) or "", variant), {}).get(setting)
    return None if value is None else (value[0] / 100, None if value[1] is None else value[1] / 100)
