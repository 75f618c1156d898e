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

The **sentence pool** (optional, :class:`SentencePool`) is the paper's: the authors' embedding
generation keeps sentences of 8 to 62 subword tokens (64 with the two special tokens) and samples
from those only. With a pool, mentions in other sentences are dropped (counted) before both the
sample and the frequency count, so that an entity's frequency counts the sentences its vector can
come from. One tokenizer decides the pool of a domain for all its models, so that their tables
sample the same sentences (the authors' pools are per model; lengths differ by a few tokens).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from pelt.sampling.format import FREQUENCY_TYPES, MENTION_TYPES, SAMPLE_TYPES

log = logging.getLogger(__name__)

SALT_BUCKETS = 64
KEY_SEPARATOR = "\x1f"
_TIE_BREAK = ("doc_id", "sent_idx", "start", "end")
RANK_ORDER = ("rank", *_TIE_BREAK)  # the order in which an entity's mentions are kept


@dataclass(frozen=True)
class SentencePool:
    """Sentences of ``min_tokens`` to ``max_tokens`` subword tokens of ``tokenizer`` (a name or folder
    for ``AutoTokenizer``), special tokens not counted; the paper: 8 to 62."""

    tokenizer: str
    min_tokens: int = 8
    max_tokens: int = 62

    def __post_init__(self) -> None:
        if not 1 <= self.min_tokens <= self.max_tokens:
            raise ValueError(f"sentence pool: need 1 <= min_tokens <= max_tokens, got {self}")


@lru_cache(maxsize=4)
def _tokenizer(name: str):
    from transformers import (
        AutoTokenizer,  # only the pool needs it, in the Spark workers
    )

    return AutoTokenizer.from_pretrained(name)


def _token_counts(tokenizer: str):
    """mapInArrow function: (doc_id, sent_idx, sentence) batches -> (doc_id, sent_idx, n_tokens)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        tok = _tokenizer(tokenizer)
        for batch in batches:
            sentences = batch.column("sentence").to_pylist()
            ids = tok(sentences, add_special_tokens=False)["input_ids"] if sentences else []
            yield pa.RecordBatch.from_arrays(
                [batch.column("doc_id"), batch.column("sent_idx"), pa.array([len(i) for i in ids], pa.int32())],
                ["doc_id", "sent_idx", "n_tokens"],
            )

    return run


def in_sentence_pool(mentions: DataFrame, pool: SentencePool) -> tuple[DataFrame, DataFrame]:
    """The mentions whose sentence is in ``pool``, and the sentences' token counts (each sentence
    tokenized once, however many mentions it holds)."""
    sentences = mentions.select("doc_id", F.col("sent_idx").cast("int"), "sentence").dropDuplicates(
        ["doc_id", "sent_idx"]
    )
    lengths = sentences.mapInArrow(_token_counts(pool.tokenizer), "doc_id string, sent_idx int, n_tokens int")
    kept = lengths.filter(F.col("n_tokens").between(pool.min_tokens, pool.max_tokens)).select("doc_id", "sent_idx")
    return mentions.join(kept, ["doc_id", "sent_idx"], "left_semi"), lengths


def rank_key(seed: int) -> Column:
    """The seeded SHA-256 rank key of a mention (see the module docstring)."""
    parts = [F.lit(str(seed)), *(F.col(c).cast("string") for c in (*_TIE_BREAK, "entity_id"))]
    return F.sha2(F.concat_ws(KEY_SEPARATOR, *parts), 256)


def top_ranked(df: DataFrame, partition: list[str], n: int, order: tuple[str, ...] = RANK_ORDER) -> DataFrame:
    """The first ``n`` rows of each ``partition`` group in ``order`` (the rank key, then the tie-break)."""
    order = Window.partitionBy(*partition).orderBy(*order)
    return df.withColumn("pos", F.row_number().over(order)).filter(F.col("pos") <= n).drop("pos")


@dataclass(frozen=True)
class SamplingSettings:
    """What decides the sample (the config's ``sampling`` block): at most ``max_per_entity`` mentions
    per entity (paper: 256) chosen by the rank ``seed`` keys; entities with fewer than
    ``min_frequency`` mentions get no sample (so no table row) but keep their frequency, so that
    reports still count them; ``pool``: sample and count only mentions in its sentences (module
    docstring)."""

    max_per_entity: int = 256
    seed: int = 42
    min_frequency: int = 1
    pool: SentencePool | None = None

    @classmethod
    def from_params(cls, params: object) -> SamplingSettings:
        """The settings a sampling job's ``snakemake.params`` carry (workflow/rules/sampling.smk maps the
        config's ``sampling`` block to them; ``pool``, the ``sentence_tokens`` block, only where the
        rule samples a corpus's own mentions): one reading for every rule that samples."""
        pool = getattr(params, "pool", None)
        return cls(
            max_per_entity=params.max_per_entity,  # type: ignore[attr-defined]
            seed=params.seed,  # type: ignore[attr-defined]
            min_frequency=params.min_frequency,  # type: ignore[attr-defined]
            pool=SentencePool(pool["tokenizer"], pool["min"], pool["max"]) if pool else None,
        )

    def __post_init__(self) -> None:
        if self.max_per_entity < 1 or self.min_frequency < 1:
            raise ValueError(
                f"max_per_entity and min_frequency must be at least 1, got {self.max_per_entity}, {self.min_frequency}"
            )


def sample_mentions(
    spark: SparkSession,
    mentions_path: str,
    samples_out: str,
    frequencies_out: str,
    settings: SamplingSettings,
    *,
    wanted: list[str] | None,
) -> dict[str, int]:
    """Write up to ``settings.max_per_entity`` mentions per entity and every entity's mention count.

    ``wanted``: entity ids to keep (None: all). Wanted entities without any mention get frequency 0,
    so that reports can show what the corpus lacks. Returns and logs the counts.
    """
    mentions = spark.read.parquet(mentions_path)
    counts: dict[str, int] = {"mentions": mentions.count()}
    if settings.pool is not None:
        mentions = _in_pool(mentions, settings.pool, counts)
    wanted_df = None
    if wanted is not None:
        if any(entity is None for entity in wanted):
            raise ValueError("wanted entity ids must not be None (drop unresolved task entities first)")
        wanted_df = spark.createDataFrame([(entity,) for entity in sorted(set(wanted))], "entity_id string")
        counts["wanted"] = wanted_df.count()
        mentions = mentions.join(wanted_df, "entity_id", "left_semi")
    _write_frequencies(mentions, wanted_df, frequencies_out)
    if settings.min_frequency > 1:
        frequent = spark.read.parquet(frequencies_out).filter(F.col("frequency") >= settings.min_frequency)
        mentions = mentions.join(frequent.select("entity_id"), "entity_id", "left_semi")
    _write_sample(mentions, settings, samples_out)
    counts.update(_written_counts(spark, frequencies_out, samples_out, settings))
    for key, value in counts.items():
        log.info("sample_mentions: %s = %d", key, value)
    return counts


def _in_pool(mentions: DataFrame, pool: SentencePool, counts: dict[str, int]) -> DataFrame:
    """The mentions in ``pool``'s sentences (cached: both the sample and the frequencies read them),
    and in ``counts`` how many there are and how many sentences were too short or too long."""
    mentions, lengths = in_sentence_pool(mentions, pool)
    lengths = lengths.cache()
    outside = lengths.agg(
        F.sum((F.col("n_tokens") < pool.min_tokens).cast("long")).alias("short"),
        F.sum((F.col("n_tokens") > pool.max_tokens).cast("long")).alias("long"),
    ).first()
    counts["pool_sentences_too_short"] = int(outside["short"] or 0)
    counts["pool_sentences_too_long"] = int(outside["long"] or 0)
    mentions = mentions.cache()
    counts["pool_mentions"] = mentions.count()
    log.info(
        "sentence pool %s: %d of %d mentions are in sentences of %d-%d tokens",
        pool.tokenizer,
        counts["pool_mentions"],
        counts["mentions"],
        pool.min_tokens,
        pool.max_tokens,
    )
    return mentions


def _write_frequencies(mentions: DataFrame, wanted: DataFrame | None, out: str) -> None:
    """Every entity's mention count before sampling; each wanted entity's, 0 where it has none."""
    frequencies = mentions.groupBy("entity_id").agg(F.count("*").alias("frequency"))
    if wanted is not None:
        frequencies = wanted.join(frequencies, "entity_id", "left").fillna(0, ["frequency"])
    frequencies.select(*(F.col(c).cast(t) for c, t in FREQUENCY_TYPES.items())).write.mode("overwrite").parquet(out)


def _write_sample(mentions: DataFrame, settings: SamplingSettings, out: str) -> None:
    """Each entity's ``max_per_entity`` mentions of smallest rank key, found in two stages (module docstring)."""
    n = settings.max_per_entity
    ranked = mentions.withColumn("rank", rank_key(settings.seed))
    salted = ranked.withColumn("bucket", F.pmod(F.xxhash64("rank"), F.lit(SALT_BUCKETS)))
    chosen = top_ranked(top_ranked(salted, ["entity_id", "bucket"], n), ["entity_id"], n)
    columns = {**SAMPLE_TYPES, **MENTION_TYPES}
    chosen.orderBy("entity_id", "rank").select(*(F.col(c).cast(t) for c, t in columns.items())).write.mode(
        "overwrite"
    ).parquet(out)


def frequency_counts(frequencies: DataFrame, settings: SamplingSettings) -> dict[str, int]:
    """What a written frequencies table says: mentions and entities, and what the cap and the
    minimum frequency did to them (a corpus's sample and a merged one count alike)."""
    written = frequencies.agg(
        F.sum("frequency").alias("mentions_wanted"),
        F.sum((F.col("frequency") > 0).cast("long")).alias("entities"),
        F.sum((F.col("frequency") > settings.max_per_entity).cast("long")).alias("entities_capped"),
        F.sum((F.col("frequency") == 0).cast("long")).alias("wanted_without_mentions"),
        F.sum(F.col("frequency").between(1, settings.min_frequency - 1).cast("long")).alias(
            "entities_below_min_frequency"
        ),
    ).first()
    return {key: int(value or 0) for key, value in written.asDict().items()}


def _written_counts(spark: SparkSession, frequencies: str, samples: str, settings: SamplingSettings) -> dict[str, int]:
    """The counts read back from what was written, and the sentences sampled."""
    return {
        **frequency_counts(spark.read.parquet(frequencies), settings),
        "samples": spark.read.parquet(samples).count(),
    }
