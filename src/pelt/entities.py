"""Resolve the entities a task asks about (e.g. LAMA subjects) to the corpus's entity ids.

Tasks name entities by a surface name and, often, a Wikidata QID; the corpus names them by its own
ids (for Wikipedia, canonical page titles). The rules go from the most to the least reliable
evidence, and the rule that decided is written next to each result so that coverage can be
reported per rule: the QID of a page, an exact page title, a redirect title, the entity an alias
most often links to, else missing.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pelt.corpus import read_pages
from pelt.linking import normalize_alias, resolve_titles
from pelt.wikitext import normalize_title

log = logging.getLogger(__name__)

TASK_ENTITIES_SCHEMA = pa.schema(
    [("name", pa.string()), ("qid", pa.string()), ("entity_id", pa.string()), ("how", pa.string())]
)
# The rules of resolve_task_entities, most reliable first; every one is counted, zeros included, so
# that the report shows "how_missing = 0" rather than leaving the reader to guess.
RESOLVED_HOW = ("qid", "title", "redirect", "alias", "missing")


def _small(spark: SparkSession, column: str, values: Iterable[str]) -> DataFrame:
    """A one-column DataFrame of the wanted keys, to restrict the big tables by a join."""
    return spark.createDataFrame([(value,) for value in sorted(set(values))], f"{column} string")


def _lookups(
    spark: SparkSession, wanted: list[tuple[str, str | None]], aliases_path: str, pages_path: str | Sequence[str]
) -> tuple[dict[str, str], dict[str, tuple[str, str]], dict[str, str]]:
    """Only the rows of the big tables that concern the wanted entities, as dicts:
    qid -> entity, normalised title -> (entity, status), alias -> its most frequent entity."""
    pages = read_pages(spark, pages_path)
    titles = resolve_titles(pages).filter(F.col("entity_id").isNotNull()).persist()
    qids = {qid for _, qid in wanted if qid}
    by_qid: dict[str, str] = {}
    if qids and "qid" in pages.columns:
        rows = (
            pages.join(_small(spark, "qid", qids), "qid")
            .join(titles, "title")
            .groupBy("qid")
            .agg(F.min("entity_id").alias("entity_id"))  # one QID on two pages: pick deterministically
            .collect()
        )
        by_qid = {row["qid"]: row["entity_id"] for row in rows}
    wanted_titles = _small(spark, "title", (normalize_title(name) for name, _ in wanted))
    by_title = {
        row["title"]: (row["entity_id"], row["status"])
        for row in titles.join(wanted_titles, "title").collect()
    }
    best: dict[str, tuple[int, str]] = {}
    aliases = spark.read.parquet(aliases_path)
    for row in aliases.join(
        _small(spark, "alias", (normalize_alias(name) for name, _ in wanted)), "alias"
    ).collect():
        # Most links win; ties go to the smaller id so that reruns agree.
        key = (-row["count"], row["entity_id"])
        if row["alias"] not in best or key < best[row["alias"]]:
            best[row["alias"]] = key
    by_alias = {alias: entity for alias, (_, entity) in best.items()}
    titles.unpersist()
    return by_qid, by_title, by_alias


def resolve_task_entities(
    spark: SparkSession,
    wanted: list[tuple[str, str | None]],
    aliases_path: str,
    pages_path: str | Sequence[str],
    out_path: str,
) -> dict[str, int]:
    """Write one Parquet file ``out_path`` (name, qid, entity_id, how) for the (name, qid) pairs;
    ``pages_path``: a pages folder, or the list of a domain's (one per corpus file)."""
    unique = list(dict.fromkeys(wanted))
    by_qid, by_title, by_alias = _lookups(spark, unique, aliases_path, pages_path)
    rows = []
    for name, qid in unique:
        title = by_title.get(normalize_title(name))
        if qid and qid in by_qid:
            rows.append((name, qid, by_qid[qid], "qid"))
        elif title is not None and title[1] == "article":
            rows.append((name, qid, title[0], "title"))
        elif title is not None and title[1] == "redirect":
            rows.append((name, qid, title[0], "redirect"))
        elif normalize_alias(name) in by_alias:
            rows.append((name, qid, by_alias[normalize_alias(name)], "alias"))
        else:
            rows.append((name, qid, None, "missing"))
    return _write_task_entities(rows, len(wanted), out_path, RESOLVED_HOW)


def name_task_entities(wanted: list[tuple[str, str | None]], out_path: str) -> dict[str, int]:
    """The task-entities file of a corpus without pages (S2ORC): each entity is its own id (the
    QID when given, else the name, ``how`` = ``string``), and string matching of its names in
    the text (:func:`pelt.linking.link_by_string`) finds its mentions."""
    unique = list(dict.fromkeys(wanted))
    rows = [(name, qid, qid or name, "string") for name, qid in unique]
    return _write_task_entities(rows, len(wanted), out_path, ("string",))


def _write_task_entities(rows: list[tuple], n_wanted: int, out_path: str, hows: Iterable[str]) -> dict[str, int]:
    """Write the rows atomically; return and log ``wanted``, ``duplicates`` and ``how_<rule>`` for
    each of ``hows``."""
    table = pa.Table.from_pylist(
        [dict(zip(TASK_ENTITIES_SCHEMA.names, row, strict=True)) for row in rows], schema=TASK_ENTITIES_SCHEMA
    )
    Path(out_path).parent.mkdir(parents=True, exist_ok=True)
    partial_path = f"{out_path}.partial"
    pq.write_table(table, partial_path)
    os.replace(partial_path, out_path)  # a killed job leaves no file that looks complete
    counts = {"wanted": n_wanted, "duplicates": n_wanted - len(rows)}
    by_how = Counter(row[3] for row in rows)
    counts.update({f"how_{how}": by_how[how] for how in sorted(hows)})
    for key, value in counts.items():
        log.info("task entities: %s = %d", key, value)
    return counts


def names_by_entity(path: str) -> dict[str, list[str]]:
    """entity_id -> the task names that resolved to it, for string matching."""
    names: dict[str, list[str]] = {}
    for row in pq.read_table(path, columns=["name", "entity_id"]).to_pylist():
        if row["entity_id"] is not None:
            names.setdefault(row["entity_id"], []).append(row["name"])
    return {entity_id: sorted(set(entity_names)) for entity_id, entity_names in sorted(names.items())}


def resolved_entity_ids(path: str) -> list[str]:
    """The distinct entity ids of a task-entities file, for sampling on demand; entities that
    were not found are left out (their count is in the resolution log)."""
    entity_ids = pq.read_table(path, columns=["entity_id"]).column("entity_id").to_pylist()
    return sorted({entity_id for entity_id in entity_ids if entity_id is not None})
