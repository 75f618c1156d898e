"""Tokens and sentences: spaCy's tokenizer once per document, its sentencizer's rule on arrays.

A blank pipeline of the corpus's language (:mod:`pelt.linking.languages`: its tokenizer exceptions
keep abbreviations and ordinals one token) needs no downloaded model (nothing can be downloaded on
the machines this runs on) and is fast; the rule-based sentencizer is good enough for choosing the sentence that
carries a mention, which is all the later stages need. In Wikipedia and S2ORC plain text a newline
ends a paragraph, heading or list item, so sentences never cross one.

Speed is the point of this module (issue 3: parse + split + link at 1 M characters per second per
core). A document is tokenized once, and the tokens leave spaCy as arrays (:class:`Tokens`):
sentence boundaries and name matching (:mod:`pelt.linking.names`) are numpy over those arrays, not Python
loops over ``Token`` objects, and nothing tokenizes the text a second time. The tokenizer is called
once per paragraph, not once per document: it stops caching the chunks of a text for the rest of
that text once a special case ("'s", "e.g.") has occurred in it, so on whole articles most chunks
go through its affix regexes every time. Per paragraph, and with a larger chunk cache, an article
of the Wikipedia sample tokenized after the other half of the sample makes 3.3x fewer affix-regex
calls than whole-article tokenization. In the languages split at spaces the tokenizer takes the
paragraphs of a document at once and tokenizes each distinct chunk once, most without spaCy
(:mod:`pelt.linking.chunks`: the same arrays). The sentencizer's rule is applied per paragraph, so the
sentences are exactly those of spaCy's ``sentencizer`` run on each line (a test checks it on the
real samples), but in languages written without spaces (Chinese, Japanese: :func:`sentence_spans`).
"""

from __future__ import annotations

import gc
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache

import numpy as np
from spacy.attrs import IS_PUNCT, IS_SPACE, LOWER
from spacy.lang import lex_attrs
from spacy.language import Language
from spacy.pipeline import Sentencizer
from spacy.strings import get_string_id

from pelt.corpus.wikipedia.site import DEFAULT_LANGUAGE
from pelt.linking.chunks import ARRAY_ATTRS as _ATTRS
from pelt.linking.languages import blank_pipeline, written_without_spaces
from pelt.linking.tokenizers import punctuation

# Text is tokenized whole: the length guard protects the memory of parsers and NER, which this
# pipeline does not have, and a long article (or a table flattened to one line) must not raise.
_MAX_LENGTH = 10**9
# Chunks (whitespace-separated strings) whose tokens the tokenizer remembers; spaCy's default, 10k,
# is full after a few articles, and every later chunk pays the affix regexes (~5 us each). A
# million entries cost tens of MB next to the lexemes spaCy keeps for every string it has seen.
_CACHED_CHUNKS = 1_000_000
# Strings a pipeline may gather (the vocabulary's, with their lexemes, and the chunks and tokens its
# tokenizer holds: _strings_held) before it is replaced: the English sample held 76,976 in 22 MB of
# a worker's memory, 0.3 KB each (spaCy's vocabulary alone: 0.68 KB a string), some 75 MB.
VOCABULARY_CAP = 250_000
# The pipelines built in this process, by language (:func:`nlp`).
_pipelines: dict[str, Language] = {}


def nlp(language: str = DEFAULT_LANGUAGE) -> Language:
    """The process-wide blank pipeline of ``language`` (a Wikipedia code, :mod:`pelt.linking.languages`):
    built once per Python worker and language, on first use, so a Spark executor builds only the
    languages of the documents it is given.

    Its vocabulary computes only the lexical attributes that pelt reads (``LOWER``, ``IS_SPACE``,
    ``IS_PUNCT``; ``ORTH`` is the string itself): spaCy runs each attribute's Python function for
    every string it sees for the first time, and the shape, number, URL ... tests that nothing here
    reads cost 17 % of tokenizing text it has not seen before; the three it reads are spaCy's own
    functions' equals in C where the language keeps spaCy's (:func:`_getters_in_c`). Other
    attributes of its tokens are left at zero.
    """
    pipeline = _pipelines.get(language)
    if pipeline is None:
        pipeline = _pipelines[language] = blank_pipeline(language)
        pipeline.max_length = _MAX_LENGTH
        pipeline.tokenizer.max_cache_size = _CACHED_CHUNKS
        getters = pipeline.vocab.lex_attr_getters
        for attr in set(getters) - {LOWER, IS_SPACE, IS_PUNCT}:
            del getters[attr]
        for attr, (spacys, in_c) in _getters_in_c().items():
            if getters.get(attr) is spacys:
                getters[attr] = in_c
    return pipeline


