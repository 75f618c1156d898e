"""Reading Wikipedia ``pages-articles`` dumps: pages streamed from bz2 (plain or multistream) in
bounded memory, bytes that are not UTF-8 kept and counted, the dump's header, and the pages of a range
of bz2 blocks. Finding and decoding those blocks is :mod:`pelt.corpus.wikipedia.bz2_blocks`'s business; the
multistream index and its ranges of streams, :mod:`pelt.corpus.wikipedia.multistream`'s; what a page's wikitext
means, :mod:`pelt.corpus.wikipedia.wikitext`'s.
"""

from __future__ import annotations

import bz2
import codecs
import logging
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import BinaryIO

from pelt.corpus.wikipedia.bz2_blocks import BZ2_PIECE, CHUNK, Gap, bz2_markers, iter_bz2_blocks
from pelt.corpus.wikipedia.site import SiteInfo

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DumpPage:
    """One ``<page>`` of a ``pages-articles`` dump (latest revision only)."""

    page_id: int
    ns: int
    title: str
    redirect_to: str | None
    text: str
    revision_id: int | None = None  # orders duplicate titles: the highest is the latest edit
    text_deleted: bool = False  # ``<text deleted="deleted"/>``: the revision's text was suppressed


@dataclass
class DumpStats:
    """What a dump reader saw; a generator cannot return it, so the caller passes one in.

    ``errors`` holds one message per read or parse error (truncated or corrupt bz2, malformed XML, a
    page that never ends). A corrupt bz2 block and an endless page are skipped, reading going on at
    the next block or ``<page>``; any other error stops the read, every page completed before it
    having been yielded. What was lost is counted where it can be known: the page cut
    (``cut_pages``) and the compressed bytes skipped or never read (``bytes_unread``). Pages wholly
    inside those bytes are counted only where a multistream index says how many there were
    (``pages_unread``); elsewhere nothing does.
    """

    pages: int = 0
    pages_started: int = 0  # <page> start tags seen: pages + bad_pages + cut_pages
    bad_pages: list[str] = field(default_factory=list)
    cut_pages: list[str] = field(default_factory=list)  # titles ("?" if not yet read) of pages an error cut
    pages_unread: int = 0  # pages a multistream index lists in skipped streams, never begun
    errors: list[str] = field(default_factory=list)
    bytes_unread: int = 0  # input bytes (compressed for bz2) skipped, or after the point where reading stopped
    trailing_bytes: int = 0  # bytes after the last bz2 stream that are not bz2 (appended garbage), not read
    bad_utf8: int = 0  # bytes that were not UTF-8, each replaced by U+FFFD
    bad_xml_chars: int = 0  # characters (or character references) XML forbids, each replaced by U+FFFD


# Bytes that are not UTF-8, as the surrogateescape error handler keeps them (U+DC80..U+DCFF).
_ESCAPED_BYTES = re.compile("[\udc80-\udcff]")
# Characters XML 1.0 forbids (C0 controls but tab, newline and return; U+FFFE, U+FFFF), and
# numeric character references that name one: the parser stops at the first, losing the rest of
# the file (146 of the sample's 206 pages for one `&#1;` early on).
_BAD_XML_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
# References are judged by value, not spelling: ``&#00000000001;`` is U+0001 to the parser too.
_CHAR_REF = re.compile(r"&#(?:[xX]([0-9a-fA-F]+)|([0-9]+));")
_PARTIAL_REF = re.compile(r"&(?:#([xX]?)0*([0-9a-fA-F]*))?\Z")


def _xml_char(code: int) -> bool:
    return code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or 0x10000 <= code <= 0x10FFFF


def _bad_ref(match: re.Match[str]) -> str:
    digits = (match.group(1) or match.group(2)).lstrip("0")
    code = int(digits or "0", 16 if match.group(1) else 10) if len(digits) <= 8 else -1  # 9 digits: none is XML
    return match.group() if _xml_char(code) else "\ufffd"


def _held_ref(partial: re.Match[str]) -> str:
    """A reference cut by the chunk boundary, in few characters whatever its padding: its leading zeros
    dropped, and its digits past the 9th, which no character's reference has."""
    if partial.group(0) == "&" or partial.group(0) == "&#" + partial.group(1):
        return partial.group(0)
    return f"&#{partial.group(1)}0{partial.group(2)[:9]}"


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
        partial = _PARTIAL_REF.search(text) if chunk else None
        held = _held_ref(partial) if partial else ""
        text = _xml_safe(text[: partial.start()] if partial else text, stats)
        if text:
            yield text


