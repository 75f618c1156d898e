"""mLAMA's report figure (its registry entry's ``figures``): P@1 per language, drawn in the report's
style (:mod:`pelt.report.figures`)."""

from __future__ import annotations

import csv
import os

import numpy as np

from pelt.report.figures import (
    COLOURS,
    LABEL,
    VARIANT_COLOURS,
    WIDTH,
    as_percent,
    bar_labels,
    plt,
    save_figure,
    y_top,
)


def plot_mlama(summary_csv: str | os.PathLike[str], out_svg: str | os.PathLike[str]) -> None:
    """mLAMA macro P@1 (%) per language and table, one bar per model and variant (baseline, pelt,
    controls), under each the language, the table's domain and languages, and the number of facts.
    Reads the summary CSV (:func:`pelt.tasks.mlama.summary.write_mlama_summary`)."""
    with open(summary_csv, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    if not rows:
        raise ValueError(f"{summary_csv}: no results")
    probes = list(dict.fromkeys((r["language"], r["table"]) for r in rows))  # a language with each of its tables
    series = list(dict.fromkeys((r["model"], r["variant"]) for r in rows))
    cells = {(r["language"], r["table"], r["model"], r["variant"]): r for r in rows}
    facts = {(r["language"], r["table"]): r["facts"] for r in rows}
    tables = {(r["language"], r["table"]): r["table_languages"] for r in rows}
    fig, ax = plt.subplots(figsize=(WIDTH, 4.5), layout="constrained")
    x = np.arange(len(probes))
    width = 0.8 / len(series)
    narrow = len(probes) * len(series) > 16  # a value across a bar would cover the next: upright
    tops = []
    for i, (model, variant) in enumerate(series):
        values = [
            as_percent(float(cell["macro_p_at_1"]))
            if (cell := cells.get((*probe, model, variant))) and cell["macro_p_at_1"]
            else None
            for probe in probes
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
        bar_labels(ax, bars, values, rotation=90 if narrow else 0)
    ax.set_xticks(x, [f"{lang}\n{table} ({tables[lang, table]})\nn={facts[lang, table]}" for lang, table in probes])
    ax.set_ylabel("P@1 macro over relations (%)")
    ax.set_ylim(0, y_top(tops))
    ax.set_title("mLAMA: P@1 per language, without and with the table")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=LABEL)
    save_figure(fig, out_svg)
