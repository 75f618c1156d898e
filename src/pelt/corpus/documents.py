"""The corpus stage's output format, shared by every corpus kind: ``documents/`` (text and links)
and ``pages/`` (titles, redirects, QIDs) Parquet, read back as the union of a domain's files, and
the helpers both corpus jobs use (input globs, skip logging, files that gave nothing).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.window import Window

from pelt.registry import expand_globs

logger = logging.getLogger(__name__)

# Contract schemas. Every field is nullable because that is how Spark reads any Parquet file back;
# written and re-read schemas then compare equal.
LINK_TYPE = T.StructType(
    [
        T.StructField("start", T.IntegerType()),
        T.StructField("end", T.IntegerType()),
        T.StructField("target", T.StringType()),
    ]
)
DOCUMENTS_SCHEMA = T.StructType(
    [
        T.StructField("doc_id", T.StringType()),
        T.StructField("title", T.StringType()),
        T.StructField("text", T.StringType()),
        T.StructField("links", T.ArrayType(LINK_TYPE)),
    ]
)
PAGES_SCHEMA = T.StructType(
    [
        T.StructField("page_id", T.LongType()),
        T.StructField("title", T.StringType()),
        T.StructField("is_redirect", T.BooleanType()),
        T.StructField("redirect_to", T.StringType()),
        T.StructField("is_disambiguation", T.BooleanType()),
        T.StructField("qid", T.StringType()),
        T.StructField("revision_id", T.LongType()),  # decides between pages of one title from two dump files
    ]
)
# What the parsing tasks emit: a page (skip is null) or a skipped page / read error, and the file


def as_paths(paths: str | Sequence[str]) -> list[str]:
    """One path or a list of them, as a list (a domain's corpus is one output per file)."""
    return [paths] if isinstance(paths, str) else list(paths)


def expand_paths(paths: Iterable[str]) -> list[str]:
    """Expand globs (configs name ``dir/*.jsonl``) as the workflow does (:func:`pelt.registry.expand_globs`:
    an existing file's own name first, so that ``[`` in a name works); a pattern that matches nothing is an
    error."""
    return expand_globs(list(paths), "input")


def log_skips(rows: DataFrame, counts: dict[str, int], stage: str, quiet: Iterable[str] = ()) -> None:
    """Log the counts of a stage and a few examples of each skip reason (``quiet`` reasons: counts only)."""
    logger.info("%s: %s", stage, ", ".join(f"{k}={v}" for k, v in counts.items()))
    noisy = rows.where(F.col("skip").isNotNull() & ~F.col("skip").isin(list(quiet)))
    for row in noisy.select("skip", "detail").limit(20).collect():
        logger.warning("%s: skipped (%s): %s", stage, row.skip, row.detail)


def files_without_documents(
    files: list[str], with_documents: Iterable[str], counts: Mapping[str, int], stage: str
) -> int:
    """How many of ``files`` gave no document; each is logged with what the stage read.

    A skip, not an error: with one corpus job per file, one empty or truncated file among many
    must not stop the domain. A domain whose files give no document at all fails where they are
    read together (:func:`read_documents`), rather than as an empty table hours later.
    """
    empty = sorted(set(files) - set(with_documents))
    if empty:
        found = ", ".join(f"{k}={v}" for k, v in counts.items() if v) or "nothing"
        logger.warning(
            "%s: no document in %s (read: %s); a wrong path, or an empty or truncated file?", stage, empty, found
        )
    return len(empty)


def read_documents(spark: SparkSession, paths: str | Sequence[str]) -> DataFrame:
    """The documents of a domain: the union of its corpus outputs (one per corpus file).

    A domain whose files hold no document at all is an error here, naming them: each file's corpus
    job only counted its own file as empty (see :func:`files_without_documents`).
    """
    paths = as_paths(paths)
    documents = spark.read.parquet(*paths)
    if documents.isEmpty():
        raise ValueError(
            f"no document in {paths}: every corpus file was empty or skipped (the corpus logs and"
            " counts.json beside them say what each held); a wrong path, or empty or truncated files?"
        )
    return documents


def read_pages(spark: SparkSession, paths: str | Sequence[str]) -> DataFrame:
    """The pages of a Wikipedia domain: the union of its corpus outputs (one per dump file), one
    page per title.

    Each corpus job keeps one page per title of its own file; a title in two files (a page moved
    while a split dump was written, or the same page in two dump runs) is decided here as within a
    file: the highest revision id, then the highest page id, then the corpus output whose path sorts
    last. :func:`count_duplicate_titles` counts the pages dropped, :func:`read_wikipedia_documents`
    drops their documents.
    """
    return _latest_pages(spark, as_paths(paths)).drop("_source")


def _source() -> Column:
    """The corpus output (one dump file's folder) a row was read from: ``.../files/{file}``."""
    return F.regexp_extract(F.input_file_name(), r"^(.*)/[^/]+/[^/]+$", 1)


def _latest_pages(spark: SparkSession, paths: list[str]) -> DataFrame:
    pages = spark.read.parquet(*paths).withColumn("_source", _source())
    if len(paths) == 1:
        return pages
    order = [F.col("revision_id").desc_nulls_last(), F.col("page_id").desc_nulls_last(), F.col("_source").desc()]
    rank = F.row_number().over(Window.partitionBy("title").orderBy(*order))
    return pages.withColumn("_rank", rank).where(F.col("_rank") == 1).drop("_rank")


def read_wikipedia_documents(
    spark: SparkSession, paths: str | Sequence[str], pages_paths: str | Sequence[str]
) -> DataFrame:
    """:func:`read_documents` without the articles :func:`read_pages` dropped for a title that
    another dump file holds too (a document's ``doc_id`` is its page id)."""
    documents = read_documents(spark, paths)
    if len(as_paths(pages_paths)) == 1:
        return documents
    kept = _latest_pages(spark, as_paths(pages_paths)).select(
        F.col("page_id").cast("string").alias("doc_id"), "_source"
    )
    return documents.withColumn("_source", _source()).join(kept, ["doc_id", "_source"], "left_semi").drop("_source")


def count_duplicate_titles(spark: SparkSession, paths: str | Sequence[str]) -> int:
    """How many pages :func:`read_pages` drops because another dump file holds their title (two
    Spark jobs, only with more than one file; logged with examples)."""
    paths = as_paths(paths)
    if len(paths) == 1:
        return 0
    every = spark.read.parquet(*paths)
    dropped = every.count() - read_pages(spark, paths).count()
    if dropped:
        repeated = every.groupBy("title").count().where(F.col("count") > 1).limit(5).collect()
        logger.warning(
            "%d pages dropped: their title is also in another dump file, whose page has a later revision (e.g. %s)",
            dropped,
            ", ".join(repr(row.title) for row in repeated),
        )
    return dropped
