"""Merged domains: one entity per Wikidata QID over several corpora, e.g. the Wikipedias of several
languages (config ``merged: {wiki_all: {of: [wiki_de, wiki_fr]}}``; docs/languages.md).

A merged domain has no text of its own. Its entities are the QIDs of its corpora's entities (the
``qid`` of ``linking/<corpus>/ids``: for Wikipedia, ``page_props``' ``wikibase_item``), its task
entities are its corpora's resolutions mapped to QIDs (:func:`merge_task_entities`), and its sample
is drawn from its corpora's samples (:func:`merge_samples`); encoding then builds its table as any
domain's, the method's sum and norm over the union's sentences.

**Which sentences.** Every sampled mention keeps the rank key its corpus's sampling gave it
(:func:`pelt.sampling.sample.rank_key`: the seed, ``doc_id``, ``sent_idx``, ``start``, ``end`` and
the corpus's own entity id, e.g. the German title), and a QID keeps the ``max_per_entity`` mentions
of smallest key over all its corpora, ties broken as within one corpus (``doc_id``, ``sent_idx``,
``start``, ``end``) and then by the corpus's place in ``of``. That is exactly the sample of the union
of all the corpora's mentions at once, ranked by the same keys: the union's order restricted to one
corpus's mentions of one entity is that corpus's order, so a mention among its QID's first N in the
union has fewer than N of them before it and is among the N its corpus kept. Exact when each corpus
kept every entity it has (``min_frequency`` 1, the default): with a larger one, an entity below it in
one corpus brings none of that corpus's sentences, though its summed frequency may pass (counted,
``below_min_frequency_<corpus>``).

Frequencies (mentions before sampling) add over the corpora. An entity without a QID is left out,
counted per corpus. The sample's rows name their corpus (``corpus``), whose language the counts and
the table's metadata name (:func:`pelt.logs.table_corpus`), with each corpus's entities and sentences.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import reduce

import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pelt.linking.entities import RESOLVED_HOW
from pelt.linking.task_entities import write_task_entities
from pelt.logs import corpus_language
from pelt.sampling.format import COVERAGE_COUNTS, FREQUENCY_TYPES, MENTION_TYPES, SAMPLE_TYPES
from pelt.sampling.sample import RANK_ORDER, SamplingSettings, frequency_counts, rank_key, top_ranked

log = logging.getLogger(__name__)

MERGED_SAMPLE_TYPES = {**SAMPLE_TYPES, **MENTION_TYPES, "corpus": "string"}
NO_QID = "no_qid"  # a task entity whose corpora resolved it only to entities without a QID


@dataclass(frozen=True)
class MergedCorpus:
    """One corpus of a merged domain: its name (the ``corpora:`` key), its language, and the outputs
    of its stages that the merge reads (its sample, frequencies and entity ids)."""

    name: str
    language: str
    samples: str
    frequencies: str
    ids: str


def _qids(spark: SparkSession, ids_path: str) -> DataFrame:
    """entity_id -> qid of the corpus's entities that have one."""
    return (
        spark.read.parquet(ids_path).select("entity_id", "qid").filter(F.col("qid").isNotNull() & (F.length("qid") > 0))
    )


def _corpus_rows(spark: SparkSession, corpus: MergedCorpus, place: int, seed: int) -> tuple[DataFrame, DataFrame]:
    """The corpus's sampled mentions, ranked by its own keys, and its frequencies, each row with its
    entity's QID (null: none), the corpus and its place in ``of``."""
    samples = spark.read.parquet(corpus.samples)
    lacking = [c for c in (*SAMPLE_TYPES, *MENTION_TYPES) if c not in samples.columns]
    if lacking:
        raise ValueError(
            f"{corpus.samples}: no {lacking} column, so its rank keys cannot be computed again; "
            "the sample was written before merged domains: rerun its sampling (delete it)"
        )
    qids = _qids(spark, corpus.ids)
    tag = [F.lit(corpus.name).alias("corpus"), F.lit(place).alias("place")]
    ranked = samples.select(*(*SAMPLE_TYPES, *MENTION_TYPES), rank_key(seed).alias("rank"))
    frequencies = spark.read.parquet(corpus.frequencies).select(*FREQUENCY_TYPES)
    return (
        ranked.join(qids, "entity_id", "left").select("*", *tag),
        frequencies.join(qids, "entity_id", "left").select("*", *tag),
    )


