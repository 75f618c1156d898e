"""LAMA's report figures (its registry entry's ``figures``): P@1 by the subject's frequency, and the
norm sweep; drawn in the report's style (:mod:`pelt.report.figures`)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from pelt.report.figures import (
    COLOURS,
    LABEL,
    VARIANT_COLOURS,
    WIDTH,
    as_percent,
    plt,
    save_figure,
    y_top,
)
from pelt.report.paper import PAPER_NORMS, PAPER_RESULTS, paper_model
from pelt.report.tables import read_result
from pelt.tasks.lama.summary import fact_p_at_1


def plot_lama_buckets(result_jsons: Sequence[str | os.PathLike[str]], out_svg: str | os.PathLike[str]) -> None:
    """LAMA P@1 (%) on T-REx facts by the subject's mention frequency, one bar per variant, one panel
    per model: the paper's Table 5 as a figure (its numbers as markers where it reports the model).
    A bar is P@1 per fact, as the authors' code counts it; a short black line on it marks the mean
    over the bucket's relations (ours). Buckets without facts are left out; each label gives its
    number of facts."""
    results = [read_result(path) for path in result_jsons]
    bucketed = [r for r in results if r.get("buckets")]
    if not bucketed:
        raise ValueError("no LAMA result has frequency buckets (they need the entity table)")
    models = sorted({str(r["model"]) for r in bucketed})
    # One row per model, so that a panel keeps the report's width whatever the number of models.
    fig, axes = plt.subplots(
        len(models), 1, figsize=(WIDTH, 4.5 * len(models)), layout="constrained", squeeze=False, sharey=True
    )
    tops = []
    for ax, model in zip(axes[:, 0], models):
        runs = [r for r in bucketed if str(r["model"]) == model]
        runs.sort(key=lambda r: list(VARIANT_COLOURS).index(r["variant"]) if r["variant"] in VARIANT_COLOURS else 9)
        buckets = [b for b in runs[0]["buckets"] if runs[0]["buckets"][b]["facts"]]
        x = np.arange(len(buckets))
        width = 0.8 / len(runs)
        for i, r in enumerate(runs):
            values = [as_percent(fact_p_at_1(r["buckets"][b])) for b in buckets]
            macros = [as_percent(r["buckets"][b].get("macro_p_at_1")) for b in buckets]
            tops += [v for v in values + macros if v is not None]
            positions = x + (i - (len(runs) - 1) / 2) * width
            ax.bar(
                positions,
                [0 if v is None else v for v in values],
                width,
                label=r["variant"],
                color=VARIANT_COLOURS.get(r["variant"], COLOURS[i % len(COLOURS)]),
            )
            for p, v, m in zip(positions, values, macros):  # the value above its bar and its tick
                if v is not None:
                    top = max(v, m if m is not None else v)
                    ax.annotate(
                        f"{v:.1f}",
                        (p, top),
                        xytext=(0, 3),
                        textcoords="offset points",
                        ha="center",
                        va="bottom",
                        fontsize=LABEL,
                    )
            drawn = [(p, m) for p, m in zip(positions, macros) if m is not None]
            if drawn:
                ax.plot(
                    *zip(*drawn),
                    "_",
                    color="black",
                    markersize=520 * width / len(buckets),  # about the bar's width: a panel is ~560 pt wide
                    markeredgewidth=2,
                    label="macro over relations (ours)" if i == 0 else None,
                    linestyle="none",
                )
        paper = PAPER_RESULTS["lama_frequency"]
        for variant, marker in (("baseline", "o"), ("pelt", "D")):
            scores = paper.get((paper_model(model) or "", variant))
            if scores:
                points = [(j, scores[b][0]) for j, b in enumerate(buckets) if b in scores]
                tops += [p for _, p in points]
                ax.plot(*zip(*points), marker, color="black", label=f"paper {variant}", linestyle="none")
        ax.set_xticks(x, [f"{b}\nn={runs[0]['buckets'][b]['facts']}" for b in buckets])
        ax.set_xlabel("subject's mentions in the corpus (T-REx facts)")
        ax.set_ylabel("P@1 per fact (%), as the paper")
        ax.set_title(f"{model}: LAMA T-REx P@1 by subject frequency")
    axes[0][0].set_ylim(0, y_top(tops))
    axes[0][0].legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=LABEL)
    save_figure(fig, out_svg)


def plot_norm_sweep(sweep_jsons: Sequence[str | os.PathLike[str]], out_svg: str | os.PathLike[str]) -> None:
    """LAMA macro P@1 of the pelt variant against the norm L, per model: the baseline as a dashed line,
    the chosen L as a star (with every L that ties with it), the paper's L as a dotted line."""
    fig, ax = plt.subplots(figsize=(WIDTH, 4.5), layout="constrained")
    all_norms: set[float] = set()
    for i, path in enumerate(sweep_jsons):
        sweep = read_result(path)
        colour = COLOURS[i % len(COLOURS)]
        name = sweep["model"]
        norms = [r["norm"] for r in sweep["norms"]]
        all_norms.update(norms)
        scores = [100 * r["macro_p_at_1"] for r in sweep["norms"]]
        ax.plot(norms, scores, "-o", color=colour, label=f"{name} pelt", markersize=4)
        ax.axhline(100 * sweep["baseline"]["macro_p_at_1"], color=colour, linestyle="--", label=f"{name} baseline")
        best = scores[norms.index(sweep["chosen_norm"])]
        tied = [n for n, s in zip(norms, scores) if s == best]
        ax.plot(tied, [best] * len(tied), "*", color=colour, markersize=14, markeredgecolor="black")
        tie = f", a tie of {len(tied)}" if len(tied) > 1 else ""
        ax.annotate(
            f"chosen L = {sweep['chosen_norm']:g}{tie}\n({best:.1f} %)",
            (sweep["chosen_norm"], best),
            textcoords="offset points",
            xytext=(8, 8),
            fontsize=LABEL,
        )
        paper_norm = PAPER_NORMS.get(paper_model(sweep["model"]) or "")
        if paper_norm is not None:
            ax.axvline(paper_norm, color=colour, linestyle=":", label=f"paper's L for {name}")
    if max(all_norms) > 10 * min(all_norms):  # a grid in factors (0.25 .. 16) reads evenly on a log axis
        ax.set_xscale("log")
        ax.minorticks_off()
    ax.set_xticks(sorted(all_norms), [f"{n:g}" for n in sorted(all_norms)])
    ax.margins(y=0.2)  # room above the best L for its label, which autoscaling does not count
    ax.set_xlabel("norm L of the injected vectors")
    ax.set_ylabel("LAMA macro P@1 (%), all facts")
    ax.set_title("Norm sweep: P@1 with the table at each L")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=LABEL)
    save_figure(fig, out_svg)
