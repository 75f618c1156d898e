"""The LAMA summaries: one row per model and variant in the layout of the paper's Tables 4 and 5,
and the norm sweep's P@1 for each L.

The per-run JSON files (:mod:`pelt.tasks.lama.run`) are the source of truth; a summary only selects and
lays out their numbers, so it can be rebuilt at any time from ``results/eval``.
"""

from __future__ import annotations

import csv
import logging
import os
from collections.abc import Callable, Sequence

from pelt.eval.buckets import bucket_names
from pelt.report.flags import LAMA_CHECKS, SWEEP_CHECKS, lama_flags, norm_sweep_flags
from pelt.report.html import flag_lines
from pelt.report.paper import PAPER_CITATION, PAPER_NORMS, paper_model, paper_result
from pelt.report.tables import (
    CONTROL_VARIANTS,
    CONTROLS_NOTE,
    VARIANT_ORDER,
    load_results,
    percent,
    read_result,
    write_summary,
)

logger = logging.getLogger(__name__)
# The columns of the paper's Table 4: LAMA's two sources and their LAMA-UHN subsets.
LAMA_COLUMNS = ("G-RE", "T-REx", "UHN G-RE", "UHN T-REx")


def _lama_rows(result_jsons: Sequence[str | os.PathLike[str]]) -> list[dict]:
    results = []
    for path in result_jsons:
        result = read_result(path)
        missing = {"model", "variant", "macro_p_at_1", "micro_p_at_1", "counts"} - set(result)
        if missing:
            raise ValueError(f"{path}: not a LAMA result (missing {sorted(missing)})")
        results.append(result)
    results.sort(key=lambda r: (r["model"], VARIANT_ORDER.get(r["variant"], 2), r["variant"]))
    seen = set()
    for r in results:
        key = (r["model"], r["variant"], r.get("norm"))
        if key in seen:
            raise ValueError(f"two LAMA results for model {key[0]!r}, variant {key[1]!r}, norm {key[2]!r}")
        seen.add(key)
    return results


def fact_p_at_1(bucket: dict | None) -> float | None:
    """A frequency bucket's P@1 per fact (correct answers over its facts), as the authors' code
    computes the paper's Table 5: their LAMA run sums correct answers and facts per subject over all
    relations. None for an empty or absent bucket."""
    if not bucket or not bucket.get("facts"):
        return None
    return bucket["correct"] / bucket["facts"] if "correct" in bucket else bucket.get("p_at_1")


# What each average is, in the words of every table that shows it.
PER_FACT = "P@1 per fact (as the paper)"
MACRO_OURS = "P@1 macro over relations (ours)"
MACRO_PAPER = "P@1 macro over relations (as the paper)"


