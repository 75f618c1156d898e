"""The report's tables on the run itself rather than its results: how many task entities the corpus
covers, what each stage read and skipped (input quality), and how long each stage took. The figures
are in :mod:`pelt.report.figures`.
"""

from __future__ import annotations

import csv
import json
import logging
import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime
from html import escape

import pyarrow.parquet as pq

from pelt.linking.task_entities import read_not_found
from pelt.report.html import markdown_html, write_page
from pelt.sampling.format import COVERAGE_COUNTS
from pelt.table import EntityTable

logger = logging.getLogger(__name__)


def write_coverage(
    task_entities: Mapping[str, str | os.PathLike[str]],
    tables: Mapping[tuple[str, str], str | os.PathLike[str]],
    out_csv: str | os.PathLike[str],
    out_html: str | os.PathLike[str],
) -> list[dict]:
    """How the task entities of each domain were linked to the corpus, and how many got a vector.

    ``task_entities``: domain -> its ``task_entities.parquet``; ``tables``: (domain, model) -> table.
    One row per domain and model: entities wanted, names found by each method (``how``: qid, title,
    alias, string ...), names not found, names whose entity is in the table; and, in entities (several
    names can link to one), those found and those in the table (found and with at least one sentence).
    """
    rows, languages = [], []
    for (domain, model), table_path in sorted(tables.items()):
        entities = pq.read_table(task_entities[domain], columns=["name", "qid", "entity_id", "how"]).to_pylist()
        table = EntityTable.open(table_path)
        languages += _language_rows(domain, model, table.metadata)
        wanted = {(e["name"], e["qid"]) for e in entities}
        found = {e["entity_id"] for e in entities if e["entity_id"]}
        how = Counter(e["how"] for e in entities if e["entity_id"])
        rows.append(
            {
                "domain": domain,
                "model": model,
                "language": table.metadata.get("language") or "",
                "wanted": len(wanted),
                **{f"found_by_{method}": n for method, n in sorted(how.items())},
                "not_found": sum(1 for e in entities if not e["entity_id"]),
                "names_in_table": sum(1 for e in entities if e["entity_id"] and e["entity_id"] in table),
                "entities_found": len(found),
                "entities_in_table": sum(entity_id in table for entity_id in found),
            }
        )
    header = list(dict.fromkeys(key for row in rows for key in row))
    with open(out_csv, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=header, restval=0)
        writer.writeheader()
        writer.writerows(rows)
    table_lines = ["| " + " | ".join(k.replace("_", " ") for k in header) + " |", "|" + "---|" * len(header)]
    table_lines += ["| " + " | ".join(str(row.get(k, 0)) for k in header) + " |" for row in rows]
    intro = (
        "Task entities per domain and model. `wanted`, `found by ...`, `not found` and `names in table` count "
        "the names the tasks give; `entities found` and `entities in table` count entities (several names can "
        "name one)."
    )
    missing = _not_found_lines(task_entities)
    per_language = _language_lines(languages)
    write_page(
        out_html,
        "Linking coverage",
        markdown_html("\n".join([intro, "", *table_lines, *per_language, *missing]) + "\n"),
    )
    for row in rows:
        logger.info("coverage %s", ", ".join(f"{k} = {v}" for k, v in row.items()))
    return rows


def _language_rows(domain: str, model: str, metadata: Mapping[str, object]) -> list[dict]:
    """What each language's corpus gave a table: for a merged table its metadata's ``coverage`` (one
    row per corpus, :func:`pelt.sampling.merge.merge_samples`); a one-language table gives none, its
    language being the main table's column."""
    coverage = metadata.get("coverage")
    if not isinstance(coverage, Mapping):
        return []
    return [
        {"domain": domain, "model": model, "corpus": corpus, "language": given.get("language") or ""}
        | {key: int(given.get(key, 0)) for key in COVERAGE_COUNTS}
        for corpus, given in coverage.items()
    ]


def _language_lines(rows: Sequence[Mapping[str, object]]) -> list[str]:
    """The merged tables' per-language table: which corpus (language) gave how many entities and
    sampled sentences, and how many it had without a QID (left out, since the merge keys on QIDs)."""
    if not rows:
        return []
    header = ["domain", "model", "corpus", "language", *COVERAGE_COUNTS]
    return [
        "",
        "What each language gave the merged tables (entities and sampled sentences; those without a QID are "
        "left out of the merge):",
        "",
        "| " + " | ".join(k.replace("_", " ") for k in header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(str(row[k]) for k in header) + " |" for row in rows),
    ]


def _md_cell(text: str) -> str:
    """A user's name as a Markdown table cell: a bar would split the cell, backticks and stars format."""
    return text.replace("|", "¦").replace("`", "'").replace("*", "∗")


