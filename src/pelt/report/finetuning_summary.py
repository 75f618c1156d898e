"""What the fine-tuning kinds' summaries share (each kind's writer is in its package,
``pelt.tasks.<kind>.summary``, named by its registry entry): accuracy over seeds in the layout of
the paper's Tables 2 and 3, beside its numbers, split by head entity and by relation.

The per-run JSON files (``pelt.tasks.<kind>.run``) are the source of truth; a summary only selects,
aggregates over seeds and lays out their numbers, so it can be rebuilt at any time from
``results/eval``.
"""

from __future__ import annotations

import csv
import logging
import os
import re
import statistics
from collections import Counter
from collections.abc import Callable, Sequence

from pelt.eval.buckets import HEAD_GROUPS, RARE_BELOW
from pelt.eval.settings import READ_AT, EncoderSettings
from pelt.registry import benchmark_label
from pelt.report.flags import CHANCE_CHECKS, chance_flags
from pelt.report.html import flag_lines
from pelt.report.paper import PAPER_CITATION, paper_result
from pelt.report.tables import (
    CONTROL_VARIANTS,
    CONTROLS_NOTE,
    VARIANT_ORDER,
    mean_std,
    percent,
    write_summary,
)

logger = logging.getLogger(__name__)
HEAD_COLUMNS = HEAD_GROUPS[:2]  # rare, frequent: the summary's split (unresolved heads stay in the result files)


def setting_order(setting: str) -> tuple[tuple[int, ...], str]:
    """Where a setting stands among its benchmark's: by the numbers it holds, in order (FewRel's
    N-way K-shot 5-1, 5-5, 10-1, 10-5; Wiki80's 1%, 10%, 100%; any kind's alike), then by name."""
    return tuple(int(number) for number in re.findall(r"\d+", setting)), setting


def readout_of(result: dict) -> str:
    """Where a run read its entities (``read_at``; a result older than that record was read at the markers)."""
    return (result.get("hyperparameters") or {}).get("read_at", EncoderSettings.read_at)


def aggregate_seeds(results: Sequence[dict], benchmark_of: Callable[[dict], str]) -> list[dict]:
    """Mean and sample standard deviation of accuracy over seeds, per (benchmark, model, variant, setting,
    readout).

    A seed appearing twice in a group is an error (a run counted twice would shrink the std).
    """
    groups: dict[tuple, list[dict]] = {}
    for r in results:
        groups.setdefault((benchmark_of(r), r["model"], r["variant"], r["setting"], readout_of(r)), []).append(r)
    rows = []
    for (benchmark, model, variant, setting, read_at), runs in groups.items():
        seeds = [r["seed"] for r in runs]
        if len(set(seeds)) != len(seeds):
            raise ValueError(
                f"two {benchmark} results for model {model!r}, variant {variant!r}, "
                f"setting {setting!r} with the same seed: {sorted(seeds)}"
            )
        accuracies = [r["accuracy"] for r in runs]
        by_head = {
            group: statistics.fmean(heads)
            for group in HEAD_COLUMNS
            if (heads := [r["by_head"][group]["accuracy"] for r in runs if (r.get("by_head") or {}).get(group)])
            and len(heads) == len(runs)
        }
        classes = {r.get("classes") for r in runs}
        paper = paper_result(benchmark, model, variant, setting)
        rows.append(
            {
                "benchmark": benchmark,
                "model": model,
                "variant": variant,
                "setting": setting,
                "read_at": read_at,
                "n_seeds": len(runs),
                "seeds": " ".join(str(s) for s in sorted(seeds)),
                "accuracy_mean": statistics.fmean(accuracies),
                "accuracy_std": statistics.stdev(accuracies) if len(runs) > 1 else None,
                "n": runs[0]["n"],
                "classes": classes.pop() if len(classes) == 1 else None,
                "paper_mean": paper[0] if paper else None,
                "paper_std": paper[1] if paper else None,
                **{f"{group}_heads_mean": by_head.get(group) for group in HEAD_COLUMNS},
            }
        )
    rows.sort(
        key=lambda r: (
            r["benchmark"],
            r["model"],
            VARIANT_ORDER.get(r["variant"], 2),
            r["variant"],
            setting_order(r["setting"]),
        )
    )
    return rows