def write_lama_summary(
    result_jsons: Sequence[str | os.PathLike[str]],
    out_csv: str | os.PathLike[str],
    out_md: str | os.PathLike[str],
    out_html: str | os.PathLike[str] | None = None,
) -> None:
    """One row per (model, variant) in the CSV: facts, injected subjects, macro and micro P@1; macro
    P@1 per column of the paper's Table 4 (G-RE, T-REx and their LAMA-UHN subsets, each relation's P@1
    averaged, as the paper) beside the paper's number where it reports the model; per frequency bucket
    (the paper's Table 5) P@1 per fact, as the authors' code counts it, beside the paper's, and the
    mean over the bucket's relations, ours. The Markdown has the same in three tables, every column
    naming its average.

    Columns and buckets are those the runs have (a run without frequency information or without
    some benchmark shows it empty rather than invented).
    """
    results = _lama_rows(result_jsons)
    benchmarks = [b for b in LAMA_COLUMNS if any(b in (r.get("benchmarks") or {}) for r in results)]
    bucket_names = next((list(r["buckets"]) for r in results if r.get("buckets")), [])
    header = ["model", "variant", "norm", "facts", "injected", "macro_p_at_1", "micro_p_at_1"]
    header += [f"{kind} {b}" for b in benchmarks for kind in ("macro_p_at_1", "paper")]
    header += [f"{kind} {b}" for b in bucket_names for kind in ("per_fact_p_at_1", "paper", "macro_p_at_1", "facts")]
    rows = [_lama_row(r, benchmarks, bucket_names) for r in results]
    with open(out_csv, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    sections = _lama_sections(rows, benchmarks, bucket_names)
    if any(r["variant"] in CONTROL_VARIANTS for r in results):
        sections += [
            "",
            CONTROLS_NOTE,
        ]
    trained = {str(r["model"]): r["model_training"] for r in results if r.get("model_training")}
    for model, training in sorted(trained.items()):
        sections.append(
            f"\nModel `{model}` was trained here: {training['steps']} steps of {training['batch_size']} documents, "
            f"final MLM loss {training['final_loss']:.3f} (uniform guess {training['uniform_loss']:.2f}), "
            f"{training['seconds']:.0f} s, {training.get('precision', 'fp32')}."  # older models: fp32
        )
    sections += ["", *flag_lines(lama_flags(results), LAMA_CHECKS)]
    write_summary(sections, out_md, out_html, "LAMA and LAMA-UHN")
    logger.info("LAMA summary of %d runs written to %s and %s", len(rows), out_csv, out_md)


def _lama_row(r: dict, benchmarks: list[str], bucket_names: list[str]) -> dict:
    """A run's CSV row: its scores per Table 4 column and per Table 5 bucket, the paper's beside them."""
    buckets = r.get("buckets") or {}
    scores = r.get("benchmarks") or {}
    row = {
        "model": r["model"],
        "variant": r["variant"],
        "norm": r.get("norm"),
        "facts": r["counts"]["facts_evaluated"],
        "injected": r["counts"]["injected"],
        "macro_p_at_1": r["macro_p_at_1"],
        "micro_p_at_1": r["micro_p_at_1"],
    }
    for benchmark, names in (("lama", benchmarks), ("lama_frequency", bucket_names)):
        for b in names:
            paper = paper_result(benchmark, r["model"], r["variant"], b)
            row[f"paper {b}"] = None if paper is None else paper[0]
    for b in benchmarks:
        row[f"macro_p_at_1 {b}"] = scores.get(b, {}).get("macro_p_at_1")
    for b in bucket_names:
        row[f"per_fact_p_at_1 {b}"] = fact_p_at_1(buckets.get(b))
        row[f"macro_p_at_1 {b}"] = buckets.get(b, {}).get("macro_p_at_1")
        row[f"facts {b}"] = buckets.get(b, {}).get("facts")
    return row


def _rows_table(rows: list[dict], columns: list[str], lines_of: Callable[[dict], list[list[str]]]) -> list[str]:
    """A Markdown table of ``rows``, each run's model, variant and L before ``columns``."""
    lines = ["| " + " | ".join(["Model", "Variant", "L", *columns]) + " |", "|" + "---|" * (len(columns) + 3)]
    for row in rows:
        norm = "–" if row["norm"] is None else f"{row['norm']:g}"
        for cells in lines_of(row):
            lines.append("| " + " | ".join([f"`{row['model']}`", row["variant"], norm, *cells]) + " |")
    return lines


def _with_paper(row: dict, kind: str, b: str) -> str:
    ours = percent(row[f"{kind} {b}"])
    return ours if row[f"paper {b}"] is None else f"{ours} ({percent(row[f'paper {b}'])})"


def _lama_sections(rows: list[dict], benchmarks: list[str], bucket_names: list[str]) -> list[str]:
    """The summary's three tables: Table 4's columns, Table 5's buckets, all facts."""
    sections = []
    if benchmarks:
        sections += [
            "LAMA and LAMA-UHN (%), the layout of the paper's Table 4: each column the mean of its relations' P@1, "
            f"as the paper (LAMA's and the authors' code); in brackets the {PAPER_CITATION} where it reports the "
            "model and variant.\n",
            *_rows_table(
                rows,
                [f"{b} {MACRO_PAPER}" for b in benchmarks],
                lambda row: [[_with_paper(row, "macro_p_at_1", b) for b in benchmarks]],
            ),
            "",
        ]
    if bucket_names:
        sections += [
            "T-REx facts by their subject's mentions in the corpus the table was built from, the paper's Table 5 "
            f"(%). {PER_FACT}: correct answers over the bucket's facts, as the authors' code counts them (in "
            f"brackets the {PAPER_CITATION} where it reports the model and variant); {MACRO_OURS}: the mean of "
            "the bucket's relations' P@1, where a relation with many facts in the bucket does not drown the "
            "others. `unresolved`: T-REx facts whose subject was linked to no entity.\n",
            *_rows_table(
                rows,
                ["Bucket", "Facts", PER_FACT, MACRO_OURS],
                lambda row: [
                    [
                        b,
                        str(row[f"facts {b}"] or 0),
                        _with_paper(row, "per_fact_p_at_1", b),
                        percent(row[f"macro_p_at_1 {b}"]),
                    ]
                    for b in bucket_names
                    if row[f"facts {b}"] is not None
                ],
            ),
            "",
        ]
    return [
        *sections,
        "All facts (%).\n",
        *_rows_table(
            rows,
            ["Facts", "Injected", MACRO_OURS, "P@1 per fact (micro, ours)"],
            lambda row: [
                [str(row["facts"]), str(row["injected"]), percent(row["macro_p_at_1"]), percent(row["micro_p_at_1"])]
            ],
        ),
    ]


def _sweep_bucket_lines(sweeps: list[dict], norms: list[float], buckets: list[str]) -> list[str]:
    """P@1 per fact by subject frequency for each L: what L gives rare subjects and what it costs
    frequent ones (the chosen L maximises the macro P@1 over all facts, not any one bucket)."""
    if not buckets:
        return []
    header = ["Model", "Subjects", "Baseline", *(f"L={n:g}" for n in norms)]
    lines = [
        "",
        "P@1 per fact (%) by the subject's corpus frequency, for each L:",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    for s in sweeps:
        by_norm = {r["norm"]: r.get("buckets") or {} for r in s["norms"]}
        for bucket in buckets:
            cells = [f"`{s['model']}`", bucket, percent((s["baseline"].get("buckets") or {}).get(bucket))]
            cells += [percent(by_norm.get(n, {}).get(bucket)) for n in norms]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def write_norm_sweep_summary(
    result_jsons: Sequence[str | os.PathLike[str]],
    out_csv: str | os.PathLike[str],
    out_md: str | os.PathLike[str],
    out_html: str | os.PathLike[str] | None = None,
) -> None:
    """LAMA macro P@1 for each norm L, per model, the chosen L and the paper's (section 3.1).

    A sweep has no seed (LAMA probing involves no training), so each model has exactly one sweep.
    """
    sweeps = load_results(result_jsons, "lama_norm_sweep", {"model", "norms", "chosen_norm", "baseline"})
    sweeps.sort(key=lambda s: s["model"])
    models = [s["model"] for s in sweeps]
    if len(set(models)) != len(models):
        raise ValueError(f"two norm sweeps for one model: {sorted(models)}")
    buckets = [
        b for b in bucket_names() if any((s["baseline"].get("buckets") or {}).get(b) is not None for s in sweeps)
    ]
    header = ["model", "norm", "macro_p_at_1", "micro_p_at_1", "facts", "injected", "chosen", "paper_norm"]
    header += [f"p_at_1_{b}" for b in buckets]
    rows = []
    for s in sweeps:
        paper_norm = PAPER_NORMS.get(paper_model(s["model"]) or "")
        for r in [dict(s["baseline"], norm=None, injected=0), *s["norms"]]:
            by_bucket = r.get("buckets") or {}
            rows.append(
                {
                    "model": s["model"],
                    "norm": r["norm"],
                    "macro_p_at_1": r["macro_p_at_1"],
                    "micro_p_at_1": r["micro_p_at_1"],
                    "facts": r["facts_evaluated"],
                    "injected": r["injected"],
                    "chosen": r["norm"] is not None and r["norm"] == s["chosen_norm"],
                    "paper_norm": paper_norm,
                    **{f"p_at_1_{b}": by_bucket.get(b) for b in buckets},
                }
            )
    with open(out_csv, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    norms = sorted({r["norm"] for s in sweeps for r in s["norms"]})
    md_header = ["Model", "Baseline"] + [f"L={n:g}" for n in norms] + ["Chosen L", "Paper's L"]
    lines = ["| " + " | ".join(md_header) + " |", "|" + "---|" * len(md_header)]
    for s in sweeps:
        by_norm = {r["norm"]: r["macro_p_at_1"] for r in s["norms"]}
        paper_norm = PAPER_NORMS.get(paper_model(s["model"]) or "")
        cells = [f"`{s['model']}`", percent(s["baseline"]["macro_p_at_1"])]
        cells += [percent(by_norm.get(n)) for n in norms]
        cells += [f"{s['chosen_norm']:g}", "–" if paper_norm is None else f"{paper_norm:g}"]
        lines.append("| " + " | ".join(cells) + " |")
    intro = (
        "LAMA macro P@1 (%) of the pelt variant for each norm L of the entity vectors; the chosen L "
        "(best, ties to the smallest) is used for fine-tuning."
    )
    write_summary(
        [
            intro,
            "",
            *lines,
            *_sweep_bucket_lines(sweeps, norms, buckets),
            "",
            *flag_lines(norm_sweep_flags(sweeps), SWEEP_CHECKS),
        ],
        out_md,
        out_html,
        "Norm sweep",
    )
    logger.info("norm sweep summary of %d models written to %s and %s", len(sweeps), out_csv, out_md)
