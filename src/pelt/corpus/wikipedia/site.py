"""What a wiki's pages mean that differs by wiki: namespace names, redirect words, disambiguation
templates and link trails, read from the dump's own ``<siteinfo>`` where it says them.

A German dump writes ``[[Datei:x.jpg|mini|Bildtext]]`` and ``[[Kategorie:Mann]]`` where an English
one writes ``File:`` and ``Category:``, redirects with ``#WEITERLEITUNG`` and marks disambiguation
pages with ``{{Begriffsklärung}}``; its link trail takes umlauts (``[[Haus]]es``, ``[[Straße]]n``),
and Chinese has none (``[[北京]]市``: the anchor is 北京); Arabic also takes the letters written
before the link (``و[[باريس]]``: the anchor is وباريس), and Chinese text holds language-conversion
markup (``-{zh-hans:联邦州; zh-hant:邦}-``) whose variants the site names. One small frozen :class:`SiteInfo`
holds these facts: the corpus job reads it once per dump file on the driver (the ``<siteinfo>``
header is at the file's start, before the first ``<page>``; the tasks that read byte ranges never
see it) and passes it to the per-page functions on the executors, where it pickles with the task.
Their default, :data:`ENGLISH`, is what they did before sites existed, so callers that pass none
read English Wikipedia as ever.

The dump names each namespace (``<namespace key="6">Datei</namespace>``) but not its aliases
(``Bild``); those come from the built-in table of a few languages
(:data:`pelt.corpus.wikipedia.site_languages.LANGUAGES`), or from a
``<namespacealiases>`` block (the shape of the API's siteinfo) where a hand-made header has one.
MediaWiki accepts the canonical English names on every wiki (``File:``, ``Image:``,
``Category:``), so they are always merged in, as is the English redirect word ``#REDIRECT``.
Redirects themselves come first from the dump's ``<redirect title=...>`` element (read by
:mod:`pelt.corpus.wikipedia.dump`); the redirect words are the fallback for dumps without it.
"""

from __future__ import annotations

import logging
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

from pelt.corpus.wikipedia.pages import local_name
from pelt.corpus.wikipedia.site_languages import LANGUAGES

logger = logging.getLogger(__name__)

DEFAULT_LANGUAGE = "en"  # a dump that says nothing, and every S2ORC-style corpus, is English
FILE_NAMESPACE = 6
CATEGORY_NAMESPACE = 14
# Links into these namespaces are not shown in the text: the page is filed, or the file embedded.
HIDDEN_NAMESPACES = (FILE_NAMESPACE, CATEGORY_NAMESPACE)

# MediaWiki's canonical namespace names, valid on every wiki beside the localised ones.
CANONICAL_NAMESPACES: dict[int, tuple[str, ...]] = {
    -2: ("Media",),
    -1: ("Special",),
    1: ("Talk",),
    2: ("User",),
    3: ("User talk",),
    4: ("Project",),
    5: ("Project talk",),
    6: ("File", "Image"),
    7: ("File talk", "Image talk"),
    8: ("MediaWiki",),
    9: ("MediaWiki talk",),
    10: ("Template",),
    11: ("Template talk",),
    12: ("Help",),
    13: ("Help talk",),
    14: ("Category",),
    15: ("Category talk",),
}
# Interwiki prefixes of Wikimedia projects and of a few external sites: a link with one shows its
# text but points at no article of this wiki, on every language's wiki.
INTERWIKI_PREFIXES = frozenset(
    {
        "wikt",
        "wiktionary",
        "s",
        "wikisource",
        "q",
        "wikiquote",
        "n",
        "wikinews",
        "b",
        "wikibooks",
        "v",
        "wikiversity",
        "voy",
        "wikivoyage",
        "species",
        "wikispecies",
        "d",
        "wikidata",
        "c",
        "commons",
        "m",
        "meta",
        "metawiki",
        "mw",
        "mediawikiwiki",
        "foundation",
        "wmf",
        "w",
        "incubator",
        "outreach",
        "phab",
        "doi",
        "hdl",
        "arxiv",
        "rfc",
        "google",
        "imdbname",
        "imdbtitle",
    }
)


