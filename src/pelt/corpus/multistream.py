"""Multistream dumps: the ``-index.txt.bz2`` Wikimedia publishes beside them, split into byte ranges of
whole bz2 streams for parallel reading, and the pages of such a range. Telling whether a bz2 file is
multistream at all is here too; what the pages' XML holds is :mod:`pelt.corpus.dump`'s business.
"""

from __future__ import annotations

import bz2
import logging
import os
import re
from collections.abc import Iterator
from typing import BinaryIO

from pelt.corpus.bz2_blocks import BZ2_PIECE, CHUNK
from pelt.corpus.dump import DumpPage, DumpStats, iter_pages_from_chunks
from pelt.logs import progress

logger = logging.getLogger(__name__)


def _iter_streams(fh: BinaryIO, start: int, end: int, stats: DumpStats) -> Iterator[bytes]:
    """Decompressed bytes of the bz2 streams in ``fh[start:end]`` that hold ``<page>`` elements.

    A multistream dump's first stream is the ``<mediawiki><siteinfo>`` header and its last the
    closing ``</mediawiki>``; skipping streams that do not start with ``<page`` lets every range
    parse as a list of bare pages. Output is yielded as it is decompressed, so a stream cut short
    still gives the pages before the cut. Bytes after the last stream that are not bz2 are counted
    (``stats.trailing_bytes``), not read.
    """
    fh.seek(start)
    remaining = end - start
    data = b""
    while data or remaining > 0:
        while len(data) < 3 and remaining > 0 and (more := fh.read(min(BZ2_PIECE, remaining))):
            remaining -= len(more)
            data += more
        if not data:
            raise EOFError(f"the file ends at byte {fh.tell()}, before the range's end {end}")
        if not data.startswith(b"BZh"):
            stats.trailing_bytes = len(data) + remaining
            logger.warning("%d bytes after the last bz2 stream are not bz2: not read", stats.trailing_bytes)
            return
        decomp = bz2.BZ2Decompressor()
        head = b""  # start of the stream, until it shows whether it holds pages
        keep: bool | None = None
        while not decomp.eof:
            if not data:
                data = fh.read(min(BZ2_PIECE, remaining)) if remaining > 0 else b""
                remaining -= len(data)
                if not data:
                    raise EOFError(f"bz2 stream cut short at byte {end - remaining} (truncated file or range)")
            out = decomp.decompress(data)
            data = b""
            if keep is None:
                head += out
                stripped = head.lstrip()
                if len(stripped) < len(b"<page"):
                    continue
                keep = stripped.startswith(b"<page")
                out = head
            if keep and out:
                yield out
        data = decomp.unused_data


def iter_multistream_pages(
    path: str | os.PathLike[str], start: int, end: int, stats: DumpStats | None = None
) -> Iterator[DumpPage]:
    """Pages of the bz2 streams in bytes ``[start, end)`` of a multistream dump (see ``multistream_ranges``)."""
    stats = stats if stats is not None else DumpStats()
    with open(path, "rb") as fh:
        yield from iter_pages_from_chunks(_iter_streams(fh, start, end, stats), stats, wrap=True)
        stats.bytes_unread += max(0, end - fh.tell()) if stats.errors else 0
        if stats.bytes_unread:
            logger.error("%d of %d bytes of %s[%d:%d] not read", stats.bytes_unread, end - start, path, start, end)


_MULTISTREAM = re.compile(r"^(.*multistream)(\d*)\.xml(.*)\.bz2$")


def multistream_index_path(path: str) -> str | None:
    """The ``-index.txt.bz2`` file that Wikimedia publishes beside a multistream dump, if it exists.

    ``X-multistream.xml.bz2`` -> ``X-multistream-index.txt.bz2`` and, for split dumps,
    ``X-multistream1.xml-p1p41242.bz2`` -> ``X-multistream-index1.txt-p1p41242.bz2``.
    """
    match = _MULTISTREAM.match(path)
    if match is None:
        return None
    candidate = f"{match.group(1)}-index{match.group(2)}.txt{match.group(3)}.bz2"
    return candidate if os.path.exists(candidate) else None


def multistream_ranges(path: str, index_path: str, target_bytes: int) -> list[tuple[int, int]]:
    """Split a multistream dump into byte ranges of whole bz2 streams, about ``target_bytes`` each.

    The index lists ``offset:page_id:title`` per page; its distinct offsets are the stream starts.
    Ranges let several Spark tasks share one file; the last range runs to the end of the file.
    """
    offsets: set[int] = set()
    with bz2.open(index_path, "rt", encoding="utf-8") as fh:
        # One line per page: ~20M for English Wikipedia, read on the driver before any task starts.
        for line in progress(fh, f"index {os.path.basename(index_path)}", unit="pages"):
            head = line.split(":", 1)[0]
            if head.isdigit():
                offsets.add(int(head))
    if not offsets:
        raise ValueError(f"multistream index {index_path} lists no stream offsets")
    starts = sorted(offsets)
    size = os.path.getsize(path)
    ranges: list[tuple[int, int]] = []
    begin = starts[0]
    for offset in starts[1:]:
        if offset - begin >= target_bytes:
            ranges.append((begin, offset))
            begin = offset
    ranges.append((begin, size))
    return ranges


def is_multistream(path: str | os.PathLike[str], probe_bytes: int = CHUNK) -> bool:
    """Whether a bz2 file holds a second stream within its first ``probe_bytes``: a multistream
    dump's first stream is its small ``<siteinfo>`` header."""
    decompressor = bz2.BZ2Decompressor()
    with open(path, "rb") as fh:
        data = fh.read(probe_bytes)
    try:
        decompressor.decompress(data, max_length=1 << 20)
        while not decompressor.eof and not decompressor.needs_input:
            decompressor.decompress(b"", max_length=1 << 20)
    except (OSError, EOFError):
        return False
    return decompressor.eof and decompressor.unused_data.startswith(b"BZh")
