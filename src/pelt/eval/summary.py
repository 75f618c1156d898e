"""Summary tables of evaluation results in the paper's layout (CSV for tools, Markdown for people).

The per-run JSON files (:mod:`pelt.eval.lama`, :mod:`pelt.eval.fewrel`, :mod:`pelt.eval.wiki80`) are
the source of truth; a summary only selects, aggregates over seeds and lays out their numbers, so it
can be rebuilt at any time from ``results/eval``.  Where a run matches a setting the paper reports
(same benchmark, model, variant and setting), the paper's number is shown beside ours
(:data:`PAPER_RESULTS`).
"""

from __future__ import annotations

import csv
import json
import logging
import os
import statistics
from collections import Counter
from collections.abc import Callable, Sequence

from pelt.eval.buckets import HEAD_GROUPS, RARE_BELOW, bucket_names
from pelt.eval.flags import CHANCE_CHECKS, LAMA_CHECKS, SWEEP_CHECKS, chance_flags, lama_flags, norm_sweep_flags
from pelt.eval.html import flag_lines, markdown_html, write_page

logger = logging.getLogger(__name__)
HEAD_COLUMNS = HEAD_GROUPS[:2]  # rare, frequent: the summary's split (unresolved heads stay in the result files)

_VARIANT_ORDER = {"baseline": 0, "pelt": 1, "permuted": 2, "random": 3, "swapped": 4}
_CONTROL_VARIANTS = ("permuted", "random", "swapped")
CONTROLS_NOTE = (
    "Controls: `permuted` injects the same table with its vectors moved among the entities (none keeps "
    "its own), `random` a random vector of the same norm per entity, `swapped` (where the domain has a "
    "kinds file) the vectors moved among entities of the same kind; same slots and L as `pelt`. Where "
    "`pelt` gains and `permuted` and `random` do not, the gain comes from each entity's own vector; "
    "what `swapped` keeps of it is the entity's kind, what it loses the entity's own facts."
)


def percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _lama_rows(result_jsons: Sequence[str | os.PathLike[str]]) -> list[dict]:
    results = []
    for path in result_jsons:
        with open(path, encoding="utf-8") as fh:
            result = json.load(fh)
        missing = {"model", "variant", "macro_p_at_1", "micro_p_at_1", "counts"} - set(result)
        if missing:
            raise ValueError(f"{path}: not a LAMA result (missing {sorted(missing)})")
        results.append(result)
    results.sort(key=lambda r: (r["model"], _VARIANT_ORDER.get(r["variant"], 2), r["variant"]))
    seen = set()
    for r in results:
        key = (r["model"], r["variant"], r.get("norm"))
        if key in seen:
            raise ValueError(f"two LAMA results for model {key[0]!r}, variant {key[1]!r}, norm {key[2]!r}")
        seen.add(key)
    return results


