"""The corpus stage's output format, shared by every corpus kind: ``documents/`` (text and links)
and ``pages/`` (titles, redirects, QIDs) Parquet, read back as the union of a domain's files, and
the helpers both corpus jobs use (input globs, skip logging, files that gave nothing).
"""

from __future__ import annotations

import glob
import logging
from collections.abc import Iterable, Mapping, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

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
    ]
)
# What the parsing tasks emit: a page (skip is null) or a skipped page / read error, and the file


def as_paths(paths: str | Sequence[str]) -> list[str]:
    """One path or a list of them, as a list (a domain's corpus is one output per file)."""
    return [paths] if isinstance(paths, str) else list(paths)


def expand_paths(paths: Iterable[str]) -> list[str]:
    """Expand globs (configs name ``dir/*.jsonl``); a pattern that matches nothing is an error."""
    found: list[str] = []
    for pattern in paths:
        matches = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else glob.glob(glob.escape(pattern))
        if not matches:
            raise FileNotFoundError(f"no input file matches {pattern!r}")
        found.extend(matches)
    return found


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
    """The pages of a Wikipedia domain: the union of its corpus outputs (one per dump file)."""
    return spark.read.parquet(*as_paths(paths))
