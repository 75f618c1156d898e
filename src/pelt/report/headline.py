"""The report's landing page: per model, each benchmark's headline number without and with the
table beside the paper's, what each comparison means, and every flag raised on the results.

The page is made of parts: that of the kind that leads it (LAMA's: its registry entry's
``headline_part``, from the results its ``headline`` names and the norm sweeps), then the
fine-tuning kinds' (:func:`finetuning_part`: every kind fine-tuned per setting and seed, each
benchmark named and explained by its kind's entry).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pelt.eval.settings import EncoderSettings
from pelt.registry import KINDS, benchmark_label, resolve
from pelt.report.finetuning_summary import aggregate_seeds
from pelt.report.flags import CHANCE_CHECKS, chance_flags
from pelt.report.html import flag_lines, markdown_html, write_page
from pelt.report.outcome import outcome_markdown
from pelt.report.paper import PAPER_CITATION
from pelt.report.tables import mean_std, percent, read_result

# The two variants the landing page compares: without and with the table.
VARIANTS = ("baseline", "pelt")
# A benchmark's row: the sentence on what its comparison means (None: none), its label, and its
# cells (:func:`headline_cells`).
Row = tuple[str | None, str, list[str]]


@dataclass(frozen=True)
class HeadlinePart:
    """A part of the landing page: each model's rows, the flags raised on its results, and what
    those flags check (said where none was raised)."""

    rows: dict[str, list[Row]]
    flags: list[str]
    checks: str


def write_headline(
    lead_jsons: Sequence[str | os.PathLike[str]],
    sweep_jsons: Sequence[str | os.PathLike[str]],
    finetuning_jsons: Sequence[str | os.PathLike[str]],
    out_html: str | os.PathLike[str],
    outcome: Sequence[str] = (),
) -> list[str]:
    """The report's landing page: per model, each benchmark's number without and with the table, the
    difference, the paper's same three numbers where it reports the model, a sentence on what each
    comparison means, and every flag of the results (returned too); then the run's tables and each
    entity list's found and not found (``outcome``: :func:`pelt.report.outcome.outcome_lines`). A run
    that evaluates nothing (an entity list alone) has a landing page of that last part only."""
    lead, sweeps, finetuning = (
        [read_result(path) for path in paths] for paths in (lead_jsons, sweep_jsons, finetuning_jsons)
    )
    parts = [resolve(kind.headline_part)(lead, sweeps) for kind in KINDS.values() if kind.headline_part and lead]
    if finetuning:
        parts.append(finetuning_part(finetuning))
    lines = (
        [
            "Each benchmark without (`baseline`) and with (`pelt`) the entity table, in %; Δ = pelt - baseline in "
            f"points. Fine-tuning: mean ± std over seeds. The {PAPER_CITATION}'s numbers where it reports the model."
        ]
        if parts
        else ["No task of this run evaluates the tables: they are built for the entities it lists."]
    )
    used = []
    for model in sorted({model for part in parts for model in part.rows}):
        rows = [row for part in parts for row in part.rows.get(model, [])]
        used += [meaning for meaning, _, _ in rows if meaning]
        # The paper's columns only where it reports the model: a column of dashes says nothing and
        # crowds the landing page, whose text column Snakemake keeps narrow.
        paper = any(cell != "–" for _, _, cells in rows for cell in cells[3:])
        header = ["Benchmark", "Baseline", "pelt", "Δ", *(("Paper baseline", "Paper pelt", "Paper Δ") if paper else ())]
        lines += [
            "",
            f"**{model}**" + ("" if paper else " (the paper reports no result for this model)"),
            "",
            "| " + " | ".join(header) + " |",
            "|" + "---|" * len(header),
            *("| " + " | ".join([label, *(cells if paper else cells[:3])]) + " |" for _, label, cells in rows),
        ]
    flags = [flag for part in parts for flag in part.flags]
    if parts:
        lines += ["", *dict.fromkeys(used), "", *flag_lines(flags, ", ".join(part.checks for part in parts))]
    lines += outcome_markdown(outcome)
    write_page(out_html, "pelt: headline results", markdown_html("\n".join(lines) + "\n"))
    return flags


def finetuning_part(results: Sequence[dict]) -> HeadlinePart:
    """The fine-tuning kinds' part: per model, benchmark, setting and readout, accuracy over seeds
    without and with the table beside the paper's, said by the kind's ``meaning``; the chance flags."""

    def benchmark_of(result: dict) -> str:
        return result.get("dataset", result["task"])

    rows = aggregate_seeds(results, benchmark_of)
    meanings = {benchmark_of(r): kind.meaning for r in results if (kind := KINDS.get(r["task"]))}
    models = sorted({str(r["model"]) for r in results})
    return HeadlinePart(
        {model: list(_finetuning_rows(model, rows, meanings)) for model in models},
        chance_flags(rows),
        CHANCE_CHECKS,
    )


def _finetuning_rows(model: str, seed_rows: list[dict], meanings: dict[str, str | None]) -> Iterator[Row]:
    """One model's rows: a row per benchmark, setting and readout, its variants side by side."""
    groups: dict[tuple[str, str, str], dict[str, dict]] = {}
    for r in seed_rows:
        if str(r["model"]) == model:
            groups.setdefault((r["benchmark"], r["setting"], r["read_at"]), {})[r["variant"]] = r
    for (benchmark, setting, read_at), variants in groups.items():
        rows = [variants.get(v, {}) for v in VARIANTS]
        cells = headline_cells(
            [r.get("accuracy_mean") for r in rows],
            [r.get("accuracy_std") for r in rows],
            [r.get("paper_mean") for r in rows],
        )
        # The paper reads at the markers: another readout is named, since its numbers are not the protocol's.
        where = "" if read_at == EncoderSettings.read_at else f", read at {read_at} (not the paper's readout)"
        yield meanings.get(benchmark), f"{benchmark_label(benchmark)} {setting} accuracy{where}", cells


def headline_cells(ours: list, stds: list, paper: list) -> list[str]:
    """A row's cells: ours without and with the table (± std), the difference in points, and the
    paper's same three."""
    return [
        mean_std(ours[0], stds[0]),
        mean_std(ours[1], stds[1]),
        _delta(*ours),
        percent(paper[0]),
        percent(paper[1]),
        _delta(*paper),
    ]


def _delta(a: float | None, b: float | None) -> str:
    return "–" if a is None or b is None else f"{100 * (b - a):+.1f}"
