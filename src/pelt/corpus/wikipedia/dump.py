"""Reading Wikipedia ``pages-articles`` dumps: pages streamed from bz2 (plain or multistream) in
bounded memory, bytes that are not UTF-8 kept and counted, the dump's header, and the pages of a range
of bz2 blocks. Finding and decoding those blocks is :mod:`pelt.corpus.wikipedia.bz2_blocks`'s business; the
multistream index and its ranges of streams, :mod:`pelt.corpus.wikipedia.multistream`'s; cutting the decoded
text into pages, each parsed alone, :mod:`pelt.corpus.wikipedia.pages`'s; what a page's wikitext means,
:mod:`pelt.corpus.wikipedia.wikitext`'s.
"""

from __future__ import annotations

import bz2
import codecs
import logging
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from functools import partial
from typing import BinaryIO

from pelt.corpus.wikipedia.bz2_blocks import BZ2_PIECE, CHUNK, Gap, bz2_markers, iter_bz2_blocks
from pelt.corpus.wikipedia.pages import DumpPage, DumpStats, PageScanner, local_name
from pelt.corpus.wikipedia.site import SiteInfo

logger = logging.getLogger(__name__)


# Bytes that are not UTF-8, as the surrogateescape error handler keeps them (U+DC80..U+DCFF).
_ESCAPED_BYTES = re.compile("[\udc80-\udcff]")
# Characters XML 1.0 forbids (C0 controls but tab, newline and return; U+FFFE, U+FFFF), and
# numeric character references that name one: the parser stops at the first, losing the rest of
# the file (146 of the sample's 206 pages for one `&#1;` early on).
_BAD_XML_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
# References are judged by value, not spelling: ``&#00000000001;`` is U+0001 to the parser too.
_CHAR_REF = re.compile(r"&#(?:[xX]([0-9a-fA-F]+)|([0-9]+));")
# The tail of a reference cut by the chunk boundary, after its "&": matched from the last "&" only (a
# reference holds no other), with one unbounded run, so that a run of digits costs its length once.
_PARTIAL_REF = re.compile(r"(?:#([xX]?)([0-9a-fA-F]*))?")


def _xml_char(code: int) -> bool:
    return code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or 0x10000 <= code <= 0x10FFFF


def _bad_ref(match: re.Match[str]) -> str:
    digits = (match.group(1) or match.group(2)).lstrip("0")
    code = int(digits or "0", 16 if match.group(1) else 10) if len(digits) <= 8 else -1  # 9 digits: none is XML
    return match.group() if _xml_char(code) else "\ufffd"


def _partial_ref(text: str) -> int:
    """Where a character reference cut by the end of ``text`` begins, or -1."""
    at = text.rfind("&")
    return at if at != -1 and _PARTIAL_REF.fullmatch(text, at + 1) else -1


def _held_ref(partial: str) -> str:
    """A reference cut by the chunk boundary, in few characters whatever its padding: its leading zeros
    dropped, and its digits past the 9th, which no character's reference has."""
    if partial in ("&", "&#", "&#x", "&#X"):
        return partial
    x = partial[2] if partial[2] in "xX" else ""
    return f"&#{x}0{partial[2 + len(x) :].lstrip('0')[:9]}"


def _xml_safe(text: str, stats: DumpStats) -> str:
    text, n = _BAD_XML_CHARS.subn("\ufffd", text)
    if "&#" in text:
        fixed = _CHAR_REF.sub(_bad_ref, text)
        n += fixed.count("\ufffd") - text.count("\ufffd")
        text = fixed
    stats.bad_xml_chars += n
    return text