def _not_found_lines(task_entities: Mapping[str, str | os.PathLike[str]]) -> list[str]:
    """A table of the names that found no entity, with the closest entities the corpus has."""
    rows = [
        f"| {domain} | {_md_cell(name)} | {_md_cell(', '.join(suggestions)) or 'none close'} |"
        for domain, path in sorted(task_entities.items())
        for name, suggestions in read_not_found(path).items()
    ]
    if not rows:
        return []
    return [
        "",
        "Names that found no entity, and the closest entities the corpus has:",
        "",
        "| domain | name | closest entities |",
        "|---|---|---|",
        *rows,
    ]


# Counts of input that a stage dropped (or, for bytes that are not UTF-8, repaired and kept), as the
# stages name them (pelt.corpus, pelt.corpus.s2orc, pelt.linking, pelt.linking.entities,
# pelt.sampling.sample, pelt.sampling.merge): flagged in the input-quality table. Pages outside the
# article namespace are skipped by design, not for being bad, and are not flagged (the corpus log
# keeps them quiet for the same reason).
SKIP_COUNTS = re.compile(
    r"skipped_(?!other_namespace$).+|files_without_documents|files_with_bad_utf8|files_with_bad_xml_chars|bad_utf8"
    r"|anchors_(?:invalid|blank|crossing_sentence|disambiguation|broken_redirect)|documents_without_id"
    r"|pages_without_title|pages_duplicate_title_across_files|names_(?:blank|ambiguous)|how_missing|how_no_qid"
    r"|wanted_without_mentions"
    r"|files_multistream_without_index"
)
INPUT_QUALITY_COLUMNS = ("domain", "stage", "source", "count", "value", "skip", "language")


def input_quality_rows(counts_jsons: Sequence[str | os.PathLike[str]]) -> list[dict]:
    """One row per count of each stage's counts file (pelt.logs.write_counts), zeros included, in
    the order of the files and of the counts in each; ``skip`` is 1 for counts of skipped input,
    ``language`` the language of the domain's corpus ("" where no corpus job recorded one)."""
    records = []
    for path in counts_jsons:
        with open(path, encoding="utf-8") as fh:
            records.append(json.load(fh))
    languages = _domain_languages(records)
    return [
        {
            "domain": record["domain"],
            "stage": record["stage"],
            "source": record["source"] or "",
            "count": name,
            "value": value,
            "skip": int(SKIP_COUNTS.fullmatch(name) is not None),
            "language": languages.get(record["domain"], ""),
        }
        for record in records
        for name, value in record["counts"].items()
    ]


def _domain_languages(records: Sequence[Mapping]) -> dict[str, str]:
    """The language of each domain's corpus, as its corpus jobs recorded it (``details.site.language``):
    the later stages' counts carry none, but count the text of that one corpus. A domain whose files
    disagree (which the linking stage refuses) shows them all, joined by commas."""
    found: dict[str, set[str]] = {}
    for record in records:
        language = record.get("details", {}).get("site", {}).get("language")
        if language:
            found.setdefault(record["domain"], set()).add(language)
    return {domain: ",".join(sorted(languages)) for domain, languages in found.items()}


def language_totals(rows: Sequence[Mapping]) -> list[dict]:
    """The input-quality counts summed per language, stage and count (in first-seen order): with corpora
    of several languages, what German pages lost is read apart from what English ones did."""
    totals: dict[tuple[str, str, str], dict] = {}
    for row in rows:
        key = (row["language"], row["stage"], row["count"])
        total = totals.setdefault(key, {**{k: row[k] for k in ("language", "stage", "count", "skip")}, "value": 0})
        total["value"] += row["value"]
    return list(totals.values())


def _quality_table(rows: Sequence[Mapping], columns: Sequence[str]) -> str:
    """An HTML table of input-quality rows, a skip that happened highlighted."""
    cells = "".join(
        ('<tr class="skipped">' if row["skip"] and row["value"] else "<tr>")
        + "".join(f"<td>{escape(str(row[column]))}</td>" for column in columns)
        + "</tr>\n"
        for row in rows
    )
    header = "".join(f"<th>{column}</th>" for column in columns)
    return f"<table>\n<tr>{header}</tr>\n{cells}</table>\n"


