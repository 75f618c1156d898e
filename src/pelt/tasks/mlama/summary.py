"""The mLAMA summary (its registry entry's ``summaries``): P@1 per language, without and with the table
(and its controls), one row per language, table and model, the table's languages beside the
task's (a language probed with another language's table, or with a merged one of several); the
per-run JSON files (:mod:`pelt.tasks.mlama.run`) are the source of truth."""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence

from pelt.report.tables import CONTROLS_NOTE, VARIANT_ORDER, load_results, percent, write_summary

FIELDS = (
    *("language", "table", "table_languages", "model", "variant", "norm", "relations"),
    *("facts", "injected", "macro_p_at_1", "micro_p_at_1"),
)


def write_mlama_summary(
    result_jsons: Sequence[str | os.PathLike[str]],
    out_csv: str | os.PathLike[str],
    out_md: str | os.PathLike[str],
    out_html: str | os.PathLike[str] | None = None,
) -> None:
    """The CSV: one row per language, table, model and variant (the table's corpus and languages,
    facts evaluated, subjects injected, macro P@1 over the language's relations as the authors' mLAMA
    code, micro P@1). The Markdown: one row per language, table and model, macro P@1 of each variant
    and the table's gain (pelt - baseline)."""
    results = load_results(result_jsons, "mlama", {"language", "model", "variant", "macro_p_at_1", "counts"})
    for r in results:
        r["table"] = r.get("table_corpus") or ""
    results.sort(
        key=lambda r: (r["language"], r["table"], r["model"], VARIANT_ORDER.get(r["variant"], 9), r["variant"])
    )
    rows = [
        {
            **{key: r.get(key) for key in ("language", "table", "model", "variant", "norm", "relations")},
            "table_languages": ",".join(r.get("table_languages") or []),
            "facts": r["counts"]["facts_evaluated"],
            "injected": r["counts"]["injected"],
            "macro_p_at_1": r["macro_p_at_1"],
            "micro_p_at_1": r["micro_p_at_1"],
        }
        for r in results
    ]
    with open(out_csv, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    variants = sorted({r["variant"] for r in rows}, key=lambda v: (VARIANT_ORDER.get(v, 9), v))
    header = ["Language", "Table", "Table languages", "Model", "Facts", *variants, "pelt - baseline"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    groups: dict[tuple[str, str, str], dict[str, dict]] = {}
    for row in rows:
        groups.setdefault((row["language"], row["table"], row["model"]), {})[row["variant"]] = row
    for (language, table, model), by_variant in groups.items():
        p = {v: by_variant[v]["macro_p_at_1"] if v in by_variant else None for v in variants}
        gain = None if p.get("pelt") is None or p.get("baseline") is None else p["pelt"] - p["baseline"]
        first = next(iter(by_variant.values()))
        cells = [language, f"`{table}`" if table else "", first["table_languages"], f"`{model}`", str(first["facts"])]
        lines.append("| " + " | ".join([*cells, *(percent(p[v]) for v in variants), percent(gain)]) + " |")
    sections = [
        "# mLAMA: P@1 per language",
        "",
        "Macro P@1 over each language's relations (%), as the authors' mLAMA code averages it; candidates are "
        "the relation's objects in the language, multi-token objects ranked by their mean log-probability "
        "over as many masks (docs/languages.md). `Table` is the domain whose table the subjects take, "
        "`Table languages` the languages of its text: another language's, or several (a merged domain, "
        "keyed by QID).",
        "",
        *lines,
        "",
        CONTROLS_NOTE,
    ]
    write_summary(sections, out_md, out_html, "mLAMA")
