"""Segmentation: a document's sentences, its anchors placed in them and its candidate names, in one tokenization."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

import spacy
from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from spacy.language import Language

from pelt.corpus.wikipedia.site import DEFAULT_LANGUAGE
from pelt.linking.names import BloomFilter, candidate_names
from pelt.linking.sentences import bounded_vocabulary, sentence_spans, tokenize, trim_span
from pelt.spark import map_rows

_SEGMENT_DDL = (
    "doc_id string, title string, sentences array<string>, "
    "anchors array<struct<sent_idx:int,start:int,end:int,target:string,text:string>>, "
    "candidates array<struct<sent_idx:int,start:int,end:int,n_tokens:int,name:string>>, n_invalid int, n_blank int"
)


def normalize_alias(text: str) -> str:
    """Collapse whitespace: an anchor text wrapped over a line must match the same name on one line."""
    return " ".join(text.split())


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
    language: str = DEFAULT_LANGUAGE,
) -> list[dict[str, Any]]:
    """Split one document into sentences, place its anchors in them, and find its candidate names.

    The text is tokenized once (:func:`pelt.linking.sentences.tokenize`) for both sentences and names.
    Every usable anchor is returned (its text is an alias and its target a page linked from the
    document, whatever the sentence splitter did); only anchors inside one sentence get a
    ``sent_idx`` and a span re-based to that sentence, the others have nulls there. With a name
    filter, ``candidates`` holds the n-grams that may be names (:func:`pelt.linking.names.candidate_names`),
    never over an anchor; an ``ner`` pipeline keeps only the names it recognises. ``language``: the
    corpus's, whose tokenizer and abbreviations decide the tokens and so the sentences and names.
    """
    text = row["text"] or ""
    tokens = tokenize(text, language)
    spans = sentence_spans(text, tokens, language)
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


@cache
def ner_pipeline(name: str) -> Language:
    """A spaCy pipeline with an NER component (``spacy.load``: a package name or a folder), loaded
    once per Python worker."""
    pipeline = spacy.load(name)
    if not pipeline.has_pipe("ner") and not pipeline.has_pipe("entity_ruler"):
        raise ValueError(f"linking.ner_model {name!r} has no ner or entity_ruler component")
    return pipeline


def segment_documents(
    documents: DataFrame,
    splits: int,
    name_filter: BloomFilter | None = None,
    fold_case: bool = False,
    ner_model: str | None = None,
    language: str = DEFAULT_LANGUAGE,
) -> tuple[DataFrame, dict[str, int]]:
    """Segment every document, spread over ``splits`` partitions first when read in fewer (a
    Parquet file written by one task is one split however big, and segmenting is the heaviest step;
    a small input is left as it is, a shuffle of it would cost more than it saves), finding
    candidate names in ``name_filter`` when given, with the tokenizer of ``language``; return the
    (persisted) segments and their counts."""
    spark_context = documents.sparkSession.sparkContext
    bloom = spark_context.broadcast(name_filter) if name_filter is not None else None
    if documents.rdd.getNumPartitions() < splits:
        documents = documents.repartition(splits)

    def segment(row: Mapping[str, Any]) -> list[dict[str, Any]]:
        ner = ner_pipeline(ner_model) if ner_model else None
        return segment_document(row, bloom.value if bloom else None, fold_case, ner, language)

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