def _with_end(chunks: Iterable[bytes | Gap]) -> Iterator[bytes | Gap]:
    """The non-empty chunks, then one empty chunk: the decoder's end of input."""
    yield from (chunk for chunk in chunks if chunk)
    yield b""


def _local(tag: str) -> str:
    """Tag name without its ``{namespace}``: dump schema versions differ only in the namespace URI."""
    return tag.rsplit("}", 1)[-1]


def _page_from_element(elem: ET.Element) -> DumpPage:
    """Build a DumpPage from a complete ``<page>`` element; ValueError when a field is unusable."""
    fields: dict[str, ET.Element] = {_local(child.tag): child for child in elem}
    if "title" not in fields or "id" not in fields:
        raise ValueError("page without <title> or <id>")
    redirect = fields.get("redirect")
    text, deleted, revision_id = "", False, None
    revision = fields.get("revision")
    if revision is not None:
        parts = {_local(child.tag): child for child in revision}
        if "text" in parts:
            text = parts["text"].text or ""
            deleted = parts["text"].get("deleted") is not None
        if "id" in parts:
            revision_id = int((parts["id"].text or "").strip())
    ns_elem = fields.get("ns")
    return DumpPage(
        page_id=int((fields["id"].text or "").strip()),
        ns=int((ns_elem.text or "0").strip()) if ns_elem is not None else 0,
        title=fields["title"].text or "",
        redirect_to=redirect.get("title") if redirect is not None else None,
        text=text,
        revision_id=revision_id,
        text_deleted=deleted,
    )


# Characters buffered for one page: Wikipedia's largest wikitext is 2 MiB, escaped at most ~6x in XML.
# A page that runs past this (an unclosed <page> or <text>) is cut and counted, and memory stays bounded.
MAX_PAGE_CHARS = 32 << 20


class _PageParser:
    """One XMLPullParser over a run of the dump's text, the ``<page>`` elements it has open, and the
    characters fed since the latest one started; a new one takes over after a gap or an over-long page."""

    def __init__(self, stats: DumpStats, root: str | None) -> None:
        self.stats = stats
        self.parser = ET.XMLPullParser(events=("start", "end"))
        self.root: ET.Element | None = None
        self.opened: ET.Element | None = None  # the <page> started and not yet finished, if any
        self.unclosed: list[ET.Element] = []  # pages cut by a <page> inside them: cleared as pages end
        self.page_chars = 0
        self.abandoned = False  # left at a gap or an over-long page: what follows goes to a new one
        if root is not None:
            self.parser.feed(f"<{root}>")

    def feed(self, text: str) -> Iterator[DumpPage]:
        self.parser.feed(text)
        self.page_chars += len(text)
        yield from self.drain()

    def cut(self, why: str) -> None:
        """Count the open page, if any, as cut (its title, when the text read held it)."""
        if self.opened is not None:
            title = next((c.text or "?" for c in self.opened if _local(c.tag) == "title"), "?")
            self.stats.cut_pages.append(title)
            logger.error("page %r cut: %s", title, why)
            self.opened = None

    @property
    def over_cap(self) -> bool:
        return self.opened is not None and self.page_chars > MAX_PAGE_CHARS

    def drain(self) -> Iterator[DumpPage]:
        for event, elem in self.parser.read_events():
            if event == "start":
                if self.root is None:
                    self.root = elem
                elif _local(elem.tag) == "page":
                    self.stats.pages_started += 1
                    if self.opened is not None:
                        self.unclosed.append(self.opened)
                        self.cut("a <page> started inside it (no </page>)")
                    self.opened, self.page_chars = elem, 0
                continue
            if _local(elem.tag) != "page":
                continue
            self.opened = None
            try:
                page = _page_from_element(elem)
            except ValueError as exc:
                title = next((c.text for c in elem if _local(c.tag) == "title"), None)
                self.stats.bad_pages.append(f"{title!r}: {exc}")
                logger.warning("skipping malformed <page> %r: %s", title, exc)
            else:
                self.stats.pages += 1
                yield page
            for holder in (self.root, *self.unclosed):  # drop finished pages, or they all stay alive
                holder.clear()


