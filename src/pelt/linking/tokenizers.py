"""Tokenizers of the languages written without spaces whose tokens ``tokenize`` takes as arrays,
without a spaCy ``Doc``: Chinese (one token per character) and Japanese (SudachiPy's words).

Each has a ``token_arrays(text, lines)`` (:func:`pelt.linking.sentences.tokenize` takes it where
it is there) that gives what ``Doc.to_array([ORTH, LOWER, IDX, LENGTH, IS_SPACE, IS_PUNCT])``
gives for the ``Doc`` of each line, all lines in one array: the same tokens, and the same lexical
attributes, computed as the vocabulary computes them once per distinct token (:class:`LexemeTable`).
A ``Doc`` of these languages is built in Python, a token at a time: Chinese text split in half
the time, Japanese in a third (benchmarks/HISTORY.md, "Throughput per language: each language's
slow path").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
from spacy.attrs import IS_PUNCT, IS_SPACE, LOWER
from spacy.strings import get_string_id as string_id
from spacy.tokens import Doc
from spacy.vocab import Vocab

# A token of spaCy's character segmenter: a character that is not a space, with the one space after
# it that is its trailing whitespace, or a run of whitespace that no character took.
_CHARACTER = re.compile(r"(\S)( ?)|(\s+)")
_WHITESPACE = re.compile(r"\s").search


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
            values = map(getter, words) if getter is not None else [None] * len(words)
            columns.append([string_id(value) if isinstance(value, str) else int(value or 0) for value in values])
        return np.array(columns, dtype=np.uint64).T.reshape(-1, 4)

    def line_arrays(
        self, text: str, lines: list[tuple[int, int]], split: Callable[[str, int, int], tuple[list[str], list[str]]]
    ) -> tuple[np.ndarray, np.ndarray]:
        """``token_arrays`` of each line ``text[start:end]`` as ``split(text, start, end)`` gives its
        tokens and the whitespace after each, and the number of tokens of each line."""
        words: list[str] = []
        spaces: list[str] = []
        sizes = np.zeros(len(lines), dtype=np.int64)
        for line, (start, end) in enumerate(lines):
            line_words, line_spaces = split(text, start, end)
            sizes[line] = len(line_words)
            words += line_words
            spaces += line_spaces
        return self.token_arrays(words, spaces, sizes), sizes

    def token_arrays(self, words: list[str], spaces: list[str], sizes: np.ndarray) -> np.ndarray:
        """The six columns of ``Doc.to_array`` of lines of ``sizes`` tokens each, ``words`` their
        tokens and ``spaces`` the whitespace after each ("" or " "), all lines one after another."""
        if not words:
            return np.zeros((0, 6), dtype=np.uint64)
        rows = self._rows
        found = list(map(rows.get, words))
        if None in found:  # words not seen before: their rows, once each
            new = [word for word in dict.fromkeys(words) if word not in rows]
            added = self.rows_of(new)
            rows.update(zip(new, range(len(rows), len(rows) + len(new))))
            self._attributes = np.concatenate((self._attributes, added))
            found = list(map(rows.__getitem__, words))
        attributes = self._attributes[np.array(found, dtype=np.int64)]
        length = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        step = length + np.fromiter(map(len, spaces), dtype=np.int64, count=len(spaces))
        before = np.cumsum(step) - step  # offset from the first line's start, as if lines touched
        line_first = np.cumsum(sizes) - sizes
        idx = before - np.repeat(before[np.minimum(line_first, len(words) - 1)], sizes)
        array = np.empty((len(words), 6), dtype=np.uint64)
        array[:, 0:2] = attributes[:, 0:2]
        array[:, 2] = idx
        array[:, 3] = length
        array[:, 4:6] = attributes[:, 2:4]
        return array


def _line_characters(text: str, start: int, end: int) -> tuple[list[str], list[str]]:
    """The tokens of ``CharacterTokenizer`` in ``text[start:end]`` and the whitespace after each; a line
    without whitespace is its characters at once."""
    if _WHITESPACE(text, start, end) is None:  # each character a token, with no space after it
        return list(text[start:end]), [""] * (end - start)
    found = _CHARACTER.findall(text, start, end)
    return [character or run for character, _, run in found], [space for _, space, _ in found]


class CharacterTokenizer:
    """spaCy's Chinese ``char`` segmenter (one token per character), in linear time.

    spaCy's aligns the characters with the text by ``text[position:].index(character)``, a copy of
    the rest of the line per character: quadratic in a line's length (a line of 50,000 characters,
    a table flattened to one line, took 2.8 times as long as here, one of 1,000 1.1 times;
    benchmarks/HISTORY.md, "Throughput per language: each language's slow path"). The same
    tokens, with the same whitespace (a space after a character is its trailing space, any other
    whitespace a token), from one regular expression (a test compares the two).
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
        and the number of tokens of each line."""
        return self.lexemes.line_arrays(text, lines, _line_characters)


class SudachiTokenizer:
    """spaCy's Japanese tokenizer (SudachiPy's words, split mode A), whose ``token_arrays`` make
    its tokens from SudachiPy's words alone.

    spaCy's builds a ``Doc`` and gives each token its part of speech, lemma, normal form, reading
    and morphology, none of which the linking stage reads, and aligns the words with the text by
    ``text[position:].index(word)``, a copy of the rest of the line per word: under cProfile,
    SudachiPy itself was a sixth of its time. Here the same words of the same SudachiPy tokenizer (spaCy's, with its
    dictionary and split mode) are aligned as spaCy aligns them (:meth:`words`): a space right
    after a word is its trailing space, any other whitespace between words one token. ``__call__``
    is spaCy's (a name's key, :func:`pelt.linking.names.name_key`); a test compares the two.
    """

    def __init__(self, japanese: Any) -> None:
        self.japanese = japanese  # spaCy's JapaneseTokenizer
        self.vocab = japanese.vocab
        self.lexemes = LexemeTable(japanese.vocab)

    def __call__(self, text: str) -> Doc:
        return self.japanese(text)

    def words(self, text: str) -> tuple[list[str], list[str]]:
        """The tokens of spaCy's Japanese ``Doc`` of ``text`` and the whitespace after each ("" or
        " "), as its ``get_dtokens_and_spaces`` makes them from SudachiPy's words (empty ones
        dropped); where they do not fit the text, spaCy's error, by spaCy."""
        found = list(filter(None, [morpheme.surface() for morpheme in self.japanese.tokenizer.tokenize(text)]))
        if not found:
            return [], []
        if _WHITESPACE(text) is None and "".join(found) == text:
            return found, [""] * len(found)  # no whitespace: every word where the last one ended
        if "".join("".join(found).split()) != "".join(text.split()):
            self.refuse(text)
        if all(word.isspace() for word in found):
            return [text], [""]
        words: list[str] = []
        spaces: list[str] = []
        position = 0
        for i, word in enumerate(found):
            if word.isspace():
                continue
            start = text.find(word, position)
            if start < 0:
                self.refuse(text)
            if start > position:  # whitespace that no space after a word took: a token
                words.append(text[position:start])
                spaces.append("")
            words.append(word)
            spaces.append(" " if i + 1 < len(found) and found[i + 1] == " " else "")
            position = start + len(word) + len(spaces[-1])
        if position < len(text):
            words.append(text[position:])
            spaces.append("")
        return words, spaces

    def refuse(self, text: str) -> None:
        """spaCy's error (E194) for a text whose SudachiPy words it cannot align, raised by spaCy."""
        self.japanese(text)
        raise ValueError(f"SudachiPy's words do not fit the text {text[:80]!r}")

    def token_arrays(self, text: str, lines: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
        """``Doc.to_array`` of spaCy's ``Doc`` of each line ``text[start:end]`` (module docstring),
        and the number of tokens of each line."""
        return self.lexemes.line_arrays(text, lines, lambda text, start, end: self.words(text[start:end]))
