"""A dump's text cut into pages, each parsed alone: what a page of a dump is (:class:`DumpPage`), what
reading counted (:class:`DumpStats`), and the scanner that finds each ``<page>`` and parses it with a
parser of its own, so that a page's broken XML costs that page and no other.

It stands alone because it is the one part of reading a dump that does not care where the text came
from: a whole file, a multistream fragment and a range of bz2 blocks all arrive here as decoded text
(:mod:`pelt.corpus.wikipedia.dump` decodes the bytes and feeds the scanner), so what is delicate here
(memory bounded per page, a page cut or bad costing itself alone) reads and changes apart from bz2 and
UTF-8. The page and the counts live here, with what makes them, for every reader above to share.
"""

from __future__ import annotations

import html
import logging
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field

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

    ``errors`` holds one message per read error (truncated or corrupt bz2, a page that never ends, a
    file whose XML ends early). A corrupt bz2 block and an endless page are skipped, reading going on
    at the next block or ``<page>``; any other error stops the read, every page completed before it
    having been yielded. A page whose XML cannot be read is no error: it is one of ``bad_pages``,
    named by title and id with the characters skipped (``skipped_chars`` sums them).
    What was lost is counted where it can be known: the page cut
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
    skipped_chars: int = 0  # characters of the bad pages, skipped


def local_name(tag: str) -> str:
    """Tag name without its ``{namespace}``: dump schema versions differ only in the namespace URI."""
    return tag.rsplit("}", 1)[-1]


def _page_from_element(elem: ET.Element) -> DumpPage:
    """Build a DumpPage from a complete ``<page>`` element; ValueError when a field is unusable."""
    fields: dict[str, ET.Element] = {local_name(child.tag): child for child in elem}
    if "title" not in fields or "id" not in fields:
        raise ValueError("page without <title> or <id>")
    redirect = fields.get("redirect")
    text, deleted, revision_id = "", False, None
    revision = fields.get("revision")
    if revision is not None:
        parts = {local_name(child.tag): child for child in revision}
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
# Elements in one page: a real page has about 20; ``<a/>`` repeated would make 8 Mi of them within the
# character cap, some 700 MB of objects.
MAX_PAGE_ELEMENTS = 10_000
# Text held for a page's parser before it is fed: as much as was fed before, from 64 KiB to 1 MiB. expat
# (before 2.6) scans a token it has not seen the end of (a comment, a tag) again from its start at each
# feed, so a feed per chunk would make a long one quadratic; feeds that double make it linear up to 1 MiB.
_MIN_FEED, _MAX_FEED = 1 << 16, 1 << 20
# The start of a page kept to name it when its XML cannot be read: its <title> and <id> come first.
_HEAD_CHARS = 4096
_HEAD_TITLE = re.compile(r"<title>([^<]*)</title>")
_HEAD_ID = re.compile(r"<id>\s*([0-9]+)\s*</id>")
# The tags the page scanner acts on. Dumps escape "<" in text, so they occur only as tags; nothing else
# of the XML between pages is parsed (or kept).
_MARKER = re.compile(r"<(/?page|/mediawiki)>")
_CARRY = len("</mediawiki>") - 1  # a marker cut by the chunk boundary is found with the next chunk
_OVER_CAP = (
    "a <page> over {} characters (the most one page may hold): cut there, the rest of it skipped, "
    "reading on from the next <page>"
)


class _Page:
    """One ``<page>`` being read: its own XML parser, fed as its text arrives, so that damage in it
    (an undefined entity, a stray ``<``, a malformed tag) costs this page and no other."""

    def __init__(self) -> None:
        self.parser: ET.XMLPullParser | None = ET.XMLPullParser(events=("start",))
        self.root: ET.Element | None = None  # the <page> element, once parsed
        self.head = ""  # the first _HEAD_CHARS characters: its title and id, should its XML fail
        self.chars = 0
        self.pending: list[str] = []  # text not yet fed to the parser
        self.pending_chars = 0
        self.elements = 0
        self.error: str | None = None  # why its XML cannot be read; the rest of it is skipped
        self.counted = False  # cut at the character cap, and counted there

    def feed(self, text: str) -> None:
        self.chars += len(text)
        if len(self.head) < _HEAD_CHARS:
            self.head += text[: _HEAD_CHARS - len(self.head)]
        if self.parser is None:
            return
        self.pending.append(text)
        self.pending_chars += len(text)
        if self.pending_chars >= min(max(self.chars - self.pending_chars, _MIN_FEED), _MAX_FEED):
            self.flush()

    def flush(self) -> None:
        """Feed the parser what is held; on an error, drop it: the rest of the page is skipped."""
        text, self.pending, self.pending_chars = "".join(self.pending), [], 0
        if self.parser is None:
            return
        try:
            self.parser.feed(text)
            for _, elem in self.parser.read_events():
                self.root = elem if self.root is None else self.root
                self.elements += 1
            if self.elements > MAX_PAGE_ELEMENTS:
                self.error = f"more than {MAX_PAGE_ELEMENTS} elements"
        except ET.ParseError as exc:
            self.error = f"malformed XML ({exc})"
        if self.error is not None:
            self.parser = None

    def name(self) -> str:
        """Its title, as its first characters give it ("?" if they do not)."""
        title = _HEAD_TITLE.search(self.head)
        return html.unescape(title.group(1)) if title else "?"

    def label(self) -> str:
        """Its title and id, for a count's detail."""
        page_id = _HEAD_ID.search(self.head)
        return f"{self.name()!r} (id {page_id.group(1) if page_id else '?'})"


