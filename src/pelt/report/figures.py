"""The report's figures, drawn with matplotlib (Agg, SVG with text kept as text, so that a figure is
searchable and its numbers can be checked in the built report).

Every figure sizes its axes to its data (a 14 % bar is not a sliver on a 0-100 axis), labels its bars
with their values, and is laid out by matplotlib's constrained layout so that no label is clipped.
The paper's numbers, where it reports the same setting, are drawn beside ours as black markers.
"""

from __future__ import annotations

import csv
import logging
import os
from collections.abc import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from pelt.report.finetuning_summary import BENCHMARK_NAMES  # noqa: E402
from pelt.report.flags import chance_level  # noqa: E402
from pelt.report.lama_summary import fact_p_at_1  # noqa: E402
from pelt.report.paper import PAPER_NORMS, PAPER_RESULTS, paper_model  # noqa: E402
from pelt.report.stages import stage_times  # noqa: E402
from pelt.report.tables import read_result  # noqa: E402

logger = logging.getLogger(__name__)
matplotlib.rcParams.update({"svg.fonttype": "none", "font.size": 12, "svg.hashsalt": "pelt"})
# Every figure is WIDTH inches wide: Snakemake's report shows an image at its own size, shrunk to fit
# its content panel (1,000 px in a 1,280 px window, less in a smaller one), so a figure of 10 in
# (960 px) is drawn 1:1 there and its smallest text, LABEL pt (bar values, legends), is 13 px.
# Wider figures were shrunk: at 14 in, 8 pt labels showed at 8 px.
WIDTH = 10.0
LABEL = 10
# Colour-blind-safe palette (Okabe & Ito), one colour per variant or series.
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
VARIANT_COLOURS = {
    "baseline": "#999999",
    "pelt": "#0072B2",
    "permuted": "#E69F00",
    "random": "#CC79A7",
    "swapped": "#009E73",
}
# The paper's subject-frequency buckets (Table 5): drawn as lines on the frequency distribution.
BUCKET_EDGES = (10, 50, 100)


def _save(fig: plt.Figure, path: str | os.PathLike[str]) -> None:
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)
    logger.info("figure written to %s", path)


def _top(values: Sequence[float], cap: float | None = 110.0) -> float:
    """Upper y limit: room above the largest value for its label, never far past 100 %."""
    top = max([v for v in values if v is not None and np.isfinite(v)], default=1.0) * 1.18 or 1.0
    return min(top, cap) if cap else top


def _percent(value: float | None) -> float | None:
    return None if value is None else 100 * value


def _bar_labels(ax: plt.Axes, bars, values: Sequence[float | None], rotation: float = 0) -> None:
    labels = ["" if v is None else f"{v:.1f}" for v in values]
    ax.bar_label(bars, labels=labels, padding=2, fontsize=LABEL, rotation=rotation)


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
            values = [_percent(fact_p_at_1(r["buckets"][b])) for b in buckets]
            macros = [_percent(r["buckets"][b].get("macro_p_at_1")) for b in buckets]
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
    axes[0][0].set_ylim(0, _top(tops))
    axes[0][0].legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=LABEL)
    _save(fig, out_svg)


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
    _save(fig, out_svg)