def merge_samples(
    spark: SparkSession,
    corpora: Sequence[MergedCorpus],
    samples_out: str,
    frequencies_out: str,
    ids_out: str,
    settings: SamplingSettings,
    *,
    wanted: list[str] | None,
) -> tuple[dict[str, int], dict[str, object]]:
    """Write the merged domain's sample (module docstring), frequencies and entity ids, keyed by QID.

    ``corpora`` in the config's ``of`` order (the last tie-break); ``settings``: the sampling's own
    (its seed gives the keys); ``wanted``: the QIDs to keep (the merged domain's resolved task
    entities), each wanted one without mentions at frequency 0; None: every QID. Returns the counts
    and the details (each corpus's language and coverage) that ``counts.json`` records."""
    if not corpora:
        raise ValueError("merge_samples: no corpora given")
    parts = [_corpus_rows(spark, corpus, place, settings.seed) for place, corpus in enumerate(corpora)]
    sampled = reduce(DataFrame.unionByName, (p[0] for p in parts)).persist()
    counted = reduce(DataFrame.unionByName, (p[1] for p in parts)).persist()
    try:
        frequencies = counted.filter(F.col("qid").isNotNull()).groupBy("qid").agg(F.sum("frequency").alias("frequency"))
        if wanted is not None:
            wanted_df = spark.createDataFrame([(q,) for q in sorted(set(wanted))], "qid string")
            frequencies = wanted_df.join(frequencies, "qid", "left").fillna(0, ["frequency"])
        frequencies.select(F.col("qid").alias("entity_id"), F.col("frequency").cast("long")).write.mode(
            "overwrite"
        ).parquet(frequencies_out)
        merged = spark.read.parquet(frequencies_out)
        kept = merged.filter(F.col("frequency") >= settings.min_frequency).select(F.col("entity_id").alias("qid"))
        candidates = sampled.join(kept, "qid", "left_semi")
        chosen = top_ranked(candidates, ["qid"], settings.max_per_entity, (*RANK_ORDER, "place"))
        chosen.orderBy("qid", *RANK_ORDER, "place").select(
            *(F.col("qid" if c == "entity_id" else c).cast(t).alias(c) for c, t in MERGED_SAMPLE_TYPES.items())
        ).write.mode("overwrite").parquet(samples_out)
        _write_ids(spark, corpora, merged.select(F.col("entity_id").alias("qid")), ids_out)
        counts, details = _merged_counts(spark, corpora, sampled, counted, samples_out, frequencies_out, settings)
    finally:
        sampled.unpersist()
        counted.unpersist()
    if wanted is not None:
        counts = {"wanted": len(set(wanted)), **counts}
    for key, value in counts.items():
        log.info("merge_samples: %s = %d", key, value)
    return counts, details


def _write_ids(spark: SparkSession, corpora: Sequence[MergedCorpus], qids: DataFrame, out: str) -> None:
    """The ids file of the merged domain (as the linking stage's, :func:`pelt.linking.entities.write_entity_ids`):
    each QID is its own ``entity_id`` and ``qid``; its ``aliases`` are its entity ids in the corpora
    (the titles in each language) and then their aliases, in the order of ``of``, each once."""
    names = []
    for place, corpus in enumerate(corpora):
        ids = spark.read.parquet(corpus.ids).join(qids, "qid", "left_semi")  # a null or "" QID joins none
        names.append(ids.select("qid", F.lit(place).alias("place"), F.lit(-1).alias("pos"), F.col("entity_id")))
        names.append(ids.select("qid", F.lit(place).alias("place"), F.posexplode("aliases").alias("pos", "entity_id")))
    ranked = F.sort_array(F.collect_list(F.struct("place", "pos", "entity_id")))
    aliases = reduce(DataFrame.unionByName, names).groupBy("qid").agg(ranked.alias("ranked"))
    ids = qids.join(aliases, "qid", "left").select(
        F.col("qid").alias("entity_id"),
        "qid",
        F.array_remove(
            F.array_distinct(F.coalesce(F.col("ranked.entity_id"), F.array().cast("array<string>"))), F.col("qid")
        ).alias("aliases"),
    )
    ids.orderBy("entity_id").write.mode("overwrite").parquet(out)


def _merged_counts(
    spark: SparkSession,
    corpora: Sequence[MergedCorpus],
    sampled: DataFrame,
    counted: DataFrame,
    samples_out: str,
    frequencies_out: str,
    settings: SamplingSettings,
) -> tuple[dict[str, int], dict[str, object]]:
    """The counts of what was written, as sampling counts them, and per corpus: the merged entities
    and sentences it gives, the entities and sampled sentences it has without a QID (left out) and,
    with ``min_frequency`` above 1, its entities below it whose QID was kept nonetheless."""
    written = spark.read.parquet(frequencies_out)
    counts = frequency_counts(written, settings)
    samples = spark.read.parquet(samples_out)
    counts["samples"] = samples.count()
    given = {
        row["corpus"]: (row["entities"], row["sentences"])
        for row in samples.groupBy("corpus")
        .agg(F.countDistinct("entity_id").alias("entities"), F.count("*").alias("sentences"))
        .collect()
    }
    no_qid = counted.filter(F.col("qid").isNull() & (F.col("frequency") > 0)).groupBy("corpus").count().collect()
    no_qid_samples = sampled.filter(F.col("qid").isNull()).groupBy("corpus").count().collect()
    kept = written.filter(F.col("frequency") >= settings.min_frequency).select(F.col("entity_id").alias("qid"))
    below = (
        counted.filter(F.col("frequency").between(1, settings.min_frequency - 1))
        .join(kept, "qid", "left_semi")
        .groupBy("corpus")
        .count()
        .collect()
    )
    coverage = {}
    for corpus in corpora:
        entities, sentences = given.get(corpus.name, (0, 0))
        found = [int(entities), int(sentences), _count_of(no_qid, corpus.name), _count_of(no_qid_samples, corpus.name)]
        below_min = _count_of(below, corpus.name)
        coverage[corpus.name] = {
            "language": corpus.language,
            **dict(zip(COVERAGE_COUNTS, found, strict=True)),
            "below_min_frequency": below_min,
        }
        counts.update({f"{name}_{corpus.name}": n for name, n in zip(_COUNTS_JSON_NAMES, found, strict=True)})
        if settings.min_frequency > 1:
            counts[f"below_min_frequency_{corpus.name}"] = below_min
    return counts, {"languages": [c.language for c in corpora], "coverage": coverage}


