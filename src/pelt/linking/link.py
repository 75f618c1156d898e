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
  least 1); used to find candidate names in text and by :mod:`pelt.linking.entities`.
* **the heuristic** (paper, Algorithm 1): Wikipedia links an entity once per article, so later
  mentions are plain text. Starting from S = the pages linked in the document plus the document's
  own page (an article talks about its subject without linking it), repeat: S' = S and its
  neighbours in the hyperlink graph, where a neighbour is a page linked *from* or linking *to* a
  page of S (the paper: "have hyperlink ... relation with pages in S"); a candidate name is linked
  when exactly one entity of S' carries it as an alias; S = the newly linked entities; until nothing
  new is linked or ``max_iterations``.

Scaling choices (see the functions for details):

* Candidate names (the paper's E: every occurrence of any alias, matched on spaCy tokens,
  case-sensitive, longest match first, never over an anchor) are found by :mod:`pelt.linking.names` with a
  broadcast Bloom filter of the alias token prefixes, while each document is segmented (one
  tokenization serves sentences and names); an exact join against the aliases then removes the
  filter's false positives. So the aliases (from the anchors alone) come before the sentences.
  The paper recognises names with spaCy: with ``ner_model`` (a spaCy pipeline with NER) a
  candidate must also be an entity span it finds; without one (the default: nothing to download)
  every alias occurrence is a candidate and Algorithm 1's uniqueness test decides.
* Candidates are pruned before the heuristic's joins (:class:`Pruning`), as Wikipedia2Vec and LUKE
  prune their mention tables: a name must be a link often enough where it occurs (link
  probability), an entity must be a real share of the name's anchors (prior), a name keeps its
  most frequent entities only (cap), and a one-word name that is a common English word ("A", "The",
  "May") is no name. Without this every occurrence of every alias is a candidate for every entity
  of that name: the title "A" alone made 556 heuristic links on the real sample, all of them a
  sentence-initial article, and on all of Wikipedia the candidate rows would number 10^10-10^11.
  Algorithm 1 is unchanged on what is left: a name is linked only where exactly one entity of the
  neighbourhood carries it.
* The per-document loop runs in Python on what the document can ever need: its seeds, the
  candidates Algorithm 1 can reach and the hyperlink edges it can test. An entity enters S' only
  within ``max_iterations`` hops of a seed through the document's candidates, so the candidates
  are generated from the seeds outwards, breadth first, instead of pairing each name of the
  document with every entity of the name: the cost follows the documents' neighbourhoods, not the
  names' ambiguity, which grows with the corpus, and the links are the same
  (``candidate_pairs_unreachable`` counts the pairs never generated). Each (document, node) is
  expanded the cheaper way, along its edges or by pairing it with the document's name-side
  candidates, so a hub page with a million links never multiplies every document that links it.
  The search runs in Spark, joins per level, only when the graph is too big to broadcast
  (``SMALL_GRAPH_ROWS``); a smaller one (the demo, the real sample, the tests) is collected once
  and each document searched in its Python worker, the same candidates without the dozens of
  small Spark jobs of the levels.