def plot_finetuning(summary_csv: str | os.PathLike[str], out_svg: str | os.PathLike[str]) -> None:
    """FewRel or Wiki80 accuracy (%) per setting, one panel per model (so that a panel keeps the report's
    width whatever the number of models), one bar per variant in its colour with the standard deviation
    over seeds as error bars, the paper's mean ± std as black markers and chance as a red tick. Reads the
    summary CSV (:func:`pelt.report.finetuning_summary.write_fewrel_summary` or ``write_wiki80_summary``)."""
    with open(summary_csv, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    if not rows:
        raise ValueError(f"{summary_csv}: no results")
    columns = list(dict.fromkeys((r["benchmark"], r["setting"]) for r in rows))
    models = list(dict.fromkeys(r["model"] for r in rows))
    fig, axes = plt.subplots(
        len(models), 1, figsize=(WIDTH, 4.5 * len(models)), layout="constrained", squeeze=False, sharey=True
    )
    x = np.arange(len(columns))
    tops = []
    benchmarks = " / ".join(dict.fromkeys(BENCHMARK_NAMES.get(b, b) for b, _ in columns))
    readouts = " and ".join(dict.fromkeys(r["read_at"] for r in rows))  # where the encoder read the entities

    def number(text: str) -> float | None:
        return float(text) * 100 if text not in ("", None) else None

    for ax, model in zip(axes[:, 0], models):
        variants = list(dict.fromkeys(r["variant"] for r in rows if r["model"] == model))
        width = 0.8 / len(variants)
        narrow = len(columns) * len(variants) > 16  # bars under ~0.35 in: a value across one would cover the next
        for i, variant in enumerate(variants):
            cells = {(r["benchmark"], r["setting"]): r for r in rows if (r["model"], r["variant"]) == (model, variant)}
            means = [number(cells[c]["accuracy_mean"]) if c in cells else None for c in columns]
            stds = [number(cells[c]["accuracy_std"]) if c in cells else None for c in columns]
            offset = x + (i - (len(variants) - 1) / 2) * width
            bars = ax.bar(
                offset,
                [m or 0 for m in means],
                width,
                yerr=[s or 0 for s in stds] if any(stds) else None,
                capsize=3,
                label=variant + (" (± std over seeds)" if any(stds) else ""),
                color=VARIANT_COLOURS.get(variant, COLOURS[i % len(COLOURS)]),  # a variant's colour in every figure
            )
            _bar_labels(ax, bars, means, rotation=90 if narrow else 0)
            tops += [(m or 0) + (s or 0) for m, s in zip(means, stds)]
            paper = [
                (number(cells[c]["paper_mean"]), number(cells[c]["paper_std"])) if c in cells else (None, None)
                for c in columns
            ]
            points = [(o, m, s or 0) for o, (m, s) in zip(offset, paper) if m is not None]
            if points:
                ox, om, os_ = zip(*points)
                ax.errorbar(ox, om, yerr=os_, fmt="D", color="black", markersize=4, label=f"paper {variant}")
                tops += list(om)
        for j, (benchmark, setting) in enumerate(columns):
            classes = next(
                (r.get("classes") for r in rows if (r["benchmark"], r["setting"]) == (benchmark, setting)), ""
            )
            chance = chance_level(benchmark, setting, int(classes) if classes else None)
            if chance is not None:
                ax.hlines(100 * chance, j - 0.45, j + 0.45, color="#D55E00", linestyle="--", linewidth=1)
        ax.plot([], [], "--", color="#D55E00", label="chance")
        ax.set_xticks(x, [f"{BENCHMARK_NAMES.get(b, b)}\n{s}" for b, s in columns])
        ax.set_ylabel("accuracy (%)")
        ax.set_title(f"{model}: {benchmarks} accuracy by setting, read at {readouts}")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=LABEL)
    axes[0][0].set_ylim(0, _top(tops))
    _save(fig, out_svg)