def write_input_quality(
    counts_jsons: Sequence[str | os.PathLike[str]], out_csv: str | os.PathLike[str], out_html: str | os.PathLike[str]
) -> list[dict]:
    """The input-quality table: every count of every stage per domain (CSV), and the same as an HTML
    page for the report, where a skip that happened stands out.

    The stages already log these numbers; the table puts them where the results are read, so a
    truncated dump file or a task whose entities the corpus lacks is seen without opening job logs.
    Each row names its corpus's language; with corpora of several languages the page first sums
    each count per language (:func:`language_totals`), so one language's losses are not hidden
    among another's.
    """
    rows = input_quality_rows(counts_jsons)
    with open(out_csv, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=INPUT_QUALITY_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    flagged = [row for row in rows if row["skip"] and row["value"]]
    per_language = ""
    if len({row["language"] for row in rows} - {""}) > 1:
        totals = language_totals(rows)
        per_language = "<h2>Per language</h2>\n" + _quality_table(
            totals, ("language", "stage", "count", "value", "skip")
        )
        per_language += "<h2>Per file</h2>\n"
    with open(out_html, "w", encoding="utf-8") as fh:
        fh.write(
            '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Input quality</title><style>'
            "body{font-family:sans-serif;font-size:13px}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}"
            "tr.skipped{background:#f8d0c0;font-weight:bold}</style></head><body>\n"
            f"<p>{len(flagged)} of {sum(row['skip'] for row in rows)} skip counts are not zero"
            " (highlighted); skip = 1 marks input that a stage dropped or repaired.</p>\n"
            f"{per_language}{_quality_table(rows, INPUT_QUALITY_COLUMNS)}</body></html>\n"
        )
    for row in flagged:
        where = " ".join(filter(None, (row["domain"], row["stage"], row["source"])))
        logger.warning("input quality: %s: %s = %d", where, row["count"], row["value"])
    return rows


# Times at the start of a job log's lines: pelt's logger (pelt.logs.start_job) and Spark's JVM (log4j's
# default, yy/MM/dd), which is all a Spark job writes until its end.
LOG_TIMES = (
    (re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ", re.M), "%Y-%m-%d %H:%M:%S,%f"),
    (re.compile(r"^(\d\d/\d\d/\d\d \d\d:\d\d:\d\d) ", re.M), "%y/%m/%d %H:%M:%S"),
)


def stage_times(
    logs_dir: str | os.PathLike[str], metadata_dir: str | os.PathLike[str] | None = None
) -> dict[str, tuple[float, int]]:
    """Wall seconds and number of jobs per stage, one job per log under ``logs_dir``.

    A job's time is Snakemake's own: its start and end as recorded in ``metadata_dir``
    (``.snakemake/metadata``, one record per output naming the job's log), which counts a job's
    imports and Spark's start too. A log no record names (a run whose metadata is gone) is timed from
    its earliest to its latest timestamped line (:data:`LOG_TIMES`), or 0 s without one. Snakemake
    removes a job's log before it reruns the job. The stage is the log's first folder (``corpus``,
    ``linking`` ...), with the second for ``eval`` (``eval/lama``, ``eval/fewrel`` ...).
    """
    recorded = _snakemake_job_seconds(metadata_dir) if metadata_dir is not None else {}
    times: dict[str, tuple[float, int]] = {}
    for root, _, files in os.walk(logs_dir):
        for name in sorted(files):
            if not name.endswith(".log"):
                continue
            path = os.path.join(root, name)
            parts = os.path.relpath(path, logs_dir).split(os.sep)
            stage = "/".join(parts[:2]) if parts[0] == "eval" and len(parts) > 2 else parts[0].removesuffix(".log")
            seconds = recorded.get(os.path.realpath(path))
            if seconds is None:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                stamps = [datetime.strptime(t, form) for pattern, form in LOG_TIMES for t in pattern.findall(text)]
                seconds = (max(stamps) - min(stamps)).total_seconds() if stamps else 0.0
            total, jobs = times.get(stage, (0.0, 0))
            times[stage] = (total + seconds, jobs + 1)
    return times


def _snakemake_job_seconds(metadata_dir: str | os.PathLike[str]) -> dict[str, float]:
    """Seconds of each job Snakemake recorded, keyed by its log's real path. The records' log paths
    are relative to the workflow's directory, the one holding ``.snakemake/metadata``: a named run's
    logs are deeper in it (``runs/<run>/logs``), so the logs' folder cannot say where it is."""
    workdir = os.path.dirname(os.path.dirname(os.path.realpath(metadata_dir)))
    seconds: dict[str, float] = {}
    if not os.path.isdir(metadata_dir):
        return seconds
    for name in os.listdir(metadata_dir):
        try:
            with open(os.path.join(metadata_dir, name), encoding="utf-8") as fh:
                record = json.load(fh)
            start, end, logs = record["starttime"], record["endtime"], record["log"]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # another record format, or a job still running: its log's time stamps count instead
        if isinstance(start, int | float) and isinstance(end, int | float) and end >= start:
            for log in logs:
                seconds[os.path.realpath(os.path.join(workdir, log))] = end - start
    return seconds