def _decoded(chunks: Iterable[bytes | Gap], stats: DumpStats) -> Iterator[str | Gap]:
    """The chunks as text, each byte that is not UTF-8 replaced by U+FFFD and counted.

    The XML parser would stop at the first such byte and lose the rest of the file (a whole dump
    for one bad byte); decoding here keeps every page. The incremental decoder carries a character
    split across two chunks over to the next, so the result does not depend on the chunking.
    Characters XML forbids, written or as references, are replaced and counted likewise
    (``stats.bad_xml_chars``).
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
    held = ""  # a character reference cut by the chunk boundary waits for its end
    for chunk in _with_end(chunks):
        if isinstance(chunk, Gap):  # what was held ends in bytes that are lost
            decoder.reset()
            held = ""
            yield chunk
            continue
        text, n = _ESCAPED_BYTES.subn("\ufffd", decoder.decode(chunk, final=not chunk))
        stats.bad_utf8 += n
        text = held + text
        at = _partial_ref(text) if chunk else -1
        held = _held_ref(text[at:]) if at != -1 else ""
        text = _xml_safe(text[:at] if at != -1 else text, stats)
        if text:
            yield text


def _with_end(chunks: Iterable[bytes | Gap]) -> Iterator[bytes | Gap]:
    """The non-empty chunks, cut to CHUNK bytes (a bz2 block of one repeated byte decodes to 45 MB,
    which as text of 4-byte characters would be 180), then one empty chunk: the decoder's end of input."""
    for chunk in chunks:
        if isinstance(chunk, Gap):
            yield chunk
        else:
            yield from (chunk[at : at + CHUNK] for at in range(0, len(chunk), CHUNK))
    yield b""


def iter_pages_from_chunks(chunks: Iterable[bytes | Gap], stats: DumpStats, wrap: bool = False) -> Iterator[DumpPage]:
    """Parse ``<page>`` elements out of a stream of XML bytes, each page alone.

    ``wrap``: the bytes are bare ``<page>`` elements (a multistream fragment, a range of bz2 blocks),
    not a whole ``<mediawiki>`` file, which must end with ``</mediawiki>`` (a file cut between pages
    is an error, not a silent end). A page whose XML cannot be read (an undefined entity, a stray
    ``<``, a malformed tag) costs itself, counted in ``stats.bad_pages``; a :class:`Gap` in the bytes
    (a corrupt bz2 block) and a page that never ends cost the page they cut, counted; reading goes
    on at the next ``<page>``. An error from the byte source ends the stream after the pages already
    complete, and is recorded in ``stats.errors`` and logged. Bytes that are not UTF-8 are replaced
    and counted (``stats.bad_utf8``, logged), not an error.
    """
    scanner = PageScanner(stats)
    gap_last = False  # the bytes end in a gap: a missing </mediawiki> is that gap's, counted once
    try:
        for text in _decoded(chunks, stats):
            if isinstance(text, Gap):
                stats.errors.append(f"Gap: {text.reason}")
                stats.bytes_unread += text.end - text.start
                scanner.gap()
                gap_last = True
            else:
                gap_last = gap_last and not text.strip()
                yield from scanner.feed(text)
        if scanner.page is not None:
            stats.errors.append("ParseError: the XML ends inside a <page> (no </page>)")
            scanner.cut(stats.errors[-1])
        elif not wrap and not scanner.ended and not gap_last:
            stats.errors.append("ParseError: the XML ends before </mediawiki> (a file cut between pages?)")
    except (EOFError, OSError, ValueError) as exc:
        stats.errors.append(f"{type(exc).__name__}: {exc}")
        logger.error("dump read stopped after %d pages: %s: %s", stats.pages, type(exc).__name__, exc)
        scanner.cut(f"{type(exc).__name__}: {exc}")
    if stats.bad_utf8:
        logger.warning("%d bytes that are not UTF-8 replaced by U+FFFD", stats.bad_utf8)
    if stats.bad_xml_chars:
        logger.warning("%d characters that XML forbids replaced by U+FFFD", stats.bad_xml_chars)


_MAX_BLOCK_BYTES = 1 << 21  # more than any bz2 block's compressed size (900 kB of input, at most ~1% larger)


def is_bz2(path: str | os.PathLike[str]) -> bool:
    """Whether a file is bz2, by its magic, not its name."""
    with open(path, "rb") as fh:
        return fh.read(3) == b"BZh"


