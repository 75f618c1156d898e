"""Flags on results that look like numbers but measure nothing: here the ones every fine-tuning kind
shares, a fine-tuned model no better than guessing (a kind's own, such as LAMA's every P@1 zero or a
norm L the sweep did not decide, are in its package: ``pelt.tasks.<kind>.summary``).

A summary table shows such a result as plainly as a real one; these sentences go beside it (in the
Markdown summaries, the report's tables and its landing page) so that a reader does not quote it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pelt.registry import benchmark_kind, benchmark_label

# The mark that starts a flag, in Markdown and HTML alike.
FLAG = "Flag:"
# What the chance flags check, for the line that says none was raised.
CHANCE_CHECKS = "accuracy at chance: 1/N for N-way episodes, 1/classes for a classifier"
# Accuracy within this many binomial standard errors of chance is "at chance".
CHANCE_SE = 2.0


def chance_level(benchmark: str, setting: str, classes: int | None) -> float | None:
    """Accuracy of guessing on a benchmark's setting: its kind's rule (:attr:`pelt.registry.TaskKind.chance_level`:
    1/N for FewRel's N-way episodes), else a classifier's, 1/classes; None if unknown."""
    kind = benchmark_kind(benchmark)
    if kind is not None and kind.chance_level is not None:
        return kind.chance_level(setting, classes)
    return 1.0 / classes if classes else None


def chance_flags(rows: Sequence[dict]) -> list[str]:
    """Flags for fine-tuning rows (:func:`pelt.report.finetuning_summary.aggregate_seeds`) whose mean accuracy is
    within :data:`CHANCE_SE` binomial standard errors of chance on their ``n`` test items."""
    flags = []
    for r in rows:
        chance = chance_level(r["benchmark"], r["setting"], r.get("classes"))
        name = f"{benchmark_label(r['benchmark'])} {r['setting']} `{r['model']}` {r['variant']}"
        if chance is None:
            flags.append(f"{name}: chance level unknown (the results do not record the number of classes).")
            continue
        se = math.sqrt(chance * (1 - chance) / max(1, r["n"]))
        if r["accuracy_mean"] <= chance + CHANCE_SE * se:
            flags.append(
                f"{name}: accuracy {100 * r['accuracy_mean']:.1f} % is at chance "
                f"({100 * chance:.1f} % for {round(1 / chance)} classes, n = {r['n']})."
            )
    return flags