"""

from __future__ import annotations

import logging
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, partial, reduce
from sys import intern
from typing import Any

import spacy
from pyspark import Broadcast, StorageLevel
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from spacy.lang.en.stop_words import STOP_WORDS
from spacy.language import Language

from pelt.corpus.documents import count_duplicate_titles, read_documents, read_pages, read_wikipedia_documents
from pelt.linking.names import BloomFilter, candidate_names, filter_entries, name_filter, name_key
from pelt.linking.sentences import bounded_vocabulary, sentence_spans, tokenize, trim_span
from pelt.spark import fit_partitions, input_bytes, map_rows

log = logging.getLogger(__name__)

# Redirects to redirects are rare (bots fix them) and longer chains are almost always loops.
MAX_REDIRECT_DEPTH = 5

# The most hyperlink edges plus candidate (name, entity) pairs that the heuristic broadcasts to
# every Python worker (:class:`LinkGraph`, about 160 bytes a row there: some 16 MB, beside the
# 400-500 MB a linking worker peaks at); a larger graph is searched in Spark. The bound used
# (:func:`link_wikipedia`) is about 4,000 rows on the demo, 64,000 on the real dump sample, 10^9
# on enwiki.
SMALL_GRAPH_ROWS = 100_000

MENTION_COLUMNS = ("doc_id", "sent_idx", "sentence", "start", "end", "entity_id", "method")

_SEGMENT_DDL = (
    "doc_id string, title string, sentences array<string>, "
    "anchors array<struct<sent_idx:int,start:int,end:int,target:string,text:string>>, "
    "candidates array<struct<sent_idx:int,start:int,end:int,n_tokens:int,name:string>>, n_invalid int, n_blank int"
)
_NAMES_DDL = "doc_id string, sent_idx int, start int, end int, name string"
_LINKS_DDL = "doc_id string, name string, entity_id string, iteration int, candidates int, unreachable int"


@dataclass(frozen=True)
class Pruning:
    """Which candidate names and entities the heuristic may consider (defaults: the references').

    ``min_link_prob``: a name's anchors / the documents it occurs in (as anchor or text), capped at
    1 - Wikipedia2Vec's definition and default (``min_link_prob=0.2``; ``wikipedia2vec/cli.py``,
    ``mention_db.pyx``). Per document rather than per occurrence: Wikipedia links an entity once per
    article, so per occurrence the later plain mentions, the very ones Algorithm 1 exists to link,
    would count against the name. ``min_prior``: the entity's share of the name's anchors
    (Wikipedia2Vec ``min_prior_prob=0.01``). ``max_entities_per_name``: the most frequent entities kept per
    name (LUKE ``max_candidate_size=100``; its link-probability floor is 0.1, ``luke/cli.py``).
    ``drop_stop_word_names``: a one-token name that is an English stop word (spaCy's list) written in
    lower case or capitalised ("a", "A", "The", "May") is no name; all capitals ("US", "IT") are
    kept. Titles and redirect titles count as one anchor each when nothing links them
    (:func:`_aliases`), so an article's own name stays a name where it occurs in few documents.
    """

    min_link_prob: float = 0.2
    min_prior: float = 0.01
    max_entities_per_name: int = 100
    drop_stop_word_names: bool = True

    def __post_init__(self) -> None:
        if not (0 <= self.min_link_prob <= 1 and 0 <= self.min_prior <= 1 and self.max_entities_per_name >= 1):
            raise ValueError(f"pruning thresholds out of range: {self}")


NO_PRUNING = Pruning(min_link_prob=0.0, min_prior=0.0, max_entities_per_name=2**31 - 1, drop_stop_word_names=False)


def stop_word_name(name: Any) -> Any:
    """Spark expression: ``name`` (a name key column) is one token, an English stop word written
    in lower case or capitalised (see :class:`Pruning`)."""
    name = F.col(name) if isinstance(name, str) else name
    rest = F.substring(name, 2, 1 << 20)
    return (
        ~name.contains(" ")
        & F.lower(name).isin(sorted(STOP_WORDS))
        & ((name == F.lower(name)) | (rest == F.lower(rest)))
    )


def _require_columns(df: DataFrame, columns: Iterable[str], what: str) -> None:
    missing = sorted(set(columns) - set(df.columns))
    if missing:
        raise ValueError(f"{what} lacks columns {missing} (has {df.columns})")


def normalize_alias(text: str) -> str:
    """Collapse whitespace: an anchor text wrapped over a line must match the same name on one line."""
    return " ".join(text.split())


# --- segmentation: sentences, anchors and candidate names ------------------------------------------


def valid_anchors(text: str, links: Iterable[Mapping[str, Any]]) -> tuple[list[tuple[int, int, str]], int, int]:
    """The anchors that can be used, trimmed of whitespace, and the numbers of invalid and blank ones."""
    anchors = []
    invalid = blank = 0
    for link in links:
        start, end, target = link["start"], link["end"], link["target"]
        if not target or start is None or end is None or not 0 <= start < end <= len(text):
            invalid += 1
            continue
        trimmed = trim_span(text, start, end)
        if trimmed is None:
            blank += 1
            continue
        anchors.append((*trimmed, target))
    return anchors, invalid, blank


def document_anchors(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """(doc_id, text, target) of each usable anchor: the aliases, before any sentence is split."""
    text = row["text"] or ""
    anchors, _, _ = valid_anchors(text, row["links"] or [])
    return [
        {"doc_id": row["doc_id"], "text": normalize_alias(text[start:end]), "target": target}
        for start, end, target in anchors
    ]


def segment_document(
    row: Mapping[str, Any],
    bloom: BloomFilter | None = None,
    fold_case: bool = False,
    ner: Language | None = None,
) -> list[dict[str, Any]]:
    """Split one document into sentences, place its anchors in them, and find its candidate names.

    The text is tokenized once (:func:`pelt.linking.sentences.tokenize`) for both sentences and names.
    Every usable anchor is returned (its text is an alias and its target a page linked from the
    document, whatever the sentence splitter did); only anchors inside one sentence get a
    ``sent_idx`` and a span re-based to that sentence, the others have nulls there. With a name
    filter, ``candidates`` holds the n-grams that may be names (:func:`pelt.linking.names.candidate_names`),
    never over an anchor; an ``ner`` pipeline keeps only the names it recognises.
    """
    text = row["text"] or ""
    tokens = tokenize(text)
    spans = sentence_spans(text, tokens)
    starts = [start for start, _ in spans]
    valid, invalid, blank = valid_anchors(text, row["links"] or [])
    anchors: list[dict[str, Any]] = []
    for start, end, target in valid:
        anchor: dict[str, Any] = {"sent_idx": None, "start": None, "end": None, "target": target}
        idx = max(bisect_right(starts, start) - 1, 0)
        if spans and spans[idx][0] <= start and end <= spans[idx][1]:
            anchor.update(sent_idx=idx, start=start - spans[idx][0], end=end - spans[idx][0])
        anchor["text"] = normalize_alias(text[start:end])
        anchors.append(anchor)
    sentences = [text[start:end] for start, end in spans]
    candidates = []
    if bloom is not None:
        recognised = [{(e.start_char, e.end_char) for e in doc.ents} for doc in ner.pipe(sentences)] if ner else None
        blocked = [(start, end) for start, end, _ in valid]
        candidates = candidate_names(text, tokens, spans, bloom, blocked, fold_case, recognised)
    return [
        {
            "doc_id": row["doc_id"],
            "title": row["title"],
            "sentences": sentences,
            "anchors": anchors,
            "candidates": candidates,
            "n_invalid": invalid,
            "n_blank": blank,
        }
    ]


def _documents(
    spark: SparkSession, path: str | Sequence[str], pages_path: str | Sequence[str] | None = None
) -> tuple[DataFrame, dict[str, int]]:
    """The documents that have an id, and the count of those that have none (skipped, logged);
    with ``pages_path`` (Wikipedia), without the articles whose title another dump file holds."""
    documents = read_documents(spark, path) if pages_path is None else read_wikipedia_documents(spark, path, pages_path)
    _require_columns(documents, ("doc_id", "title", "text", "links"), "documents")
    counts = {"documents_without_id": documents.filter(F.col("doc_id").isNull()).count()}
    if counts["documents_without_id"]:
        log.warning("skipping %d documents without doc_id", counts["documents_without_id"])
    return documents.filter(F.col("doc_id").isNotNull()).select("doc_id", "title", "text", "links"), counts


def _segment_documents(
    documents: DataFrame,
    splits: int,
    name_filter: BloomFilter | None = None,
    fold_case: bool = False,
    ner_model: str | None = None,
) -> tuple[DataFrame, dict[str, int]]:
    """Segment every document, spread over ``splits`` partitions first when read in fewer (a
    Parquet file written by one task is one split however big, and segmenting is the heaviest step;
    a small input is left as it is, a shuffle of it would cost more than it saves), finding
    candidate names in ``name_filter`` when given; return the (persisted) segments and their counts."""
    spark_context = documents.sparkSession.sparkContext
    bloom = spark_context.broadcast(name_filter) if name_filter is not None else None
    if documents.rdd.getNumPartitions() < splits:
        documents = documents.repartition(splits)

    def segment(row: Mapping[str, Any]) -> list[dict[str, Any]]:
        ner = ner_pipeline(ner_model) if ner_model else None
        return segment_document(row, bloom.value if bloom else None, fold_case, ner)

    segments = map_rows(documents, segment, _SEGMENT_DDL, bounded_vocabulary).persist(StorageLevel.MEMORY_AND_DISK)
    totals = segments.agg(
        F.count("*").alias("documents"),
        F.sum(F.size("sentences")).alias("sentences"),
        F.sum(F.size("anchors") + F.col("n_invalid") + F.col("n_blank")).alias("anchors"),
        F.sum("n_invalid").alias("anchors_invalid"),
        F.sum("n_blank").alias("anchors_blank"),
        F.sum(F.expr("size(filter(anchors, a -> a.sent_idx is null))")).alias("anchors_crossing_sentence"),
    ).first()
    return segments, {key: int(value or 0) for key, value in totals.asDict().items()}


# --- names: aliases found in text -------------------------------------------------------------------


def _name_filter(name_table: DataFrame, n_items: int) -> BloomFilter:
    """Bloom filter of the distinct ``name`` keys and their token prefixes, built per partition;
    ``n_items``: their tokens, counted in a pass made anyway."""
    names = name_table.select("name").distinct()
    empty = BloomFilter.for_items(n_items)

    def build(rows: Iterable[Any]) -> Iterator[BloomFilter]:
        bloom = BloomFilter(empty.n_bits, empty.n_hashes)
        bloom.add(filter_entries([row["name"] for row in rows]))
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


def _exact_names(segments: DataFrame, name_table: DataFrame) -> DataFrame:
    """Every occurrence of a ``name`` key of ``name_table``, nested ones included: the segments'
    candidates made exact by a join."""
    return (
        segments.select("doc_id", F.explode("candidates").alias("c"))
        .select("doc_id", "c.*")
        .join(name_table.select("name").distinct(), "name", "left_semi")
    )


def _longest_names(exact: DataFrame) -> DataFrame:
    """Occurrences (doc_id, sent_idx, start, end, name): the longest of ``exact`` per sentence."""
    found = exact.groupBy("doc_id", "sent_idx").agg(
        F.collect_list(F.struct("start", "end", "n_tokens", "name")).alias("found")
    )
    return map_rows(found, longest_names, _NAMES_DDL)


def _find_names(segments: DataFrame, name_table: DataFrame) -> DataFrame:
    """Occurrences (doc_id, sent_idx, start, end, name) of the ``name`` keys of ``name_table``, the
    longest per sentence."""
    return _longest_names(_exact_names(segments, name_table))


def _name_entities(alias_names: DataFrame, aliases: DataFrame, pruning: Pruning) -> tuple[DataFrame, dict[str, int]]:
    """Persisted (name, entity_id, name_count, kept) of every pair, ``kept`` when it passes the
    prior, the cap and the stop-word rule, and the counts of what was pruned. ``name_count``: the
    name's anchors, summed over its entities and the aliases of the name key."""
    pairs = alias_names.join(aliases, "alias").groupBy("name", "entity_id").agg(F.sum("count").alias("count"))
    by_name = Window.partitionBy("name")
    scored = (
        pairs.withColumn("name_count", F.sum("count").over(by_name))
        .withColumn("prior", F.col("count") / F.col("name_count"))
        .withColumn("rank", F.row_number().over(by_name.orderBy(F.desc("count"), "entity_id")))
        .withColumn("stop_word", stop_word_name("name") if pruning.drop_stop_word_names else F.lit(False))
        .withColumn("low_prior", F.col("prior") < pruning.min_prior)
        .withColumn("over_cap", F.col("rank") > pruning.max_entities_per_name)
        .withColumn("kept", ~(F.col("stop_word") | F.col("low_prior") | F.col("over_cap")))
    ).persist(StorageLevel.MEMORY_AND_DISK)
    first = F.col("rank") == 1
    stats = scored.agg(
        F.sum(first.cast("long")).alias("names"),
        F.sum((first & F.col("stop_word")).cast("long")).alias("names_stop_word"),
        F.count("*").alias("name_entity_pairs"),
        F.sum((~F.col("stop_word") & F.col("low_prior")).cast("long")).alias("name_entities_low_prior"),
        F.sum((~F.col("stop_word") & ~F.col("low_prior") & F.col("over_cap")).cast("long")).alias(
            "name_entities_over_cap"
        ),
        # Bloom filter size: tokens of the names kept (a name is kept iff its top entity is).
        F.sum(F.when(first & F.col("kept"), F.size(F.split("name", " "))).otherwise(0)).alias("filter_items"),
    )
    counts = {key: int(value or 0) for key, value in stats.first().asDict().items()}
    return scored.select("name", "entity_id", "name_count", "kept"), counts


def _link_probabilities(exact: DataFrame, anchor_names: DataFrame, name_counts: DataFrame) -> DataFrame:
    """(name, link_prob) of every name found in the text: its anchors over the documents it occurs
    in, as an anchor or as text, capped at 1 (Wikipedia2Vec's ``link_prob``)."""
    documents = (
        exact.select("doc_id", "name")
        .unionByName(anchor_names.select("doc_id", "name"))
        .distinct()
        .groupBy("name")
        .agg(F.count("*").alias("documents"))
    )
    return documents.join(name_counts, "name").select(
        "name", F.least(F.lit(1.0), F.col("name_count") / F.col("documents")).alias("link_prob")
    )


def _alias_names(aliases: DataFrame) -> DataFrame:
    """(alias, name): the matching key of every distinct alias, tokenized once, in parallel."""
    return map_rows(
        aliases.select("alias").distinct(),
        lambda row: [{"alias": row["alias"], "name": name_key(row["alias"])}],
        "alias string, name string",
        bounded_vocabulary,
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
        .withColumn("entity_id", F.when(F.col("status").isNull(), F.col(column)).otherwise(F.col("entity_id")))
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


def _document_links(
    doc_id: str,
    seeds: set[str],
    pairs: set[tuple[str, str]],
    edges: set[tuple[str, str]],
    size: int,
    max_iterations: int,
) -> list[dict[str, Any]]:
    """Algorithm 1 on one document's candidate (name, entity) ``pairs`` and (candidate, neighbour)
    ``edges``, as rows of ``_LINKS_DDL``; ``size``: the document's name-side candidate pairs."""
    candidates: dict[str, set[str]] = defaultdict(set)
    for name, entity in pairs:
        candidates[name].add(entity)
    adjacency: dict[str, set[str]] = defaultdict(set)
    for candidate, neighbour in edges:
        adjacency[candidate].add(neighbour)
    linked = heuristic_links(seeds, candidates, adjacency, max_iterations)
    # Iteration 0 (no name) carries the document's candidate pairs and the name-side pairs never
    # generated (unreachable): counted exactly, with no pass of its own.
    return [
        {
            "doc_id": doc_id,
            "name": None,
            "entity_id": None,
            "iteration": 0,
            "candidates": len(pairs),
            "unreachable": size - len(pairs),
        }
    ] + [
        {
            "doc_id": doc_id,
            "name": name,
            "entity_id": entity,
            "iteration": iteration,
            "candidates": 0,
            "unreachable": 0,
        }
        for name, (entity, iteration) in linked.items()
    ]


def _link_document(row: Mapping[str, Any], max_iterations: int) -> list[dict[str, Any]]:
    """Algorithm 1 on a document's candidates and edges generated in Spark (:func:`_reachable_candidates`)."""
    pairs = {(pair["name"], pair["entity_id"]) for pair in row["cands"] or []}
    edges = {(pair["c"], pair["n"]) for pair in row["adj"] or []}
    return _document_links(row["doc_id"], set(row["seeds"]), pairs, edges, row["size"], max_iterations)


@dataclass(frozen=True)
class LinkGraph:
    """The hyperlink graph and the candidates' names of a corpus small enough to be broadcast to
    every Python worker (:data:`SMALL_GRAPH_ROWS`), so each document's search runs there in one
    pass instead of as Spark jobs per level (:func:`reachable_candidates`).

    ``neighbours``: entity -> its hyperlink neighbours (both directions); ``entities``: name ->
    the entities it may link to; ``names``: entity -> the names it is a candidate of."""

    neighbours: Mapping[str, frozenset[str]]
    entities: Mapping[str, tuple[str, ...]]
    names: Mapping[str, tuple[str, ...]]

    @classmethod
    def from_pairs(cls, edges: Iterable[tuple[str, str]], name_entities: Iterable[tuple[str, str]]) -> LinkGraph:
        """From (c, n) edges, both directions listed, and (name, entity_id) candidate pairs. Each
        title is held once (interned): collected rows hold copies, which would also be pickled
        apart and take a third more of every worker's memory."""
        neighbours: dict[str, set[str]] = defaultdict(set)
        for c, n in edges:
            neighbours[intern(c)].add(intern(n))
        entities: dict[str, set[str]] = defaultdict(set)
        names: dict[str, set[str]] = defaultdict(set)
        for name, entity in name_entities:
            name, entity = intern(name), intern(entity)
            entities[name].add(entity)
            names[entity].add(name)
        return cls(
            {c: frozenset(ns) for c, ns in neighbours.items()},
            {name: tuple(sorted(es)) for name, es in entities.items()},
            {entity: tuple(sorted(ns)) for entity, ns in names.items()},
        )


def reachable_candidates(
    seeds: set[str], names: set[str], graph: LinkGraph, max_iterations: int
) -> tuple[set[tuple[str, str]], set[tuple[str, str]], int]:
    """One document's search of :func:`_reachable_candidates` in Python: its (name, entity)
    candidates, its (candidate, neighbour) edges and its name-side candidate count, the same sets.

    Breadth first from the seeds, each node expanded once, at its distance, the cheaper way (its
    neighbours, or the document's name-side pairs that are its edges: a hub is never listed in
    full per document); level 0 also keeps the seeds that are candidates themselves.
    """
    name_side = [(name, entity) for name in names for entity in graph.entities.get(name, ())]
    pairs: set[tuple[str, str]] = set()
    edges: set[tuple[str, str]] = set()
    known = set(seeds)
    frontier = known
    for level in range(max_iterations):
        reached: set[str] = set()
        for u in frontier:
            neighbours = graph.neighbours.get(u, frozenset())
            if len(neighbours) <= len(name_side):
                targets = neighbours | {u} if level == 0 else neighbours
                hits = [(name, c) for c in targets for name in graph.names.get(c, ()) if name in names]
            else:
                hits = [(name, c) for name, c in name_side if c in neighbours or (level == 0 and c == u)]
            for name, c in hits:
                pairs.add((name, c))
                reached.add(c)
                if c != u:
                    edges.add((c, u))
        if level + 1 == max_iterations:
            break
        frontier = reached - known
        if not frontier:
            break
        known |= frontier
    return pairs, edges, len(name_side)


def _link_small_document(
    row: Mapping[str, Any], graph: Broadcast[LinkGraph], max_iterations: int
) -> list[dict[str, Any]]:
    """Algorithm 1 on one document, its candidates searched over the broadcast ``graph``."""
    seeds = set(row["seeds"])
    pairs, edges, size = reachable_candidates(seeds, set(row["names"]), graph.value, max_iterations)
    return _document_links(row["doc_id"], seeds, pairs, edges, size, max_iterations)


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


def _reachable_candidates(
    doc_names: DataFrame, name_entities: DataFrame, seeds: DataFrame, edges: DataFrame, max_iterations: int
) -> tuple[DataFrame, DataFrame, DataFrame, list[DataFrame]]:
    """The candidates Algorithm 1 can ever reach, generated from the seeds outwards.

    Returns (doc_id, name, entity_id) candidates, (doc_id, c, n) the edges between a candidate c
    and a node n it can be reached from, (doc_id, size) the name-side candidate count of each
    document (every entity of every name it contains: what was generated before), and the
    persisted frames, for the caller to unpersist once the links are computed.

    An entity enters S' in round i only when it is a seed or a hyperlink neighbour of an entity of
    S, and S holds the seeds, then the candidates linked in the round before; so it must be within
    ``max_iterations`` hops of a seed along a chain of the document's candidates. A candidate
    farther than that is never in S', never decides a uniqueness test and is dropped without
    changing any link (``tests/test_linking.py`` compares with all name-side candidates). Pairing
    each name of a document with every entity of the name instead costs the names' ambiguity,
    which grows with the corpus (a name gains entities as pages are added, on the replicated
    benchmark one per copy), while the seeds' neighbourhoods do not.

    The nodes are expanded breadth first, each once at its distance, up to ``max_iterations - 1``:
    the edges found are all that the rounds can test (a node in S in round i is within i - 1 hops).
    Expanding a node lists its neighbours and their names (``fanout``); a hub (a million links on
    enwiki) expanded in every document that links it would cost more than the name side, so each
    (document, node) takes the cheaper of expanding the node or pairing it with the document's
    name-side candidates (``size``) and keeping the pairs that are edges. Level 0 also keeps the
    seeds that are candidates themselves.
    """
    keep = StorageLevel.MEMORY_AND_DISK
    by_entity = name_entities.select("name", F.col("entity_id").alias("c"))
    per_entity = by_entity.groupBy("c").agg(F.count("*").alias("names"))
    per_name = by_entity.groupBy("name").agg(F.count("*").alias("entities"))
    size = doc_names.join(per_name, "name").groupBy("doc_id").agg(F.sum("entities").alias("size")).persist(keep)
    out_edges = edges.select(F.col("c").alias("u"), F.col("n").alias("c"))
    fanout = (
        out_edges.join(per_entity, "c", "left")
        .select("u", (1 + F.coalesce("names", F.lit(0))).alias("rows"))
        .unionByName(per_entity.select(F.col("c").alias("u"), F.col("names").alias("rows")))
        .groupBy("u")
        .agg(F.sum("rows").alias("fanout"))
        .persist(keep)
    )
    known = frontier = seeds.select("doc_id", F.col("node").alias("u")).distinct().persist(keep)
    persisted = [size, fanout, known]
    levels = []
    for level in range(max_iterations):
        routed = (
            frontier.join(size, "doc_id")
            .join(fanout, "u", "left")
            .select("doc_id", "u", (F.coalesce("fanout", F.lit(0)) <= F.col("size")).alias("expand"))
        )
        near = routed.filter("expand").select("doc_id", "u")
        reached = near.join(out_edges, "u")
        if level == 0:
            reached = reached.unionByName(near.select("doc_id", "u", F.col("u").alias("c")))
        by_node = reached.join(by_entity, "c").join(doc_names, ["doc_id", "name"], "left_semi")
        hubs = routed.filter(~F.col("expand")).select("doc_id", "u")
        name_side = doc_names.join(hubs.select("doc_id").distinct(), "doc_id", "left_semi").join(by_entity, "name")
        paired = hubs.join(name_side, "doc_id")
        if level == 0:
            edge = out_edges.withColumn("edge", F.lit(True))
            by_name = paired.join(edge, ["u", "c"], "left").filter(F.col("edge") | (F.col("u") == F.col("c")))
        else:
            by_name = paired.join(out_edges, ["u", "c"], "left_semi")
        # Checkpointed: a level's new nodes depend on the known ones twice (through the frontier
        # and directly), so without cutting the lineage the plans double per level, and the final
        # union of persisted (not checkpointed) levels ran the driver out of memory at 10 levels.
        hits = by_node.select("doc_id", "u", "name", "c").unionByName(by_name.select("doc_id", "u", "name", "c"))
        levels.append(hits.localCheckpoint())
        if level + 1 == max_iterations:
            break
        new = levels[-1].select("doc_id", F.col("c").alias("u")).distinct().join(known, ["doc_id", "u"], "left_anti")
        new = new.localCheckpoint()
        if new.isEmpty():
            break
        known, frontier = known.unionByName(new), new
    hits = reduce(DataFrame.unionByName, levels)
    candidates = hits.select("doc_id", "name", F.col("c").alias("entity_id")).distinct()
    adjacency = hits.filter(F.col("u") != F.col("c")).select("doc_id", "c", F.col("u").alias("n")).distinct()
    return candidates, adjacency, size, persisted


def _heuristic(
    names: DataFrame,
    anchors: DataFrame,
    own: DataFrame,
    name_entities: DataFrame,
    max_iterations: int,
    graph_rows: int,
) -> tuple[DataFrame, list[DataFrame | Broadcast[LinkGraph]]]:
    """(doc_id, name, entity_id, iteration, candidates, unreachable) for the names Algorithm 1
    links in each document, and what was persisted or broadcast meanwhile, for the caller to
    release; ``name_entities``: (name, entity_id), the entities each name key is an alias of;
    ``graph_rows``: a bound on the rows of the hyperlink edges and ``name_entities``.

    A graph of at most :data:`SMALL_GRAPH_ROWS` rows is collected once and broadcast, and each
    document's search runs in its Python worker (:func:`reachable_candidates`): the same candidates
    as the Spark search, without its jobs per level, which on a small corpus (the demo, the tests)
    cost far more than the search itself. A larger graph is searched in Spark
    (:func:`_reachable_candidates`).
    """
    seeds = anchors.select("doc_id", F.col("entity_id").alias("node")).unionByName(
        own.filter(F.col("entity_id").isNotNull()).select("doc_id", F.col("entity_id").alias("node"))
    )
    edges = _undirected_edges(anchors, own)
    if graph_rows <= SMALL_GRAPH_ROWS:
        graph = names.sparkSession.sparkContext.broadcast(_collect_graph(edges, name_entities))
        per_doc = (
            seeds.groupBy("doc_id")
            .agg(F.collect_set("node").alias("seeds"))
            .join(names.groupBy("doc_id").agg(F.collect_set("name").alias("names")), "doc_id")
        )
        link = partial(_link_small_document, graph=graph, max_iterations=max_iterations)
        return map_rows(per_doc, link, _LINKS_DDL), [graph]
    doc_names = names.select("doc_id", "name").distinct().persist(StorageLevel.MEMORY_AND_DISK)
    seeds = seeds.distinct().persist(StorageLevel.MEMORY_AND_DISK)
    edges = edges.persist(StorageLevel.MEMORY_AND_DISK)
    cands, adjacency, size, persisted = _reachable_candidates(doc_names, name_entities, seeds, edges, max_iterations)
    listed = cands.groupBy("doc_id").agg(F.collect_list(F.struct("name", "entity_id")).alias("cands"))
    per_doc = (
        seeds.groupBy("doc_id")
        .agg(F.collect_list("node").alias("seeds"))
        .join(size, "doc_id")
        .join(listed, "doc_id", "left")
        .join(adjacency.groupBy("doc_id").agg(F.collect_list(F.struct("c", "n")).alias("adj")), "doc_id", "left")
    )
    links = map_rows(per_doc, partial(_link_document, max_iterations=max_iterations), _LINKS_DDL)
    return links, [doc_names, seeds, edges, *persisted]


def _collect_graph(edges: DataFrame, name_entities: DataFrame) -> LinkGraph:
    """The (c, n) ``edges`` and (name, entity_id) ``name_entities`` on the driver, in one job."""
    rows = (
        edges.select(F.lit(True).alias("edge"), F.col("c").alias("a"), F.col("n").alias("b"))
        .unionByName(
            name_entities.select(F.lit(False).alias("edge"), F.col("name").alias("a"), F.col("entity_id").alias("b"))
        )
        .collect()
    )
    return LinkGraph.from_pairs(
        ((row["a"], row["b"]) for row in rows if row["edge"]), ((row["a"], row["b"]) for row in rows if not row["edge"])
    )


# --- outputs -------------------------------------------------------------------------------------------


def _write_mentions(segments: DataFrame, mentions: DataFrame, path: str, methods: Iterable[str]) -> dict[str, int]:
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
    documents_path: str | Sequence[str],
    pages_path: str | Sequence[str],
    aliases_out: str,
    mentions_out: str,
    *,
    heuristic: bool = True,
    max_iterations: int = 10,
    ner_model: str | None = None,
    pruning: Pruning = Pruning(),
) -> dict[str, int]:
    """Link a Wikipedia corpus: write ``aliases_out`` and ``mentions_out``; return the counts.

    See the module docstring for the rules; every anchor that does not become a mention is
    counted under its reason (``anchors_invalid``, ``anchors_blank``, ``anchors_crossing_sentence``,
    ``anchors_disambiguation``, ``anchors_broken_redirect``). ``ner_model`` (a spaCy pipeline)
    restricts the heuristic's candidate names to the entities it recognises; ``pruning`` decides
    which names and entities it considers at all (counted: ``names_stop_word``,
    ``name_entities_low_prior``, ``name_entities_over_cap``, ``names_low_link_prob``).
    ``candidate_pairs`` is the (document, name, entity) rows the heuristic's joins carry: what its
    cost grows with; ``candidate_pairs_unreachable`` the pairs of a document's names and their
    entities that no chain of hyperlinks from its seeds reaches, never generated. Counts come from
    passes the stage makes anyway where it can: each Spark action is a job with its own fixed cost.
    """
    if max_iterations < 1:
        raise ValueError(f"max_iterations must be at least 1, got {max_iterations}")
    splits = fit_partitions(spark, input_bytes(documents_path))
    counts: dict[str, int] = {}
    pages = read_pages(spark, pages_path)
    _require_columns(pages, ("page_id", "title", "is_redirect", "redirect_to", "is_disambiguation"), "pages")
    titles = resolve_titles(pages).persist(StorageLevel.MEMORY_AND_DISK)
    untitled = pages.filter(F.coalesce(F.length("title"), F.lit(0)) == 0).select(F.lit("untitled").alias("status"))
    counts["pages_without_title"] = 0
    counts["pages_duplicate_title_across_files"] = count_duplicate_titles(spark, pages_path)
    for row in titles.select("status").unionByName(untitled).groupBy("status").count().collect():
        key = "pages_without_title" if row["status"] == "untitled" else f"titles_{row['status']}"
        counts[key] = row["count"]

    documents, document_counts = _documents(spark, documents_path, pages_path)
    counts.update(document_counts)
    # Aliases come from the anchors alone; the name filter built from them is needed while the
    # documents are segmented (one tokenization for sentences and names).
    anchors = _resolve(
        map_rows(documents, document_anchors, "doc_id string, text string, target string"), titles, "target"
    ).persist(StorageLevel.MEMORY_AND_DISK)
    counts.update(anchors_disambiguation=0, anchors_broken_redirect=0, anchors_to_absent_pages=0)
    for row in anchors.groupBy("status", "in_dump").count().collect():
        if row["status"] in ("disambiguation", "broken_redirect"):
            counts[f"anchors_{row['status']}"] += row["count"]
        elif not row["in_dump"]:
            counts["anchors_to_absent_pages"] += row["count"]
    kept = anchors.filter(F.col("entity_id").isNotNull())
    cached = [titles, anchors]

    _aliases(kept, titles).write.mode("overwrite").parquet(aliases_out)
    aliases = spark.read.parquet(aliases_out)
    counts["aliases"] = aliases.count()

    name_entities = bloom = None
    if heuristic:
        alias_names = _alias_names(aliases).persist(StorageLevel.MEMORY_AND_DISK)
        scored, name_counts = _name_entities(alias_names, aliases, pruning)
        filter_items = name_counts.pop("filter_items")
        counts.update(name_counts)
        name_entities = scored.filter("kept")
        bloom = _name_filter(name_entities, filter_items)
        cached += [alias_names, scored]
    segments, segment_counts = _segment_documents(documents, splits, bloom, ner_model=ner_model)
    counts.update(segment_counts)
    cached.append(segments)
    placed = segments.select("doc_id", F.explode("anchors").alias("a")).select("doc_id", "a.*")
    mentions = (
        _resolve(placed.filter(F.col("sent_idx").isNotNull()), titles, "target")
        .filter(F.col("entity_id").isNotNull())
        .select("doc_id", "sent_idx", "start", "end", "entity_id", F.lit("anchor").alias("method"))
    )
    if heuristic:
        exact = _exact_names(segments, name_entities).persist(StorageLevel.MEMORY_AND_DISK)
        anchor_names = kept.select("doc_id", F.col("text").alias("alias")).join(alias_names, "alias")
        link_prob = _link_probabilities(
            exact, anchor_names, name_entities.select("name", "name_count").distinct()
        ).persist(StorageLevel.MEMORY_AND_DISK)
        linkable = link_prob.filter(F.col("link_prob") >= pruning.min_link_prob).select("name")
        names = _longest_names(exact.join(linkable, "name", "left_semi")).persist(StorageLevel.MEMORY_AND_DISK)
        own = _resolve(documents.select("doc_id", F.col("title").alias("own_title")), titles, "own_title")
        candidates = name_entities.join(linkable, "name", "left_semi")
        # Edges: at most two per anchor (both directions); candidate pairs: at most every pair.
        graph_rows = 2 * counts["anchors"] + counts["name_entity_pairs"]
        links, reached = _heuristic(names, kept, own, candidates, max_iterations, graph_rows)
        links = links.persist(StorageLevel.MEMORY_AND_DISK)
        cached += [exact, link_prob, names, links, *reached]
        low = link_prob.agg(F.count_if(F.col("link_prob") < pruning.min_link_prob).alias("low"))
        found = low.crossJoin(names.agg(F.count("*").alias("names"))).first()
        counts.update(names_low_link_prob=found["low"], name_occurrences=found["names"])
        counts.update(candidate_pairs=0, candidate_pairs_unreachable=0)
        per_iteration = links.groupBy("iteration").agg(
            F.count("*").alias("n"), F.sum("candidates").alias("c"), F.sum("unreachable").alias("u")
        )
        for row in per_iteration.collect():
            if row["iteration"]:
                counts[f"heuristic_names_iteration_{row['iteration']}"] = row["n"]
            else:
                counts.update(candidate_pairs=int(row["c"] or 0), candidate_pairs_unreachable=int(row["u"] or 0))
        mentions = mentions.unionByName(
            names.join(links.filter("iteration > 0"), ["doc_id", "name"]).select(
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
    documents_path: str | Sequence[str],
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

    documents, document_counts = _documents(spark, documents_path)
    counts.update(document_counts)
    name_entities = spark.createDataFrame(sorted(unique.items()), "name string, entity_id string")
    # The names are on the driver already: their filter is built here, without a Spark job.
    segments, segment_counts = _segment_documents(
        documents,
        fit_partitions(spark, input_bytes(documents_path)),
        name_filter(list(unique)),
        fold_case=lowercase_names_any_case,
        ner_model=ner_model,
    )
    counts.update(segment_counts)
    mentions = (
        _find_names(segments, name_entities)
        .join(name_entities, "name")
        .select("doc_id", "sent_idx", "start", "end", "entity_id", F.lit("string").alias("method"))
    )
    counts.update(_write_mentions(segments, mentions, mentions_out, ("string",)))
    segments.unpersist()
    return _log_counts("link_by_string", counts)
