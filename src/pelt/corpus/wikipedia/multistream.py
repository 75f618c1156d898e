"""Multistream dumps: the ``-index.txt.bz2`` Wikimedia publishes beside them, split into byte ranges of
whole bz2 streams for parallel reading, and the pages of such a range. Telling whether a bz2 file is
multistream at all is here too; what the pages' XML holds is :mod:`pelt.corpus.wikipedia.dump`'s business.
"""

from __future__ import annotations

import bz2
import logging
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import BinaryIO, NamedTuple

from pelt.corpus.wikipedia.bz2_blocks import BZ2_PIECE, CHUNK, Gap
from pelt.corpus.wikipedia.dump import iter_pages_from_chunks
from pelt.corpus.wikipedia.pages import DumpPage, DumpStats
from pelt.logs import progress

logger = logging.getLogger(__name__)


# A bz2 stream's header ("BZh" and its block size) and its first block's magic, byte-aligned: where
# reading resumes after a corrupt stream when the index lists no stream after it.
_STREAM_HEAD = re.compile(rb"BZh[1-9]1AY&SY")


class StreamRange(NamedTuple):
    """Bytes ``[start, end)`` of a multistream dump, whole bz2 streams, with ``(offset, pages)`` of each
    stream the index lists in them: where reading resumes after a corrupt stream, and how many pages
    that stream held, so that the pages it loses are counted rather than unknown."""

    start: int
    end: int
    streams: tuple[tuple[int, int], ...] = ()


class _Streams:
    """The bz2 streams in bytes ``[start, end)`` of a multistream dump, decompressed one after another.

    A multistream dump's first stream is the ``<mediawiki><siteinfo>`` header and its last the
    closing ``</mediawiki>``; skipping streams that do not start with ``<page`` lets every range
    parse as a list of bare pages. Output is yielded as it is decompressed, so a stream cut short
    still gives the pages before the cut. Bytes after the last stream that are not bz2 are counted
    (``stats.trailing_bytes``), not read.

    Streams are independent, so one that does not decode (a corrupt block in it) costs only itself:
    it becomes a :class:`Gap` and reading resumes at the next stream ``listed`` (offset -> pages, the
    index's streams in the range), or where the index lists none after it, at the next stream header
    in the bytes. The pages the index lists in the stream that the page parser never saw begin are
    counted in ``stats.pages_unread``; the one it saw begin and not end is the parser's cut page.
    """

    def __init__(self, fh: BinaryIO, start: int, end: int, stats: DumpStats, listed: Mapping[int, int]) -> None:
        self.fh, self.end, self.stats, self.listed = fh, end, stats, listed
        self.at = start  # where the stream being read begins
        self.read_to = start  # the file's bytes before this were read (or skipped, as a Gap)
        self.decoded = start  # the stream's bytes before this gave their output
        self.data = b""  # bytes read and not yet decompressed, those of the stream at self.at first

    def chunks(self) -> Iterator[bytes | Gap]:
        self.fh.seek(self.at)
        while self.at < self.end:
            started = self.stats.pages_started  # the parser has read every byte yielded so far
            try:
                yield from self._stream()
            except OSError as exc:
                yield self._skip(exc, started)

    def _read(self) -> bytes:
        more = self.fh.read(min(BZ2_PIECE, self.end - self.read_to)) if self.read_to < self.end else b""
        self.read_to += len(more)
        return more

    def _stream(self) -> Iterator[bytes]:
        """The output of the stream at ``self.at`` if it holds pages; ``self.at`` then moves past it."""
        while len(self.data) < 3 and (more := self._read()):
            self.data += more
        if not self.data:
            raise EOFError(f"the file ends at byte {self.read_to}, before the range's end {self.end}")
        if not self.data.startswith(b"BZh"):
            if any(offset > self.at for offset in self.listed):  # the index lists streams after it
                raise OSError("no bz2 stream header")
            self.stats.trailing_bytes = self.end - self.at
            logger.warning("%d bytes after the last bz2 stream are not bz2: not read", self.stats.trailing_bytes)
            self.at = self.read_to = self.end
            return
        decomp = bz2.BZ2Decompressor()
        head = b""  # start of the stream, less its leading whitespace, until it shows whether it holds pages
        keep: bool | None = None
        fed = 0  # bytes of the stream given to the decompressor
        while not decomp.eof:
            data = b""
            if decomp.needs_input:  # else it holds output still: CHUNK at a time, whatever a stream expands to
                data, self.data = self.data or self._read(), b""
                if not data:
                    raise EOFError(f"bz2 stream cut short at byte {self.read_to} (truncated file or range)")
            out = decomp.decompress(data, CHUNK)
            fed += len(data)
            if out:
                self.decoded = self.at + fed
            if keep is None:
                head = (head + out).lstrip()
                if len(head) < len(b"<page"):
                    continue
                keep = head.startswith(b"<page")
                out = head
            if keep and out:
                yield out
        self.data = decomp.unused_data
        self.at = self.decoded = self.at + fed - len(self.data)

    def _skip(self, exc: OSError, started: int) -> Gap:
        """The stream at ``self.at``, which did not decode, skipped to the next one; its loss counted."""
        resume = min((offset for offset in self.listed if offset > self.at), default=None)
        if resume is None:
            resume = self._next_head(max(self.decoded, self.at + 1))
        reason = f"bz2 stream at byte {self.at} does not decode (corrupt file: {exc}): skipped to byte {resume}"
        logger.error(reason)
        if self.at in self.listed:
            self.stats.pages_unread += max(self.listed[self.at] - (self.stats.pages_started - started), 0)
        gap = Gap(min(self.decoded, resume), resume, reason)
        self.at = self.decoded = self.read_to = resume
        self.data = b""
        self.fh.seek(resume)
        return gap

    def _next_head(self, after: int) -> int:
        """Where the first stream header after byte ``after`` begins, or the range's end."""
        overlap = len(b"BZh91AY&SY") - 1  # a header cut by the chunk boundary is found with the next chunk
        self.fh.seek(after)
        base, data = after, b""
        while (want := self.end - base - len(data)) > 0 and (more := self.fh.read(min(CHUNK, want))):
            data += more
            if found := _STREAM_HEAD.search(data):
                return base + found.start()
            keep = min(len(data), overlap)
            base, data = base + len(data) - keep, data[len(data) - keep :]
        return self.end


