"""Corpus stage (Spark) for S2ORC: papers -> ``documents/`` Parquet (no hyperlinks: ``links`` is empty).

Reads every S2ORC layout met in the wild, ``.gz`` or plain, one JSON object per line or one JSON
document per file:

- metadata JSONL (``paper_id``, ``title``, ``abstract`` as a string);
- full text, 2020+ / s2orc-doc2json (``paper_id``, ``abstract`` and ``body_text`` as lists of
  paragraphs with ``text``, ``metadata.title``);
- full text, 2019 release (``metadata{title, abstract}``, ``grobid_parse`` / ``latex_parse`` with
  ``abstract`` and ``body_text`` paragraph lists; the LaTeX parse is preferred when present, being
  the cleaner of the two, and the metadata abstract over the parsed one).

``text`` is the abstract and then the body paragraphs, one per line. One task per file: gzip
cannot be split, and S2ORC ships as many shards.
"""

from __future__ import annotations

import gzip
import itertools
import json
import logging
import re
import zlib
from collections import Counter
from collections.abc import Iterator
from functools import partial
from typing import Any, BinaryIO

from pyspark import StorageLevel
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.window import Window

from pelt.corpus.documents import (
    DOCUMENTS_SCHEMA,
    expand_paths,
    files_without_documents,
    log_skips,
)

logger = logging.getLogger(__name__)

# Why a record produced no document.
S2ORC_SKIP_REASONS = ("no_text", "no_paper_id", "bad_json", "read_error", "duplicate")

_ROWS = T.StructType(
    [
        *DOCUMENTS_SCHEMA.fields,
        T.StructField("skip", T.StringType()),
        T.StructField("detail", T.StringType()),
        T.StructField("bad_utf8", T.BooleanType()),
        T.StructField("file", T.StringType()),
    ]
)


def _decode(raw: bytes) -> tuple[str, bool]:
    """UTF-8 text, with undecodable bytes replaced (U+FFFD); the flag says whether any were."""
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace"), True


_SURROGATE = re.compile("[\ud800-\udfff]")


def _well_formed(value: str, escape: bool = False) -> tuple[str, bool]:
    """``value`` with its lone surrogates (a JSON ``\\ud800`` escape without its pair, which json.loads
    keeps and no UTF-8 writer can) replaced, and whether it had any: they are bad UTF-8, counted like
    undecodable bytes. Text gets U+FFFD; an id (``escape``) the escape as the file wrote it, so that two
    ids differing only there stay two papers instead of one U+FFFD id, the other dropped as its duplicate."""
    if value.isascii() or not _SURROGATE.search(value):
        return value, False
    return _SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}" if escape else "\ufffd", value), True


# The most bytes one record (a line, or a pretty-printed file) may take: S2ORC's largest papers are
# a few MB, and a longer line (a file without newlines) would otherwise be read whole into memory.
MAX_RECORD_BYTES = 64 << 20


def _parse(raw: bytes, where: str) -> tuple[Any, bool, str]:
    """``(record, bad_utf8, where)``, ``record`` None when the bytes do not parse.

    Any exception is one bad record, never the file's: a deeply nested value raises RecursionError
    and a 5,000-digit number ValueError, besides JSONDecodeError.
    """
    text, bad = _decode(raw)
    try:
        return json.loads(text), bad, where
    except Exception as exc:  # noqa: BLE001 - see the docstring
        return None, bad, f"{where}: {type(exc).__name__}: {str(exc)[:200]}"


def _lines(fh: BinaryIO) -> Iterator[tuple[int, bytes | None]]:
    """``(line number, line)`` of each non-empty line, None for one over MAX_RECORD_BYTES (skipped
    in bounded memory, without being read whole)."""
    lineno = 0
    while line := fh.readline(MAX_RECORD_BYTES + 1):
        lineno += 1
        if len(line) > MAX_RECORD_BYTES and not line.endswith(b"\n"):
            while (rest := fh.readline(MAX_RECORD_BYTES)) and not rest.endswith(b"\n"):
                pass
            yield lineno, None
        elif line.strip():
            yield lineno, line


def iter_s2orc_records(path: str) -> Iterator[tuple[Any, bool, str]]:
    """``(record, bad_utf8, where)`` for each JSON record of a file; ``record`` is None if it does not parse.

    A file whose first non-empty line is a lone ``{`` or ``[`` is one pretty-printed JSON document (an
    object, or a list of objects); any other is JSON lines, each line parsed alone, so that a bad line
    (the first included) costs that line only. Both are read in memory bounded by MAX_RECORD_BYTES.
    """
    with open(path, "rb") as probe:
        gzipped = probe.read(2) == b"\x1f\x8b"
    with gzip.open(path, "rb") if gzipped else open(path, "rb") as fh:
        lines = _lines(fh)
        first_no, first = next(lines, (0, b""))
        if first is not None and first.strip() in (b"{", b"["):
            yield from _document(first + fh.read(MAX_RECORD_BYTES + 1 - len(first)), path)
            return
        for lineno, line in itertools.chain([(first_no, first)] if first_no else [], lines):
            if line is None:
                yield None, False, f"{path}:{lineno}: line over {MAX_RECORD_BYTES} bytes"
            else:
                yield _parse(line, f"{path}:{lineno}")


def _document(raw: bytes, path: str) -> Iterator[tuple[Any, bool, str]]:
    """The records of a pretty-printed file, or one bad record when it is too long or does not parse."""
    if len(raw) > MAX_RECORD_BYTES:
        yield None, False, f"{path}: document over {MAX_RECORD_BYTES} bytes"
        return
    document, bad, where = _parse(raw, path)
    for record in document if isinstance(document, list) else [document]:
        yield record, bad, where


