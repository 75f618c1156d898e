"""Measuring entity linking against Wikipedia's own anchors (``benchmarks/linking_quality.py``).

Wikipedia has no gold labels for the plain-text mentions the heuristic links, but its anchors are
gold labels for the spans they cover. So a seeded share of each document's anchors is *hidden*
(turned into plain text), the documents are linked again, and the mentions found at the hidden
spans are compared with the hidden anchors' entities. The gold side goes through the linker
itself (``link_wikipedia`` without the heuristic on the hidden anchors), so its sentence positions,
trimmed spans and redirect resolution are exactly those the linker gives any anchor.

Only hidden-anchor spans are judged: a predicted mention elsewhere is on text that was never
linked, whose truth is unknown; those mentions are counted (``unjudged``) but not scored.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from pyspark import StorageLevel
from pyspark.sql import SparkSession

from pelt.linking.names import name_key
from pelt.spark import map_rows

T = TypeVar("T")

# (doc_id, sent_idx, start, end, entity_id): a mention as the scorer sees it.
Mention = tuple[str, int, int, int, str]

_HIDDEN_DDL = (
    "doc_id string, title string, text string, "
    "links array<struct<start:int,end:int,target:string>>, "
    "hidden array<struct<start:int,end:int,target:string>>"
)


def hide_anchors(doc_id: str, links: Sequence[T], share: float, seed: int) -> tuple[list[T], list[T]]:
    """Split one document's anchors into (kept, hidden), ``share`` of them hidden (rounded half up).

    The hidden ones are those with the smallest ``sha256(seed, doc_id, index)``: a choice that
    depends only on the document and the seed (not on partitioning or document order) and that
    anyone can recompute, as in :mod:`pelt.sampling.sample`.
    """
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must be in [0, 1], got {share}")
    n_hidden = math.floor(share * len(links) + 0.5)
    ranked = sorted(range(len(links)), key=lambda i: hashlib.sha256(f"{seed}\x1f{doc_id}\x1f{i}".encode()).hexdigest())
    hidden = set(ranked[:n_hidden])
    return (
        [link for i, link in enumerate(links) if i not in hidden],
        [link for i, link in enumerate(links) if i in hidden],
    )


def hide_anchors_in_documents(
    spark: SparkSession, documents_path: str, share: float, seed: int, kept_out: str, hidden_out: str
) -> dict[str, int]:
    """Write the documents twice: with the kept anchors only (``kept_out``, what is linked again)
    and with the hidden anchors only (``hidden_out``, the gold side). Returns the anchor counts."""

    def split(row: Mapping[str, Any]) -> list[dict[str, Any]]:
        kept, hidden = hide_anchors(row["doc_id"], row["links"] or [], share, seed)
        return [{**row, "links": kept, "hidden": hidden}]

    columns = ("doc_id", "title", "text")
    documents = map_rows(spark.read.parquet(documents_path).select(*columns, "links"), split, _HIDDEN_DDL)
    documents = documents.persist(StorageLevel.MEMORY_AND_DISK)
    documents.select(*columns, "links").write.mode("overwrite").parquet(kept_out)
    documents.select(*columns, documents["hidden"].alias("links")).write.mode("overwrite").parquet(hidden_out)
    totals = documents.selectExpr(
        "count(*) as documents", "sum(size(links)) as anchors_kept", "sum(size(hidden)) as anchors_hidden"
    ).first()
    documents.unpersist()
    return {key: int(value or 0) for key, value in totals.asDict().items()}


def most_frequent_entity(aliases: Iterable[tuple[str, str, int]]) -> dict[str, list[str]]:
    """The "link every alias" baseline's names: entity -> the aliases for which it is the most
    frequent entity (by anchor count; ties to the smallest entity id).

    Aliases are grouped by their matching key (:func:`pelt.linking.names.name_key`), as the linker
    matches them, so every key goes to exactly one entity and ``link_by_string`` (which skips
    names of two entities) links every occurrence of every alias.
    """
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    strings: dict[str, list[str]] = defaultdict(list)
    for alias, entity_id, count in aliases:
        key = name_key(alias)
        if not key:
            continue
        counts[key][entity_id] += count
        strings[key].append(alias)
    names: dict[str, list[str]] = defaultdict(list)
    for key, by_entity in counts.items():
        best = min(by_entity, key=lambda entity: (-by_entity[entity], entity))
        names[best].extend(sorted(set(strings[key])))
    return dict(names)


def score_mentions(predicted: Iterable[Mention], gold: Iterable[Mention]) -> dict[str, float]:
    """Precision, recall and F1 of predicted mentions against gold mentions (hidden anchors).

    A gold mention is *recovered* (true positive) when a prediction has the same document,
    sentence, char span and entity. Predictions are *judged* when their span overlaps a gold span
    of the same sentence: exact span and wrong entity (``wrong_entity``) or a different span over
    it (``wrong_span``) are errors; predictions over no gold span are ``unjudged``, not scored.
    ``span_recall``: share of gold spans with a prediction at exactly that span (any entity), the
    ceiling that name finding leaves to entity choice. Precision is ``tp / judged``;
    ``precision_at_gold_spans`` (``tp`` over predictions at exactly a gold span) leaves out the
    span errors, some of which are defensible nested names ("Alaska" inside an anchor
    "Alaska Native Heritage Center").
    """
    gold_entity: dict[tuple[str, int, int, int], str] = {}
    by_sentence: dict[tuple[str, int], list[tuple[int, int]]] = defaultdict(list)
    for doc_id, sent_idx, start, end, entity_id in gold:
        span = (doc_id, sent_idx, start, end)
        if gold_entity.setdefault(span, entity_id) != entity_id:
            raise ValueError(f"gold span {span} has two entities: {gold_entity[span]!r} and {entity_id!r}")
        by_sentence[(doc_id, sent_idx)].append((start, end))
    tp = wrong_entity = wrong_span = unjudged = 0
    found_spans = set()
    for doc_id, sent_idx, start, end, entity_id in set(predicted):
        span = (doc_id, sent_idx, start, end)
        if span in gold_entity:
            found_spans.add(span)
            if gold_entity[span] == entity_id:
                tp += 1
            else:
                wrong_entity += 1
        elif any(start < g_end and g_start < end for g_start, g_end in by_sentence.get((doc_id, sent_idx), ())):
            wrong_span += 1
        else:
            unjudged += 1
    judged = tp + wrong_entity + wrong_span
    precision = tp / judged if judged else 0.0
    recall = tp / len(gold_entity) if gold_entity else 0.0
    return {
        "gold": len(gold_entity),
        "predicted": judged + unjudged,
        "judged": judged,
        "tp": tp,
        "wrong_entity": wrong_entity,
        "wrong_span": wrong_span,
        "unjudged": unjudged,
        "precision": precision,
        "precision_at_gold_spans": tp / (tp + wrong_entity) if tp + wrong_entity else 0.0,
        "recall": recall,
        "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "span_recall": len(found_spans) / len(gold_entity) if gold_entity else 0.0,
    }


def alias_coverage(gold: Iterable[tuple[str, str]], aliases: Iterable[tuple[str, str]]) -> dict[str, float]:
    """How many gold mentions any alias-based linker could link: ``gold`` are (surface text,
    entity), ``aliases`` (alias, entity). ``name_is_alias``: the text's matching key is some
    alias's key; ``name_is_alias_of_entity``: of an alias of the gold entity (the recall ceiling
    of the heuristic and of the every-alias baseline, whatever their choices)."""
    entities: dict[str, set[str]] = defaultdict(set)
    for alias, entity_id in aliases:
        key = name_key(alias)
        if key:
            entities[key].add(entity_id)
    keys = [(name_key(text), entity_id) for text, entity_id in gold]
    n = len(keys)
    return {
        "gold": n,
        "name_is_alias": sum(key in entities for key, _ in keys) / n if n else 0.0,
        "name_is_alias_of_entity": (sum(entity in entities.get(key, ()) for key, entity in keys) / n if n else 0.0),
    }
