"""FewRel's numbers in the paper (Ye et al. 2022): what its summaries set beside its results
(:mod:`pelt.report.paper` gathers every kind's, by the registry's ``paper`` entries)."""

from __future__ import annotations

# benchmark -> (paper model, variant) -> setting -> (mean, std over 5 seeds) in percent, as
# pelt.report.paper.PAPER_RESULTS reads them.
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
}
