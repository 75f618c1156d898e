"""Reading Wikipedia ``pages-articles`` dumps: pages streamed from bz2 (plain or multistream) in
bounded memory, bytes that are not UTF-8 kept and counted, the multistream index split into ranges
for parallel reading. What a page's wikitext means is :mod:`pelt.corpus.wikitext`'s business.
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
from typing import BinaryIO

from pelt.logs import progress

logger = logging.getLogger(__name__)

_CHUNK = 1 << 20  # bytes read/decompressed at a time: memory stays flat whatever the dump size


@dataclass(frozen=True)
class DumpPage:
    """One ``<page>`` of a ``pages-articles`` dump (latest revision only)."""

    page_id: int
    ns: int
    title: str
    redirect_to: str | None
    text: str


@dataclass
class DumpStats:
    """What a dump reader saw; a generator cannot return it, so the caller passes one in.

    ``errors`` holds one message per read or parse error (truncated bz2, malformed XML); reading
    stops at such an error but every page completed before it has been yielded.
    """

    pages: int = 0
    bad_pages: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    bad_utf8: int = 0  # bytes that were not UTF-8, each replaced by U+FFFD
    bad_xml_chars: int = 0  # characters (or character references) XML forbids, each replaced by U+FFFD


# Bytes that are not UTF-8, as the surrogateescape error handler keeps them (U+DC80..U+DCFF).
_ESCAPED_BYTES = re.compile("[\udc80-\udcff]")
# Characters XML 1.0 forbids (C0 controls but tab, newline and return; U+FFFE, U+FFFF), and
# numeric character references that name one: the parser stops at the first, losing the rest of
# the file (146 of the sample's 206 pages for one `&#1;` early on).
_BAD_XML_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_CHAR_REF = re.compile(r"&#(?:[xX]([0-9a-fA-F]{1,8})|([0-9]{1,10}));")
_PARTIAL_REF = re.compile(r"&(?:#[xX]?[0-9a-fA-F]{0,10})?\Z")


def _xml_char(code: int) -> bool:
    return code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or 0x10000 <= code <= 0x10FFFF


def _bad_ref(match: re.Match[str]) -> str:
    code = int(match.group(1), 16) if match.group(1) else int(match.group(2))
    return match.group() if _xml_char(code) else "\ufffd"


def _xml_safe(text: str, stats: DumpStats) -> str:
    text, n = _BAD_XML_CHARS.subn("\ufffd", text)
    if "&#" in text:
        fixed = _CHAR_REF.sub(_bad_ref, text)
        n += fixed.count("\ufffd") - text.count("\ufffd")
        text = fixed
    stats.bad_xml_chars += n
    return text


def _decoded(chunks: Iterable[bytes], stats: DumpStats) -> Iterator[str]:
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
        text, n = _ESCAPED_BYTES.subn("\ufffd", decoder.decode(chunk, final=not chunk))
        stats.bad_utf8 += n
        text = held + text
        partial = _PARTIAL_REF.search(text) if chunk else None
        held = text[partial.start() :] if partial else ""
        text = _xml_safe(text[: len(text) - len(held)], stats)
        if text:
            yield text


def _with_end(chunks: Iterable[bytes]) -> Iterator[bytes]:
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
    text = ""
    revision = fields.get("revision")
    if revision is not None:
        for child in revision:
            if _local(child.tag) == "text":
                text = child.text or ""
                break
    ns_elem = fields.get("ns")
    return DumpPage(
        page_id=int((fields["id"].text or "").strip()),
        ns=int((ns_elem.text or "0").strip()) if ns_elem is not None else 0,
        title=fields["title"].text or "",
        redirect_to=redirect.get("title") if redirect is not None else None,
        text=text,
    )


def iter_pages_from_chunks(chunks: Iterable[bytes], stats: DumpStats, wrap: bool = False) -> Iterator[DumpPage]:
    """Parse ``<page>`` elements out of a stream of XML bytes, clearing each page once read.

    ``wrap`` puts a synthetic root around the bytes, for multistream fragments that hold bare
    ``<page>`` elements. XMLPullParser is the incremental parser behind ``ET.iterparse``; it is
    used directly so that decompressed byte ranges can be fed to it. An error from the byte
    source or the parser ends the stream after the pages already complete, and is recorded in
    ``stats.errors`` and logged. Bytes that are not UTF-8 are replaced and counted
    (``stats.bad_utf8``, logged), not an error.
    """
    parser = ET.XMLPullParser(events=("start", "end"))
    root: ET.Element | None = None

    def drain() -> Iterator[DumpPage]:
        nonlocal root
        for event, elem in parser.read_events():
            if event == "start":
                if root is None:
                    root = elem
                continue
            if _local(elem.tag) != "page":
                continue
            try:
                page = _page_from_element(elem)
            except ValueError as exc:
                title = next((c.text for c in elem if _local(c.tag) == "title"), None)
                stats.bad_pages.append(f"{title!r}: {exc}")
                logger.warning("skipping malformed <page> %r: %s", title, exc)
            else:
                stats.pages += 1
                yield page
            root.clear()  # drop finished pages, or the root keeps them all alive

    try:
        if wrap:
            parser.feed("<pages>")
        for text in _decoded(chunks, stats):
            parser.feed(text)
            yield from drain()
        if wrap:
            parser.feed("</pages>")
        parser.close()
        yield from drain()
    except (ET.ParseError, EOFError, OSError, ValueError) as exc:
        stats.errors.append(f"{type(exc).__name__}: {exc}")
        logger.error("dump read stopped after %d pages: %s: %s", stats.pages, type(exc).__name__, exc)
    if stats.bad_utf8:
        logger.warning("%d bytes that are not UTF-8 replaced by U+FFFD", stats.bad_utf8)
    if stats.bad_xml_chars:
        logger.warning("%d characters that XML forbids replaced by U+FFFD", stats.bad_xml_chars)


def _open_dump(path: str | os.PathLike[str]) -> BinaryIO:
    """Open a dump file as decompressed bytes; bz2 is recognised by its magic, not its name."""
    with open(path, "rb") as fh:
        magic = fh.read(3)
    return bz2.open(path, "rb") if magic == b"BZh" else open(path, "rb")


def _read_chunks(fh: BinaryIO) -> Iterator[bytes]:
    """Decompressed chunks; ``read1`` returns what one read produced, so a truncated bz2 loses
    nothing that was decompressed before the break (``read`` would drop its partial result)."""
    read = getattr(fh, "read1", fh.read)
    while chunk := read(_CHUNK):
        yield chunk


def iter_dump_pages(source: str | os.PathLike[str] | BinaryIO, stats: DumpStats | None = None) -> Iterator[DumpPage]:
    """Stream the pages of a ``pages-articles*.xml[.bz2]`` file (path) or of a binary XML stream.

    Never holds more than one page in memory. Pass ``stats`` to learn how many pages were read and
    which errors stopped the read (a truncated bz2 keeps every page before the break).
    """
    stats = stats if stats is not None else DumpStats()
    if isinstance(source, (str, os.PathLike)):
        with _open_dump(source) as fh:
            yield from iter_pages_from_chunks(_read_chunks(fh), stats)
    else:
        yield from iter_pages_from_chunks(_read_chunks(source), stats)


def _iter_streams(fh: BinaryIO, start: int, end: int) -> Iterator[bytes]:
    """Decompressed bytes of the bz2 streams in ``fh[start:end]`` that hold ``<page>`` elements.

    A multistream dump's first stream is the ``<mediawiki><siteinfo>`` header and its last the
    closing ``</mediawiki>``; skipping streams that do not start with ``<page`` lets every range
    parse as a list of bare pages. Output is yielded as it is decompressed, so a stream cut short
    still gives the pages before the cut.
    """
    fh.seek(start)
    remaining = end - start
    data = b""
    while data or remaining > 0:
        decomp = bz2.BZ2Decompressor()
        head = b""  # start of the stream, until it shows whether it holds pages
        keep: bool | None = None
        while not decomp.eof:
            if not data:
                data = fh.read(min(_CHUNK, remaining)) if remaining > 0 else b""
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
        yield from iter_pages_from_chunks(_iter_streams(fh, start, end), stats, wrap=True)


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
