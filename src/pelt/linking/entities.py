"""Resolve the entities a task asks about (e.g. LAMA subjects) to the corpus's entity ids.

Tasks name entities by a surface name and, often, a Wikidata QID; the corpus names them by its own
ids (for Wikipedia, canonical page titles). The rules go from the most to the least reliable
evidence, and the rule that decided is written next to each result so that coverage can be
reported per rule: the QID of a page, an exact page title, a redirect title, the entity an alias
most often links to, else missing.

The other way round, :func:`write_entity_ids` gives every entity the ids users hold for it (its
QID, its redirect titles and link texts), which the tables carry (``qid`` and ``aliases`` columns).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from pelt.corpus.documents import read_pages
from pelt.corpus.wikipedia.titles import normalize_title
from pelt.linking.redirects import resolve_titles
from pelt.linking.segmentation import normalize_alias
from pelt.linking.task_entities import write_task_entities
from pelt.suggest import blocking_keys, closest_entities

log = logging.getLogger(__name__)

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
        row["title"]: (row["entity_id"], row["status"]) for row in titles.join(wanted_titles, "title").collect()
    }
    best: dict[str, tuple[int, str]] = {}
    aliases = spark.read.parquet(aliases_path)
    for row in aliases.join(_small(spark, "alias", (normalize_alias(name) for name, _ in wanted)), "alias").collect():
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
    missing = [row[0] for row in rows if row[2] is None]
    suggestions = _suggestions(spark, missing, aliases_path, pages_path) if missing else {}
    rows = [(*row, suggestions[row[0]] if row[2] is None else None) for row in rows]
    return write_task_entities(rows, len(wanted), out_path, RESOLVED_HOW)


MAX_CANDIDATES = 200_000  # names scored for the suggestions, at most: a bound on the driver's memory


def _suggestions(
    spark: SparkSession, names: list[str], aliases_path: str, pages_path: str | Sequence[str]
) -> dict[str, list[str]]:
    """The closest entities to each name that found none, by their titles and link texts.

    Only the corpus's names that share a blocking key with one of ``names`` reach the driver
    (:func:`pelt.suggest.blocking_keys`); a second read of the pages, paid only when a name is
    missing.
    """
    titles = resolve_titles(read_pages(spark, pages_path)).filter(F.col("status") == "article")
    candidates = (
        titles.select(F.col("entity_id").alias("name"), "entity_id")
        .unionByName(spark.read.parquet(aliases_path).select(F.col("alias").alias("name"), "entity_id"))
        .filter(F.col("entity_id").isNotNull())
    )
    word = F.explode(F.split(F.lower("name"), r"[^\p{L}\p{N}_]+")).alias("word")
    keyed = (
        candidates.select("name", "entity_id", word)
        .filter(F.length("word") >= 3)
        .select(
            "name", "entity_id", F.explode(F.array(F.substring("word", 1, 3), F.expr("right(word, 3)"))).alias("key")
        )
    )
    keys = _small(spark, "key", (key for name in names for key in blocking_keys(name)))
    pairs = (
        keyed.join(F.broadcast(keys), "key")
        .select("name", "entity_id")
        .distinct()
        .orderBy("name", "entity_id")
        .limit(MAX_CANDIDATES)
        .collect()
    )
    log.info("suggestions for %d names not found: %d candidate names", len(names), len(pairs))
    return closest_entities(names, [(row["name"], row["entity_id"]) for row in pairs])


MAX_ALIASES = 32  # per entity, the most linked first: enough to find it, not every typo ever linked


def write_entity_ids(
    spark: SparkSession,
    aliases_path: str,
    pages_path: str | Sequence[str],
    out_path: str,
    max_aliases: int = MAX_ALIASES,
) -> dict[str, int]:
    """Write ``entity_id``, ``qid`` (the article's Wikidata item; null without page_props) and
    ``aliases`` (its redirect titles and link texts, at most ``max_aliases``, most linked first,
    the entity id itself left out) of every entity that has either; return and log the counts."""
    pages = read_pages(spark, pages_path)
    if "qid" in pages.columns:
        articles = resolve_titles(pages).filter(F.col("status") == "article")
        qids = (
            pages.filter(F.col("qid").isNotNull() & (F.length("qid") > 0))
            .join(articles, "title")
            .groupBy("entity_id")
            .agg(F.min("qid").alias("qid"))  # one page per title; min only makes a duplicate deterministic
        )
    else:
        qids = spark.createDataFrame([], "entity_id string, qid string")
    order = Window.partitionBy("entity_id").orderBy(F.desc("count"), "alias")
    aliases = (
        spark.read.parquet(aliases_path)
        .filter(F.col("alias") != F.col("entity_id"))
        .withColumn("pos", F.row_number().over(order))
        .filter(F.col("pos") <= max_aliases)
        .groupBy("entity_id")
        .agg(F.sort_array(F.collect_list(F.struct("pos", "alias"))).alias("ranked"))
        .select("entity_id", F.col("ranked.alias").alias("aliases"))
    )
    ids = qids.join(aliases, "entity_id", "full").select(
        "entity_id", "qid", F.coalesce("aliases", F.array().cast("array<string>")).alias("aliases")
    )
    ids.orderBy("entity_id").write.mode("overwrite").parquet(out_path)
    written = spark.read.parquet(out_path)
    counts = {
        "entities": written.count(),
        "with_qid": written.filter(F.col("qid").isNotNull()).count(),
        "with_aliases": written.filter(F.size("aliases") > 0).count(),
    }
    for key, value in counts.items():
        log.info("entity ids: %s = %d", key, value)
    return counts
