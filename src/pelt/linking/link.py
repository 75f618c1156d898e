"""The linking stage's Spark jobs: documents to mentions by hyperlinks, the paper's heuristic or string matching.

The stage turns documents (text + anchors) into mentions: sentences with the char span of a name
and the entity it refers to. Wikipedia gives three kinds of evidence, used in this order:

* **anchors** (hyperlinks). Targets are resolved through redirect chains to entity ids = canonical
  page titles (:mod:`pelt.linking.redirects`). Links to disambiguation pages and broken redirects
  (cycles, chains longer than ``MAX_REDIRECT_DEPTH``, missing targets) name no single entity and are
  dropped and counted. Links to titles absent from the dump are *kept* under their normalised title:
  they are real entities that Wikipedia links to (red links, pages outside a partial dump), and
  dropping them would silently lose mentions; their number is reported as ``anchors_to_absent_pages``.
* **aliases**: anchor texts (count = occurrences) plus redirect titles and page titles (count at
  least 1); used to find candidate names in text and by :mod:`pelt.linking.entities`.
* **the heuristic** (paper, Algorithm 1): Wikipedia links an entity once per article, so later
  mentions are plain text. Starting from S = the pages linked in the document plus the document's
  own page (an article talks about its subject without linking it), repeat: S' = S and its
  neighbours in the hyperlink graph, where a neighbour is a page linked *from* or linking *to* a
  page of S (the paper: "have hyperlink ... relation with pages in S"); a candidate name is linked
  when exactly one entity of S' carries it as an alias; S = the newly linked entities; until nothing
  new is linked or ``max_iterations``.

Candidate names (the paper's E: every occurrence of any alias, matched on spaCy tokens,
case-sensitive, longest match first, never over an anchor) are found by :mod:`pelt.linking.names` with a
broadcast Bloom filter of the alias token prefixes, while each document is segmented (one
tokenization serves sentences and names); an exact join against the aliases then removes the
filter's false positives. So the aliases (from the anchors alone) come before the sentences.
The paper recognises names with spaCy: with ``ner_model`` (a spaCy pipeline with NER) a
candidate must also be an entity span it finds; without one (the default: nothing to download)
every alias occurrence is a candidate and Algorithm 1's uniqueness test decides.

Candidates are pruned before the heuristic (:mod:`pelt.linking.candidates`), and each document's
search covers only what its seeds can reach (:mod:`pelt.linking.heuristic`).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pelt.corpus.documents import count_duplicate_titles, read_documents, read_pages, read_wikipedia_documents
from pelt.corpus.wikipedia.site import DEFAULT_LANGUAGE
from pelt.linking.candidates import (
    Pruning,
    alias_keys,
    exact_names,
    find_names,
    link_probabilities,
    longest_occurrences,
    name_table_filter,
    score_name_entities,
)
from pelt.linking.heuristic import link_names
from pelt.linking.names import name_filter, name_key
from pelt.linking.redirects import resolve_column, resolve_titles
from pelt.linking.segmentation import document_anchors, segment_documents
from pelt.spark import fit_partitions, input_bytes, map_rows

log = logging.getLogger(__name__)

MENTION_COLUMNS = ("doc_id", "sent_idx", "sentence", "start", "end", "entity_id", "method")


@dataclass(frozen=True)
class LinkSettings:
    """How :func:`link_wikipedia` links, the config's ``linking:`` section (its schema holds the
    defaults and the docs; ``tests/unit/linking/test_linking.py`` keeps these in step).

    ``heuristic``: run the paper's Algorithm 1 after the anchors, up to ``max_iterations`` rounds.
    ``ner_model`` (a spaCy pipeline) restricts the heuristic's candidate names to the entities it
    recognises; ``pruning`` decides which names and entities it considers at all. ``language``
    (the corpus's, :func:`pelt.logs.corpus_language`) decides the tokens, so the sentences and the
    names, and the stop words (:mod:`pelt.linking.languages`)."""

    heuristic: bool = True
    max_iterations: int = 10
    ner_model: str | None = None
    pruning: Pruning = Pruning()
    language: str = DEFAULT_LANGUAGE

    def __post_init__(self) -> None:
        if self.max_iterations < 1:
            raise ValueError(f"max_iterations must be at least 1, got {self.max_iterations}")

    @classmethod
    def from_config(cls, linking: Mapping[str, Any], language: str | None = None) -> LinkSettings:
        """The settings of a config's ``linking:`` section (flat: the pruning's keys beside the
        others; a key left out takes its default) for a corpus in ``language`` (None: the default);
        a key no setting takes is an error, not ignored."""
        pruning_keys = {f.name for f in fields(Pruning)}
        own = {f.name for f in fields(cls)} - {"pruning", "language"}
        unknown = sorted(set(linking) - own - pruning_keys)
        if unknown:
            raise ValueError(f"linking: unknown settings {unknown}")
        return cls(
            **{key: value for key, value in linking.items() if key in own},
            pruning=Pruning(**{key: value for key, value in linking.items() if key in pruning_keys}),
            **({} if language is None else {"language": language}),
        )


def _require_columns(df: DataFrame, columns: Iterable[str], what: str) -> None:
    missing = sorted(set(columns) - set(df.columns))
    if missing:
        raise ValueError(f"{what} lacks columns {missing} (has {df.columns})")


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


def alias_table(kept: DataFrame, titles: DataFrame) -> DataFrame:
    """What the linker decides the names of each entity are: (alias, entity_id, count), the texts
    of the ``kept`` anchors (resolved to an entity) counted per occurrence, titles and redirect
    titles (``titles``: :func:`pelt.linking.redirects.resolve_titles`) at least once (they are
    names of the entity even where no anchor uses them). The stage writes it as its aliases."""
    return (
        kept.select(F.col("text").alias("alias"), "entity_id", F.lit(1).alias("n"))
        .unionByName(
            titles.filter(F.col("entity_id").isNotNull()).select(
                F.col("title").alias("alias"), "entity_id", F.lit(0).alias("n")
            )
        )
        .groupBy("alias", "entity_id")
        .agg(F.greatest(F.sum("n"), F.lit(1)).cast("long").alias("count"))
    )


def linkable_names(
    exact: DataFrame, kept: DataFrame, alias_names: DataFrame, name_entities: DataFrame, pruning: Pruning
) -> tuple[DataFrame, DataFrame]:
    """What the linker decides a name worth linking is, after the pruning of its entities
    (``name_entities``: :func:`pelt.linking.candidates.score_name_entities`' kept rows): its link
    probability, the share of the documents where it occurs (``exact``: (doc_id, name) of each
    occurrence) that link it (through the ``kept`` anchors' texts, as ``alias_names`` key them),
    at least ``pruning.min_link_prob``. Returns (the link probability of each name, the names
    kept)."""
    anchor_names = kept.select("doc_id", F.col("text").alias("alias")).join(alias_names, "alias")
    link_prob = link_probabilities(exact, anchor_names, name_entities.select("name", "name_count").distinct())
    return link_prob, link_prob.filter(F.col("link_prob") >= pruning.min_link_prob).select("name")


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
    settings: LinkSettings = LinkSettings(),
) -> dict[str, int]:
    """Link a Wikipedia corpus: write ``aliases_out`` and ``mentions_out``; return the counts.

    See the module docstring for the rules; every anchor that does not become a mention is
    counted under its reason (``anchors_invalid``, ``anchors_blank``, ``anchors_crossing_sentence``,
    ``anchors_disambiguation``, ``anchors_broken_redirect``); the pruning's under its own
    (``names_stop_word``, ``name_entities_low_prior``, ``name_entities_over_cap``,
    ``names_low_link_prob``). ``settings``: :class:`LinkSettings`.
    ``candidate_pairs`` is the (document, name, entity) rows the heuristic's joins carry: what its
    cost grows with; ``candidate_pairs_unreachable`` the pairs of a document's names and their
    entities that no chain of hyperlinks from its seeds reaches, never generated. Counts come from
    passes the stage makes anyway where it can: each Spark action is a job with its own fixed cost.
    """
    heuristic, pruning, language = settings.heuristic, settings.pruning, settings.language
    splits = fit_partitions(spark, input_bytes(documents_path))
    counts: dict[str, int] = {}
    titles = _titles(spark, pages_path, counts)
    documents, document_counts = _documents(spark, documents_path, pages_path)
    counts.update(document_counts)
    # Aliases come from the anchors alone; the name filter built from them is needed while the
    # documents are segmented (one tokenization for sentences and names).
    anchors = resolve_column(
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

    alias_table(kept, titles).write.mode("overwrite").parquet(aliases_out)
    aliases = spark.read.parquet(aliases_out)
    counts["aliases"] = aliases.count()

    name_entities = bloom = None
    if heuristic:
        alias_names = alias_keys(aliases, language).persist(StorageLevel.MEMORY_AND_DISK)
        scored, name_counts = score_name_entities(alias_names, aliases, pruning, language)
        filter_items = name_counts.pop("filter_items")
        counts.update(name_counts)
        name_entities = scored.filter("kept")
        bloom = name_table_filter(name_entities, filter_items)
        cached += [alias_names, scored]
    segments, segment_counts = segment_documents(
        documents, splits, bloom, ner_model=settings.ner_model, language=language
    )
    counts.update(segment_counts)
    cached.append(segments)
    placed = segments.select("doc_id", F.explode("anchors").alias("a")).select("doc_id", "a.*")
    mentions = (
        resolve_column(placed.filter(F.col("sent_idx").isNotNull()), titles, "target")
        .filter(F.col("entity_id").isNotNull())
        .select("doc_id", "sent_idx", "start", "end", "entity_id", F.lit("anchor").alias("method"))
    )
    if heuristic:
        found = _heuristic_mentions(
            _Linking(documents, titles, kept, segments, alias_names, name_entities),
            pruning,
            settings.max_iterations,
            counts,
        )
        cached += found.cached
        mentions = mentions.unionByName(found.mentions)
    methods = ("anchor", "heuristic") if heuristic else ("anchor",)
    counts.update(_write_mentions(segments, mentions, mentions_out, methods))
    for df in cached:
        df.unpersist()
    return _log_counts("link_wikipedia", counts)


def _titles(spark: SparkSession, pages_path: str | Sequence[str], counts: dict[str, int]) -> DataFrame:
    """Every page title resolved through redirects (persisted), the titles counted by what they resolve to."""
    pages = read_pages(spark, pages_path)
    _require_columns(pages, ("page_id", "title", "is_redirect", "redirect_to", "is_disambiguation"), "pages")
    titles = resolve_titles(pages).persist(StorageLevel.MEMORY_AND_DISK)
    untitled = pages.filter(F.coalesce(F.length("title"), F.lit(0)) == 0).select(F.lit("untitled").alias("status"))
    counts["pages_without_title"] = 0
    counts["pages_duplicate_title_across_files"] = count_duplicate_titles(spark, pages_path)
    for row in titles.select("status").unionByName(untitled).groupBy("status").count().collect():
        key = "pages_without_title" if row["status"] == "untitled" else f"titles_{row['status']}"
        counts[key] = row["count"]
    return titles


@dataclass(frozen=True)
class _Linking:
    """What the heuristic reads of the stage so far: the documents, the resolved titles, the anchors
    kept, the segmented documents, and the candidate names with their entities."""

    documents: DataFrame
    titles: DataFrame
    kept: DataFrame
    segments: DataFrame
    alias_names: DataFrame
    name_entities: DataFrame


@dataclass(frozen=True)
class _Found:
    mentions: DataFrame
    cached: list[DataFrame]


def _heuristic_mentions(linking: _Linking, pruning: Pruning, max_iterations: int, counts: dict[str, int]) -> _Found:
    """The heuristic's mentions (the paper's Algorithm 1), its counts added to ``counts``; the frames
    it persisted, for the stage to release at its end."""
    name_entities, kept = linking.name_entities, linking.kept
    exact = exact_names(linking.segments, name_entities).persist(StorageLevel.MEMORY_AND_DISK)
    link_prob, linkable = linkable_names(exact, kept, linking.alias_names, name_entities, pruning)
    link_prob = link_prob.persist(StorageLevel.MEMORY_AND_DISK)
    names = longest_occurrences(exact.join(linkable, "name", "left_semi")).persist(StorageLevel.MEMORY_AND_DISK)
    own_titles = linking.documents.select("doc_id", F.col("title").alias("own_title"))
    own = resolve_column(own_titles, linking.titles, "own_title")
    candidates = name_entities.join(linkable, "name", "left_semi")
    # Edges: at most two per anchor (both directions); candidate pairs: at most every pair.
    graph_rows = 2 * counts["anchors"] + counts["name_entity_pairs"]
    links, reached = link_names(names, kept, own, candidates, max_iterations, graph_rows)
    links = links.persist(StorageLevel.MEMORY_AND_DISK)
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
    mentions = names.join(links.filter("iteration > 0"), ["doc_id", "name"]).select(
        "doc_id", "sent_idx", "start", "end", "entity_id", F.lit("heuristic").alias("method")
    )
    return _Found(mentions, [exact, link_prob, names, links, *reached])


def link_by_string(
    spark: SparkSession,
    documents_path: str | Sequence[str],
    names: Mapping[str, list[str]],
    mentions_out: str,
    lowercase_names_any_case: bool = True,
    ner_model: str | None = None,
    language: str = DEFAULT_LANGUAGE,
) -> dict[str, int]:
    """Link a corpus without hyperlinks (S2ORC) by exact matches of entity names.

    ``names``: entity_id -> its names. Matching is on token boundaries (spaCy's tokenizer), so a
    name never matches inside a longer word; a string that names two entities is ambiguous and
    skipped (counted), since nothing here can tell them apart. Names with capitals match as
    written; names all in lower case match in any casing (``lowercase_names_any_case``), because
    datasets such as FewRel 2.0 lowercase every name ("hbv", "child syndrome") while the text
    writes "HBV" and "CHILD syndrome". Names and text are tokenized by the tokenizer of the
    corpus's ``language``.
    """
    owners: dict[str, set[str]] = defaultdict(set)
    counts = {"names_blank": 0}
    for entity_id, entity_names in names.items():
        for text in entity_names:
            key = name_key(text, language)
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
    segments, segment_counts = segment_documents(
        documents,
        fit_partitions(spark, input_bytes(documents_path)),
        name_filter(list(unique)),
        fold_case=lowercase_names_any_case,
        ner_model=ner_model,
        language=language,
    )
    counts.update(segment_counts)
    mentions = (
        find_names(segments, name_entities)
        .join(name_entities, "name")
        .select("doc_id", "sent_idx", "start", "end", "entity_id", F.lit("string").alias("method"))
    )
    counts.update(_write_mentions(segments, mentions, mentions_out, ("string",)))
    segments.unpersist()
    return _log_counts("link_by_string", counts)
