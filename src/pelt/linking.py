"""Entity linking: hyperlinks through redirects, the paper's heuristic, and plain string matching.

The stage turns documents (text + anchors) into mentions: sentences with the char span of a name
and the entity it refers to. Wikipedia gives three kinds of evidence, used in this order:

* **anchors** (hyperlinks). Targets are resolved through redirect chains to entity ids = canonical
  page titles. Links to disambiguation pages and broken redirects (cycles, chains longer than
  ``MAX_REDIRECT_DEPTH``, missing targets) name no single entity and are dropped and counted.
  Links to titles absent from the dump are *kept* under their normalised title: they are real
  entities that Wikipedia links to (red links, pages outside a partial dump), and dropping them
  would silently lose mentions; their number is reported as ``anchors_to_absent_pages``.
* **aliases**: anchor texts (count = occurrences) plus redirect titles and page titles (count at
  least 1); used to find candidate names in text and by :mod:`pelt.entities`.
* **the heuristic** (paper, Algorithm 1): Wikipedia links an entity once per article, so later
  mentions are plain text. Starting from S = the pages linked in the document plus the document's
  own page (an article talks about its subject without linking it), repeat: S' = S and its
  neighbours in the hyperlink graph, where a neighbour is a page linked *from* or linking *to* a
  page of S (the paper: "have hyperlink ... relation with pages in S"); a candidate name is linked
  when exactly one entity of S' carries it as an alias; S = the newly linked entities; until nothing
  new is linked or ``max_iterations``.

Scaling choices (see the functions for details):

* Candidate names (the paper's E: every occurrence of any alias, matched on spaCy tokens,
  case-sensitive, longest match first, never over an anchor). A spaCy ``PhraseMatcher`` would do
  this but must be built in every Python worker, at ~120 us and ~2.5 KB per alias (measured on
  real aliases): for the tens of millions of aliases of enwiki, most of an hour and tens of GB
  per worker. Restricting each document to the aliases of its first neighbourhood would be
  cheaper but wrong: later iterations reach pages beyond it. So each worker gets a broadcast
  Bloom filter of the alias token prefixes (~10 bits each: ~60 MB for 50M prefixes), grows
  n-grams of the text only while they are prefixes of some alias, and an exact join against the
  aliases removes the filter's false positives before the longest matches are kept: the
  PhraseMatcher's result (a test checks it) at a per-token cost that does not grow with the
  alias set. The paper recognises names with spaCy: with ``ner_model`` (a spaCy pipeline with
  NER) a candidate must also be an entity span it finds; without one (the default: nothing to
  download) every alias occurrence is a candidate and Algorithm 1's uniqueness test decides.
* The per-document loop runs in Python on what the document can ever need: its seeds, its
  candidate (name, entity) pairs and the hyperlink edges between a candidate and any of those
  entities (nothing else can enter S). Those edges are found by joins that take, for each
  (document, candidate), the cheaper of expanding the candidate's edges or pairing it with the
  document's entities, so a hub page with a million links never multiplies every document that
  mentions it.
"""

from __future__ import annotations

import hashlib
import logging
import math
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import cache, partial
from typing import Any

import numpy as np
import pyarrow as pa
import spacy
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType
from spacy.language import Language

from pelt.sentences import nlp, split_sentences, trim_span

log = logging.getLogger(__name__)

# Redirects to redirects are rare (bots fix them) and longer chains are almost always loops.
MAX_REDIRECT_DEPTH = 5

MENTION_COLUMNS = ("doc_id", "sent_idx", "sentence", "start", "end", "entity_id", "method")

_SEGMENT_DDL = (
    "doc_id string, title string, sentences array<string>, "
    "anchors array<struct<sent_idx:int,start:int,end:int,target:string,text:string>>, "
    "blocked array<struct<sent_idx:int,start:int,end:int>>, n_invalid int, n_blank int"
)
_CANDIDATES_DDL = "doc_id string, sent_idx int, start int, end int, n_tokens int, name string"
_NAMES_DDL = "doc_id string, sent_idx int, start int, end int, name string"
_LINKS_DDL = "doc_id string, name string, entity_id string, iteration int"


