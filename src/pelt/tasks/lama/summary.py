"""The LAMA summaries: one row per model and variant in the layout of the paper's Tables 4 and 5,
and the norm sweep's P@1 for each L; the flags on LAMA runs and sweeps; LAMA's part of the report's
landing page, which it leads, and its rows of the README's table of the demo's results.

The per-run JSON files (:mod:`pelt.tasks.lama.run`) are the source of truth; a summary only selects and
lays out their numbers, so it can be rebuilt at any time from ``results/eval``.
"""

from __future__ import annotations

import csv
import logging
import math
import os
from collections.abc import Callable, Iterator, Sequence

from pelt.eval.buckets import bucket_names
from pelt.report.demo_table import DemoRow
from pelt.report.headline import VARIANTS, HeadlinePart, Row, headline_cells
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
from pelt.tasks.lama import NORM_SWEEP_TASK

logger = logging.getLogger(__name__)
# The columns of the paper's Table 4: LAMA's two sources and their LAMA-UHN subsets.
LAMA_COLUMNS = ("G-RE", "T-REx", "UHN G-RE", "UHN T-REx")
# What each family of flags checks, for the line that says none was raised.
LAMA_CHECKS = "every P@1 zero, few facts injected"
SWEEP_CHECKS = "P@1 zero at every L, chosen L a tie or at the edge of the swept range"
# A variant that injects the table measures the table on the facts whose subject got a vector; with
# fewer than this many (or this share of the facts), its P@1 says little about the table.
FEW_INJECTED = 100
FEW_INJECTED_SHARE = 0.1
# One sentence per comparison on the landing page: what the difference between the two variants means.
MEANINGS = {
    "LAMA": "LAMA (Google-RE, T-REx): cloze facts answered with no training, without and with the subject's "
    "vector; the difference is the factual knowledge the table adds to the frozen model.",
    "LAMA-UHN": "LAMA-UHN: the same on the facts left once those guessable from the subject's name are removed; "
    "a gain there is knowledge the name does not give away.",
    "LAMA rare": "T-REx [0,10): facts whose subject has fewer than 10 mentions in the corpus, where the paper finds "
    "the table helps most (its Table 5, P@1 per fact as the authors' code counts it; the mean over the bucket's "
    "relations is ours, beside it).",
    "LAMA frequent": "T-REx [10,50) and up: facts whose subject the corpus mentions more often, which the model "
    "may know already; the paper finds the table helps there too, by less (Table 5, per fact), so a loss there is "
    "the table overriding what the model knew.",
}
# Its rows of the README's table of the demo's results: P@1 per fact on rare and frequent subjects.
DEMO_ROWS = (
    DemoRow("LAMA T-REx, rare subjects `[0,10)`, P@1 per fact (Table 5)", "lama", {}, "per_fact_p_at_1 [0,10)"),
    DemoRow("LAMA T-REx, frequent subjects `[10,50)`, P@1 per fact (Table 5)", "lama", {}, "per_fact_p_at_1 [10,50)"),
)


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
    sweeps = load_results(result_jsons, NORM_SWEEP_TASK, {"model", "norms", "chosen_norm", "baseline"})
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


def headline_part(results: Sequence[dict], sweeps: Sequence[dict]) -> HeadlinePart:
    """LAMA's part of the landing page, which it leads: per model, each column of the paper's Table 4
    and each frequency bucket of its Table 5, without and with the table, beside the paper's; the
    flags of the runs and of the norm sweeps."""
    lama = [r for r in results if r["variant"] in VARIANTS]
    rows = {model: list(_headline_rows(model, lama)) for model in sorted({str(r["model"]) for r in lama})}
    return HeadlinePart(rows, lama_flags(lama) + norm_sweep_flags(sweeps), f"{LAMA_CHECKS}, {SWEEP_CHECKS}")


def _headline_rows(model: str, lama: list[dict]) -> Iterator[Row]:
    """One model's rows: macro P@1 per Table 4 column; per frequency bucket P@1 per fact beside Table 5,
    and for the rare bucket the mean over its relations, ours."""
    by_variant = {r["variant"]: r for r in lama if str(r["model"]) == model}
    for b in LAMA_COLUMNS:
        ours = [(by_variant.get(v, {}).get("benchmarks") or {}).get(b, {}).get("macro_p_at_1") for v in VARIANTS]
        paper = [(paper_result("lama", model, v, b) or (None,))[0] for v in VARIANTS]
        meaning = MEANINGS["LAMA-UHN" if b.startswith("UHN") else "LAMA"]
        yield meaning, f"LAMA {b} {MACRO_PAPER}", headline_cells(ours, [None] * 2, paper)
    rare = bucket_names()[0]
    for bucket in bucket_names():
        buckets = [(by_variant.get(v, {}).get("buckets") or {}).get(bucket) for v in VARIANTS]
        ours = [fact_p_at_1(b) for b in buckets]
        if all(o is None for o in ours):
            continue
        # the paper's Table 5 counts per fact; the mean over relations is ours, without a paper number
        meaning = MEANINGS["LAMA rare" if bucket == rare else "LAMA frequent"]
        paper = [(paper_result("lama_frequency", model, v, bucket) or (None,))[0] for v in VARIANTS]
        yield meaning, f"LAMA T-REx {bucket} {PER_FACT}", headline_cells(ours, [None] * 2, paper)
        if bucket == rare:
            macro = [(b or {}).get("macro_p_at_1") for b in buckets]
            yield meaning, f"LAMA T-REx {bucket} {MACRO_OURS}", headline_cells(macro, [None] * 2, [None] * 2)
