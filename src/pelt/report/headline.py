"""The report's landing page: per model, each benchmark's headline number without and with the
table beside the paper's, what each comparison means, and every flag raised on the results.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from pelt.eval.buckets import bucket_names
from pelt.eval.settings import EncoderSettings
from pelt.report.finetuning_summary import BENCHMARK_NAMES, aggregate_seeds
from pelt.report.flags import CHANCE_CHECKS, LAMA_CHECKS, SWEEP_CHECKS, chance_flags, lama_flags, norm_sweep_flags
from pelt.report.html import flag_lines, markdown_html, write_page
from pelt.report.lama_summary import LAMA_COLUMNS, MACRO_OURS, MACRO_PAPER, PER_FACT, fact_p_at_1
from pelt.report.paper import PAPER_CITATION, paper_result
from pelt.report.tables import mean_std, percent, read_result

# The two variants the landing page compares: without and with the table.
VARIANTS = ("baseline", "pelt")
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
    "FewRel": "FewRel: N-way K-shot relation classification after fine-tuning with the table frozen; the difference "
    "is what entity knowledge adds when a relation is learnt from a few examples.",
    "Wiki80": "Wiki80: relation classification fine-tuned on 1 %, 10 % or 100 % of the training data; the "
    "difference shows whether the table still helps as supervision grows.",
}


def write_headline(
    lama_jsons: Sequence[str | os.PathLike[str]],
    sweep_jsons: Sequence[str | os.PathLike[str]],
    finetuning_jsons: Sequence[str | os.PathLike[str]],
    out_html: str | os.PathLike[str],
) -> list[str]:
    """The report's landing page: per model, each benchmark's number without and with the table, the
    difference, the paper's same three numbers where it reports the model, a sentence on what each
    comparison means, and every flag of the results (returned too)."""
    lama = [r for r in _read_jsons(lama_jsons) if r["variant"] in ("baseline", "pelt")]
    finetuning = _read_jsons(finetuning_jsons)  # every fine-tuning kind's per-seed results
    seed_rows = aggregate_seeds(finetuning, lambda r: r.get("dataset", r["task"]))
    flags = lama_flags(lama) + norm_sweep_flags(_read_jsons(sweep_jsons)) + chance_flags(seed_rows, BENCHMARK_NAMES)
    models = sorted({str(r["model"]) for r in lama} | {str(r["model"]) for r in finetuning})
    lines = [
        "Each benchmark without (`baseline`) and with (`pelt`) the entity table, in %; Δ = pelt - baseline in "
        f"points. Fine-tuning: mean ± std over seeds. The {PAPER_CITATION}'s numbers where it reports the model.",
    ]
    used = []
    for model in models:
        rows = list(_headline_rows(model, lama, seed_rows))
        used += [kind for kind, _, _ in rows]
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
    lines += [
        "",
        *(MEANINGS[kind] for kind in dict.fromkeys(used)),
        "",
        *flag_lines(flags, ", ".join((LAMA_CHECKS, SWEEP_CHECKS, CHANCE_CHECKS))),
    ]
    write_page(out_html, "pelt: headline results", markdown_html("\n".join(lines) + "\n"))
    return flags


def _read_jsons(paths: Sequence[str | os.PathLike[str]]) -> list[dict]:
    return [read_result(path) for path in paths]


def _delta(a: float | None, b: float | None) -> str:
    return "–" if a is None or b is None else f"{100 * (b - a):+.1f}"


def _headline_rows(model: str, lama: list[dict], seed_rows: list[dict]):
    """(kind, label, cells) per benchmark row of one model's headline table."""
    by_variant = {r["variant"]: r for r in lama if str(r["model"]) == model}
    if by_variant:
        for b in LAMA_COLUMNS:
            ours = [(by_variant.get(v, {}).get("benchmarks") or {}).get(b, {}).get("macro_p_at_1") for v in VARIANTS]
            paper = [(paper_result("lama", model, v, b) or (None,))[0] for v in VARIANTS]
            kind = "LAMA-UHN" if b.startswith("UHN") else "LAMA"
            yield kind, f"LAMA {b} {MACRO_PAPER}", _cells(ours, [None] * 2, paper)
        rare = bucket_names()[0]
        for bucket in bucket_names():
            buckets = [(by_variant.get(v, {}).get("buckets") or {}).get(bucket) for v in VARIANTS]
            ours = [fact_p_at_1(b) for b in buckets]
            if all(o is None for o in ours):
                continue
            # the paper's Table 5 counts per fact; the mean over relations is ours, without a paper number
            kind = "LAMA rare" if bucket == rare else "LAMA frequent"
            paper = [(paper_result("lama_frequency", model, v, bucket) or (None,))[0] for v in VARIANTS]
            yield kind, f"LAMA T-REx {bucket} {PER_FACT}", _cells(ours, [None] * 2, paper)
            if bucket == rare:
                macro = [(b or {}).get("macro_p_at_1") for b in buckets]
                yield kind, f"LAMA T-REx {bucket} {MACRO_OURS}", _cells(macro, [None] * 2, [None] * 2)
    groups: dict[tuple[str, str, str], dict[str, dict]] = {}
    for r in seed_rows:
        if str(r["model"]) == model:
            groups.setdefault((r["benchmark"], r["setting"], r["read_at"]), {})[r["variant"]] = r
    for (benchmark, setting, read_at), variants in groups.items():
        rows = [variants.get(v, {}) for v in VARIANTS]
        cells = _cells(
            [r.get("accuracy_mean") for r in rows],
            [r.get("accuracy_std") for r in rows],
            [r.get("paper_mean") for r in rows],
        )
        kind = "Wiki80" if benchmark == "wiki80" else "FewRel"
        # The paper reads at the markers: another readout is named, since its numbers are not the protocol's.
        where = "" if read_at == EncoderSettings.read_at else f", read at {read_at} (not the paper's readout)"
        yield kind, f"{BENCHMARK_NAMES.get(benchmark, benchmark)} {setting} accuracy{where}", cells


def _cells(ours: list, stds: list, paper: list) -> list[str]:
    return [
        mean_std(ours[0], stds[0]),
        mean_std(ours[1], stds[1]),
        _delta(*ours),
        percent(paper[0]),
        percent(paper[1]),
        _delta(*paper),
    ]
