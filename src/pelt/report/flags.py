"""Flags on results that look like numbers but measure nothing: every P@1 zero, a norm L that the
sweep did not decide (a tie, or the edge of the swept range), a table that reached few facts, a
fine-tuned model no better than guessing.

A summary table shows such a result as plainly as a real one; these sentences go beside it (in the
Markdown summaries, the report's tables and its landing page) so that a reader does not quote it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# The mark that starts a flag, in Markdown and HTML alike.
FLAG = "Flag:"
# What each family of flags checks, for the line that says none was raised.
LAMA_CHECKS = "every P@1 zero, few facts injected"
SWEEP_CHECKS = "P@1 zero at every L, chosen L a tie or at the edge of the swept range"
CHANCE_CHECKS = "accuracy at chance: 1/N for N-way episodes, 1/classes for Wiki80"
# A variant that injects the table measures the table on the facts whose subject got a vector; with
# fewer than this many (or this share of the facts), its P@1 says little about the table.
FEW_INJECTED = 100
FEW_INJECTED_SHARE = 0.1
# Accuracy within this many binomial standard errors of chance is "at chance".
CHANCE_SE = 2.0


def lama_flags(results: Sequence[dict]) -> list[str]:
    """Flags for LAMA runs (one dict per model and variant, as :mod:`pelt.tasks.lama.run` writes them)."""
    flags = []
    for r in results:
        name = f"LAMA `{r['model']}` {r['variant']}"
        scores = [r["macro_p_at_1"], *((b.get("macro_p_at_1") or 0.0) for b in (r.get("benchmarks") or {}).values())]
        facts = r["counts"]["facts_evaluated"]
        if facts and not any(scores):
            flags.append(f"{name}: every P@1 is 0 over {facts} facts; the model predicts none of the objects.")
        if r["variant"] != "baseline":
            injected = r["counts"]["injected"]
            if injected < FEW_INJECTED or injected < FEW_INJECTED_SHARE * facts:
                flags.append(
                    f"{name}: only {injected} of {facts} facts had a subject vector to inject; "
                    "its difference from the baseline says little about the table."
                )
    return flags


def norm_sweep_flags(sweeps: Sequence[dict]) -> list[str]:
    """Flags for norm sweeps: the chosen L tied with other L values (picked by the tie rule, not by
    the probe), the chosen L the smallest or largest swept (the maximum may lie outside the range:
    the best L follows the scale of the model's token embeddings, about 1 for the demo model and
    larger for a hub model), or every P@1 of the sweep 0."""
    flags = []
    for s in sweeps:
        name = f"norm sweep `{s['model']}`"
        by_norm = {r["norm"]: r["macro_p_at_1"] for r in s["norms"]}
        if not any(by_norm.values()):
            flags.append(f"{name}: P@1 is 0 at every L; the chosen L = {s['chosen_norm']:g} is arbitrary.")
            continue
        best = by_norm[s["chosen_norm"]]
        tied = sorted(n for n, p in by_norm.items() if math.isclose(p, best, rel_tol=0.0, abs_tol=1e-12))
        if len(tied) > 1:
            flags.append(
                f"{name}: the chosen L = {s['chosen_norm']:g} ties with L = "
                f"{', '.join(f'{n:g}' for n in tied if n != s['chosen_norm'])} (P@1 {100 * best:.1f} %); "
                "the tie rule picked it, not the probe."
            )
        if len(by_norm) > 2 and s["chosen_norm"] in (min(by_norm), max(by_norm)):
            side = "smallest" if s["chosen_norm"] == min(by_norm) else "largest"
            flags.append(
                f"{name}: the chosen L = {s['chosen_norm']:g} is the {side} L swept; the best L may lie "
                "outside the range: widen `norms`."
            )
    return flags


def chance_level(benchmark: str, setting: str, classes: int | None) -> float | None:
    """Accuracy of guessing: 1/N for FewRel N-way episodes, 1/classes for a classifier; None if unknown."""
    if benchmark.startswith("fewrel"):
        return 1.0 / int(setting.split("-")[0])
    return 1.0 / classes if classes else None


def chance_flags(rows: Sequence[dict], benchmark_names: dict[str, str]) -> list[str]:
    """Flags for fine-tuning rows (:func:`pelt.report.finetuning_summary.aggregate_seeds`) whose mean accuracy is
    within :data:`CHANCE_SE` binomial standard errors of chance on their ``n`` test items."""
    flags = []
    for r in rows:
        chance = chance_level(r["benchmark"], r["setting"], r.get("classes"))
        name = f"{benchmark_names.get(r['benchmark'], r['benchmark'])} {r['setting']} `{r['model']}` "
        name += r["variant"]
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
