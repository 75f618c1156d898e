"""Choose the sentences that represent each entity (paper: up to 256 per entity).

The choice is a seeded hash rank: every mention gets the key
``sha256("\\x1f".join([seed, doc_id, sent_idx, start, end, entity_id]))`` (hex) and an entity keeps
its ``max_per_entity`` smallest keys, ties broken by (doc_id, sent_idx, start, end). The key depends
only on the mention and the seed, so the sample is the same whatever the partitioning or the number
of cores, and anyone can recompute it with ``hashlib``. SHA-256 rather than Spark's ``xxhash64``
because it is a built-in JVM function (no Python UDF on the hot path) that also has a standard
implementation everywhere else.

Hot entities (millions of mentions) would funnel into one task under a window partitioned by
entity, so the top-N runs in two stages: first per (entity, bucket), the bucket being another
hash of the key modulo ``SALT_BUCKETS``, which spreads a hot entity over many tasks; then per
entity over the union, at most ``SALT_BUCKETS * max_per_entity`` rows. The global top-N of an
entity is always inside the union of its per-bucket top-Ns, so the result is exact.
"""

from __future__ import annotations

import logging

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

log = logging.getLogger(__name__)

SALT_BUCKETS = 64
KEY_SEPARATOR = "\x1f"
_TIE_BREAK = ("doc_id", "sent_idx", "start", "end")


def rank_key(seed: int) -> Column:
    """The seeded SHA-256 rank key of a mention (see the module docstring)."""
    parts = [F.lit(str(seed)), *(F.col(c).cast("string") for c in (*_TIE_BREAK, "entity_id"))]
    return F.sha2(F.concat_ws(KEY_SEPARATOR, *parts), 256)


def _top(df: DataFrame, partition: list[str], n: int) -> DataFrame:
    order = Window.partitionBy(*partition).orderBy("rank", *_TIE_BREAK)
    return df.withColumn("pos", F.row_number().over(order)).filter(F.col("pos") <= n).drop("pos")


def sample_mentions(
    spark: SparkSession,
    mentions_path: str,
    samples_out: str,
    frequencies_out: str,
    *,
    wanted: list[str] | None,
    max_per_entity: int,
    seed: int,
) -> dict[str, int]:
    """Write up to ``max_per_entity`` mentions per entity and every entity's mention count.

    ``wanted``: entity ids to keep (None: all). Wanted entities without any mention get frequency 0,
    so that reports can show what the corpus lacks. Returns and logs the counts.
    """
    if max_per_entity < 1:
        raise ValueError(f"max_per_entity must be at least 1, got {max_per_entity}")
    mentions = spark.read.parquet(mentions_path)
    counts: dict[str, int] = {"mentions": mentions.count()}
    if wanted is not None:
        if any(entity is None for entity in wanted):
            raise ValueError("wanted entity ids must not be None (drop unresolved task entities first)")
        wanted_df = spark.createDataFrame([(entity,) for entity in sorted(set(wanted))], "entity_id string")
        counts["wanted"] = wanted_df.count()
        mentions = mentions.join(wanted_df, "entity_id", "left_semi")
    frequencies = mentions.groupBy("entity_id").agg(F.count("*").alias("frequency"))
    if wanted is not None:
        frequencies = wanted_df.join(frequencies, "entity_id", "left").fillna(0, ["frequency"])
    frequencies.select(F.col("entity_id").cast("string"), F.col("frequency").cast("long")).write.mode(
        "overwrite"
    ).parquet(frequencies_out)

    ranked = mentions.withColumn("rank", rank_key(seed))
    salted = ranked.withColumn("bucket", F.pmod(F.xxhash64("rank"), F.lit(SALT_BUCKETS)))
    chosen = _top(_top(salted, ["entity_id", "bucket"], max_per_entity), ["entity_id"], max_per_entity)
    chosen.orderBy("entity_id", "rank").select(
        F.col("entity_id").cast("string"),
        F.col("sentence").cast("string"),
        F.col("start").cast("int"),
        F.col("end").cast("int"),
        F.col("doc_id").cast("string"),
    ).write.mode("overwrite").parquet(samples_out)

    written = (
        spark.read.parquet(frequencies_out)
        .agg(
            F.sum("frequency").alias("mentions_wanted"),
            F.sum((F.col("frequency") > 0).cast("long")).alias("entities"),
            F.sum((F.col("frequency") > max_per_entity).cast("long")).alias("entities_capped"),
            F.sum((F.col("frequency") == 0).cast("long")).alias("wanted_without_mentions"),
        )
        .first()
    )
    counts.update({key: int(value or 0) for key, value in written.asDict().items()})
    counts["samples"] = spark.read.parquet(samples_out).count()
    for key, value in counts.items():
        log.info("sample_mentions: %s = %d", key, value)
    return counts