class PageScanner:
    """The dump's text cut into pages at their ``<page>`` and ``</page>`` tags, each parsed alone.

    What stands between pages (the header, whitespace, comments, an element that is no page) is
    scanned for the next ``<page>`` and dropped, so it costs neither memory nor the pages around it;
    a page is cut at MAX_PAGE_CHARS. A page ends at its ``</page>``, or, cut, where the next ``<page>``
    starts; its XML, if it cannot be read, costs it alone (``bad_pages``, with the characters skipped).
    """

    def __init__(self, stats: DumpStats) -> None:
        self.stats = stats
        self.page: _Page | None = None
        self.carry = ""  # the end of the text, not yet scanned as a marker may begin in it
        self.ended = False  # </mediawiki> seen after the last page

    def feed(self, text: str) -> Iterator[DumpPage]:
        text, self.carry, done = self.carry + text, "", 0
        for marker in _MARKER.finditer(text):
            tag = marker.group(1)
            if self.page is not None and tag == "/page":
                self.page.feed(text[done : marker.end()])
                yield from self._finish(self.page)
                done = marker.end()
            elif tag == "page":
                if self.page is not None:
                    self.page.feed(text[done : marker.start()])
                    self._cut(self.page, "a <page> started inside it (no </page>)")
                self.stats.pages_started += 1
                self.page, self.ended, done = _Page(), False, marker.end()
                self.page.feed("<page>")
            elif self.page is None and tag == "/mediawiki":
                self.ended = True
            self._capped()
        keep = max(len(text) - _CARRY, done)
        if self.page is not None:
            self.page.feed(text[done:keep])
            self._capped()
        self.carry = text[keep:]

    def gap(self) -> None:
        """Bytes were lost: the page open is cut, what was carried is dropped."""
        self.carry = ""
        self.cut("the bytes after it did not decode")

    def cut(self, why: str) -> None:
        """Count the open page, if any: cut, or bad where its XML had failed."""
        if self.page is not None:
            self.page.feed(self.carry)
            self.carry = ""
            self._cut(self.page, why)

    def _cut(self, page: _Page, why: str) -> None:
        self.page = None
        page.flush()  # the text held may show its XML failed: a bad page, not a cut one
        if page.error is not None:
            self._bad(page)
        elif not page.counted:
            self.stats.cut_pages.append(page.name())
            logger.error("page %r cut: %s", page.name(), why)

    def _bad(self, page: _Page) -> None:
        self.stats.bad_pages.append(f"{page.label()}: {page.error}, {page.chars} characters skipped")
        self.stats.skipped_chars += page.chars
        logger.warning("skipping <page> %s", self.stats.bad_pages[-1])

    def _capped(self) -> None:
        """The open page cut and counted if it has run past MAX_PAGE_CHARS: its parser is dropped, the
        rest of it skipped as it comes."""
        page = self.page
        if page is not None and page.parser is not None and page.chars > MAX_PAGE_CHARS:
            # Whether its </page> would have come is unknown: a huge page and an unclosed one look alike here.
            self.stats.errors.append(_OVER_CAP.format(MAX_PAGE_CHARS))
            self.stats.cut_pages.append(page.name())
            logger.error("page %r cut: %s", page.name(), self.stats.errors[-1])
            page.parser, page.pending, page.counted = None, [], True

    def _finish(self, page: _Page) -> Iterator[DumpPage]:
        self.page = None
        if page.parser is None:
            if page.error is not None:
                self._bad(page)
            return
        try:
            page.flush()
            if page.parser is None:
                self._bad(page)
                return
            page.parser.close()
            assert page.root is not None  # its <page> start tag was fed first
            parsed = _page_from_element(page.root)
        except ET.ParseError as exc:
            page.error = f"malformed XML ({exc})"
            self._bad(page)
        except ValueError as exc:
            self.stats.bad_pages.append(f"{page.name()!r}: {exc}")
            logger.warning("skipping malformed <page> %r: %s", page.name(), exc)
        else:
            self.stats.pages += 1
            yield parsed
