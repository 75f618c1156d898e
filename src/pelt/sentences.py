"""Sentence splitting with spaCy's rule-based sentencizer.

A blank English pipeline needs no downloaded model (nothing can be downloaded on the machines this
runs on) and is fast; its punctuation rules are good enough for choosing the sentence that carries a
mention, which is all the later stages need. Text is cut at newlines first: in Wikipedia and S2ORC
plain text a newline ends a paragraph, heading or list item, and the sentencizer would otherwise glue
a heading onto the next sentence.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

import spacy
from spacy.language import Language
from spacy.tokens import Doc

# Paragraphs are short, but an occasional huge one (a table flattened to one line) must not raise:
# the length guard protects the memory of parsers and NER, which this pipeline does not have.
_MAX_LENGTH = 10**9


@cache
def nlp() -> Language:
    """The process-wide pipeline: built once per Python worker, shared by splitting and matching."""
    pipeline = spacy.blank("en")
    pipeline.add_pipe("sentencizer")
    pipeline.max_length = _MAX_LENGTH
    return pipeline


def paragraphs(text: str) -> list[tuple[int, int]]:
    """Char spans of the non-blank lines of ``text``: the units that sentences never cross."""
    spans = []
    start = 0
    for line in text.split("\n"):
        if line.strip():
            spans.append((start, start + len(line)))
        start += len(line) + 1
    return spans


def trim_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    """``[start, end)`` without surrounding whitespace, or None when nothing else is left.

    spaCy keeps runs of extra spaces as tokens, so a sentence can begin or end with whitespace.
    """
    piece = text[start:end]
    stripped = piece.lstrip()
    if not stripped:
        return None
    start += len(piece) - len(stripped)
    return start, start + len(stripped.rstrip())


def sentence_docs(text: str) -> Iterator[tuple[int, Doc]]:
    """(char offset, spaCy Doc) per paragraph of ``text``, processed in one ``nlp.pipe`` batch."""
    spans = paragraphs(text)
    for (start, _), doc in zip(spans, nlp().pipe(text[s:e] for s, e in spans), strict=True):
        yield start, doc


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Char spans ``[start, end)`` of the sentences of ``text``, in order, trimmed of whitespace."""
    spans = []
    for offset, doc in sentence_docs(text):
        for sent in doc.sents:
            span = trim_span(text, offset + sent.start_char, offset + sent.end_char)
            if span is not None:
                spans.append(span)
    return spans
