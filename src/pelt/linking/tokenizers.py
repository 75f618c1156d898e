"""Tokenizers of the languages written without spaces whose tokens ``tokenize`` takes as arrays,
without a spaCy ``Doc``: Chinese (one token per character) and Japanese (MeCab's words).

Each has a ``token_arrays(text, lines)`` (:func:`pelt.linking.sentences.tokenize` takes it where
it is there) that gives what ``Doc.to_array([ORTH, LOWER, IDX, LENGTH, IS_SPACE, IS_PUNCT])``
gives for the ``Doc`` of each line, all lines in one array: the same tokens, and the same lexical
attributes, computed as the vocabulary computes them once per distinct token (:class:`LexemeTable`).
A ``Doc`` of these languages is built in Python, a token at a time: Chinese text split in half
the time (benchmarks/HISTORY.md, "Throughput per language: each language's slow path").
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from dataclasses import dataclass
from functools import cache
from itertools import repeat
from unicodedata import category

import numpy as np
from spacy.attrs import IS_PUNCT, IS_SPACE, LOWER
from spacy.strings import get_string_id as string_id
from spacy.tokens import Doc
from spacy.vocab import Vocab

# A token of spaCy's character segmenter: a character that is not a space, with the one space after
# it that is its trailing whitespace, or a run of whitespace that no character took.
_CHARACTER = re.compile(r"(\S)( ?)|(\s+)")
_SAME_CHARACTER = re.compile(r"(.)\1*", re.DOTALL)
# Whitespace that MeCab does not skip but reads as a word (U+3000, U+00A0, ...).
_UNSKIPPED_SPACE = re.compile(r"[^\S\t\n\v ]").search


def _loses_words(line: str) -> bool:
    """Whether MeCab's output string may lack words of ``line``: fugashi strips it, so whitespace
    that MeCab reads as a word is lost where it ends what MeCab read, at the line's ends (past the
    characters MeCab skips) or before a NUL (where MeCab stops reading)."""
    read = line.strip(MecabTokenizer.SKIPPED)
    return "\x00" in read or bool(read and (_UNSKIPPED_SPACE(read[0]) or _UNSKIPPED_SPACE(read[-1])))


@cache
def punctuation() -> frozenset[str]:
    """The characters whose Unicode category is punctuation (P*), made once a process (0.1 s):
    what spaCy's ``IS_PUNCT`` tests, and what splits MeCab's punctuation runs."""
    return frozenset(char for char in map(chr, range(sys.maxunicode + 1)) if category(char)[0] == "P")


@cache
def _punctuation_table() -> np.ndarray:
    """Whether each code point is punctuation (:func:`punctuation`), by code point: 1.1 MB."""
    table = np.zeros(sys.maxunicode + 1, dtype=bool)
    table[list(map(ord, punctuation()))] = True
    return table


def _split_punctuation(
    points: np.ndarray, words: list[str], placed: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> tuple[list[str], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """MeCab's words at ``placed`` (start, end, line) in the text of code points ``points``, a
    word of two or more punctuation characters split where its character changes (``。"`` ->
    ``。`` ``"``; ``--`` stays one): found by arrays, split one by one (they are few)."""
    starts, ends, line_of = placed
    marks = np.concatenate(([0], np.cumsum(_punctuation_table()[points])))
    length = ends - starts
    candidates = np.flatnonzero((length > 1) & (marks[ends] - marks[starts] == length)).tolist()
    runs = {i: spans for i in candidates if len(spans := [m.span() for m in _SAME_CHARACTER.finditer(words[i])]) > 1}
    if not runs:
        return words, placed
    out: tuple[list[str], list[int], list[int], list[int]] = ([], [], [], [])
    kept = (words, starts.tolist(), ends.tolist(), line_of.tolist())
    previous = 0
    for i, spans in runs.items():
        for column, values in zip(out, kept):
            column += values[previous:i]
        out[0].extend(words[i][a:b] for a, b in spans)
        out[1].extend(kept[1][i] + a for a, _ in spans)
        out[2].extend(kept[1][i] + b for _, b in spans)
        out[3].extend([kept[3][i]] * len(spans))
        previous = i + 1
    for column, values in zip(out, kept):
        column += values[previous:]
    return out[0], (
        np.array(out[1], dtype=np.int64),
        np.array(out[2], dtype=np.int64),
        np.array(out[3], dtype=np.int64),
    )


@dataclass(frozen=True)
class LineTokens:
    """The tokens of lines of a text, one line after another: each token's string, its length,
    whether one space after it is its trailing whitespace, and the number of each line's tokens."""

    words: list[str]
    lengths: np.ndarray  # int64
    trailing: np.ndarray  # bool
    sizes: np.ndarray  # int64


class LexemeTable:
    """The lexical attributes that ``tokenize`` reads (``ORTH``, ``LOWER``, ``IS_SPACE``,
    ``IS_PUNCT``) of each distinct token of a vocabulary, a row each, in the order first seen.

    A row is computed as spaCy's vocabulary computes a new lexeme's (``Vocab._new_lexeme``: each
    of the vocabulary's attribute getters on the string, a string value replaced by its id), but
    without the lexeme: spaCy interns every new string and allocates a lexeme for it, which nothing
    here reads, in 2.5 times the time (7,638 new tokens of the real Japanese pages: 14.4 against
    5.8 ms). The strings held count against the pipeline's cap
    (:func:`pelt.linking.sentences.bounded_vocabulary`) as the vocabulary's do.
    """

    def __init__(self, vocab: Vocab) -> None:
        self.vocab = vocab
        self._rows: dict[str, int] = {}
        self._attributes = np.zeros((0, 4), dtype=np.uint64)

    def __len__(self) -> int:
        return len(self._rows)

    def rows_of(self, words: list[str]) -> np.ndarray:
        """The ``ORTH``, ``LOWER``, ``IS_SPACE`` and ``IS_PUNCT`` of each of ``words`` (distinct, none
        held yet), as spaCy's lexemes of them hold them."""
        getters = self.vocab.lex_attr_getters
        columns = [list(map(string_id, words))]
        for attr in (LOWER, IS_SPACE, IS_PUNCT):
            getter = getters.get(attr)
            values = list(map(getter, words)) if getter is not None else [None] * len(words)
            kinds = set(map(type, values))
            if kinds <= {str}:  # a string value: its id
                columns.append(list(map(string_id, values)))
            elif kinds <= {bool, type(None)}:  # a flag: 0 or 1, as a lexeme holds it
                columns.append(np.array(values, dtype=bool))
            else:
                columns.append([string_id(value) if isinstance(value, str) else int(value or 0) for value in values])
        return np.array(columns, dtype=np.uint64).T.reshape(-1, 4)

    def token_arrays(self, tokens: LineTokens) -> np.ndarray:
        """The six columns of ``Doc.to_array`` of ``tokens``, all lines one after another."""
        words = tokens.words
        if not words:
            return np.zeros((0, 6), dtype=np.uint64)
        rows = self._rows
        found = np.fromiter(map(rows.get, words, repeat(-1)), dtype=np.int64, count=len(words))
        unseen = np.flatnonzero(found < 0)
        if len(unseen):  # words not seen before: their rows, once each
            words_unseen = list(map(words.__getitem__, unseen.tolist()))
            new = list(dict.fromkeys(words_unseen))
            added = self.rows_of(new)
            rows.update(zip(new, range(len(rows), len(rows) + len(new))))
            self._attributes = np.concatenate((self._attributes, added))
            found[unseen] = np.fromiter(map(rows.__getitem__, words_unseen), dtype=np.int64, count=len(unseen))
        attributes = self._attributes[found]
        step = tokens.lengths + tokens.trailing
        before = np.cumsum(step) - step  # offset from the first line's start, as if lines touched
        sizes = tokens.sizes
        line_first = np.cumsum(sizes) - sizes
        idx = before - np.repeat(before[np.minimum(line_first, len(words) - 1)], sizes)
        array = np.empty((len(words), 6), dtype=np.uint64)
        array[:, 0:2] = attributes[:, 0:2]
        array[:, 2] = idx
        array[:, 3] = tokens.lengths
        array[:, 4:6] = attributes[:, 2:4]
        return array


class CharacterTokenizer:
    """spaCy's Chinese ``char`` segmenter (one token per character), in linear time.

    spaCy's aligns the characters with the text by ``text[position:].index(character)``, a copy of
    the rest of the line per character: quadratic in a line's length (a line of 50,000 characters,
    a table flattened to one line, took 2.8 times as long as here, one of 1,000 1.1 times;
    benchmarks/HISTORY.md, "Throughput per language: each language's slow path"). The same
    tokens, with the same whitespace (a space after a character is its trailing space, any other
    whitespace a token): ``__call__`` from one regular expression, ``token_arrays`` by arrays
    (tests compare the first with spaCy's, the second with the first).
    """

    def __init__(self, vocab: Vocab) -> None:
        self.vocab = vocab
        self.lexemes = LexemeTable(vocab)

    def __call__(self, text: str) -> Doc:
        found = _CHARACTER.findall(text)
        words = [character or run for character, _, run in found]
        return Doc(self.vocab, words=words, spaces=[bool(space) for _, space, _ in found])

    def token_arrays(self, text: str, lines: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
        """``Doc.to_array`` of ``__call__`` of each line ``text[start:end]`` (module docstring),
        and the number of tokens of each line: the characters that are not whitespace placed all at
        once, as MeCab's words are (:func:`_tokens_around`)."""
        points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        bounds = np.array(lines, dtype=np.int64).reshape(-1, 2)
        starts = np.flatnonzero(_inside(len(points), lines) & ~np.isin(points, _whitespace()))
        words = list(points[starts].tobytes().decode("utf-32-le", "surrogatepass"))
        line_of = np.searchsorted(bounds[:, 0], starts, side="right") - 1
        tokens = _tokens_around(text, points, lines, words, (starts, starts + 1, line_of))
        return self.lexemes.token_arrays(tokens), tokens.sizes


class MecabTokenizer:
    """Japanese words: MeCab's with UniDic (fugashi and unidic-lite, pinned), the short units that
    SudachiPy's split mode A (spaCy's Japanese tokenizer) gives too, at a third of the time.

    On the real Japanese pages the two share 99.3 % of SudachiPy's word boundaries (98.3 % of
    MeCab's), and MeCab's analysis takes 0.029 s where SudachiPy's took 0.080
    (benchmarks/README.md, "Throughput per language"); UniDic's units are also those the Japanese
    BERTs pre-tokenize with (fugashi). MeCab gives the words one line at a time, in order, as one
    string (``-Owakati``), skipping tabs, newlines, vertical tabs and spaces (``SKIPPED``,
    which no word holds): the words hold every other character of the line, in order, so their
    offsets are the positions of those characters, with no search of the text (:meth:`words`).
    Every character of a line is in a token, as in spaCy's Japanese: a space right after a word is
    its trailing space, any other run of skipped characters one token. A run of punctuation that
    MeCab reads as one unknown word is split where its character changes, as SudachiPy splits it
    (``。"`` one token would hide a sentence's end from the sentencizer; ``--`` stays one).
    ``__call__`` (a name's key, :func:`pelt.linking.names.name_key`) gives the same tokens as a
    ``Doc``.
    """

    # The characters MeCab skips between words (tab, newline, vertical tab, space; a test scans
    # every code point).
    SKIPPED = "\t\n\v "

    def __init__(self, vocab: Vocab) -> None:
        import fugashi
        import unidic_lite

        self.vocab = vocab
        self.lexemes = LexemeTable(vocab)
        dictionary = unidic_lite.DICDIR
        rc = os.path.join(dictionary, "mecabrc")
        options = f"-d {shlex.quote(dictionary)} -r {shlex.quote(rc)}"
        self.parse = fugashi.GenericTagger(f"-Owakati {options}").parse
        self.nodes = fugashi.GenericTagger(options)
        self._skipped = np.array(sorted(map(ord, self.SKIPPED)), dtype=np.uint32)

    def __call__(self, text: str) -> Doc:
        tokens = self.words(text, [(0, len(text))] if text else [])
        return Doc(self.vocab, words=tokens.words, spaces=tokens.trailing.tolist())

    def token_arrays(self, text: str, lines: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
        """``Doc.to_array`` of ``__call__`` of each line ``text[start:end]`` (module docstring),
        and the number of tokens of each line."""
        tokens = self.words(text, lines)
        return self.lexemes.token_arrays(tokens), tokens.sizes

    def words(self, text: str, lines: list[tuple[int, int]]) -> LineTokens:
        """The tokens of the lines ``text[start:end]`` (class docstring): MeCab called once a line,
        the words placed all at once."""
        found = [self.parse(text[start:end]) for start, end in lines]
        if _UNSKIPPED_SPACE(text) or "\x00" in text:  # words fugashi's output string may lose
            found = [
                self._node_words(text[start:end]) if _loses_words(text[start:end]) else words
                for (start, end), words in zip(lines, found)
            ]
        words = list(filter(None, " ".join(found).split(" ")))
        per_line = np.array([f.count(" ") + 1 if f else 0 for f in found], dtype=np.int64)
        points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        kept = np.flatnonzero(_inside(len(points), lines) & ~np.isin(points, self._skipped))
        joined = np.frombuffer("".join(words).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        if len(words) == per_line.sum() and len(joined) == len(kept) and (points[kept] == joined).all():
            length = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
            first = np.cumsum(length) - length
            starts, ends = kept[first], kept[first + length - 1] + 1
            line_of = np.repeat(np.arange(len(lines)), per_line)
        else:  # MeCab left out or changed a character (it stops at a NUL): each word searched
            words, starts, ends, line_of = self._searched(text, lines, found)
        words, placed = _split_punctuation(points, words, (starts, ends, line_of))
        return _tokens_around(text, points, lines, words, placed)

    def _node_words(self, line: str) -> str:
        """MeCab's words of a line as ``-Owakati`` writes them, whitespace words at its ends kept."""
        return " ".join(node.surface for node in self.nodes(line))

    @staticmethod
    def _searched(
        text: str, lines: list[tuple[int, int]], found: list[str]
    ) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
        """MeCab's words of each line that are in it, searched in order from the last one's end, and
        where they are: a word that is not there is left out (its characters fall in the tokens
        between words)."""
        words: list[str] = []
        starts: list[int] = []
        line_of: list[int] = []
        for line, ((start, end), line_words) in enumerate(zip(lines, found)):
            position = start
            for word in filter(None, line_words.split(" ")):
                at = text.find(word, position, end)
                if at >= 0:
                    words.append(word)
                    starts.append(at)
                    line_of.append(line)
                    position = at + len(word)
        begin = np.array(starts, dtype=np.int64)
        length = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        return words, begin, begin + length, np.array(line_of, dtype=np.int64)


@cache
def _whitespace() -> np.ndarray:
    """The code points of whitespace (``str.isspace``, what ``\\s`` matches), sorted."""
    return np.array([point for point in range(sys.maxunicode + 1) if chr(point).isspace()], dtype=np.uint32)


def _inside(length: int, lines: list[tuple[int, int]]) -> np.ndarray:
    """Whether each of a text's ``length`` characters is inside one of ``lines``."""
    marks = np.zeros(length + 1, dtype=np.int64)
    for start, end in lines:
        marks[start] += 1
        marks[end] -= 1
    return np.cumsum(marks[:-1]) > 0


def _tokens_around(
    text: str,
    points: np.ndarray,
    lines: list[tuple[int, int]],
    words: list[str],
    placed: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> LineTokens:
    """The tokens of ``lines`` of ``text`` (``points``: its code points) whose ``words`` are at
    ``placed`` (start, end and line of each, in order): a space right after a word is its trailing
    space, every other run of characters between words, or before a line's first or after its
    last, a token."""
    starts, ends, line_of = placed
    bounds = np.array(lines, dtype=np.int64).reshape(-1, 2)
    line_first = np.flatnonzero(np.concatenate(([True], line_of[1:] != line_of[:-1])))[: len(starts)]
    following = np.concatenate((starts[1:], [0]))[: len(starts)]  # the next word's start, or the line's end
    line_last = np.concatenate((line_first[1:] - 1, [len(starts) - 1]))[: len(line_first)]
    following[line_last] = bounds[line_of[line_last], 1]
    trailing = np.zeros(len(starts), dtype=bool)
    gapped = following > ends
    trailing[gapped] = points[ends[gapped]] == ord(" ")
    between = following > ends + trailing
    first_start = bounds[:, 1].copy()  # a line without words is one token
    first_start[line_of[line_first]] = starts[line_first]
    leading = first_start > bounds[:, 0]
    gap_starts = np.concatenate(((ends + trailing)[between], bounds[leading, 0]))
    gap_ends = np.concatenate((following[between], first_start[leading]))
    gaps = [text[start:end] for start, end in zip(gap_starts.tolist(), gap_ends.tolist())]
    counted = np.concatenate((line_of, line_of[between], np.flatnonzero(leading)))
    sizes = np.bincount(counted, minlength=len(lines)).astype(np.int64)
    if not gaps:
        return LineTokens(words, ends - starts, trailing, sizes)
    order = np.argsort(np.concatenate((starts, gap_starts)), kind="stable")
    pieces = words + gaps
    lengths = np.concatenate((ends - starts, gap_ends - gap_starts))[order]
    after = np.concatenate((trailing, np.zeros(len(gaps), dtype=bool)))[order]
    return LineTokens(list(map(pieces.__getitem__, order.tolist())), lengths, after, sizes)