# A run of whitespace and underscores: one space in a title, a namespace prefix or a template's name.
WS_RUN = re.compile(r"[\s_]+")
# The invisible marks that order right-to-left and left-to-right runs (LRM, RLM, the embeddings and
# overrides, the isolates): removed from text and titles (pelt.corpus.wikipedia.wikitext).
DIRECTIONAL_MARKS = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def template_key(name: str) -> str:
    """A template's or a namespace's name as compared: ``_`` and whitespace runs one space, lower case."""
    return WS_RUN.sub(" ", name).strip().lower()


# Interlanguage links ([[fr:Paris]]) are hidden; language codes are lower-case letters and hyphens.
LANGUAGE_CODE = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]+)*|simple")


def language_of_dbname(dbname: str) -> str | None:
    """``dewiki`` -> ``de``, ``zh_yuewiki`` -> ``zh-yue``; None for a database that is no language's
    Wikipedia (``commonswiki``, a test wiki's ``demowiki``)."""
    language = dbname.removesuffix("wiki").replace("_", "-")
    return language if dbname.endswith("wiki") and LANGUAGE_CODE.fullmatch(language) else None


_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


@dataclass(frozen=True)
class SiteInfo:
    """The facts of one wiki that the per-page functions need; small, frozen, and picklable, so that
    it travels to the Spark executors with the task that reads the wiki's pages.

    ``namespaces`` holds every name a namespace answers to (the dump's, the language's aliases and
    MediaWiki's canonical English ones), by key; ``language_from`` says where ``language`` came from
    (``config``, ``dump``, ``default``), for the counts a corpus job writes.
    """

    language: str = DEFAULT_LANGUAGE
    namespaces: tuple[tuple[int, tuple[str, ...]], ...] = ()
    redirect_words: tuple[str, ...] = ("redirect",)
    disambiguation_templates: frozenset[str] = frozenset()
    disambiguation_suffix: str = ""
    link_trail: str = ""
    dbname: str | None = None
    language_from: str = "default"
    link_prefix: str = ""
    variants: tuple[str, ...] = ()

    @classmethod
    def for_language(
        cls,
        language: str,
        namespaces: Mapping[int, Iterable[str]] | None = None,
        *,
        dbname: str | None = None,
        language_from: str = "default",
    ) -> SiteInfo:
        """The site of a language from the built-in table, with a dump's namespace names merged in.

        A language the table lacks gets English's redirect word, disambiguation templates and
        link trail (MediaWiki's default ``[a-z]+``, which languages inherit unless they set their
        own), with a warning: its own disambiguation templates are not known.
        """
        known = LANGUAGES.get(language)
        if known is None:
            logger.warning(
                "language %r: no built-in site facts (known: %s); English redirect word, disambiguation"
                " templates and link trail are used",
                language,
                ", ".join(sorted(LANGUAGES)),
            )
        facts = known or LANGUAGES[DEFAULT_LANGUAGE]
        names: dict[int, list[str]] = {}
        for table in (namespaces or {}, facts.namespaces, CANONICAL_NAMESPACES):
            for key, aliases in table.items():
                merged = names.setdefault(key, [])
                merged += [name for name in aliases if name and name not in merged]
        return cls(
            language=language,
            namespaces=tuple(sorted((key, tuple(aliases)) for key, aliases in names.items() if key != 0)),
            redirect_words=("redirect", *(word for word in facts.redirect_words if word != "redirect")),
            disambiguation_templates=frozenset(template_key(name) for name in facts.disambiguation_templates),
            disambiguation_suffix=facts.disambiguation_suffix,
            link_trail=facts.link_trail,
            dbname=dbname,
            language_from=language_from,
            link_prefix=facts.link_prefix,
            variants=facts.variants,
        )

    @classmethod
    def from_siteinfo(cls, header: ET.Element | None, language: str | None = None) -> SiteInfo:
        """The site a dump's header describes: ``<mediawiki xml:lang=...>`` with its ``<siteinfo>``
        inside, or a bare ``<siteinfo>``; None (a dump without a header) is English.

        The language is ``language`` (the config's ``corpora.<name>.language``) when given, else the
        root's ``xml:lang``, else the one ``<dbname>`` names (``dewiki``), else English.
        """
        siteinfo = header
        if header is not None and local_name(header.tag) != "siteinfo":
            siteinfo = next((child for child in header if local_name(child.tag) == "siteinfo"), None)
        fields = {local_name(child.tag): child for child in siteinfo} if siteinfo is not None else {}
        dbname = (fields["dbname"].text or "").strip() or None if "dbname" in fields else None
        namespaces: dict[int, list[str]] = {}
        for block, key_attribute in (("namespaces", "key"), ("namespacealiases", "id")):
            for ns in fields.get(block, ()):
                key = ns.get(key_attribute)
                if key is not None and key.lstrip("-").isdigit() and (ns.text or "").strip():
                    namespaces.setdefault(int(key), []).append(ns.text.strip())
        from_dump = header.get(_XML_LANG) if header is not None else None
        from_dump = from_dump or (language_of_dbname(dbname) if dbname else None)
        chosen, source = (
            (language, "config") if language else (from_dump, "dump") if from_dump else (DEFAULT_LANGUAGE, "default")
        )
        if language and from_dump and language != from_dump:
            logger.warning("the dump says language %r; the config's %r is used", from_dump, language)
        return cls.for_language(chosen, namespaces, dbname=dbname, language_from=source)

    def names(self, key: int) -> tuple[str, ...]:
        """Every name namespace ``key`` answers to."""
        return dict(self.namespaces).get(key, ())

    @cached_property
    def hidden_prefixes(self) -> frozenset[str]:
        """Prefixes (compared by :func:`template_key`) of links that show nothing: files and categories."""
        return frozenset(template_key(name) for key in HIDDEN_NAMESPACES for name in self.names(key))

    @cached_property
    def other_prefixes(self) -> frozenset[str]:
        """Prefixes of links that show their text but point at no article: the other namespaces and
        the interwiki prefixes."""
        return frozenset(
            template_key(name) for key, names in self.namespaces if key not in HIDDEN_NAMESPACES for name in names
        ) | (INTERWIKI_PREFIXES - self.hidden_prefixes)

    @cached_property
    def link_trail_pattern(self) -> re.Pattern[str] | None:
        """Letters after ``]]`` that join the link's text (``[[bus]]es``); None where none do."""
        return re.compile(self.link_trail) if self.link_trail else None

    @cached_property
    def link_prefix_pattern(self) -> re.Pattern[str] | None:
        """The letters before ``[[`` that join the link's text (Arabic ``و[[باريس]]``), matched on the
        text before the link reversed, so that finding them costs their length, not the text's."""
        return re.compile(self.link_prefix + "+") if self.link_prefix else None

    @cached_property
    def redirect_pattern(self) -> re.Pattern[str]:
        """``#REDIRECT [[X]]`` in any of the site's words, at the page's start.

        No two adjacent quantifiers match the same character: "\\s*:?\\s*" made "#REDIRECT" and a
        run of spaces quadratic (each split of the run between the two was tried)."""
        words = "|".join(re.escape(word) for word in self.redirect_words)
        return re.compile(rf"\A\s*#\s*(?:{words})\s*(?::\s*)?\[\[([^\[\]|]*)", re.IGNORECASE)

    @cached_property
    def disambiguation_suffix_pattern(self) -> re.Pattern[str] | None:
        return re.compile(self.disambiguation_suffix) if self.disambiguation_suffix else None

    def is_disambiguation_template(self, name: str) -> bool:
        """Whether a template's name (normalised by :func:`template_key`) marks a disambiguation page."""
        suffix = self.disambiguation_suffix_pattern
        return name in self.disambiguation_templates or (suffix is not None and suffix.search(name) is not None)

    def describe(self) -> dict[str, object]:
        """What a corpus job records of the site (``counts.json`` details): the language and its source."""
        return {"language": self.language, "language_from": self.language_from, "dbname": self.dbname}


ENGLISH = SiteInfo.for_language(DEFAULT_LANGUAGE)
