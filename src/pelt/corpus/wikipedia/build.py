"""Corpus stage (Spark): Wikipedia dumps -> ``documents/`` and ``pages/`` Parquet (:mod:`pelt.corpus.documents`).

Parsing runs inside Spark tasks: the driver only lists work items (one per dump file, or one per
byte range of bz2 streams for a multistream dump with its index beside it), so a large dump is
spread over all cores or all executors. Dump paths must be readable by the executors (a local
path for ``local[N]``, a shared file system on a cluster).

Every page becomes exactly one row: a page, or a skip row that says why (``skip``) and what
(``detail``); so does each page a read error cut, and what a dump file lost to a read error or
held after its last bz2 stream is a row with its byte count (``amount``). Counts come from those
rows, not from accumulators, so a retried task cannot count twice and nothing is dropped without a
trace. Of pages with the same title the one with the highest revision id is kept (the latest edit:
the page that holds the title now, when one was moved over another while the dump was written),
the others are counted as ``duplicate_title``; within one corpus job, that is one dump file. The
revision id is kept in ``pages/``, so that a title in two dump files is decided the same way where
the files are read together (:func:`pelt.corpus.documents.read_pages`).

The workflow runs one corpus job per file, so that a new dump file is parsed alone; a file that
gives no document is a counted skip there (``files_without_documents``), and the stages after
read the union of the files' outputs with :func:`read_documents` and :func:`read_pages`, where a
domain whose files hold no document at all is an error.
"""

from __future__ import annotations

import gzip
import logging
import os
import re
import signal
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from typing import Any, NamedTuple

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.window import Window

from pelt.corpus.documents import (
    LINK_TYPE,
    PAGES_SCHEMA,
    expand_paths,
    files_without_documents,
    log_skips,
)
from pelt.corpus.wikipedia.bz2_blocks import bz2_block_ranges
from pelt.corpus.wikipedia.dump import dump_site, is_bz2, iter_bz2_range_pages, iter_dump_pages
from pelt.corpus.wikipedia.multistream import (
    is_multistream,
    iter_multistream_pages,
    multistream_index_path,
    multistream_ranges,
)
from pelt.corpus.wikipedia.pages import DumpPage, DumpStats
from pelt.corpus.wikipedia.site import ENGLISH, SiteInfo
from pelt.corpus.wikipedia.titles import is_disambiguation, normalize_title, redirect_target
from pelt.corpus.wikipedia.wikitext import wikitext_to_plain

logger = logging.getLogger(__name__)

# What the parsing tasks emit: a page (skip is null) or a skipped page / read error, the file it
# came from, the page's revision id (duplicate titles), how much the row counts (1, or bytes) and
# an id (which of two identical pages is kept).
_PAGE_ROWS = T.StructType(
    [
        *(f for f in PAGES_SCHEMA.fields if f.name not in ("qid", "revision_id")),
        T.StructField("text", T.StringType()),
        T.StructField("links", T.ArrayType(LINK_TYPE)),
        T.StructField("skip", T.StringType()),
        T.StructField("detail", T.StringType()),
        T.StructField("file", T.StringType()),
        T.StructField("revision_id", T.LongType()),
        T.StructField("amount", T.LongType()),
        T.StructField("row", T.LongType()),
    ]
)
# Why a <page> of a dump produced no page: each is counted as ``skipped_<reason>``, and with the
# pages they make ``pages_read``, every <page> the reader met.
PAGE_SKIP_REASONS = (
    "other_namespace",
    "bad_redirect",
    "text_deleted",  # <text deleted="deleted"/>: the revision's text was suppressed
    "no_text",  # empty or blank <text>
    "no_visible_text",  # wikitext that shows nothing (only templates, comments, ...): not an empty article
    "wikitext_error",
    "wikitext_timeout",
    "bad_page",  # no <title> or <id>, or an unreadable one
    "page_id_overflow",  # a page (or revision) id over 64 bits: no column holds it, null would lose it
    "page_cut",  # started, then a read error ended the file; or in a corrupt multistream stream, by its index
    "duplicate_title",
)
# What a read error cost beyond the pages: the errors, and bytes of the file never read.
WIKIPEDIA_SKIP_REASONS = (*PAGE_SKIP_REASONS, "dump_error", "unread_bytes", "trailing_bytes")
# A page whose wikitext is still being read after this many seconds is skipped and counted, so
# that no page can cost a task (the conversion is linear in the page; this is the safety net).
PAGE_SECONDS = 60.0


