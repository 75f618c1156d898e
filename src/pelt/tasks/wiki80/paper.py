"""Wiki80's numbers in the paper (Ye et al. 2022): what its summaries set beside its results
(:mod:`pelt.report.paper` gathers every kind's, by the registry's ``paper`` entries)."""

from __future__ import annotations

# benchmark -> (paper model, variant) -> setting -> (mean, std over 5 seeds) in percent, as
# pelt.report.paper.PAPER_RESULTS reads them.
PAPER_RESULTS: dict[str, dict[tuple[str, str], dict[str, tuple[float, float | None]]]] = {
    # Table 3 (Wiki80 test accuracy; 1% / 10% / 100% of the training data)
    "wiki80": {
        ("roberta-base", "baseline"): {"1%": (59.8, 1.7), "10%": (85.7, 0.2), "100%": (91.7, 0.1)},
        ("roberta-base", "pelt"): {"1%": (65.6, 1.0), "10%": (88.3, 0.3), "100%": (93.4, 0.1)},
    },
}