def iter_multistream_pages(
    path: str | os.PathLike[str],
    start: int,
    end: int,
    stats: DumpStats | None = None,
    *,
    streams: Iterable[tuple[int, int]] = (),
) -> Iterator[DumpPage]:
    """Pages of the bz2 streams in bytes ``[start, end)`` of a multistream dump; ``streams``: ``(offset,
    pages)`` of the streams its index lists there (a :class:`StreamRange`'s, see ``multistream_ranges``),
    which a corrupt stream's loss is counted by and its next stream found at."""
    stats = stats if stats is not None else DumpStats()
    with open(path, "rb") as fh:
        reader = _Streams(fh, start, end, stats, dict(streams))
        yield from iter_pages_from_chunks(reader.chunks(), stats, wrap=True)
    stats.bytes_unread += end - reader.read_to  # where a read error stopped it
    if stats.bytes_unread:
        logger.error("%d of %d bytes of %s[%d:%d] not read", stats.bytes_unread, end - start, path, start, end)
    if stats.pages_unread:
        logger.error("%d pages the index lists in skipped streams of %s[%d:%d]", stats.pages_unread, path, start, end)


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


def multistream_ranges(path: str, index_path: str, target_bytes: int) -> list[StreamRange]:
    """Split a multistream dump into byte ranges of whole bz2 streams, about ``target_bytes`` each.

    The index lists ``offset:page_id:title`` per page; its distinct offsets are the stream starts,
    and how often each occurs how many pages the stream holds. Ranges let several Spark tasks share
    one file; the last range runs to the end of the file.
    """
    pages: Counter[int] = Counter()
    with bz2.open(index_path, "rt", encoding="utf-8") as fh:
        # One line per page: ~20M for English Wikipedia, read on the driver before any task starts.
        for line in progress(fh, f"index {os.path.basename(index_path)}", unit="pages"):
            head = line.split(":", 1)[0]
            if head.isdigit():
                pages[int(head)] += 1
    if not pages:
        raise ValueError(f"multistream index {index_path} lists no stream offsets")
    starts = sorted(pages)
    firsts = [0]  # the index in starts of each range's first stream
    for i in range(1, len(starts)):
        if starts[i] - starts[firsts[-1]] >= target_bytes:
            firsts.append(i)
    bounds = zip(firsts, [*firsts[1:], len(starts)])
    return [
        StreamRange(
            starts[a],
            starts[b] if b < len(starts) else os.path.getsize(path),
            tuple((o, pages[o]) for o in starts[a:b]),
        )
        for a, b in bounds
    ]


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