def plot_coverage(coverage_csv: str | os.PathLike[str], out_svg: str | os.PathLike[str]) -> None:
    """Task-entity names per domain and model, in one unit (names): how each was linked to the corpus
    and whether its entity got a vector. Both bars of a row add up to the names the tasks asked for."""
    with open(coverage_csv, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    methods = [k for k in rows[0] if k.startswith("found_by_")]
    fig, ax = plt.subplots(figsize=(WIDTH, 1.5 + 1.1 * len(rows)), layout="constrained")
    largest = max(int(row["wanted"] or 0) for row in rows) or 1
    labels = []
    colours = {"not found": "#BBBBBB"}  # one colour per series, whichever bar it is in
    for i, row in enumerate(rows):
        n = {k: int(v or 0) for k, v in row.items() if k not in ("domain", "model")}
        found = sum(n[m] for m in methods)
        segments = [
            [(m.removeprefix("found_by_").replace("_", " "), n[m]) for m in methods] + [("not found", n["not_found"])],
            [
                ("with a vector", n["names_in_table"]),
                ("found, no sentence", found - n["names_in_table"]),
                ("not found", n["not_found"]),
            ],
        ]
        for j, segs in enumerate(segments):
            y, left = 2 * i + j, 0
            for label, value in segs:
                colour = colours.setdefault(label, "#BBBBBB" if label == "not found" else COLOURS[len(colours)])
                bar = ax.barh(y, value, left=left, color=colour, label=label if i == 0 else None)
                if value >= 0.06 * largest:  # a number on a sliver would cover its neighbours or the axis
                    ax.bar_label(bar, labels=[str(value)], label_type="center", fontsize=LABEL)
                left += value
            ax.annotate(f"{left:,}", (left, y), xytext=(4, 0), textcoords="offset points", va="center", fontsize=LABEL)
        labels += [f"{row['domain']} / {row['model']}: linked by", f"{row['domain']} / {row['model']}: vector"]
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlim(0, 1.12 * largest)  # room for each row's total
    ax.invert_yaxis()
    ax.set_xlabel("task-entity names")
    ax.set_title("Task entities: how their names were linked, and how many got a vector")
    handles, names = ax.get_legend_handles_labels()
    unique = dict(zip(names, handles))
    ax.legend(unique.values(), unique.keys(), loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=LABEL)
    _save(fig, out_svg)


def plot_frequencies(frequencies: Mapping[str, str | os.PathLike[str]], out_svg: str | os.PathLike[str]) -> None:
    """How many entities have how many mentions in the corpus (before sampling), per domain, on a log
    scale, with the paper's frequency buckets (10, 50, 100) marked."""
    fig, ax = plt.subplots(figsize=(WIDTH, 4.5), layout="constrained")
    largest = 1
    for i, (domain, path) in enumerate(sorted(frequencies.items())):
        counts = np.asarray(pq.read_table(path, columns=["frequency"]).column("frequency").to_numpy())
        if not len(counts):
            continue
        largest = max(largest, int(counts.max()))
        # Whole-number bins, one per value where values are small, wider (evenly on the log axis) above.
        bins = np.unique(np.floor(np.geomspace(1, counts.max() + 1, 30))) - 0.5
        ax.hist(
            counts,
            bins=bins,
            histtype="step",
            linewidth=1.5,
            color=COLOURS[i % len(COLOURS)],
            label=f"{domain}: {len(counts)} entities, median {np.median(counts):g} mentions",
        )
    for edge in BUCKET_EDGES:
        if edge <= largest:
            ax.axvline(edge - 0.5, color="#999999", linestyle=":", linewidth=1)  # between 9 and 10 mentions ...
    ax.set_xscale("log")
    ticks = [t for t in (m * 10**e for e in range(10) for m in (1, 2, 5)) if t <= largest * 1.5]
    ax.set_xticks(ticks, [f"{t:,}" for t in ticks])
    ax.set_xlim(0.5, largest + 1)
    ax.set_xlabel("mentions of the entity in the corpus (log scale; dotted: the paper's buckets)")
    ax.set_ylabel("entities per bin")
    ax.set_title("Entity frequency distribution")
    ax.legend(fontsize=LABEL)
    _save(fig, out_svg)


def plot_stage_times(
    logs_dir: str | os.PathLike[str],
    out_svg: str | os.PathLike[str],
    metadata_dir: str | os.PathLike[str] | None = None,
) -> None:
    """Wall time per stage, summed over its jobs, longest first (:func:`pelt.report.stages.stage_times`:
    Snakemake's record of each job's start and end, else the job's log), in seconds when no stage
    took two minutes."""
    times = stage_times(logs_dir, metadata_dir)
    stages = sorted(times, key=lambda s: times[s][0])
    fig, ax = plt.subplots(figsize=(WIDTH, 1.2 + 0.4 * len(stages)), layout="constrained")
    longest = max((times[s][0] for s in stages), default=0.0)
    unit, per = ("s", 1.0) if longest < 120 else ("min", 60.0)
    values = [times[s][0] / per for s in stages]
    bars = ax.barh(range(len(stages)), values, color=COLOURS[0])
    labels = [(f"{t:.0f} s" if t < 60 else f"{t / 60:.1f} min") + f", {n} job(s)" for t, n in map(times.get, stages)]
    ax.bar_label(bars, labels=labels, padding=3, fontsize=LABEL)
    ax.set_yticks(range(len(stages)), stages)
    ax.set_xlim(0, max(values, default=1) * 1.35 or 1)
    ax.set_xlabel(f"{'seconds' if unit == 's' else 'minutes'}, summed over the stage's jobs")
    ax.set_title("Time per stage")
    _save(fig, out_svg)


def plot_mlama(summary_csv: str | os.PathLike[str], out_svg: str | os.PathLike[str]) -> None:
    """mLAMA macro P@1 (%) per language, one bar per model and variant (baseline, pelt, controls),
    each language's number of facts under its name. Reads the summary CSV
    (:func:`pelt.report.mlama_summary.write_mlama_summary`)."""
    with open(summary_csv, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    if not rows:
        raise ValueError(f"{summary_csv}: no results")
    languages = list(dict.fromkeys(r["language"] for r in rows))
    series = list(dict.fromkeys((r["model"], r["variant"]) for r in rows))
    cells = {(r["language"], r["model"], r["variant"]): r for r in rows}
    facts = {r["language"]: r["facts"] for r in rows}
    fig, ax = plt.subplots(figsize=(WIDTH, 4.5), layout="constrained")
    x = np.arange(len(languages))
    width = 0.8 / len(series)
    narrow = len(languages) * len(series) > 16  # a value across a bar would cover the next: upright
    tops = []
    for i, (model, variant) in enumerate(series):
        values = [
            _percent(float(cell["macro_p_at_1"]))
            if (cell := cells.get((lang, model, variant))) and cell["macro_p_at_1"]
            else None
            for lang in languages
        ]
        tops += [v for v in values if v is not None]
        colour = (
            VARIANT_COLOURS.get(variant, COLOURS[i % len(COLOURS)])
            if len({m for m, _ in series}) == 1
            else COLOURS[i % len(COLOURS)]
        )
        bars = ax.bar(
            x + (i - (len(series) - 1) / 2) * width,
            [v or 0 for v in values],
            width,
            label=f"{model} {variant}",
            color=colour,
        )
        _bar_labels(ax, bars, values, rotation=90 if narrow else 0)
    ax.set_xticks(x, [f"{lang}\nn={facts[lang]}" for lang in languages])
    ax.set_ylabel("P@1 macro over relations (%)")
    ax.set_ylim(0, _top(tops))
    ax.set_title("mLAMA: P@1 per language, without and with the table")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=LABEL)
    _save(fig, out_svg)