def write_seed_summary(
    results: Sequence[dict],
    benchmark_of: Callable[[dict], str],
    title: str,
    out_csv: str | os.PathLike[str],
    out_md: str | os.PathLike[str],
    out_html: str | os.PathLike[str] | None = None,
) -> None:
    """A fine-tuning kind's summary of its per-seed ``results`` (``benchmark_of`` each one's
    benchmark): CSV (one row per group, :func:`aggregate_seeds`, fractions) and Markdown in the
    paper's layout, under ``title``: one row per model and variant, one column per benchmark and
    setting, the paper's row under ours where it reports the same setting; then by head entity and
    by relation (:func:`_relation_lines`)."""
    rows = aggregate_seeds(results, benchmark_of)
    header = [
        "benchmark",
        "model",
        "variant",
        "setting",
        "read_at",
        "n_seeds",
        "seeds",
        "accuracy_mean",
        "accuracy_std",
        "n",
        "classes",
        "paper_mean",
        "paper_std",
        *(f"{group}_heads_mean" for group in HEAD_COLUMNS),
    ]
    with open(out_csv, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    columns = sorted(
        {(r["benchmark"], r["setting"]) for r in rows},
        key=lambda c: (c[0], setting_order(c[1])),
    )
    readouts = list(dict.fromkeys(r["read_at"] for r in rows))
    cells: dict[tuple[str, str], dict[tuple[str, str], dict]] = {}
    for r in rows:  # a variant's row names its readout when the runs read at more than one place
        variant = r["variant"] if len(readouts) == 1 else f"{r['variant']}, read_at {r['read_at']}"
        cells.setdefault((r["model"], variant), {})[(r["benchmark"], r["setting"])] = r
    md_header = ["Model", "Variant"] + [f"{benchmark_label(b)} {s}" for b, s in columns]
    lines = ["| " + " | ".join(md_header) + " |", "|" + "---|" * len(md_header)]
    for (model, variant), by_column in cells.items():
        ours = [
            mean_std(by_column[c]["accuracy_mean"], by_column[c]["accuracy_std"]) if c in by_column else "–"
            for c in columns
        ]
        lines.append("| " + " | ".join([f"`{model}`", variant, *ours]) + " |")
        paper = [
            mean_std(by_column[c]["paper_mean"], by_column[c]["paper_std"]) if c in by_column else "–" for c in columns
        ]
        if any(cell != "–" for cell in paper):
            lines.append("| " + " | ".join([PAPER_CITATION, variant, *paper]) + " |")
    heading = " / ".join(dict.fromkeys(benchmark_label(r["benchmark"]) for r in rows))
    extra = _head_lines(rows, columns, cells)
    if any(r["variant"] in CONTROL_VARIANTS for r in rows):
        extra += ["", CONTROLS_NOTE]
    read = "; ".join(f"`read_at: {readout}`, {READ_AT.get(readout, readout)}" for readout in readouts)
    write_summary(
        [
            title,
            f"Entities read {read}.",
            "",
            *lines,
            *extra,
            *_relation_lines(results, benchmark_of),
            "",
            *flag_lines(chance_flags(rows), CHANCE_CHECKS),
        ],
        out_md,
        out_html,
        heading,
    )
    logger.info("summary of %d groups written to %s and %s", len(rows), out_csv, out_md)


def _head_lines(rows: list[dict], columns: list[tuple[str, str]], cells: dict) -> list[str]:
    """The same table split by the head entity: accuracy on rare heads / on frequent heads, where
    the runs were split (they read a table)."""
    if not any(r["rare_heads_mean"] is not None or r["frequent_heads_mean"] is not None for r in rows):
        return []
    header = ["Model", "Variant"] + [f"{benchmark_label(b)} {s}" for b, s in columns]
    lines = [
        "",
        f"By head entity, rare / frequent (rare: fewer than {RARE_BELOW} corpus mentions, the paper's first "
        "frequency bucket), mean over seeds:",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    for (model, variant), by_column in cells.items():
        split = [
            f"{percent(by_column[c]['rare_heads_mean'])} / {percent(by_column[c]['frequent_heads_mean'])}"
            if c in by_column
            else "–"
            for c in columns
        ]
        lines.append("| " + " | ".join([f"`{model}`", variant, *split]) + " |")
    return lines


def _relation_lines(results: Sequence[dict], benchmark_of: Callable[[dict], str]) -> list[str]:
    """Accuracy per relation, mean over seeds, and the relation its errors went to most (mean share
    of its queries): the relations only entity knowledge separates show here (the demo's born in
    and died in a city, which only the head's own fact tells apart)."""
    cells: dict[tuple[str, str, str], dict[tuple[str, str], list[dict]]] = {}
    for r in results:
        for relation, scored in (r.get("by_relation") or {}).items():
            key = (benchmark_of(r), r["setting"], relation)
            cells.setdefault(key, {}).setdefault((r["model"], r["variant"]), []).append(scored)
    if not cells:
        return []
    columns = sorted(
        {c for runs in cells.values() for c in runs}, key=lambda c: (c[0], VARIANT_ORDER.get(c[1], 2), c[1])
    )
    header = ["Benchmark", "Setting", "Relation", *(f"`{model}` {variant}" for model, variant in columns)]
    lines = [
        "",
        "By relation, mean over seeds: accuracy and, in brackets, the relation its errors went to most "
        "(share of its queries):",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    order = sorted(cells, key=lambda k: (k[0], setting_order(k[1]), k[2]))
    for benchmark, setting, relation in order:
        row = [benchmark_label(benchmark), setting, relation]
        for column in columns:
            runs = cells[benchmark, setting, relation].get(column)
            if not runs:
                row.append("–")
                continue
            errors: Counter[str] = Counter()
            for scored in runs:
                errors.update(scored["errors"])
            top = errors.most_common(1)
            cell = percent(statistics.fmean(scored["accuracy"] for scored in runs))
            row.append(cell + (f" (→ {top[0][0]} {percent(top[0][1] / len(runs))})" if top else ""))
        lines.append("| " + " | ".join(row) + " |")
    return lines