def _resynced(pieces: Iterable[str | Gap], stats: DumpStats, root: str) -> Iterator[tuple[_PageParser, str]]:
    """The text of each piece with the parser to feed it to: a new one, from the next ``<page>``, after
    a gap (the page open at it is cut and counted, the gap's bytes too) or a page over MAX_PAGE_CHARS."""
    parser: _PageParser | None = _PageParser(stats, root if root == "pages" else None)
    seeking = ""  # text after a gap, until it shows a <page>
    for piece in pieces:
        if isinstance(piece, Gap):
            stats.errors.append(f"Gap: {piece.reason}")
            stats.bytes_unread += piece.end - piece.start
            if parser is not None:
                parser.cut(piece.reason)
                parser.abandoned = True
            parser = None
            continue
        if parser is None:
            seeking += piece
            at = seeking.find("<page>")
            if at == -1:
                seeking = seeking[-len("<page") :]
                continue
            parser, piece, seeking = _PageParser(stats, root), seeking[at:], ""
        yield parser, piece
        if parser.over_cap:
            # Whether its </page> would have come is unknown: a huge page and an unclosed one look alike here.
            stats.errors.append(
                f"a <page> over {MAX_PAGE_CHARS} characters (the most one page may hold): cut there, "
                "the rest of it skipped, reading on from the next <page>"
            )
            parser.cut(stats.errors[-1])
            parser.abandoned = True
            parser = None


def iter_pages_from_chunks(chunks: Iterable[bytes | Gap], stats: DumpStats, wrap: bool = False) -> Iterator[DumpPage]:
    """Parse ``<page>`` elements out of a stream of XML bytes, clearing each page once read.

    ``wrap`` puts a synthetic root around the bytes, for multistream fragments that hold bare
    ``<page>`` elements. XMLPullParser is the incremental parser behind ``ET.iterparse``; it is
    used directly so that decompressed byte ranges can be fed to it. A :class:`Gap` in the bytes (a
    corrupt bz2 block) and a page that never ends cost the page they cut, counted; reading goes on
    at the next ``<page>``. Any other error from the byte source or the parser ends the stream after
    the pages already complete, and is recorded in ``stats.errors`` and logged. Bytes that are not
    UTF-8 are replaced and counted (``stats.bad_utf8``, logged), not an error.
    """
    parser: _PageParser | None = None
    try:
        for parser, text in _resynced(_decoded(chunks, stats), stats, "pages" if wrap else "mediawiki"):
            yield from parser.feed(text)
        if parser is not None and not parser.abandoned:
            if wrap:
                parser.parser.feed("</pages>")
            parser.parser.close()
            yield from parser.drain()
    except (ET.ParseError, EOFError, OSError, ValueError) as exc:
        stats.errors.append(f"{type(exc).__name__}: {exc}")
        logger.error("dump read stopped after %d pages: %s: %s", stats.pages, type(exc).__name__, exc)
        if parser is not None:
            parser.cut(f"{type(exc).__name__}: {exc}")
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
        decomp = bz2.BZ2Decompressor()
        stream_start, data = 0, b""
        while True:
            if not data:
                data = self.fh.read(BZ2_PIECE)
                if not data:
                    if not decomp.eof:
                        raise EOFError(
                            f"bz2 stream from byte {stream_start} cut short: the file ends at byte {self.size}"
                        )
                    return
            if decomp.eof:  # between streams: another stream, or bytes that are not bz2
                data = self._more(data)
                if not data.startswith(b"BZh"):
                    self.stats.trailing_bytes = self.size - self.position
                    logger.warning(
                        "%d bytes after the last bz2 stream are not bz2: not read", self.stats.trailing_bytes
                    )
                    self.position = self.size
                    return
                decomp, stream_start = bz2.BZ2Decompressor(), self.position
            try:
                out = decomp.decompress(data)
            except OSError as exc:
                logger.error(
                    "corrupt bz2 data between bytes %d and %d: %s", self.position, self.position + len(data), exc
                )
                yield from self._resumed(stream_start)
                return
            used = len(data) - len(decomp.unused_data) if decomp.eof else len(data)
            self.position += used
            data = data[used:]
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
                        if _local(elem.tag) != "mediawiki":
                            return None
                    elif (event == "end" and _local(elem.tag) == "siteinfo") or _local(elem.tag) == "page":
                        for child in [child for child in root if _local(child.tag) != "siteinfo"]:
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
