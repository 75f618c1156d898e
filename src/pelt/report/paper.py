"""The paper's numbers (Ye et al. 2022) and which of them a run compares with: its model, variant,
benchmark and setting.
"""

from __future__ import annotations

import os

# The paper's numbers (Ye et al. 2022), in percent, as (mean, std over 5 seeds); std None where the
# paper gives none.  Only its own models: the vanilla PLM (variant baseline) and the same PLM with
# PELT (variant pelt); keyed by benchmark, then (paper model name, variant), then setting.
PAPER_RESULTS: dict[str, dict[tuple[str, str], dict[str, tuple[float, float | None]]]] = {
    # Table 2 (FewRel 1.0 and 2.0, Proto, N-K = N-way K-shot)
    "fewrel1": {
        ("roberta-base", "baseline"): {
            "5-1": (90.4, 0.3),
            "5-5": (96.2, 0.0),
            "10-1": (84.2, 0.5),
            "10-5": (93.9, 0.1),
        },
        ("roberta-base", "pelt"): {"5-1": (92.7, 0.3), "5-5": (97.5, 0.0), "10-1": (87.5, 0.3), "10-5": (95.4, 0.1)},
    },
    "fewrel2": {
        ("roberta-base", "baseline"): {
            "5-1": (71.2, 2.1),
            "5-5": (89.4, 0.2),
            "10-1": (53.3, 0.8),
            "10-5": (83.1, 0.4),
        },
        ("roberta-base", "pelt"): {"5-1": (75.0, 1.3), "5-5": (92.1, 0.2), "10-1": (60.4, 1.1), "10-5": (85.6, 0.2)},
    },
    # Table 3 (Wiki80 test accuracy; 1% / 10% / 100% of the training data)
    "wiki80": {
        ("roberta-base", "baseline"): {"1%": (59.8, 1.7), "10%": (85.7, 0.2), "100%": (91.7, 0.1)},
        ("roberta-base", "pelt"): {"1%": (65.6, 1.0), "10%": (88.3, 0.3), "100%": (93.4, 0.1)},
    },
    # Table 4 (mean P@1 on LAMA and LAMA-UHN; no std reported)
    "lama": {
        (model, variant): {s: (p, None) for s, p in zip(("G-RE", "T-REx", "UHN G-RE", "UHN T-REx"), scores)}
        for (model, variant), scores in {
            ("roberta-base", "baseline"): (5.4, 24.7, 2.2, 17.0),
            ("roberta-base", "pelt"): (6.4, 27.5, 2.8, 19.3),
            ("bert-base-uncased", "baseline"): (13.9, 34.9, 8.8, 26.8),
            ("bert-base-uncased", "pelt"): (13.3, 40.7, 8.9, 34.5),
            ("bart-base", "baseline"): (5.1, 21.2, 1.3, 12.0),
            ("bart-base", "pelt"): (6.9, 24.4, 2.1, 14.9),
        }.items()
    },
    # Table 5 (mean P@1 on T-REx by the subject's frequency in Wikipedia; no std reported)
    "lama_frequency": {
        (model, variant): {s: (p, None) for s, p in zip(("[0,10)", "[10,50)", "[50,100)", "[100,+)"), scores)}
        for (model, variant), scores in {
            ("roberta-base", "baseline"): (18.1, 21.1, 25.8, 26.1),
            ("roberta-base", "pelt"): (21.9, 24.8, 29.0, 28.7),
        }.items()
    },
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