@cache
def _getters_in_c() -> dict[int, tuple[Callable[[str], object], Callable[[str], object]]]:
    """spaCy's default getters of ``LOWER``, ``IS_SPACE`` and ``IS_PUNCT``, each with a built-in
    function that gives the same value for every string: ``string.lower()``, ``string.isspace()``,
    and whether every character's Unicode category is punctuation (P*; so the empty string too),
    as the set of those characters holding the string's. spaCy calls the getters for every string
    it meets for the first time, in Python: a Python call each (the Hebrew page tokenized by a new
    pipeline: 14.3 -> 13.5 ms). The set: :func:`pelt.linking.tokenizers.punctuation`."""
    return {
        LOWER: (lex_attrs.lower, str.lower),
        IS_SPACE: (lex_attrs.is_space, str.isspace),
        IS_PUNCT: (lex_attrs.is_punct, punctuation().issuperset),
    }


def new_pipeline(language: str = DEFAULT_LANGUAGE) -> Language:
    """A new pipeline of ``language`` in the place of the process's (:func:`nlp`): a tokenizer that
    has cached nothing, as a worker's that has seen no text of the language (what a benchmark of
    text the worker has not seen starts from)."""
    _pipelines.pop(language, None)
    return nlp(language)


@contextmanager
def bounded_vocabulary() -> Iterator[None]:
    """A block of tokenization that starts with a fresh pipeline once the vocabulary holds ``VOCABULARY_CAP`` strings.

    spaCy keeps every string it has seen, with its lexeme: without a bound a worker grows by about
    0.85 KB per distinct token, 1-2 GB on English Wikipedia (issue 14). spaCy's ``memory_zone``
    would drop each block's new strings, but its tokenizer caches no chunk inside one, which made
    tokenization 2.3 times slower (benchmarks/worker_memory.py); a new pipeline keeps the cache and
    costs its build (~0.5 s) and a warm-up once per cap's worth of new strings, tens of MB of text.
    Ids (:func:`string_id`) are hashes, the same in every pipeline, so nothing made before is
    invalid; only spaCy objects (``Doc``, ``Token``) must not outlive their block. Each language's
    pipeline is bounded on its own.
    """
    full = [language for language, pipeline in _pipelines.items() if _strings_held(pipeline) >= VOCABULARY_CAP]
    for language in full:
        del _pipelines[language]
    if full:
        gc.collect()  # the old pipeline's cycles, before the new one fills up
    yield


def _strings_held(pipeline: Language) -> int:
    """The strings a pipeline holds: its vocabulary's, those whose attributes its tokenizer keeps
    without the vocabulary (Chinese, Japanese: :class:`pelt.linking.tokenizers.LexemeTable`), and
    the chunks whose tokens it keeps (the languages split at spaces:
    :class:`pelt.linking.chunks.ChunkTokenizer`, most of whose chunks never enter the vocabulary)."""
    tokenizer = pipeline.tokenizer
    return len(pipeline.vocab.strings) + len(getattr(tokenizer, "lexemes", ())) + len(getattr(tokenizer, "chunks", ()))


def string_id(text: str) -> int:
    """The id spaCy's ``ORTH`` and ``LOWER`` give a string: its 64-bit hash, except for the few
    hundred names of spaCy's own symbols ("root", "dep", ...), which have small fixed ids. The same
    in every language's pipeline."""
    return get_string_id(text)


@cache
def _sentence_end_ids() -> np.ndarray:
    """Ids of the characters after which spaCy's sentencizer may start a sentence."""
    return np.array(sorted(string_id(char) for char in Sentencizer.default_punct_chars), dtype=np.uint64)


@dataclass(frozen=True)
class Tokens:
    """spaCy's tokens of one text, as arrays: one element per token of each non-blank line.

    ``orth`` and ``lower`` are spaCy's ids (:func:`string_id`) of the token and of its lower case:
    the same for equal strings in every process, which is what lets names be matched by hash.
    Whitespace tokens inside a line are kept (the sentencizer counts them); newlines make none.
    """

    orth: np.ndarray  # uint64
    lower: np.ndarray  # uint64
    start: np.ndarray  # int64 char offsets in the text
    end: np.ndarray  # int64
    is_space: np.ndarray  # bool
    is_punct: np.ndarray  # bool
    paragraph_start: np.ndarray  # bool: the first token of a line

    def __len__(self) -> int:
        return len(self.orth)