def _paragraphs(value: Any) -> list[str]:
    """Non-empty paragraph texts of a string or a list of paragraphs (dicts with ``text``, or strings)."""
    if isinstance(value, str):
        return [value.strip()] if value.strip() else []
    if not isinstance(value, list):
        return []
    texts = (p.get("text") if isinstance(p, dict) else p for p in value)
    return [t.strip() for t in texts if isinstance(t, str) and t.strip()]


def _first(*candidates: list[str]) -> list[str]:
    return next((c for c in candidates if c), [])


def paper_text(record: dict[str, Any], include_body: bool = True) -> tuple[str, str]:
    """``(title, text)`` of an S2ORC record in any of the supported layouts; text may be empty."""
    metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    parses = [p for p in (record.get("latex_parse"), record.get("grobid_parse")) if isinstance(p, dict)]
    title = record.get("title") or metadata.get("title") or ""
    # The metadata abstract (from the publisher) before the PDF parses' (GROBID glues "Abstract" to it).
    abstract = _first(
        _paragraphs(record.get("abstract")),
        _paragraphs(metadata.get("abstract")),
        *(_paragraphs(p.get("abstract")) for p in parses),
    )
    body = _first(_paragraphs(record.get("body_text")), *(_paragraphs(p.get("body_text")) for p in parses))
    return str(title), "\n".join(abstract + body if include_body else abstract)


def _file_rows(path: str, include_body: bool) -> Iterator[tuple]:
    """The rows of :func:`_record_rows`, each with the file's path (files without papers are counted)."""
    return ((*row, path) for row in _record_rows(path, include_body))


def _record_row(record: Any, bad_utf8: bool, where: str, include_body: bool) -> tuple:
    """The row of one parsed record: a document, or a skip with its reason."""
    if not isinstance(record, dict):
        return (None, None, None, None, "bad_json", where, bad_utf8)
    paper_id = record.get("paper_id")
    if paper_id is None or paper_id == "":
        return (None, None, None, None, "no_paper_id", where, bad_utf8)
    paper_id, bad_id = _well_formed(str(paper_id), escape=True)
    title, text = paper_text(record, include_body)
    (title, bad_title), (text, bad_text) = _well_formed(title), _well_formed(text)
    bad_utf8 = bad_utf8 or bad_id or bad_title or bad_text
    if not text:
        return (paper_id, title, None, None, "no_text", f"{where}: paper {paper_id}", bad_utf8)
    return (paper_id, title, text, [], None, None, bad_utf8)


def _record_rows(path: str, include_body: bool) -> Iterator[tuple]:
    """One output row per record of a file (a document, or a skip row with the reason), and one
    ``read_error`` row if the file breaks off (truncated gzip): the records before it are kept."""
    try:
        for record, bad_utf8, where in iter_s2orc_records(path):
            try:
                yield _record_row(record, bad_utf8, where, include_body)
            except Exception as exc:  # noqa: BLE001 - a record's damage costs that record, never the file
                yield (None, None, None, None, "bad_json", f"{where}: {type(exc).__name__}", bad_utf8)
    except (OSError, EOFError, zlib.error) as exc:
        logger.error("%s: reading stopped: %r", path, exc)
        yield (None, None, None, None, "read_error", f"{path}: {exc!r}", False)


def build_s2orc_corpus(
    spark: SparkSession, paths: list[str], documents_out: str, *, include_body: bool = True
) -> dict[str, int]:
    """Write the S2ORC papers of ``paths`` (files or globs) as ``documents/``; return and log counts.

    Counts: ``documents`` (written, one per paper id), ``records`` (records read, plus one per
    file that broke off), ``bad_utf8`` (records with undecodable bytes or lone surrogates, replaced
    and kept: :func:`_well_formed`), ``skipped_<reason>`` for each of S2ORC_SKIP_REASONS
    (``duplicate``: a paper id met again, its shorter text dropped) and ``files_without_documents``
    (files that gave no paper: logged, not an error).
    ``include_body=False`` keeps abstracts only.
    """
    files = expand_paths(paths)
    rdd = spark.sparkContext.parallelize(files, len(files)).flatMap(partial(_file_rows, include_body=include_body))
    rows = spark.createDataFrame(rdd, _ROWS, verifySchema=False).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        by_kind: Counter[str] = Counter()
        for row in rows.groupBy("skip", "bad_utf8").count().collect():
            by_kind["documents" if row.skip is None else f"skipped_{row.skip}"] += row["count"]
            by_kind["records"] += row["count"]
            by_kind["bad_utf8"] += row["count"] if row.bad_utf8 else 0
        papers = rows.where(F.col("skip").isNull())
        with_documents = [row.file for row in papers.select("file").distinct().collect()]
        empty = files_without_documents(files, with_documents, by_kind, "s2orc corpus")
        # A paper met twice (metadata abstract and full text, or two releases) is kept once: the
        # longest text wins; ties go to the smaller text so that reruns choose the same record.
        best = Window.partitionBy("doc_id").orderBy(F.length("text").desc(), F.col("text"))
        (
            papers.withColumn("_rank", F.row_number().over(best))
            .where(F.col("_rank") == 1)
            .select(*DOCUMENTS_SCHEMA.fieldNames())
            .write.mode("overwrite")
            .parquet(documents_out)
        )
        written = spark.read.parquet(documents_out).count()
        by_kind["skipped_duplicate"] = by_kind["documents"] - written
        by_kind["documents"] = written
        counts = {k: by_kind[k] for k in ("documents", "records", "bad_utf8")}
        counts.update({f"skipped_{r}": by_kind[f"skipped_{r}"] for r in S2ORC_SKIP_REASONS})
        counts["files_without_documents"] = empty
        log_skips(rows, counts, "s2orc corpus", quiet=("no_text",))
    finally:
        rows.unpersist()
    return counts
