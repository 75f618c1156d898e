"""Corpus stage (Spark): Wikipedia dumps -> ``documents/`` and ``pages/`` Parquet (:mod:`pelt.corpus.documents`).

Parsing runs inside Spark tasks: the driver only lists work items (one per dump file, or one per
byte range of bz2 streams for a multistream dump with its index beside it), so a large dump is
spread over all cores or all executors. Dump paths must be readable by the executors (a local
path for ``local[N]``, a shared file system on a cluster).

Every page becomes exactly one row: a page, or a skip row that says why (``skip``) and what
(``detail``). Counts come from those rows, not from accumulators, so a retried task cannot count
twice and nothing is dropped without a trace.

The workflow runs one corpus job per file, so that a new dump file is parsed alone; a file that
gives no document is a counted skip there (``files_without_documents``), and the stages after
read the union of the files' outputs with :func:`read_documents` and :func:`read_pages`, where a
domain whose files hold no document at all is an error.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import NamedTuple

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pelt.corpus.documents import (
    LINK_TYPE,
    PAGES_SCHEMA,
    expand_paths,
    files_without_documents,
    log_skips,
)
from pelt.corpus.dump import (
    DumpPage,
    DumpStats,
    bz2_block_ranges,
    is_bz2,
    is_multistream,
    iter_bz2_range_pages,
    iter_dump_pages,
    iter_multistream_pages,
    multistream_index_path,
    multistream_ranges,
)
from pelt.corpus.wikitext import (
    is_disambiguation,
    normalize_title,
    redirect_target,
    wikitext_to_plain,
)

logger = logging.getLogger(__name__)

# it came from.
_PAGE_ROWS = T.StructType(
    [
        *PAGES_SCHEMA.fields[:-1],
        T.StructField("text", T.StringType()),
        T.StructField("links", T.ArrayType(LINK_TYPE)),
        T.StructField("skip", T.StringType()),
        T.StructField("detail", T.StringType()),
        T.StructField("file", T.StringType()),
    ]
)
# Why a page or a piece of a dump produced no output row.
WIKIPEDIA_SKIP_REASONS = (
    "other_namespace",
    "bad_redirect",
    "wikitext_error",
    "wikitext_timeout",
    "bad_page",
    "dump_error",
)
# A page whose wikitext is still being read after this many seconds is skipped and counted, so
# that no page can cost a task (the conversion is linear in the page; this is the safety net).
PAGE_SECONDS = 60.0


class PageTimeout(Exception):
    """A page's wikitext took longer than its time budget."""


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`PageTimeout` in the block after ``seconds`` (a SIGALRM timer). Spark's Python
    workers run each task in their main thread; elsewhere (another thread, no SIGALRM) there is no
    limit."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not seconds or not usable:
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise PageTimeout(f"over {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


DEFAULT_SPLIT_BYTES = 32 << 20  # compressed bytes per task for multistream dumps

# A bz2 range smaller than a block (up to ~900 KB of text, ~250 KB compressed) would give tasks
# that only look for a block start.
MIN_BLOCK_RANGE_BYTES = 1 << 20


class WorkItem(NamedTuple):
    """One task of the corpus stage: a whole file (no range), a byte range of whole bz2 streams of a
    multistream dump with its index (``streams``), or a byte range of bz2 blocks (``blocks``)."""

    path: str
    start: int | None = None
    end: int | None = None
    reader: str = "streams"


def wikipedia_work_items(paths: Iterable[str], split_bytes: int = DEFAULT_SPLIT_BYTES) -> list[WorkItem]:
    """The tasks of the corpus stage: about ``split_bytes`` of compressed dump each.

    A multistream dump with its index is split at the streams the index lists; any other bz2 dump
    larger than ``split_bytes`` at bz2 block boundaries (:func:`pelt.corpus.dump.bz2_block_ranges`),
    which each task finds for itself; an uncompressed or small file is one task.
    """
    items: list[WorkItem] = []
    for path in paths:
        index = multistream_index_path(path)
        if index is not None:
            ranges = multistream_ranges(path, index, split_bytes)
            logger.info("%s: multistream, %d byte ranges of ~%d bytes", path, len(ranges), split_bytes)
            items.extend(WorkItem(path, start, end) for start, end in ranges)
        elif is_bz2(path) and os.path.getsize(path) > split_bytes:
            ranges = bz2_block_ranges(path, max(split_bytes, MIN_BLOCK_RANGE_BYTES))
            logger.info("%s: bz2 without index, %d ranges of bz2 blocks of ~%d bytes", path, len(ranges), split_bytes)
            items.extend(WorkItem(path, start, end, "blocks") for start, end in ranges)
        else:
            items.append(WorkItem(path))
    return items


def multistream_without_index(paths: Iterable[str]) -> list[str]:
    """The multistream dumps without their ``-index.txt.bz2`` beside them, each a logged warning:
    they are read in parallel all the same (by bz2 blocks), but the index was probably meant to be there."""
    unindexed = [path for path in paths if not multistream_index_path(path) and is_bz2(path) and is_multistream(path)]
    for path in unindexed:
        logger.warning("%s: a multistream dump without its -index.txt.bz2 beside it; split by bz2 blocks instead", path)
    return unindexed


def _skip_row(reason: str, detail: str, page_id: int | None = None, title: str | None = None) -> tuple:
    return (page_id, title, None, None, None, None, None, reason, detail)


def _page_row(page: DumpPage, namespace: int, seconds: float | None = PAGE_SECONDS) -> tuple:
    """The output row of one dump page: a redirect, an article, or a skip row. Everything that reads
    the page's wikitext runs within ``seconds``."""
    title = normalize_title(page.title)
    if page.ns != namespace:
        return _skip_row("other_namespace", f"ns={page.ns}", page.page_id, title)
    try:
        with time_limit(seconds):
            return _read_page(page, title)
    except PageTimeout as exc:
        logger.warning("page %d %r: wikitext reading stopped: %s", page.page_id, title, exc)
        return _skip_row("wikitext_timeout", str(exc), page.page_id, title)
    except Exception as exc:  # one broken page must not fail the job: it is counted and logged instead
        logger.warning("page %d %r: wikitext conversion failed: %r", page.page_id, title, exc)
        return _skip_row("wikitext_error", repr(exc), page.page_id, title)


def _read_page(page: DumpPage, title: str) -> tuple:
    if page.redirect_to is not None:  # the dump's <redirect> tag; older dumps have only the #REDIRECT line
        target: str | None = normalize_title(page.redirect_to)
        if not target:
            return _skip_row("bad_redirect", f"redirect to {page.redirect_to!r}", page.page_id, title)
    else:
        target = redirect_target(page.text)
    if target is not None:
        return (page.page_id, title, True, target, False, None, None, None, None)
    text, links = wikitext_to_plain(page.text)
    links_out = [(link.start, link.end, link.target) for link in links]
    return (page.page_id, title, False, None, is_disambiguation(page.text), text, links_out, None, None)


def _page_rows(item: WorkItem, namespace: int) -> Iterator[tuple]:
    """Rows of one work item, then one row per malformed page or read error it met."""
    path, start, end, reader = WorkItem(*item)
    stats = DumpStats()
    if start is None or end is None:
        pages = iter_dump_pages(path, stats)
    elif reader == "blocks":
        pages = iter_bz2_range_pages(path, start, end, stats)
    else:
        pages = iter_multistream_pages(path, start, end, stats)
    for page in pages:
        yield (*_page_row(page, namespace), path)
    where = path if start is None else f"{path}[{start}:{end}]"
    for message in stats.bad_pages:
        yield (*_skip_row("bad_page", f"{where}: {message}"), path)
    for message in stats.errors:
        yield (*_skip_row("dump_error", f"{where}: {message}"), path)
    if stats.bad_utf8:  # the pages are kept: a notice row, counted apart from the skips
        notice = f"{where}: {stats.bad_utf8} bytes that are not UTF-8 replaced by U+FFFD"
        yield (*_skip_row("bad_utf8", notice), path)
    if stats.bad_xml_chars:  # likewise: the pages are kept
        notice = f"{where}: {stats.bad_xml_chars} characters that XML forbids replaced by U+FFFD"
        yield (*_skip_row("bad_xml_chars", notice), path)


_PAGE_PROPS_QID = re.compile(r"\((\d+),'wikibase_item','(Q\d+)'[,)]")


def parse_page_props(line: str) -> list[tuple[int, str]]:
    """``(page_id, qid)`` pairs of the ``wikibase_item`` rows in one line of a ``page_props.sql`` dump."""
    return [(int(page_id), qid) for page_id, qid in _PAGE_PROPS_QID.findall(line)]


def _page_qids(spark: SparkSession, paths: list[str]) -> DataFrame:
    schema = T.StructType([T.StructField("page_id", T.LongType(), False), T.StructField("qid", T.StringType(), False)])
    lines = spark.read.text(paths).rdd.map(lambda row: row.value)
    return spark.createDataFrame(lines.flatMap(parse_page_props), schema).dropDuplicates(["page_id"])


def build_wikipedia_corpus(
    spark: SparkSession,
    paths: list[str],
    documents_out: str,
    pages_out: str,
    *,
    namespace: int = 0,
    page_props: list[str] | None = None,
    split_bytes: int = DEFAULT_SPLIT_BYTES,
) -> dict[str, int]:
    """Parse ``pages-articles`` dumps into ``documents/`` (articles) and ``pages/`` (articles + redirects).

    ``paths`` are dump files or globs; ``page_props`` optional ``page_props.sql[.gz]`` dumps that
    give each page's Wikidata QID. Returns (and logs) counts: ``pages`` (rows of pages/),
    ``articles``, ``redirects``, ``disambiguation``, ``pages_read`` (all pages of the dump) and
    ``skipped_<reason>`` for each of WIKIPEDIA_SKIP_REASONS, and ``files_with_bad_utf8`` (files or
    multistream ranges in which bytes that are not UTF-8 were replaced; their pages are kept),
    ``files_without_documents`` (dump files that gave no article: logged, not an error), and
    ``files_multistream_without_index`` (multistream dumps whose index is missing: a logged warning;
    they are split by bz2 blocks like single-stream dumps).
    """
    files = expand_paths(paths)
    unindexed = multistream_without_index(files)
    items = wikipedia_work_items(files, split_bytes)
    logger.info("wikipedia corpus: %d files, %d tasks", len(files), len(items))
    rdd = spark.sparkContext.parallelize(items, len(items)).flatMap(partial(_page_rows, namespace=namespace))
    rows = spark.createDataFrame(rdd, _PAGE_ROWS, verifySchema=False).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        by_kind: Counter[str] = Counter()
        for row in rows.groupBy("skip", "is_redirect", "is_disambiguation").count().collect():
            if row.skip is not None:
                by_kind[f"skipped_{row.skip}"] += row["count"]
                continue
            by_kind["pages"] += row["count"]
            by_kind["redirects" if row.is_redirect else "articles"] += row["count"]
            by_kind["disambiguation"] += row["count"] if row.is_disambiguation else 0
        counts = {k: by_kind[k] for k in ("pages", "articles", "redirects", "disambiguation")}
        counts["pages_read"] = counts["pages"] + sum(
            by_kind[f"skipped_{r}"] for r in ("other_namespace", "bad_redirect", "wikitext_error", "wikitext_timeout")
        )
        counts.update({f"skipped_{r}": by_kind[f"skipped_{r}"] for r in WIKIPEDIA_SKIP_REASONS})
        counts["files_with_bad_utf8"] = by_kind["skipped_bad_utf8"]
        counts["files_with_bad_xml_chars"] = by_kind["skipped_bad_xml_chars"]
        counts["files_multistream_without_index"] = len(unindexed)
        good = rows.where(F.col("skip").isNull())
        articles = good.where(~F.col("is_redirect"))
        with_documents = [row.file for row in articles.select("file").distinct().collect()]
        counts["files_without_documents"] = files_without_documents(files, with_documents, counts, "wikipedia corpus")
        log_skips(rows, counts, "wikipedia corpus", quiet=("other_namespace",))

        documents = articles.select(F.col("page_id").cast("string").alias("doc_id"), "title", "text", "links")
        documents.write.mode("overwrite").parquet(documents_out)
        pages = good.select("page_id", "title", "is_redirect", "redirect_to", "is_disambiguation")
        if page_props:
            pages = pages.join(_page_qids(spark, expand_paths(page_props)), "page_id", "left")
        else:
            pages = pages.withColumn("qid", F.lit(None).cast("string"))
        pages.select(*PAGES_SCHEMA.fieldNames()).write.mode("overwrite").parquet(pages_out)
        if page_props:
            counts["pages_with_qid"] = spark.read.parquet(pages_out).where(F.col("qid").isNotNull()).count()
            logger.info("wikipedia corpus: %d of %d pages have a QID", counts["pages_with_qid"], counts["pages"])
    finally:
        rows.unpersist()
    return counts