class _DumpFile:
    """A dump file's bytes, decompressed when it is bz2 (recognised by its magic, not its name),
    with the position reached in the file, so that a read that stops can say how much it never read.

    bz2 is decoded here rather than by ``bz2.open``, which stops silently at bytes after the last
    stream that are not bz2 (``trailing_bytes`` here, counted) and cannot say where it stopped.
    """

    def __init__(self, path: str | os.PathLike[str], fh: BinaryIO, stats: DumpStats) -> None:
        self.path, self.fh, self.stats = path, fh, stats
        self.size = os.fstat(fh.fileno()).st_size
        self.position = 0  # bytes of the file consumed

    def chunks(self) -> Iterator[bytes | Gap]:
        magic = self.fh.read(3)
        self.fh.seek(0)
        if magic != b"BZh":
            while chunk := self.fh.read(CHUNK):
                self.position += len(chunk)
                yield chunk
            return
        yield from self._bz2_chunks()

    def _bz2_chunks(self) -> Iterator[bytes | Gap]:
        """The decompressed bytes, CHUNK at most at a time: 494 bytes of bz2 can hold 600 MB of one byte."""
        decomp = bz2.BZ2Decompressor()
        stream_start, data = 0, b""
        while True:
            if decomp.eof:  # between streams: another stream, or bytes that are not bz2
                self.position -= len(decomp.unused_data)  # given to the decompressor, past its stream
                data = self._more(decomp.unused_data)
                if not data:
                    return
                if not data.startswith(b"BZh"):
                    self.stats.trailing_bytes = self.size - self.position
                    logger.warning(
                        "%d bytes after the last bz2 stream are not bz2: not read", self.stats.trailing_bytes
                    )
                    self.position = self.size
                    return
                decomp, stream_start = bz2.BZ2Decompressor(), self.position
            if decomp.needs_input:
                data = data or self.fh.read(BZ2_PIECE)
                if not data:
                    raise EOFError(f"bz2 stream from byte {stream_start} cut short: the file ends at byte {self.size}")
            try:
                out = decomp.decompress(data, CHUNK)
            except OSError as exc:
                logger.error(
                    "corrupt bz2 data between bytes %d and %d: %s", self.position, self.position + len(data), exc
                )
                yield from self._resumed(stream_start)
                return
            self.position += len(data)
            data = b""
            if out:
                yield out

    def _resumed(self, stream_start: int) -> Iterator[bytes | Gap]:
        """After a decompression error in the piece from ``self.position``: the rest of the file block by
        block, from the block that piece's output began in (nothing of it was yielded: a block's output
        comes only once all its bits are read), each corrupt block a :class:`Gap`."""
        with open(self.path, "rb") as scan:
            window = max(stream_start, self.position - _MAX_BLOCK_BYTES) * 8
            before = (bit for bit, _ in bz2_markers(scan, window))
            resume = window
            for bit in before:
                if bit >= self.position * 8:
                    break
                resume = bit
        self.position = self.size
        yield from (out for _, out in iter_bz2_blocks(self.path, resume // 8, self.size, pass_over=0))

    def _more(self, data: bytes) -> bytes:
        """``data`` extended until it can show a bz2 magic (3 bytes) or the file ends."""
        while len(data) < 3 and (more := self.fh.read(BZ2_PIECE)):
            data += more
        return data


def iter_dump_pages(source: str | os.PathLike[str] | BinaryIO, stats: DumpStats | None = None) -> Iterator[DumpPage]:
    """Stream the pages of a ``pages-articles*.xml[.bz2]`` file (path) or of a binary XML stream.

    Never holds more than one page in memory. Pass ``stats`` to learn how many pages were read and
    which errors stopped the read (a truncated bz2 keeps every page before the break); for a path,
    also how many bytes of the file a stop left unread and how many appended bytes were not bz2.
    """
    stats = stats if stats is not None else DumpStats()
    if not isinstance(source, (str, os.PathLike)):
        read = getattr(source, "read1", source.read)  # read1: a truncated bz2 keeps what it decompressed
        yield from iter_pages_from_chunks(iter(partial(read, CHUNK), b""), stats)
        return
    with open(source, "rb") as fh:
        dump = _DumpFile(source, fh, stats)
        yield from iter_pages_from_chunks(dump.chunks(), stats)
        stats.bytes_unread += dump.size - dump.position
        if stats.bytes_unread:
            logger.error("%d of %d bytes of %s not read", stats.bytes_unread, dump.size, source)


# Characters read, at most, for a dump's header: a siteinfo is a few kB, and a file without one shows a
# <page> long before this.
MAX_HEADER_CHARS = 4 << 20


def read_dump_header(path: str | os.PathLike[str]) -> ET.Element | None:
    """The ``<mediawiki>`` root of a dump file (its attributes, ``xml:lang`` among them) with its
    ``<siteinfo>`` inside, read from the file's start up to the end of ``<siteinfo>``; None when the
    file has no header (a fragment of bare pages) or it cannot be read (logged: the pages are read,
    or fail, on their own).

    Read once per file on the driver: the tasks that read byte ranges of the file never see its
    start (:func:`pelt.corpus.wikipedia.site.SiteInfo.from_siteinfo` makes what they need of it).
    """
    parser = ET.XMLPullParser(events=("start", "end"))
    root: ET.Element | None = None
    read = 0
    try:
        with open(path, "rb") as fh:
            for text in _decoded(_DumpFile(path, fh, DumpStats()).chunks(), DumpStats()):
                if isinstance(text, Gap) or read > MAX_HEADER_CHARS:
                    break
                read += len(text)
                parser.feed(text)
                for event, elem in parser.read_events():
                    if root is None:
                        root = elem
                        if local_name(elem.tag) != "mediawiki":
                            return None
                    elif (event == "end" and local_name(elem.tag) == "siteinfo") or local_name(elem.tag) == "page":
                        for child in [child for child in root if local_name(child.tag) != "siteinfo"]:
                            root.remove(child)  # pages parsed with the header's chunk are not kept
                        return root
    except (ET.ParseError, EOFError, OSError) as exc:
        logger.warning("%s: no dump header read: %s: %s", path, type(exc).__name__, exc)
    return root


def dump_site(path: str | os.PathLike[str], language: str | None = None) -> SiteInfo:
    """The site facts of a dump file, from its header; ``language`` (the config's) overrides the
    language the dump says."""
    site = SiteInfo.from_siteinfo(read_dump_header(path), language)
    logger.info(
        "%s: language %s (from the %s), %d namespaces",
        path,
        site.language,
        site.language_from,
        len(site.namespaces),
    )
    return site


# --- any bz2 dump in parallel: the pages whose <page> tag begins in a range's blocks ---------------


def _owned_pages(blocks: Iterable[tuple[bool, bytes | Gap]]) -> Iterator[bytes | Gap]:
    """The bytes of the ``<page>`` elements whose start tag begins in the owned blocks.

    A range's text starts and ends inside pages: it begins at the first ``<page>`` of its owned
    blocks and runs, through the blocks after them, to the first ``<page>`` (or ``</mediawiki>``)
    that begins after them, where the next range's pages begin. So every page is read by exactly
    one range, whole. Dumps escape ``<`` in text, so the tags cannot occur inside a page's text.
    A corrupt block is passed on as its :class:`Gap`; one after the owned blocks ends the range.
    """
    owned_end = 0  # offset, in this range's decompressed bytes, where the owned blocks end
    offset = 0  # offset of ``buffer[0]``
    buffer = b""
    started = False
    try:
        for owned, out in blocks:
            if isinstance(out, Gap):
                if started or owned:
                    yield from (buffer, out) if started else (out,)
                    offset += len(buffer)
                    buffer = b""
                if not owned:
                    return
                continue
            if owned:
                owned_end += len(out)
            buffer += out
            if not started:
                at = buffer.find(b"<page>")
                if at == -1 or offset + at >= owned_end:
                    if not owned or at != -1:
                        return  # no page begins in the owned blocks
                    tail = buffer[-5:]  # a start tag cut by the block boundary
                    offset += len(buffer) - len(tail)
                    buffer = tail
                    continue
                started = True
                offset += at
                buffer = buffer[at:]
            # The next range's first page begins after the owned blocks; the dump's end may be in them.
            stops = [buffer.find(b"<page>", max(owned_end - offset, 0)), buffer.find(b"</mediawiki>")]
            stop = min((at for at in stops if at >= 0), default=-1)
            if stop != -1:
                yield buffer[:stop]
                return
            keep = len(b"</mediawiki>") - 1  # a tag cut by the block boundary is found with the next block
            cut = max(len(buffer) - keep, 1)
            yield buffer[:cut]
            offset += cut
            buffer = buffer[cut:]
    except (OSError, EOFError):  # the pages read before a cut or corrupt block are kept
        if started:
            yield buffer
        raise
    if started and buffer:
        yield buffer


def iter_bz2_range_pages(
    path: str | os.PathLike[str], start: int, end: int, stats: DumpStats | None = None
) -> Iterator[DumpPage]:
    """Pages whose ``<page>`` tag begins in the bz2 blocks that start in bytes ``[start, end)`` of
    any bz2 dump (single stream, or multistream without its index); see :func:`bz2_block_ranges`."""
    stats = stats if stats is not None else DumpStats()
    yield from iter_pages_from_chunks(_owned_pages(iter_bz2_blocks(path, start, end)), stats, wrap=True)
