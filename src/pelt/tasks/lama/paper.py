"""LAMA's numbers in the paper (Ye et al. 2022): what its summaries set beside its results
(:mod:`pelt.report.paper` gathers every kind's, by the registry's ``paper`` entries)."""

from __future__ import annotations

# benchmark -> (paper model, variant) -> setting -> (mean, std over 5 seeds) in percent, as
# pelt.report.paper.PAPER_RESULTS reads them.
PAPER_RESULTS: dict[str, dict[tuple[str, str], dict[str, tuple[float, float | None]]]] = {
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