def fits_long(value: int) -> bool:
    """Whether an id fits the ids' column type (Spark's LongType, Parquet's int64); a larger one is a
    counted skip, where Spark would make it a null silently."""
    return -(2**63) <= value < 2**63


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
    multistream dump with its index (``streams``), or a byte range of bz2 blocks (``blocks``).
    ``streams`` holds ``(offset, pages)`` of the streams the index lists in the range (a
    :class:`pelt.corpus.wikipedia.multistream.StreamRange`'s)."""

    path: str
    start: int | None = None
    end: int | None = None
    reader: str = "streams"
    streams: tuple[tuple[int, int], ...] = ()


def wikipedia_work_items(paths: Iterable[str], split_bytes: int = DEFAULT_SPLIT_BYTES) -> list[WorkItem]:
    """The tasks of the corpus stage: about ``split_bytes`` of compressed dump each.

    A multistream dump with its index is split at the streams the index lists; any other bz2 dump
    larger than ``split_bytes`` at bz2 block boundaries (:func:`pelt.corpus.wikipedia.bz2_blocks.bz2_block_ranges`),
    which each task finds for itself; an uncompressed or small file is one task.
    """
    items: list[WorkItem] = []
    for path in paths:
        index = multistream_index_path(path)
        if index is not None:
            ranges = multistream_ranges(path, index, split_bytes)
            logger.info("%s: multistream, %d byte ranges of ~%d bytes", path, len(ranges), split_bytes)
            items.extend(WorkItem(path, start, end, streams=streams) for start, end, streams in ranges)
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


def _amount_row(reason: str, amount: int, detail: str, path: str) -> tuple:
    """A row that counts ``amount`` (bytes, characters) of a file rather than one page."""
    return (*_skip_row(reason, detail), path, None, amount)


def _page_row(page: DumpPage, namespace: int, seconds: float | None = PAGE_SECONDS, site: SiteInfo = ENGLISH) -> tuple:
    """The output row of one dump page: a redirect, an article, or a skip row, its wikitext read as
    ``site``'s (namespaces, redirect words, disambiguation templates, link trail). Everything that
    reads the page's wikitext runs within ``seconds``."""
    title = normalize_title(page.title)
    ids = {"page": page.page_id, "revision": page.revision_id}
    too_large = [f"{what} id {value}" for what, value in ids.items() if value is not None and not fits_long(value)]
    if too_large:
        return _skip_row("page_id_overflow", f"{', '.join(too_large)} over 64 bits", None, title)
    if page.ns != namespace:
        return _skip_row("other_namespace", f"ns={page.ns}", page.page_id, title)
    try:
        with time_limit(seconds):
            return _read_page(page, title, site)
    except PageTimeout as exc:
        logger.warning("page %d %r: wikitext reading stopped: %s", page.page_id, title, exc)
        return _skip_row("wikitext_timeout", str(exc), page.page_id, title)
    except Exception as exc:  # one broken page must not fail the job: it is counted and logged instead
        logger.warning("page %d %r: wikitext conversion failed: %r", page.page_id, title, exc)
        return _skip_row("wikitext_error", repr(exc), page.page_id, title)


def page_record(page: DumpPage, site: SiteInfo = ENGLISH, namespace: int = 0) -> dict[str, Any]:
    """The corpus stage's row of one dump page (:func:`build_wikipedia_corpus`), column by column: a
    redirect or an article (``skip`` None), or why the stage skips it; read as ``site``'s, with no
    time limit."""
    return dict(zip(_PAGE_ROWS.fieldNames(), _page_row(page, namespace, None, site)))


def _read_page(page: DumpPage, title: str, site: SiteInfo) -> tuple:
    if page.redirect_to is not None:  # the dump's <redirect> tag; older dumps have only the #REDIRECT line
        target: str | None = normalize_title(page.redirect_to)
        if not target:
            return _skip_row("bad_redirect", f"redirect to {page.redirect_to!r}", page.page_id, title)
    else:
        target = redirect_target(page.text, site)
    if target is not None:
        return (page.page_id, title, True, target, False, None, None, None, None)
    if page.text_deleted:
        return _skip_row("text_deleted", "the revision's text is deleted", page.page_id, title)
    if not page.text.strip():
        return _skip_row("no_text", f"{len(page.text)} characters of wikitext, all blank", page.page_id, title)
    text, links = wikitext_to_plain(page.text, site)
    if not text.strip():
        detail = f"{len(page.text)} characters of wikitext: {page.text[:80]!r}"
        return _skip_row("no_visible_text", detail, page.page_id, title)
    links_out = [(link.start, link.end, link.target) for link in links]
    return (page.page_id, title, False, None, is_disambiguation(page.text, site), text, links_out, None, None)


def _page_rows(item: WorkItem, namespace: int, sites: Mapping[str, SiteInfo] | None = None) -> Iterator[tuple]:
    """Rows of one work item, then one row per malformed page or read error it met. ``sites`` holds
    each file's site facts, read on the driver (a range of a file never sees the file's header);
    a file it lacks is read as English Wikipedia."""
    path, start, end, reader, streams = WorkItem(*item)
    stats = DumpStats()
    if start is None or end is None:
        pages = iter_dump_pages(path, stats)
    elif reader == "blocks":
        pages = iter_bz2_range_pages(path, start, end, stats)
    else:
        pages = iter_multistream_pages(path, start, end, stats, streams=streams)
    site = (sites or {}).get(path, ENGLISH)
    for page in pages:
        revision_id = page.revision_id if page.revision_id is None or fits_long(page.revision_id) else None
        yield (*_page_row(page, namespace, site=site), path, revision_id, 1)
    where = path if start is None else f"{path}[{start}:{end}]"
    for message in stats.bad_pages:
        yield _amount_row("bad_page", 1, f"{where}: {message}", path)
    error = "; ".join(stats.errors)
    for title in stats.cut_pages:
        yield _amount_row("page_cut", 1, f"{where}: page {title!r} cut by {error}", path)
    if stats.pages_unread:
        detail = f"{where}: {stats.pages_unread} pages the multistream index lists in skipped streams ({error})"
        yield _amount_row("page_cut", stats.pages_unread, detail, path)
    for message in stats.errors:
        yield _amount_row("dump_error", 1, f"{where}: {message}", path)
    if stats.bytes_unread:
        yield _amount_row(
            "unread_bytes", stats.bytes_unread, f"{where}: {stats.bytes_unread} bytes after {error}", path
        )
    if stats.trailing_bytes:
        detail = f"{where}: {stats.trailing_bytes} bytes after the last bz2 stream are not bz2"
        yield _amount_row("trailing_bytes", stats.trailing_bytes, detail, path)
    if stats.bad_utf8:  # the pages are kept: a notice row, counted apart from the skips
        notice = f"{where}: {stats.bad_utf8} bytes that are not UTF-8 replaced by U+FFFD"
        yield _amount_row("bad_utf8", 1, notice, path)
    if stats.bad_xml_chars:  # likewise: the pages are kept
        notice = f"{where}: {stats.bad_xml_chars} characters that XML forbids replaced by U+FFFD"
        yield _amount_row("bad_xml_chars", 1, notice, path)


def _without_duplicate_titles(rows: DataFrame) -> DataFrame:
    """The rows with every page but one of each title turned into a ``duplicate_title`` skip.

    The page with the highest revision id wins: revision ids grow with every edit of the wiki, so
    it is the latest text, that of the page holding the title now (a dump written while a page
    was moved over another lists both). Ties (no revision id, the same page twice) go to the
    highest page id, then the row read last (row ids follow the work items and the order in each),
    so the choice never depends on partitioning or timing.
    Titles are ranked on their keys alone, once (``rows`` should be persisted), and the few losers
    broadcast back: the text is never shuffled.
    """
    live = F.col("skip").isNull()
    order = (F.col("revision_id").desc_nulls_last(), F.col("page_id").desc_nulls_last(), F.col("row").desc())
    by_title = Window.partitionBy("title").orderBy(*order)
    winner = F.first(F.struct("page_id", "revision_id")).over(by_title)
    losers = (
        rows.where(live)
        .select("title", "page_id", "revision_id", "row")
        .select("row", F.row_number().over(by_title).alias("rank"), winner.alias("winner"))
        .where(F.col("rank") > 1)
        .select(
            "row",
            F.format_string(
                "page %d (revision %s) kept: the latest revision of the title", "winner.page_id", "winner.revision_id"
            ).alias("kept"),
        )
    )
    losers = rows.sparkSession.createDataFrame(losers.collect(), losers.schema)
    marked = rows.join(F.broadcast(losers), "row", "left")
    duplicate = F.col("kept").isNotNull()
    replaced = {
        "skip": F.when(duplicate, F.lit("duplicate_title")).otherwise(F.col("skip")),
        "detail": F.coalesce(F.col("kept"), F.col("detail")),
    }
    return marked.select(*(replaced.get(c, F.col(c)).alias(c) for c in rows.columns))


# The page_props rows pelt reads: a page's Wikidata item, and the disambiguation flag that MediaWiki's
# Disambiguator extension sets (`__DISAMBIG__`, in every language's disambiguation templates).
_PAGE_PROPS_ROW = re.compile(r"\((\d+),'(wikibase_item|disambiguation)','(Q\d+|)'[,)]")


def parse_page_props(line: str) -> list[tuple[int | None, str, str]]:
    """``(page_id, prop, value)`` of the ``wikibase_item`` (value: the QID) and ``disambiguation``
    (value: empty) rows in one line of a ``page_props.sql`` dump; a page id over 64 bits is None (no
    page has it: counted as ``skipped_page_props_id_overflow``)."""
    return [
        (int(page_id) if fits_long(int(page_id)) else None, prop, value)
        for page_id, prop, value in _PAGE_PROPS_ROW.findall(line)
        if value or prop == "disambiguation"
    ]


def _page_props_rows(path: str) -> Iterator[tuple[int | None, str, str]]:
    """The rows of one ``page_props.sql[.gz]`` file, read by Python's own ``open``: Spark's file reader
    takes ``[``, ``{`` and ``:`` in a path for a glob or a URI, and the dumps are gzip, one task a file
    either way."""
    with open(path, "rb") as probe:
        gzipped = probe.read(2) == b"\x1f\x8b"
    with (
        gzip.open(path, "rt", encoding="utf-8", errors="replace")
        if gzipped
        else open(path, encoding="utf-8", errors="replace") as fh
    ):
        for line in fh:
            yield from parse_page_props(line)


def _page_props(spark: SparkSession, paths: list[str]) -> DataFrame:
    """Each page_props row, a page id too large for the column null (counted by the caller)."""
    schema = T.StructType(
        [
            T.StructField("page_id", T.LongType()),
            T.StructField("prop", T.StringType(), False),
            T.StructField("value", T.StringType(), False),
        ]
    )
    rows = spark.sparkContext.parallelize(paths, len(paths)).flatMap(_page_props_rows)
    return spark.createDataFrame(rows, schema)


def _with_page_props(pages: DataFrame, props: DataFrame, counts: dict[str, int]) -> DataFrame:
    """Each page's QID, and its disambiguation flag from page_props or-ed with the templates' (a
    page_props row is MediaWiki's own verdict; a dump without page_props keeps the templates').
    Counts the pages that page_props alone flags as ``disambiguation_from_page_props``."""
    known = props.where(F.col("page_id").isNotNull())
    qids = (
        known.where(F.col("prop") == "wikibase_item")
        .select("page_id", F.col("value").alias("qid"))
        .dropDuplicates(["page_id"])
    )
    flagged = known.where(F.col("prop") == "disambiguation").select("page_id", F.lit(True).alias("flagged")).distinct()
    joined = pages.join(qids, "page_id", "left").join(flagged, "page_id", "left")
    by_props = F.coalesce(F.col("flagged"), F.lit(False))
    counts["disambiguation_from_page_props"] = joined.where(by_props & ~F.col("is_disambiguation")).count()
    counts["disambiguation"] += counts["disambiguation_from_page_props"]
    return joined.withColumn("is_disambiguation", F.col("is_disambiguation") | by_props)


def build_wikipedia_corpus(
    spark: SparkSession,
    paths: list[str],
    documents_out: str,
    pages_out: str,
    *,
    namespace: int = 0,
    page_props: list[str] | None = None,
    split_bytes: int = DEFAULT_SPLIT_BYTES,
    sites: Mapping[str, SiteInfo] | None = None,
    language: str | None = None,
) -> dict[str, int]:
    """Parse ``pages-articles`` dumps into ``documents/`` (articles) and ``pages/`` (articles + redirects).

    ``paths`` are dump files or globs; ``page_props`` optional ``page_props.sql[.gz]`` dumps that
    give each page's Wikidata QID and flag disambiguation pages (beside the site's templates).
    Returns (and logs) counts: ``pages`` (rows of pages/),
    ``articles``, ``redirects``, ``disambiguation``, ``pages_read`` (every <page> of the dump the
    reader met: the pages and the skipped ones), ``skipped_<reason>`` for each of
    WIKIPEDIA_SKIP_REASONS (pages, read errors, and bytes for ``unread_bytes`` and
    ``trailing_bytes``), ``files_with_bad_utf8`` / ``files_with_bad_xml_chars`` (files or
    multistream ranges in which such bytes or characters were replaced; their pages are kept),
    ``files_without_documents`` (dump files that gave no article: logged, not an error) and
    ``files_multistream_without_index`` (multistream dumps whose index is missing: a logged warning;
    they are split by bz2 blocks like single-stream dumps).

    Each file is read as the wiki its header describes (:func:`pelt.corpus.wikipedia.dump.dump_site`; the
    config's ``language`` overrides the dump's), unless ``sites`` gives its site already (the
    workflow's job reads it once, to record it beside the counts).
    """
    files = expand_paths(paths)
    sites = {path: (sites or {}).get(path) or dump_site(path, language) for path in files}
    unindexed = multistream_without_index(files)
    items = wikipedia_work_items(files, split_bytes)
    logger.info("wikipedia corpus: %d files, %d tasks", len(files), len(items))
    rows_of = partial(_page_rows, namespace=namespace, sites=sites)
    rdd = spark.sparkContext.parallelize(items, len(items)).flatMap(rows_of)
    rdd = rdd.zipWithUniqueId().map(lambda pair: (*pair[0], pair[1]))  # one partition per work item: a fixed id
    read = spark.createDataFrame(rdd, _PAGE_ROWS, verifySchema=False).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        rows = _without_duplicate_titles(read)
        by_kind: Counter[str] = Counter()
        grouped = rows.groupBy("skip", "is_redirect", "is_disambiguation").agg(F.sum("amount").alias("n"))
        for row in grouped.collect():
            if row.skip is not None:
                by_kind[f"skipped_{row.skip}"] += row.n
                continue
            by_kind["pages"] += row.n
            by_kind["redirects" if row.is_redirect else "articles"] += row.n
            by_kind["disambiguation"] += row.n if row.is_disambiguation else 0
        counts = {k: by_kind[k] for k in ("pages", "articles", "redirects", "disambiguation")}
        counts["pages_read"] = counts["pages"] + sum(by_kind[f"skipped_{r}"] for r in PAGE_SKIP_REASONS)
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
        pages = good.select("page_id", "title", "is_redirect", "redirect_to", "is_disambiguation", "revision_id")
        if page_props:
            props = _page_props(spark, expand_paths(page_props)).persist(StorageLevel.MEMORY_AND_DISK)
            counts["skipped_page_props_id_overflow"] = props.where(F.col("page_id").isNull()).count()
            pages = _with_page_props(pages, props, counts)
        else:
            pages = pages.withColumn("qid", F.lit(None).cast("string"))
        pages.select(*PAGES_SCHEMA.fieldNames()).write.mode("overwrite").parquet(pages_out)
        if page_props:
            counts["pages_with_qid"] = spark.read.parquet(pages_out).where(F.col("qid").isNotNull()).count()
            logger.info("wikipedia corpus: %d of %d pages have a QID", counts["pages_with_qid"], counts["pages"])
    finally:
        read.unpersist()
        if page_props:
            props.unpersist()
    return counts