def map_rows(df: DataFrame, fn: Callable[[dict[str, Any]], Iterable[dict[str, Any]]], ddl: str) -> DataFrame:
    """Apply ``fn`` (one input row as a dict -> output rows as dicts) in Arrow batches.

    ``mapInArrow`` keeps nested arrays of structs cheap to move between the JVM and Python, unlike
    row-at-a-time UDFs; ``ddl`` is the Spark schema of the output rows.
    """
    schema = StructType.fromDDL(ddl)
    arrow_schema = to_arrow_schema(schema)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            rows = [out for row in batch.to_pylist() for out in fn(row)]
            yield pa.RecordBatch.from_pylist(rows, schema=arrow_schema)

    return df.mapInArrow(run, schema)


def _require_columns(df: DataFrame, columns: Iterable[str], what: str) -> None:
    missing = sorted(set(columns) - set(df.columns))
    if missing:
        raise ValueError(f"{what} lacks columns {missing} (has {df.columns})")


def normalize_alias(text: str) -> str:
    """Collapse whitespace: an anchor text wrapped over a line must match the same name on one line."""
    return " ".join(text.split())


# --- segmentation: sentences and anchors --------------------------------------------------------


def segment_document(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Split one document into sentences and place its anchors in them.

    Every valid anchor is returned (its text is an alias and its target a page linked from the
    document, whatever the sentence splitter did); only anchors inside one sentence get a
    ``sent_idx`` and a span re-based to that sentence, the others have nulls there. ``blocked``
    holds the part of every anchor inside each sentence so that name matching never overlaps a link.
    """
    text = row["text"] or ""
    spans = split_sentences(text)
    starts = [start for start, _ in spans]
    anchors: list[dict[str, Any]] = []
    blocked: list[dict[str, int]] = []
    invalid = blank = 0
    for link in row["links"] or []:
        start, end, target = link["start"], link["end"], link["target"]
        if not target or start is None or end is None or not 0 <= start < end <= len(text):
            invalid += 1
            continue
        trimmed = trim_span(text, start, end)
        if trimmed is None:
            blank += 1
            continue
        start, end = trimmed
        anchor: dict[str, Any] = {"sent_idx": None, "start": None, "end": None, "target": target}
        for idx in range(max(bisect_right(starts, start) - 1, 0), len(spans)):
            s_start, s_end = spans[idx]
            if s_start >= end:
                break
            if s_end <= start:
                continue
            blocked.append(
                {"sent_idx": idx, "start": max(start, s_start) - s_start, "end": min(end, s_end) - s_start}
            )
            if s_start <= start and end <= s_end:
                anchor.update(sent_idx=idx, start=start - s_start, end=end - s_start)
        anchor["text"] = normalize_alias(text[start:end])
        anchors.append(anchor)
    return [
        {
            "doc_id": row["doc_id"],
            "title": row["title"],
            "sentences": [text[start:end] for start, end in spans],
            "anchors": anchors,
            "blocked": blocked,
            "n_invalid": invalid,
            "n_blank": blank,
        }
    ]


def _segment_documents(documents: DataFrame) -> tuple[DataFrame, dict[str, int]]:
    """Segment every document that has an id; return the (persisted) segments and their counts."""
    _require_columns(documents, ("doc_id", "title", "text", "links"), "documents")
    counts = {"documents_without_id": documents.filter(F.col("doc_id").isNull()).count()}
    if counts["documents_without_id"]:
        log.warning("skipping %d documents without doc_id", counts["documents_without_id"])
    segments = map_rows(
        documents.filter(F.col("doc_id").isNotNull()).select("doc_id", "title", "text", "links"),
        segment_document,
        _SEGMENT_DDL,
    ).persist(StorageLevel.MEMORY_AND_DISK)
    totals = segments.agg(
        F.count("*").alias("documents"),
        F.sum(F.size("sentences")).alias("sentences"),
        F.sum(F.size("anchors") + F.col("n_invalid") + F.col("n_blank")).alias("anchors"),
        F.sum("n_invalid").alias("anchors_invalid"),
        F.sum("n_blank").alias("anchors_blank"),
        F.sum(F.expr("size(filter(anchors, a -> a.sent_idx is null))")).alias("anchors_crossing_sentence"),
    ).first()
    counts.update({key: int(value or 0) for key, value in totals.asDict().items()})
    return segments, counts


# --- names: aliases found in text -------------------------------------------------------------------


def name_key(text: str) -> str:
    """The identity of a name for matching: its spaCy tokens joined by one space.

    Matching compares token sequences, as spaCy's ``PhraseMatcher`` on ``ORTH`` does, so a name
    never matches inside a longer word ("Paris" in "Parisian"); strings with the same tokens
    ("U.S.A" and "U.S. A", "New York" and "New  York") are the same name.
    """
    return " ".join(token.text for token in nlp().tokenizer(text) if not token.is_space)


class BloomFilter:
    """A set of strings with no false negatives and about ``error_rate`` false positives.

    About 10 bits per item instead of the strings themselves: what lets every Python worker test
    each n-gram of its text against the tens of millions of alias prefixes of all of Wikipedia
    (see the module docstring). Callers remove the false positives with an exact join.
    """

    def __init__(self, n_bits: int, n_hashes: int) -> None:
        self.n_bits = n_bits
        self.n_hashes = n_hashes
        self.bits = bytearray((n_bits + 7) // 8)

    @classmethod
    def for_items(cls, n_items: int, error_rate: float = 0.01) -> BloomFilter:
        """The optimal size for ``n_items`` (standard formulas: m = -n ln p / ln^2 2, k = m/n ln 2)."""
        n_items = max(n_items, 1)
        n_bits = max(64, math.ceil(-n_items * math.log(error_rate) / math.log(2) ** 2))
        return cls(n_bits, max(1, round(n_bits / n_items * math.log(2))))

    def _hashes(self, key: str) -> tuple[int, int]:
        """Two independent hashes; position i is ``first + i * step`` (Kirsch-Mitzenmacher)."""
        digest = hashlib.blake2b(key.encode(), digest_size=16).digest()
        return int.from_bytes(digest[:8], "little"), int.from_bytes(digest[8:], "little") | 1

    def add(self, key: str) -> None:
        first, step = self._hashes(key)
        for i in range(self.n_hashes):
            pos = (first + i * step) % self.n_bits
            self.bits[pos >> 3] |= 1 << (pos & 7)

    def __contains__(self, key: str) -> bool:
        first, step = self._hashes(key)
        bits, n_bits = self.bits, self.n_bits
        for i in range(self.n_hashes):  # most lookups miss: stop at the first clear bit
            pos = (first + i * step) % n_bits
            if not bits[pos >> 3] >> (pos & 7) & 1:
                return False
        return True

    def union(self, other: BloomFilter) -> BloomFilter:
        """Merge a filter of the same size built from other items (one per Spark partition)."""
        if (self.n_bits, self.n_hashes) != (other.n_bits, other.n_hashes):
            raise ValueError("cannot merge Bloom filters of different sizes")
        merged = np.frombuffer(self.bits, dtype=np.uint8) | np.frombuffer(other.bits, dtype=np.uint8)
        self.bits = bytearray(merged.tobytes())
        return self


# Entries of the name filter: a whole name, or a proper token prefix of one (worth extending).
_WHOLE, _PREFIX = "=", "+"


def add_name(bloom: BloomFilter, name: str) -> None:
    """Enter a name key, and each of its proper token prefixes, into a name filter."""
    bloom.add(_WHOLE + name)
    tokens = name.split(" ")
    for end in range(1, len(tokens)):
        bloom.add(_PREFIX + " ".join(tokens[:end]))


def _name_filter(name_table: DataFrame) -> BloomFilter:
    """Bloom filter of the distinct ``name`` keys and their token prefixes, built per partition."""
    names = name_table.select("name").distinct()
    n_items = names.agg(F.sum(F.size(F.split("name", " ")))).first()[0] or 0
    empty = BloomFilter.for_items(n_items)

    def build(rows: Iterable[Any]) -> Iterator[BloomFilter]:
        bloom = BloomFilter(empty.n_bits, empty.n_hashes)
        for row in rows:
            add_name(bloom, row["name"])
        yield bloom

    return names.rdd.mapPartitions(build).treeReduce(BloomFilter.union) if n_items else empty


@cache
def ner_pipeline(name: str) -> Language:
    """A spaCy pipeline with an NER component (``spacy.load``: a package name or a folder), loaded
    once per Python worker."""
    pipeline = spacy.load(name)
    if not pipeline.has_pipe("ner") and not pipeline.has_pipe("entity_ruler"):
        raise ValueError(f"linking.ner_model {name!r} has no ner or entity_ruler component")
    return pipeline


def candidate_names(
    row: Mapping[str, Any], bloom: BloomFilter, fold_case: bool = False, ner: Language | None = None
) -> list[dict[str, Any]]:
    """Token n-grams of each sentence that may be names (the filter says so), not over anchors.

    From each token, an n-gram grows only while it is a prefix of some name, so the work per token
    is a few filter lookups, however long the names are. With ``fold_case`` an n-gram is also
    tried in lower case, so a name written all in lower case (FewRel 2.0 and Wiki80 lowercase
    their entity names) matches "HBV" or "Aspirin" at the start of a sentence, while a name with
    capitals still matches only as written: a lower-cased n-gram can never equal it. With an
    ``ner`` pipeline (the paper's appendix: names recognised with spaCy) a candidate must also be
    exactly one of the entity spans that the pipeline finds in the sentence.
    """
    blocked: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for span in row["blocked"] or []:
        blocked[span["sent_idx"]].append((span["start"], span["end"]))
    sentences = row["sentences"] or []
    entity_spans = (
        [{(ent.start_char, ent.end_char) for ent in doc.ents} for doc in ner.pipe(sentences)] if ner else None
    )
    out = []
    for sent_idx, doc in enumerate(nlp().tokenizer.pipe(sentences)):
        tokens = [(token.text, token.idx) for token in doc if not token.is_space]
        for first, (text, start) in enumerate(tokens):
            # (key so far, folded?): the n-gram as written and, with fold_case, in lower case.
            keys = [(text, False), (text.lower(), True)] if fold_case else [(text, False)]
            for last in range(first, len(tokens)):
                word, word_start = tokens[last]
                if last > first:
                    keys = [(key + " " + (word.lower() if folded else word), folded) for key, folded in keys]
                end = word_start + len(word)
                if any(start < b_end and b_start < end for b_start, b_end in blocked[sent_idx]):
                    break
                recognised = entity_spans is None or (start, end) in entity_spans[sent_idx]
                for i, (key, _) in enumerate(keys):
                    if i and key == keys[0][0]:
                        continue  # the n-gram is already in lower case: one candidate, not two
                    if recognised and _WHOLE + key in bloom:
                        out.append(
                            {
                                "doc_id": row["doc_id"],
                                "sent_idx": sent_idx,
                                "start": start,
                                "end": end,
                                "n_tokens": last - first + 1,
                                "name": key,
                            }
                        )
                keys = [(key, folded) for key, folded in keys if _PREFIX + key in bloom]
                if not keys:
                    break
    return out


def longest_names(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Among the true name occurrences of one sentence keep the longest, then leftmost, that do
    not overlap (the rule of ``spacy.util.filter_spans``). A span that is two names (as written
    and folded to lower case) keeps the one with capitals: upper case sorts first."""
    chosen: list[Mapping[str, Any]] = []
    for found in sorted(row["found"], key=lambda f: (-f["n_tokens"], f["start"], f["name"])):
        if all(found["end"] <= c["start"] or c["end"] <= found["start"] for c in chosen):
            chosen.append(found)
    return [
        {
            "doc_id": row["doc_id"],
            "sent_idx": row["sent_idx"],
            "start": c["start"],
            "end": c["end"],
            "name": c["name"],
        }
        for c in sorted(chosen, key=lambda c: c["start"])
    ]


def _find_names(
    segments: DataFrame, name_table: DataFrame, fold_case: bool = False, ner_model: str | None = None
) -> DataFrame:
    """Occurrences (doc_id, sent_idx, start, end, name) in ``segments`` of the ``name`` keys of
    ``name_table``: filtered n-grams (recognised by ``ner_model`` when given), made exact by a
    join, then the longest per sentence."""
    bloom = segments.sparkSession.sparkContext.broadcast(_name_filter(name_table))

    def candidates_of(row: Mapping[str, Any]) -> list[dict[str, Any]]:
        return candidate_names(row, bloom.value, fold_case, ner_pipeline(ner_model) if ner_model else None)

    candidates = map_rows(segments.select("doc_id", "sentences", "blocked"), candidates_of, _CANDIDATES_DDL)
    found = (
        candidates.join(name_table.select("name").distinct(), "name", "left_semi")
        .groupBy("doc_id", "sent_idx")
        .agg(F.collect_list(F.struct("start", "end", "n_tokens", "name")).alias("found"))
    )
    return map_rows(found, longest_names, _NAMES_DDL)


def _alias_names(aliases: DataFrame) -> DataFrame:
    """(alias, name): the matching key of every distinct alias, tokenized once, in parallel."""
    return map_rows(
        aliases.select("alias").distinct(),
        lambda row: [{"alias": row["alias"], "name": name_key(row["alias"])}],
        "alias string, name string",
    ).filter(F.length("name") > 0)


# --- titles, redirects, entities -------------------------------------------------------------------


def resolve_titles(pages: DataFrame, max_depth: int = MAX_REDIRECT_DEPTH) -> DataFrame:
    """Every page title with the entity it stands for.

    Columns: ``title``, ``entity_id`` (null when the title names no single entity), ``status``
    (``article`` | ``disambiguation`` | ``redirect`` | ``broken_redirect``) and ``in_dump`` (the
    entity has an article in the dump; false for a redirect to an absent page, which still names
    that page). Chains are followed by repeated joins; one still ending on a redirect after
    ``max_depth`` hops is a cycle or too long and is broken. Duplicate titles keep the lowest page id.
    """
    pages = (
        pages.filter(F.length("title") > 0)
        .groupBy("title")
        .agg(F.min_by(F.struct("is_redirect", "redirect_to", "is_disambiguation"), "page_id").alias("p"))
        .select("title", "p.*")
    )
    redirect_to = F.when(F.length("redirect_to") > 0, F.col("redirect_to"))
    hops = pages.filter("is_redirect").select(F.col("title").alias("via"), redirect_to.alias("to"))
    chains = pages.filter("is_redirect").select("title", redirect_to.alias("dst"))
    for _ in range(max_depth - 1):
        chains = chains.join(hops, F.col("dst") == F.col("via"), "left").select(
            "title", F.coalesce("to", "dst").alias("dst")
        )
    targets = pages.select(
        F.col("title").alias("dst"),
        F.col("is_redirect").alias("dst_redirect"),
        F.col("is_disambiguation").alias("dst_disambiguation"),
    )
    status = (
        F.when(F.col("dst").isNull() | F.coalesce("dst_redirect", F.lit(False)), "broken_redirect")
        .when(F.coalesce("dst_disambiguation", F.lit(False)), "disambiguation")
        .otherwise("redirect")
    )
    redirects = (
        chains.join(targets, "dst", "left")
        .withColumn("status", status)
        .select(
            "title",
            F.when(F.col("status") == "redirect", F.col("dst")).alias("entity_id"),
            "status",
            ((F.col("status") == "redirect") & F.col("dst_redirect").isNotNull()).alias("in_dump"),
        )
    )
    articles = pages.filter(~F.col("is_redirect")).select(
        "title",
        F.when(~F.col("is_disambiguation"), F.col("title")).alias("entity_id"),
        F.when(F.col("is_disambiguation"), "disambiguation").otherwise("article").alias("status"),
        (~F.col("is_disambiguation")).alias("in_dump"),
    )
    return articles.unionByName(redirects)


def _resolve(df: DataFrame, titles: DataFrame, column: str) -> DataFrame:
    """Add ``entity_id``, ``status``, ``in_dump`` for the title in ``column``; titles absent from
    the dump keep themselves as entity id with status ``absent``."""
    found = titles.withColumnRenamed("title", column)
    return (
        df.join(found, column, "left")
        .withColumn(
            "entity_id", F.when(F.col("status").isNull(), F.col(column)).otherwise(F.col("entity_id"))
        )
        .withColumn("in_dump", F.coalesce("in_dump", F.lit(False)))
        .withColumn("status", F.coalesce("status", F.lit("absent")))
    )


# --- the heuristic -----------------------------------------------------------------------------------


def heuristic_links(
    seeds: set[str],
    candidates: Mapping[str, set[str]],
    adjacency: Mapping[str, set[str]],
    max_iterations: int,
) -> dict[str, tuple[str, int]]:
    """Algorithm 1 of the paper for one document.

    ``seeds``: the entities linked in the document (and its own); ``candidates``: name -> entities
    that carry it as an alias; ``adjacency``: candidate entity -> its hyperlink neighbours among the
    document's seeds and candidates (nothing else can ever be in S). Returns name -> (entity,
    iteration) for every name linked.
    """
    remaining = dict(candidates)
    frontier = set(seeds)
    linked: dict[str, tuple[str, int]] = {}
    for iteration in range(1, max_iterations + 1):
        if not frontier or not remaining:
            break
        reach = frontier | {entity for entity, neighbours in adjacency.items() if neighbours & frontier}
        new = {}
        for name, entities in remaining.items():
            hits = entities & reach
            if len(hits) == 1:
                new[name] = next(iter(hits))
        for name, entity in new.items():
            linked[name] = (entity, iteration)
            del remaining[name]
        frontier = set(new.values())
    return linked


def _link_document(row: Mapping[str, Any], max_iterations: int) -> list[dict[str, Any]]:
    candidates: dict[str, set[str]] = defaultdict(set)
    for pair in row["cands"]:
        candidates[pair["name"]].add(pair["entity_id"])
    adjacency: dict[str, set[str]] = defaultdict(set)
    for pair in row["adj"] or []:
        adjacency[pair["c"]].add(pair["n"])
    linked = heuristic_links(set(row["seeds"]), candidates, adjacency, max_iterations)
    return [
        {"doc_id": row["doc_id"], "name": name, "entity_id": entity, "iteration": iteration}
        for name, (entity, iteration) in linked.items()
    ]


def _undirected_edges(anchors: DataFrame, own: DataFrame) -> DataFrame:
    """Hyperlink graph as (c, n) pairs in both directions, without self-links."""
    links = (
        anchors.join(own.select("doc_id", F.col("entity_id").alias("src")), "doc_id")
        .select("src", F.col("entity_id").alias("dst"))
        .filter(F.col("src") != F.col("dst"))
    )
    return (
        links.select(F.col("src").alias("c"), F.col("dst").alias("n"))
        .unionByName(links.select(F.col("dst").alias("c"), F.col("src").alias("n")))
        .distinct()
    )


def _restricted_adjacency(doc_cands: DataFrame, nodes: DataFrame, edges: DataFrame) -> DataFrame:
    """(doc_id, c, n): candidate c of a document is linked to node n of the same document.

    Either expand c's edges and keep those landing on the document's nodes (cost: degree of c) or
    pair c with every node of the document and keep the pairs that are edges (cost: number of
    nodes); each (document, candidate) takes the cheaper way, so hubs cost at most the size of the
    document's neighbourhood instead of their millions of links.
    """
    degree = edges.groupBy("c").agg(F.count("*").alias("degree"))
    size = nodes.groupBy("doc_id").agg(F.count("*").alias("size"))
    routed = doc_cands.join(degree, "c").join(size, "doc_id")
    nodes_as_n = nodes.withColumnRenamed("node", "n")
    by_edges = (
        routed.filter("degree <= size")
        .join(edges, "c")
        .select("doc_id", "c", "n")
        .join(nodes_as_n, ["doc_id", "n"], "left_semi")
    )
    by_nodes = (
        routed.filter("degree > size")
        .join(nodes_as_n, "doc_id")
        .select("doc_id", "c", "n")
        .join(edges, ["c", "n"], "left_semi")
    )
    return by_edges.unionByName(by_nodes).select("doc_id", "c", "n")


def _heuristic(
    names: DataFrame, anchors: DataFrame, own: DataFrame, name_entities: DataFrame, max_iterations: int
) -> DataFrame:
    """(doc_id, name, entity_id, iteration) for the names Algorithm 1 links in each document;
    ``name_entities``: (name, entity_id), the entities each name key is an alias of."""
    cands = names.select("doc_id", "name").distinct().join(name_entities, "name")
    seeds = (
        anchors.select("doc_id", F.col("entity_id").alias("node"))
        .unionByName(
            own.filter(F.col("entity_id").isNotNull()).select("doc_id", F.col("entity_id").alias("node"))
        )
        .distinct()
    )
    nodes = seeds.unionByName(cands.select("doc_id", F.col("entity_id").alias("node"))).distinct()
    doc_cands = cands.select("doc_id", F.col("entity_id").alias("c")).distinct()
    adjacency = _restricted_adjacency(doc_cands, nodes, _undirected_edges(anchors, own))
    per_doc = (
        cands.groupBy("doc_id")
        .agg(F.collect_list(F.struct("name", "entity_id")).alias("cands"))
        .join(seeds.groupBy("doc_id").agg(F.collect_list("node").alias("seeds")), "doc_id")
        .join(
            adjacency.groupBy("doc_id").agg(F.collect_list(F.struct("c", "n")).alias("adj")), "doc_id", "left"
        )
    )
    return map_rows(per_doc, partial(_link_document, max_iterations=max_iterations), _LINKS_DDL)


# --- outputs -------------------------------------------------------------------------------------------


def _write_mentions(
    segments: DataFrame, mentions: DataFrame, path: str, methods: Iterable[str]
) -> dict[str, int]:
    """Attach the sentence text, write with the contract schema, return the count per method."""
    sentences = segments.select("doc_id", F.posexplode("sentences").alias("sent_idx", "sentence"))
    out = mentions.join(sentences, ["doc_id", "sent_idx"]).select(
        F.col("doc_id").cast("string"),
        F.col("sent_idx").cast("int"),
        F.col("sentence").cast("string"),
        F.col("start").cast("int"),
        F.col("end").cast("int"),
        F.col("entity_id").cast("string"),
        F.col("method").cast("string"),
    )
    out.write.mode("overwrite").parquet(path)
    counts = dict.fromkeys((f"mentions_{method}" for method in methods), 0)
    for row in segments.sparkSession.read.parquet(path).groupBy("method").count().collect():
        counts[f"mentions_{row['method']}"] = row["count"]
    return counts


def _aliases(anchors: DataFrame, titles: DataFrame) -> DataFrame:
    """(alias, entity_id, count): anchor texts counted per occurrence, titles and redirect titles
    at least once (they are names of the entity even where no anchor uses them)."""
    return (
        anchors.select(F.col("text").alias("alias"), "entity_id", F.lit(1).alias("n"))
        .unionByName(
            titles.filter(F.col("entity_id").isNotNull()).select(
                F.col("title").alias("alias"), "entity_id", F.lit(0).alias("n")
            )
        )
        .groupBy("alias", "entity_id")
        .agg(F.greatest(F.sum("n"), F.lit(1)).cast("long").alias("count"))
    )


def _log_counts(what: str, counts: dict[str, int]) -> dict[str, int]:
    for key, value in counts.items():
        log.info("%s: %s = %d", what, key, value)
    return counts


def link_wikipedia(
    spark: SparkSession,
    documents_path: str,
    pages_path: str,
    aliases_out: str,
    mentions_out: str,
    *,
    heuristic: bool = True,
    max_iterations: int = 10,
    ner_model: str | None = None,
) -> dict[str, int]:
    """Link a Wikipedia corpus: write ``aliases_out`` and ``mentions_out``; return the counts.

    See the module docstring for the rules; every anchor that does not become a mention is
    counted under its reason (``anchors_invalid``, ``anchors_blank``, ``anchors_crossing_sentence``,
    ``anchors_disambiguation``, ``anchors_broken_redirect``). ``ner_model`` (a spaCy pipeline)
    restricts the heuristic's candidate names to the entities it recognises.
    """
    if max_iterations < 1:
        raise ValueError(f"max_iterations must be at least 1, got {max_iterations}")
    counts: dict[str, int] = {}
    pages = spark.read.parquet(pages_path)
    _require_columns(pages, ("page_id", "title", "is_redirect", "redirect_to", "is_disambiguation"), "pages")
    titles = resolve_titles(pages).persist(StorageLevel.MEMORY_AND_DISK)
    for row in titles.groupBy("status").count().collect():
        counts[f"titles_{row['status']}"] = row["count"]
    counts["pages_without_title"] = pages.filter(F.coalesce(F.length("title"), F.lit(0)) == 0).count()

    segments, segment_counts = _segment_documents(spark.read.parquet(documents_path))
    counts.update(segment_counts)

    anchors = _resolve(
        segments.select("doc_id", F.explode("anchors").alias("a")).select("doc_id", "a.*"), titles, "target"
    ).persist(StorageLevel.MEMORY_AND_DISK)
    counts.update(anchors_disambiguation=0, anchors_broken_redirect=0, anchors_to_absent_pages=0)
    for row in anchors.groupBy("status", "in_dump").count().collect():
        if row["status"] in ("disambiguation", "broken_redirect"):
            counts[f"anchors_{row['status']}"] += row["count"]
        elif not row["in_dump"]:
            counts["anchors_to_absent_pages"] += row["count"]
    kept = anchors.filter(F.col("entity_id").isNotNull())
    own = _resolve(segments.select("doc_id", F.col("title").alias("own_title")), titles, "own_title")
    cached = [titles, segments, anchors]

    _aliases(kept, titles).write.mode("overwrite").parquet(aliases_out)
    aliases = spark.read.parquet(aliases_out)
    counts["aliases"] = aliases.count()

    mentions = kept.filter(F.col("sent_idx").isNotNull()).select(
        "doc_id", "sent_idx", "start", "end", "entity_id", F.lit("anchor").alias("method")
    )
    if heuristic:
        name_entities = (
            _alias_names(aliases).join(aliases, "alias").select("name", "entity_id").distinct()
        ).persist(StorageLevel.MEMORY_AND_DISK)
        names = _find_names(segments, name_entities, ner_model=ner_model).persist(StorageLevel.MEMORY_AND_DISK)
        counts["name_occurrences"] = names.count()
        links = _heuristic(names, kept, own, name_entities, max_iterations).persist(
            StorageLevel.MEMORY_AND_DISK
        )
        cached += [name_entities, names, links]
        for row in links.groupBy("iteration").count().collect():
            counts[f"heuristic_names_iteration_{row['iteration']}"] = row["count"]
        mentions = mentions.unionByName(
            names.join(links, ["doc_id", "name"]).select(
                "doc_id", "sent_idx", "start", "end", "entity_id", F.lit("heuristic").alias("method")
            )
        )
    methods = ("anchor", "heuristic") if heuristic else ("anchor",)
    counts.update(_write_mentions(segments, mentions, mentions_out, methods))
    for df in cached:
        df.unpersist()
    return _log_counts("link_wikipedia", counts)


def link_by_string(
    spark: SparkSession,
    documents_path: str,
    names: Mapping[str, list[str]],
    mentions_out: str,
    lowercase_names_any_case: bool = True,
    ner_model: str | None = None,
) -> dict[str, int]:
    """Link a corpus without hyperlinks (S2ORC) by exact matches of entity names.

    ``names``: entity_id -> its names. Matching is on token boundaries (spaCy's tokenizer), so a
    name never matches inside a longer word; a string that names two entities is ambiguous and
    skipped (counted), since nothing here can tell them apart. Names with capitals match as
    written; names all in lower case match in any casing (``lowercase_names_any_case``), because
    datasets such as FewRel 2.0 lowercase every name ("hbv", "child syndrome") while the text
    writes "HBV" and "CHILD syndrome".
    """
    owners: dict[str, set[str]] = defaultdict(set)
    counts = {"names_blank": 0}
    for entity_id, entity_names in names.items():
        for text in entity_names:
            key = name_key(text)
            if key:
                owners[key].add(entity_id)
            else:
                counts["names_blank"] += 1
    unique = {key: next(iter(entities)) for key, entities in owners.items() if len(entities) == 1}
    counts["names"] = len(owners)
    counts["names_ambiguous"] = len(owners) - len(unique)

    segments, segment_counts = _segment_documents(spark.read.parquet(documents_path))
    counts.update(segment_counts)
    name_entities = spark.createDataFrame(sorted(unique.items()), "name string, entity_id string")
    mentions = (
        _find_names(segments, name_entities, fold_case=lowercase_names_any_case, ner_model=ner_model)
        .join(name_entities, "name")
        .select("doc_id", "sent_idx", "start", "end", "entity_id", F.lit("string").alias("method"))
    )
    counts.update(_write_mentions(segments, mentions, mentions_out, ("string",)))
    segments.unpersist()
    return _log_counts("link_by_string", counts)
