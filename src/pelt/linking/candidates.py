"""Candidate names in Spark: which names and entities the heuristic considers, and where the names occur.

Candidates are pruned before the heuristic's joins (:class:`Pruning`), as Wikipedia2Vec and LUKE
prune their mention tables: a name must be a link often enough where it occurs (link
probability), an entity must be a real share of the name's anchors (prior), a name keeps its
most frequent entities only (cap), and a one-word name that is a common word of the corpus's
language (spaCy's stop words: "A", "The", "May"; "Die", "Le", "的") is no name. Without this
every occurrence of every alias is a candidate for every entity of that name: the title "A" alone
made 556 heuristic links on the real sample, all of them a sentence-initial article, and on all of
Wikipedia the candidate rows would number 10^10-10^11.
Algorithm 1 is unchanged on what is left: a name is linked only where exactly one entity of the
neighbourhood carries it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from operator import itemgetter
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from pelt.corpus.wikipedia.site import DEFAULT_LANGUAGE
from pelt.linking.languages import stop_words, written_without_spaces
from pelt.linking.names import BloomFilter, filter_entries, name_key
from pelt.linking.sentences import bounded_vocabulary
from pelt.spark import map_rows

_NAMES_DDL = "doc_id string, sent_idx int, start int, end int, name string"


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
    ``drop_stop_word_names``: a one-token name that is a stop word of the corpus's language (spaCy's
    list, :func:`pelt.linking.languages.stop_words`) written in lower case or capitalised ("a", "A",
    "The", "May") is no name; all capitals ("US", "IT") are kept. In a language written without
    spaces a stop word is several tokens ("我们" is "我 们"), and the name is compared with its
    tokens. Titles and redirect titles count as one anchor each when nothing links them
    (:func:`pelt.linking.link.alias_table`), so an article's own name stays a name where it occurs in
    few documents.
    """

    min_link_prob: float = 0.2
    min_prior: float = 0.01
    max_entities_per_name: int = 100
    drop_stop_word_names: bool = True

    def __post_init__(self) -> None:
        if not (0 <= self.min_link_prob <= 1 and 0 <= self.min_prior <= 1 and self.max_entities_per_name >= 1):
            raise ValueError(f"pruning thresholds out of range: {self}")


NO_PRUNING = Pruning(min_link_prob=0.0, min_prior=0.0, max_entities_per_name=2**31 - 1, drop_stop_word_names=False)


@cache
def stop_word_keys(language: str = DEFAULT_LANGUAGE) -> frozenset[str]:
    """The name keys that are one stop word of ``language`` (:class:`Pruning`): its stop words
    without a space, as written; in a language written without spaces, each stop word's tokens
    (:func:`pelt.linking.names.name_key`: "我们" is "我 们")."""
    words = stop_words(language)
    if written_without_spaces(language):
        return frozenset(name_key(word, language) for word in words)
    return frozenset(word for word in words if " " not in word)


def stop_word_name(name: Any, language: str = DEFAULT_LANGUAGE) -> Any:
    """Spark expression: ``name`` (a name key column) is one stop word of ``language``
    (:func:`stop_word_keys`) written in lower case or capitalised (see :class:`Pruning`)."""
    name = F.col(name) if isinstance(name, str) else name
    rest = F.substring(name, 2, 1 << 20)
    return F.lower(name).isin(sorted(stop_word_keys(language))) & ((name == F.lower(name)) | (rest == F.lower(rest)))


def name_table_filter(name_table: DataFrame, n_items: int) -> BloomFilter:
    """Bloom filter of the distinct ``name`` keys and their token prefixes, built per partition;
    ``n_items``: their tokens, counted in a pass made anyway."""
    names = name_table.select("name").distinct()
    empty = BloomFilter.for_items(n_items)

    def build(rows: Iterable[Any]) -> Iterator[BloomFilter]:
        bloom = BloomFilter(empty.n_bits, empty.n_hashes)
        bloom.add(filter_entries([row["name"] for row in rows]))
        yield bloom

    return names.rdd.mapPartitions(build).treeReduce(BloomFilter.union) if n_items else empty


