"""Figures and tables for ``snakemake --report``: P@1 by subject frequency, how many task entities
the corpus covers, and what each stage read and skipped (input quality).

The figures are plain SVG written here (grouped bar charts), so the report needs no plotting
library: a figure is a few dozen lines of markup, and the pipeline's environments stay as small as
its computations need.
"""

from __future__ import annotations

import csv
import json
import logging
import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from html import escape

import pyarrow.parquet as pq

from pelt.table import EntityTable

logger = logging.getLogger(__name__)

# Colour-blind-safe palette (Okabe & Ito), one colour a series.
_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")


def bar_chart_svg(
    groups: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    title: str,
    y_label: str,
    y_max: float | None = None,
) -> str:
    """A grouped bar chart: one cluster per group, one bar per series (``None``: no bar, a gap).

    Values are drawn to scale from 0 to ``y_max`` (default: the largest value); each bar carries
    its value, so the figure can be read without the axis.
    """
    if any(len(values) != len(groups) for values in series.values()):
        raise ValueError("every series needs one value per group")
    values = [v for vs in series.values() for v in vs if v is not None]
    top = y_max if y_max is not None else max(values, default=0.0) or 1.0
    width, height, left, bottom, top_pad = 120 + 90 * len(groups) * max(1, len(series)) // 2, 320, 60, 60, 40
    plot_w, plot_h = width - left - 20, height - bottom - top_pad
    slot = plot_w / max(1, len(groups))
    bar = slot * 0.8 / max(1, len(series))
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 20 * len(series)}" '
        'font-family="sans-serif" font-size="11">',
        f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="13">{escape(title)}</text>',
        f'<text x="14" y="{top_pad + plot_h / 2}" transform="rotate(-90 14 {top_pad + plot_h / 2})" '
        f'text-anchor="middle">{escape(y_label)}</text>',
        f'<line x1="{left}" y1="{top_pad + plot_h}" x2="{left + plot_w}" y2="{top_pad + plot_h}" stroke="black"/>',
        f'<line x1="{left}" y1="{top_pad}" x2="{left}" y2="{top_pad + plot_h}" stroke="black"/>',
        f'<text x="{left - 4}" y="{top_pad + 4}" text-anchor="end">{top:g}</text>',
        f'<text x="{left - 4}" y="{top_pad + plot_h + 4}" text-anchor="end">0</text>',
    ]
    for g, group in enumerate(groups):
        x0 = left + g * slot + slot * 0.1
        out.append(
            f'<text x="{left + (g + 0.5) * slot}" y="{top_pad + plot_h + 16}" '
            f'text-anchor="middle">{escape(group)}</text>'
        )
        for s, (name, vs) in enumerate(series.items()):
            if vs[g] is None:
                continue
            h = plot_h * min(vs[g], top) / top
            x, y = x0 + s * bar, top_pad + plot_h - h
            out.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar * 0.9:.1f}" height="{h:.1f}" '
                f'fill="{_COLOURS[s % len(_COLOURS)]}"><title>{escape(name)}: {vs[g]:g}</title></rect>'
            )
            out.append(f'<text x="{x + bar * 0.45:.1f}" y="{y - 3:.1f}" text-anchor="middle">{vs[g]:.3g}</text>')
    for s, name in enumerate(series):
        y = height + 20 * s - 10
        out.append(f'<rect x="{left}" y="{y - 9}" width="10" height="10" fill="{_COLOURS[s % len(_COLOURS)]}"/>')
        out.append(f'<text x="{left + 16}" y="{y}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def plot_lama_buckets(result_jsons: Sequence[str | os.PathLike[str]], out_svg: str | os.PathLike[str]) -> None:
    """P@1 (%, mean over relations) by the subject's corpus frequency, one bar per model and variant
    (the paper's Table 5 as a figure): where the table helps, it helps rare entities most."""
    results = []
    for path in result_jsons:
        with open(path, encoding="utf-8") as fh:
            results.append(json.load(fh))
    bucketed = [r for r in results if r.get("buckets")]
    if not bucketed:
        raise ValueError("no LAMA result has frequency buckets (they need the entity table)")
    buckets = list(bucketed[0]["buckets"])
    series = {
        f"{os.path.basename(str(r['model']).rstrip('/'))} {r['variant']}": [
            None if r["buckets"][b].get("macro_p_at_1") is None else 100 * r["buckets"][b]["macro_p_at_1"]
            for b in buckets
        ]
        for r in sorted(bucketed, key=lambda r: (str(r["model"]), r["variant"]))
    }
    groups = [f"{b} (n={bucketed[0]['buckets'][b]['facts']})" for b in buckets]
    with open(out_svg, "w", encoding="utf-8") as fh:
        fh.write(bar_chart_svg(groups, series, "LAMA P@1 by subject frequency in the corpus", "P@1 (%)", 100.0))


def write_coverage(
    task_entities: Mapping[str, str | os.PathLike[str]],
    tables: Mapping[tuple[str, str], str | os.PathLike[str]],
    out_csv: str | os.PathLike[str],
    out_svg: str | os.PathLike[str],
) -> list[dict]:
    """How the task entities of each domain were linked to the corpus, and how many got a vector.

    ``task_entities``: domain -> its ``task_entities.parquet``; ``tables``: (domain, model) -> table.
    One row per domain and model: entities wanted, found by each method (``how``: qid, title,
    alias, string ...), not found, and in the table (found and with at least one sentence).
    """
    rows = []
    for (domain, model), table_path in sorted(tables.items()):
        entities = pq.read_table(task_entities[domain], columns=["name", "qid", "entity_id", "how"]).to_pylist()
        table = EntityTable.open(table_path)
        wanted = {(e["name"], e["qid"]) for e in entities}
        found = {e["entity_id"] for e in entities if e["entity_id"]}
        how = Counter(e["how"] for e in entities if e["entity_id"])
        rows.append(
            {
                "domain": domain,
                "model": model,
                "wanted": len(wanted),
                **{f"found_by_{method}": n for method, n in sorted(how.items())},
                "not_found": sum(1 for e in entities if not e["entity_id"]),
                "entities_found": len(found),
                "entities_in_table": sum(entity_id in table for entity_id in found),
            }
        )
    header = list(dict.fromkeys(key for row in rows for key in row))
    with open(out_csv, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=header, restval=0)
        writer.writeheader()
        writer.writerows(rows)
    measures = [k for k in header if k.startswith("found_by_")] + ["not_found", "entities_in_table"]
    groups = [f"{r['domain']} / {r['model']}" for r in rows]
    series = {m.replace("_", " "): [float(r.get(m, 0)) for r in rows] for m in measures}
    with open(out_svg, "w", encoding="utf-8") as fh:
        fh.write(
            bar_chart_svg(groups, series, "Task entities: how they were linked, and how many have a vector", "entities")
        )
    for row in rows:
        logger.info("coverage %s", ", ".join(f"{k} = {v}" for k, v in row.items()))
    return rows


# Counts of input that a stage dropped (or, for bytes that are not UTF-8, repaired and kept), as the
# stages name them (pelt.corpus, pelt.corpus.s2orc, pelt.linking, pelt.linking.entities, pelt.sampling): flagged in
# the input-quality table. Pages outside the article namespace are skipped by design, not for being
# bad, and are not flagged (the corpus log keeps them quiet for the same reason).
SKIP_COUNTS = re.compile(
    r"skipped_(?!other_namespace$).+|files_without_documents|files_with_bad_utf8|files_with_bad_xml_chars|bad_utf8"
    r"|anchors_(?:invalid|blank|crossing_sentence|disambiguation|broken_redirect)|documents_without_id"
    r"|pages_without_title|names_(?:blank|ambiguous)|how_missing|wanted_without_mentions"
    r"|files_multistream_without_index"
)
INPUT_QUALITY_COLUMNS = ("domain", "stage", "source", "count", "value", "skip")


def input_quality_rows(counts_jsons: Sequence[str | os.PathLike[str]]) -> list[dict]:
    """One row per count of each stage's counts file (pelt.logs.write_counts), zeros included, in
    the order of the files and of the counts in each; ``skip`` is 1 for counts of skipped input."""
    rows = []
    for path in counts_jsons:
        with open(path, encoding="utf-8") as fh:
            record = json.load(fh)
        for name, value in record["counts"].items():
            rows.append(
                {
                    "domain": record["domain"],
                    "stage": record["stage"],
                    "source": record["source"] or "",
                    "count": name,
                    "value": value,
                    "skip": int(SKIP_COUNTS.fullmatch(name) is not None),
                }
            )
    return rows


def write_input_quality(
    counts_jsons: Sequence[str | os.PathLike[str]], out_csv: str | os.PathLike[str], out_html: str | os.PathLike[str]
) -> list[dict]:
    """The input-quality table: every count of every stage per domain (CSV), and the same as an HTML
    page for the report, where a skip that happened stands out.

    The stages already log these numbers; the table puts them where the results are read, so a
    truncated dump file or a task whose entities the corpus lacks is seen without opening job logs.
    """
    rows = input_quality_rows(counts_jsons)
    with open(out_csv, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=INPUT_QUALITY_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    flagged = [row for row in rows if row["skip"] and row["value"]]
    cells = "".join(
        ('<tr class="skipped">' if row["skip"] and row["value"] else "<tr>")
        + "".join(f"<td>{escape(str(row[column]))}</td>" for column in INPUT_QUALITY_COLUMNS)
        + "</tr>\n"
        for row in rows
    )
    header = "".join(f"<th>{column}</th>" for column in INPUT_QUALITY_COLUMNS)
    with open(out_html, "w", encoding="utf-8") as fh:
        fh.write(
            '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Input quality</title><style>'
            "body{font-family:sans-serif;font-size:13px}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}"
            "tr.skipped{background:#f8d0c0;font-weight:bold}</style></head><body>\n"
            f"<p>{len(flagged)} of {sum(row['skip'] for row in rows)} skip counts are not zero"
            " (highlighted); skip = 1 marks input that a stage dropped or repaired.</p>\n"
            f"<table>\n<tr>{header}</tr>\n{cells}</table>\n</body></html>\n"
        )
    for row in flagged:
        where = " ".join(filter(None, (row["domain"], row["stage"], row["source"])))
        logger.warning("input quality: %s: %s = %d", where, row["count"], row["value"])
    return rows