def _write_text(sections: list[str], out_md, out_html, title: str) -> None:
    """The summary as Markdown and, for the report, as an HTML page of the same text."""
    text = "\n".join(sections) + "\n"
    with open(out_md, "w", encoding="utf-8") as fh:
        fh.write(text)
    if out_html is not None:
        write_page(out_html, title, markdown_html(text))


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
    rows = []
    for r in results:
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
        rows.append(row)
    with open(out_csv, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)

    def table(columns: list[str], lines_of: Callable[[dict], list[list[str]]]) -> list[str]:
        lines = ["| " + " | ".join(["Model", "Variant", "L", *columns]) + " |", "|" + "---|" * (len(columns) + 3)]
        for row in rows:
            norm = "–" if row["norm"] is None else f"{row['norm']:g}"
            for cells in lines_of(row):
                lines.append("| " + " | ".join([f"`{row['model']}`", row["variant"], norm, *cells]) + " |")
        return lines

    def with_paper(row: dict, kind: str, b: str) -> str:
        ours = percent(row[f"{kind} {b}"])
        return ours if row[f"paper {b}"] is None else f"{ours} ({percent(row[f'paper {b}'])})"

    sections = []
    if benchmarks:
        sections += [
            "LAMA and LAMA-UHN (%), the layout of the paper's Table 4: each column the mean of its relations' P@1, "
            f"as the paper (LAMA's and the authors' code); in brackets the {PAPER_CITATION} where it reports the "
            "model and variant.\n",
            *table(
                [f"{b} {MACRO_PAPER}" for b in benchmarks],
                lambda row: [[with_paper(row, "macro_p_at_1", b) for b in benchmarks]],
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
            *table(
                ["Bucket", "Facts", PER_FACT, MACRO_OURS],
                lambda row: [
                    [
                        b,
                        str(row[f"facts {b}"] or 0),
                        with_paper(row, "per_fact_p_at_1", b),
                        percent(row[f"macro_p_at_1 {b}"]),
                    ]
                    for b in bucket_names
                    if row[f"facts {b}"] is not None
                ],
            ),
            "",
        ]
    sections += [
        "All facts (%).\n",
        *table(
            ["Facts", "Injected", MACRO_OURS, "P@1 per fact (micro, ours)"],
            lambda row: [
                [str(row["facts"]), str(row["injected"]), percent(row["macro_p_at_1"]), percent(row["micro_p_at_1"])]
            ],
        ),
    ]
    if any(r["variant"] in _CONTROL_VARIANTS for r in results):
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
    _write_text(sections, out_md, out_html, "LAMA and LAMA-UHN")
    logger.info("LAMA summary of %d runs written to %s and %s", len(rows), out_csv, out_md)


# The paper's numbers (Ye et al. 2022), in percent, as (mean, std over 5 seeds); std None where the
# paper gives none.  Only its own models: the vanilla PLM (variant baseline) and the same PLM with
# PELT (variant pelt); keyed by benchmark, then (paper model name, variant), then setting.
PAPER_RESULTS: dict[str, dict[tuple[str, str], dict[str, tuple[float, float | None]]]] = {
    # Table 2 (FewRel 1.0 and 2.0, Proto, N-K = N-way K-shot)
    "fewrel1": {
        ("roberta-base", "baseline"): {
            "5-1": (90.4, 0.3),
            "5-5": (96.2, 0.0),
            "10-1": (84.2, 0.5),
            "10-5": (93.9, 0.1),
        },
        ("roberta-base", "pelt"): {"5-1": (92.7, 0.3), "5-5": (97.5, 0.0), "10-1": (87.5, 0.3), "10-5": (95.4, 0.1)},
    },
    "fewrel2": {
        ("roberta-base", "baseline"): {
            "5-1": (71.2, 2.1),
            "5-5": (89.4, 0.2),
            "10-1": (53.3, 0.8),
            "10-5": (83.1, 0.4),
        },
        ("roberta-base", "pelt"): {"5-1": (75.0, 1.3), "5-5": (92.1, 0.2), "10-1": (60.4, 1.1), "10-5": (85.6, 0.2)},
    },
    # Table 3 (Wiki80 test accuracy; 1% / 10% / 100% of the training data)
    "wiki80": {
        ("roberta-base", "baseline"): {"1%": (59.8, 1.7), "10%": (85.7, 0.2), "100%": (91.7, 0.1)},
        ("roberta-base", "pelt"): {"1%": (65.6, 1.0), "10%": (88.3, 0.3), "100%": (93.4, 0.1)},
    },
    # Table 4 (mean P@1 on LAMA and LAMA-UHN; no std reported)
    "lama": {
        (model, variant): {s: (p, None) for s, p in zip(("G-RE", "T-REx", "UHN G-RE", "UHN T-REx"), scores)}
        for (model, variant), scores in {
            ("roberta-base", "baseline"): (5.4, 24.7, 2.2, 17.0),
            ("roberta-base", "pelt"): (6.4, 27.5, 2.8, 19.3),
            ("bert-base-uncased", "baseline"): (13.9, 34.9, 8.8, 26.8),
            ("bert-base-uncased", "pelt"): (13.3, 40.7, 8.9, 34.5),
            ("bart-base", "baseline"): (5.1, 21.2, 1.3, 12.0),
            ("bart-base", "pelt"): (6.9, 24.4, 2.1, 14.9),
        }.items()
    },
    # Table 5 (mean P@1 on T-REx by the subject's frequency in Wikipedia; no std reported)
    "lama_frequency": {
        (model, variant): {s: (p, None) for s, p in zip(("[0,10)", "[10,50)", "[50,100)", "[100,+)"), scores)}
        for (model, variant), scores in {
            ("roberta-base", "baseline"): (18.1, 21.1, 25.8, 26.1),
            ("roberta-base", "pelt"): (21.9, 24.8, 29.0, 28.7),
        }.items()
    },
}
# Section 3.1: L searched over 1..10 on the knowledge probe.
PAPER_NORMS = {"roberta-base": 7.0, "bert-base-uncased": 10.0, "bart-base": 3.0}
PAPER_CITATION = "paper (Ye et al. 2022)"

LAMA_COLUMNS = ("G-RE", "T-REx", "UHN G-RE", "UHN T-REx")
BENCHMARK_NAMES = {"fewrel1": "FewRel 1.0", "fewrel2": "FewRel 2.0", "wiki80": "Wiki80"}
_SETTING_ORDER = {s: i for i, s in enumerate(["5-1", "5-5", "10-1", "10-5", "1%", "10%", "100%"])}


def paper_model(model: str) -> str | None:
    """The paper's model that a run used, if any: ``roberta-base`` for ``roberta-base``, ``FacebookAI/roberta-base``
    or a local ``.../roberta-base``."""
    name = os.path.basename(str(model).rstrip("/"))
    return name if name in PAPER_NORMS else None


def paper_result(benchmark: str, model: str, variant: str, setting: str) -> tuple[float, float | None] | None:
    """The paper's (mean, std) as fractions for a run's benchmark, model, variant and setting; None if it has none."""
    value = PAPER_RESULTS.get(benchmark, {}).get((paper_model(model) or "", variant), {}).get(setting)
    return None if value is None else (value[0] / 100, None if value[1] is None else value[1] / 100)


def _load(result_jsons: Sequence[str | os.PathLike[str]], task: str, fields: set[str]) -> list[dict]:
    results = []
    for path in result_jsons:
        with open(path, encoding="utf-8") as fh:
            result = json.load(fh)
        missing = fields - set(result)
        if result.get("task") != task or missing:
            raise ValueError(f"{path}: not a {task} result (task {result.get('task')!r}, missing {sorted(missing)})")
        results.append(result)
    return results


def aggregate_seeds(results: Sequence[dict], benchmark_of: Callable[[dict], str]) -> list[dict]:
    """Mean and sample standard deviation of accuracy over seeds, per (benchmark, model, variant, setting).

    A seed appearing twice in a group is an error (a run counted twice would shrink the std).
    """
    groups: dict[tuple, list[dict]] = {}
    for r in results:
        groups.setdefault((benchmark_of(r), r["model"], r["variant"], r["setting"]), []).append(r)
    rows = []
    for (benchmark, model, variant, setting), runs in groups.items():
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
            _VARIANT_ORDER.get(r["variant"], 2),
            r["variant"],
            _SETTING_ORDER.get(r["setting"], len(_SETTING_ORDER)),
            r["setting"],
        )
    )
    return rows