# counts.json's names (each followed by the corpus's) of the COVERAGE_COUNTS, in their order.
_COUNTS_JSON_NAMES = ("entities_from", "samples_from", "skipped_no_qid_entities", "skipped_no_qid_samples")


def _count_of(rows: list, corpus: str) -> int:
    """The ``count`` of ``corpus``'s row of a per-corpus count, 0 where it has none."""
    return next((row["count"] for row in rows if row["corpus"] == corpus), 0)


def merged_corpora(
    names: Sequence[str],
    samples: Sequence[str],
    frequencies: Sequence[str],
    ids: Sequence[str],
    corpus_counts: Sequence[str | os.PathLike[str]],
) -> list[MergedCorpus]:
    """The :class:`MergedCorpus` of each name, from its stages' outputs given in the same order, its
    language from its corpus jobs' counts files among ``corpus_counts`` (each names its domain;
    :func:`pelt.logs.corpus_language`)."""
    by_domain: dict[str, list[str]] = {}
    for path in corpus_counts:
        with open(path, encoding="utf-8") as fh:
            by_domain.setdefault(json.load(fh)["domain"], []).append(os.fspath(path))
    return [
        MergedCorpus(name, corpus_language(by_domain.get(name, [])), s, f, i)
        for name, s, f, i in zip(names, samples, frequencies, ids, strict=True)
    ]


def _qid_of(ids_path: str, entity_ids: set[str]) -> dict[str, str]:
    """entity_id -> QID of the given entities (those with one), reading only their rows."""
    if not entity_ids:
        return {}
    wanted = pc.field("entity_id").isin(sorted(entity_ids))
    table = ds.dataset(ids_path, format="parquet").to_table(columns=["entity_id", "qid"], filter=wanted)
    return {row["entity_id"]: row["qid"] for row in table.to_pylist() if row["qid"]}


def merge_task_entities(
    corpora: Sequence[tuple[str, str, str]], wanted: list[tuple[str, str | None]], out_path: str
) -> dict[str, int]:
    """The merged domain's task-entities file: each wanted ``(name, qid)`` pair with the QID of the
    entity its first corpus (in ``of`` order) resolved it to, and that corpus's rule (``how``).

    ``corpora``: ``(name, task_entities.parquet, ids)`` of each corpus, whose task entities include
    the merged domain's tasks' (the workflow asks each corpus for them). A pair that its corpora
    resolved only to entities without a QID is ``no_qid``; one none resolved is ``missing``, with the
    first corpus's suggestions. Returns and logs the counts, as :func:`write_task_entities`."""
    resolved: list[dict[tuple[str, str | None], dict]] = []
    qid_of: list[dict[str, str]] = []
    hows = dict.fromkeys(RESOLVED_HOW)
    for _, task_entities, ids in corpora:
        rows = pq.read_table(task_entities).to_pylist()
        resolved.append({(r["name"], r["qid"]): r for r in rows})
        qid_of.append(_qid_of(ids, {r["entity_id"] for r in rows if r["entity_id"]}))
        hows.update(dict.fromkeys(r["how"] for r in rows))
    out = []
    for name, qid in dict.fromkeys(wanted):
        found = [(by[(name, qid)], qids) for by, qids in zip(resolved, qid_of) if (name, qid) in by]
        with_qid = [(row, qids[row["entity_id"]]) for row, qids in found if row["entity_id"] in qids]
        if with_qid:
            row, merged_qid = with_qid[0]
            out.append((name, qid, merged_qid, row["how"], None))
        elif any(row["entity_id"] for row, _ in found):
            out.append((name, qid, None, NO_QID, []))
        else:
            suggestions = next((row.get("suggestions") for row, _ in found if row.get("suggestions")), [])
            out.append((name, qid, None, "missing", suggestions))
    return write_task_entities(out, len(wanted), out_path, [*hows, NO_QID])
