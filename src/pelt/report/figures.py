"""The report's figures, drawn with matplotlib (Agg, SVG with text kept as text, so that a figure is
searchable and its numbers can be checked in the built report): those of every run (linking
coverage, entity frequencies, stage times), the one every fine-tuning kind's summary draws
(:func:`plot_finetuning`), and the style a kind's own figures share (``pelt.tasks.<kind>.figures``,
named by its registry entry's ``figures``): their width, label size, colours and helpers, and
``plt``, pyplot on the Agg backend.

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

from pelt.registry import benchmark_label  # noqa: E402
from pelt.report.flags import chance_level  # noqa: E402
from pelt.report.stages import stage_times  # noqa: E402

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


def save_figure(fig: plt.Figure, path: str | os.PathLike[str]) -> None:
    """The figure as SVG (no date: the same numbers give the same file), closed."""
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)
    logger.info("figure written to %s", path)


def y_top(values: Sequence[float], cap: float | None = 110.0) -> float:
    """Upper y limit: room above the largest value for its label, never far past 100 %."""
    top = max([v for v in values if v is not None and np.isfinite(v)], default=1.0) * 1.18 or 1.0
    return min(top, cap) if cap else top


def as_percent(value: float | None) -> float | None:
    """A fraction as a figure's axes show it, in percent; None stays None (no bar)."""
    return None if value is None else 100 * value


def bar_labels(ax: plt.Axes, bars, values: Sequence[float | None], rotation: float = 0) -> None:
    """Each bar's value above it, one decimal; none on a bar without a value."""
    labels = ["" if v is None else f"{v:.1f}" for v in values]
    ax.bar_label(bars, labels=labels, padding=2, fontsize=LABEL, rotation=rotation)


def plot_finetuning(summary_csv: str | os.PathLike[str], out_svg: str | os.PathLike[str]) -> None:
    """FewRel or Wiki80 accuracy (%) per setting, one panel per model (so that a panel keeps the report's
    width whatever the number of models), one bar per variant in its colour with the standard deviation
    over seeds as error bars, the paper's mean ± std as black markers and chance as a red tick. Reads the
    summary CSV (:func:`pelt.report.finetuning_summary.write_seed_summary`, each fine-tuning kind's)."""
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
    benchmarks = " / ".join(dict.fromkeys(benchmark_label(b) for b, _ in columns))
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
            bar_labels(ax, bars, means, rotation=90 if narrow else 0)
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
        ax.set_xticks(x, [f"{benchmark_label(b)}\n{s}" for b, s in columns])
        ax.set_ylabel("accuracy (%)")
        ax.set_title(f"{model}: {benchmarks} accuracy by setting, read at {readouts}")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=LABEL)
    axes[0][0].set_ylim(0, y_top(tops))
    save_figure(fig, out_svg)


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
        n = {k: int(v or 0) for k, v in row.items() if k not in ("domain", "model", "language")}
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
    save_figure(fig, out_svg)


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
    save_figure(fig, out_svg)


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
    save_figure(fig, out_svg)