def paragraphs(text: str) -> list[tuple[int, int]]:
    """Char spans of the non-blank lines of ``text``: the units that sentences never cross."""
    spans = []
    start = 0
    for line in text.split("\n"):
        if line.strip():
            spans.append((start, start + len(line)))
        start += len(line) + 1
    return spans


def tokenize(text: str, language: str = DEFAULT_LANGUAGE) -> Tokens:
    """The tokens of the text's non-blank lines, by the language's spaCy tokenizer, as arrays."""
    spans = paragraphs(text)
    tokenizer = nlp(language).tokenizer
    token_arrays = getattr(tokenizer, "token_arrays", None)  # the arrays without a Doc: chunks.py, tokenizers.py
    if token_arrays is not None:
        array, sizes = token_arrays(text, spans)
    else:
        arrays = [tokenizer(text[start:end]).to_array(_ATTRS) for start, end in spans]
        sizes = np.array([len(array) for array in arrays], dtype=np.int64)
        array = np.concatenate(arrays) if arrays else np.zeros((0, len(_ATTRS)), dtype=np.uint64)
    start = array[:, 2].astype(np.int64) + np.repeat(np.array([s for s, _ in spans], dtype=np.int64), sizes)
    paragraph_start = np.zeros(len(array), dtype=bool)
    paragraph_start[(np.cumsum(sizes) - sizes)[sizes > 0]] = True
    return Tokens(
        orth=array[:, 0],
        lower=array[:, 1],
        start=start,
        end=start + array[:, 3].astype(np.int64),
        is_space=array[:, 4].astype(bool),
        is_punct=array[:, 5].astype(bool),
        paragraph_start=paragraph_start,
    )


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


@cache
def _opening_ids() -> np.ndarray:
    """Ids of the opening brackets and quotes (Unicode's Ps and Pi: 「『（《“...) of the Basic
    Multilingual Plane."""
    opening = (chr(code) for code in range(0x10000) if unicodedata.category(chr(code)) in ("Ps", "Pi"))
    return np.array(sorted(string_id(char) for char in opening), dtype=np.uint64)


def _dots_inside_words(text: str, tokens: Tokens) -> np.ndarray:
    """Whether each token is a "." with a letter or digit right after it (``104.5``, ``EE.UU.``)."""
    dots = np.flatnonzero(tokens.orth == np.uint64(string_id(".")))
    inside = np.zeros(len(tokens), dtype=bool)
    inside[dots] = [end < len(text) and text[end].isalnum() for end in tokens.end[dots].tolist()]
    return inside


def sentence_spans(text: str, tokens: Tokens, language: str = DEFAULT_LANGUAGE) -> list[tuple[int, int]]:
    """Char spans ``[start, end)`` of the sentences of ``text``, in order, trimmed of whitespace.

    spaCy's sentencizer, per paragraph: the first token of a paragraph starts a sentence, and so
    does a token that is neither punctuation nor a sentence-final character when such a character
    came after the last token that was neither (its loop's ``seen_period``).

    In a language written without spaces (``tokens`` of Chinese are characters) two things of its
    text are read otherwise: a "." with a letter or digit right after it ends no sentence (Chinese
    writes decimals "6.02" and Latin abbreviations in its sentences: 115 of 1,979 sentences of the
    real Chinese pages were cut there, and Japanese "EE.UU."), and an opening bracket or quote
    after a sentence's end begins the next sentence (``。「...」``, ``。（...）``), where spaCy's rule
    ends the sentence with it.
    """
    n = len(tokens)
    if not n:
        return []
    enders = np.isin(tokens.orth, _sentence_end_ids())
    plain = ~tokens.is_punct & ~enders
    if written_without_spaces(language):
        enders &= ~_dots_inside_words(text, tokens)
        plain |= np.isin(tokens.orth, _opening_ids())
    index = np.arange(n)
    paragraph_first = np.maximum.accumulate(np.where(tokens.paragraph_start, index, 0))
    # For a plain token: where the tokens since the previous plain token of its paragraph begin.
    previous_plain = np.concatenate(([-1], np.maximum.accumulate(np.where(plain, index, -1))[:-1]))
    since = np.maximum(previous_plain + 1, paragraph_first)
    enders_before = np.concatenate(([0], np.cumsum(enders)))
    starts = np.flatnonzero(tokens.paragraph_start | (plain & (enders_before[index] > enders_before[since])))
    # A sentence runs to the next one, or to the end of its paragraph's last token.
    last_token = np.append(starts[1:], n) - 1
    spans = []
    for begin, stop in zip(tokens.start[starts].tolist(), tokens.end[last_token].tolist()):
        span = trim_span(text, begin, stop)
        if span is not None:
            spans.append(span)
    return spans