def longest_names(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Among the true name occurrences of one sentence keep the longest, then leftmost, that do
    not overlap (the rule of ``spacy.util.filter_spans``). A span that is two names (as written
    and folded to lower case) keeps the one with capitals: upper case sorts first.

    The kept spans never overlap, so they are kept in order of their starts (and so of their ends)
    and a span is checked against its two neighbours only: in a language tokenized per character
    (Chinese) a sentence holds hundreds of nested occurrences, which a check against every kept
    span made quadratic. The order is made by two stable sorts on C key functions (by start and
    name, then by decreasing length), with no Python call per occurrence."""
    found = sorted(row["found"], key=itemgetter("start", "name"))
    found.sort(key=itemgetter("n_tokens"), reverse=True)  # reverse keeps equal ones in order
    chosen: list[Mapping[str, Any]] = []
    starts: list[int] = []
    ends: list[int] = []
    for occurrence in found:
        start, end = occurrence["start"], occurrence["end"]
        i = bisect_right(starts, start)
        if (i and ends[i - 1] > start) or (i < len(starts) and starts[i] < end):
            continue
        starts.insert(i, start)
        ends.insert(i, end)
        chosen.insert(i, occurrence)
    doc_id, sent_idx = row["doc_id"], row["sent_idx"]
    return [
        {"doc_id": doc_id, "sent_idx": sent_idx, "start": c["start"], "end": c["end"], "name": c["name"]}
        for c in chosen
    ]


def exact_names(segments: DataFrame, name_table: DataFrame) -> DataFrame:
    """Every occurrence of a ``name`` key of ``name_table``, nested ones included: the segments'
    candidates made exact by a join."""
    return (
        segments.select("doc_id", F.explode("candidates").alias("c"))
        .select("doc_id", "c.*")
        .join(name_table.select("name").distinct(), "name", "left_semi")
    )


def longest_occurrences(exact: DataFrame) -> DataFrame:
    """Occurrences (doc_id, sent_idx, start, end, name): the longest of ``exact`` per sentence."""
    found = exact.groupBy("doc_id", "sent_idx").agg(
        F.collect_list(F.struct("start", "end", "n_tokens", "name")).alias("found")
    )
    return map_rows(found, longest_names, _NAMES_DDL)


def find_names(segments: DataFrame, name_table: DataFrame) -> DataFrame:
    """Occurrences (doc_id, sent_idx, start, end, name) of the ``name`` keys of ``name_table``, the
    longest per sentence."""
    return longest_occurrences(exact_names(segments, name_table))


def score_name_entities(
    alias_names: DataFrame, aliases: DataFrame, pruning: Pruning, language: str = DEFAULT_LANGUAGE
) -> tuple[DataFrame, dict[str, int]]:
    """Persisted (name, entity_id, name_count, kept) of every pair, ``kept`` when it passes the
    prior, the cap and the stop-word rule (``language``'s stop words), and the counts of what was
    pruned. ``name_count``: the name's anchors, summed over its entities and the aliases of the
    name key."""
    pairs = alias_names.join(aliases, "alias").groupBy("name", "entity_id").agg(F.sum("count").alias("count"))
    by_name = Window.partitionBy("name")
    scored = (
        pairs.withColumn("name_count", F.sum("count").over(by_name))
        .withColumn("prior", F.col("count") / F.col("name_count"))
        .withColumn("rank", F.row_number().over(by_name.orderBy(F.desc("count"), "entity_id")))
        .withColumn("stop_word", stop_word_name("name", language) if pruning.drop_stop_word_names else F.lit(False))
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


def link_probabilities(exact: DataFrame, anchor_names: DataFrame, name_counts: DataFrame) -> DataFrame:
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


def alias_keys(aliases: DataFrame, language: str = DEFAULT_LANGUAGE) -> DataFrame:
    """(alias, name): the matching key of every distinct alias, tokenized once, in parallel, by the
    tokenizer of the corpus's ``language`` (as its text is)."""
    return map_rows(
        aliases.select("alias").distinct(),
        lambda row: [{"alias": row["alias"], "name": name_key(row["alias"], language)}],
        "alias string, name string",
        bounded_vocabulary,
    ).filter(F.length("name") > 0)