def mean_std(mean: float | None, std: float | None) -> str:
    if mean is None:
        return "–"
    return percent(mean) if std is None else f"{percent(mean)} ± {percent(std)}"


def _write_seed_tables(rows: list[dict], out_csv, out_md, out_html, title: str, by_relation: list[str]) -> None:
    """CSV (one row per group, fractions) and Markdown in the paper's layout: one row per model and variant,
    one column per benchmark and setting, the paper's row under ours where it reports the same setting;
    ``by_relation`` (:func:`_relation_lines`) after the tables."""
    header = [
        "benchmark",
        "model",
        "variant",
        "setting",
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
        key=lambda c: (c[0], _SETTING_ORDER.get(c[1], len(_SETTING_ORDER)), c[1]),
    )
    cells: dict[tuple[str, str], dict[tuple[str, str], dict]] = {}
    for r in rows:
        cells.setdefault((r["model"], r["variant"]), {})[(r["benchmark"], r["setting"])] = r
    md_header = ["Model", "Variant"] + [f"{BENCHMARK_NAMES.get(b, b)} {s}" for b, s in columns]
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
    heading = " / ".join(dict.fromkeys(BENCHMARK_NAMES.get(r["benchmark"], r["benchmark"]) for r in rows))
    extra = _head_lines(rows, columns, cells)
    if any(r["variant"] in _CONTROL_VARIANTS for r in rows):
        extra += ["", CONTROLS_NOTE]
    _write_text(
        [title, "", *lines, *extra, *by_relation, "", *flag_lines(chance_flags(rows, BENCHMARK_NAMES), CHANCE_CHECKS)],
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
    header = ["Model", "Variant"] + [f"{BENCHMARK_NAMES.get(b, b)} {s}" for b, s in columns]
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
        {c for runs in cells.values() for c in runs}, key=lambda c: (c[0], _VARIANT_ORDER.get(c[1], 2), c[1])
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
    order = sorted(cells, key=lambda k: (k[0], _SETTING_ORDER.get(k[1], len(_SETTING_ORDER)), k[1], k[2]))
    for benchmark, setting, relation in order:
        row = [BENCHMARK_NAMES.get(benchmark, benchmark), setting, relation]
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


def write_fewrel_summary(
    result_jsons: Sequence[str | os.PathLike[str]],
    out_csv: str | os.PathLike[str],
    out_md: str | os.PathLike[str],
    out_html: str | os.PathLike[str] | None = None,
) -> None:
    """FewRel accuracy, mean ± std over seeds, per benchmark and N-K setting (the paper's Table 2)."""
    results = _load(result_jsons, "fewrel", {"dataset", "model", "variant", "seed", "setting", "accuracy", "n"})
    rows = aggregate_seeds(results, lambda r: r["dataset"])
    _write_seed_tables(
        rows,
        out_csv,
        out_md,
        out_html,
        "FewRel accuracy (%), Proto, mean ± std over seeds; N-K = N-way K-shot.",
        _relation_lines(results, lambda r: r["dataset"]),
    )


def write_wiki80_summary(
    result_jsons: Sequence[str | os.PathLike[str]],
    out_csv: str | os.PathLike[str],
    out_md: str | os.PathLike[str],
    out_html: str | os.PathLike[str] | None = None,
) -> None:
    """Wiki80 accuracy, mean ± std over seeds, per training setting 1% / 10% / 100% (the paper's Table 3).

    The paper reports the test set; where the runs evaluated on dev (the test set being absent) the
    note above the table says so, since the numbers are then not the same measurement.
    """
    results = _load(result_jsons, "wiki80", {"model", "variant", "seed", "setting", "accuracy", "n", "eval_file"})
    rows = aggregate_seeds(results, lambda r: "wiki80")
    evaluated = sorted({os.path.basename(r["eval_file"]) for r in results})
    _write_seed_tables(
        rows,
        out_csv,
        out_md,
        out_html,
        f"Wiki80 accuracy (%), mean ± std over seeds, evaluated on {', '.join(evaluated)} (the paper: test.jsonl).",
        _relation_lines(results, lambda r: "wiki80"),
    )


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
    sweeps = _load(result_jsons, "lama_norm_sweep", {"model", "norms", "chosen_norm", "baseline"})
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
    _write_text(
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
