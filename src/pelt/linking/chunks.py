"""spaCy's rule tokenizer, whose ``token_arrays`` tokenize each distinct chunk of a text once, and
most of them without spaCy.

spaCy's tokenizer splits a line at whitespace into chunks and each chunk by its rules (prefixes,
suffixes, infixes, special cases), caching each chunk's tokens. On a text its worker has not seen,
nearly every chunk is new: the Hebrew page's 2,421 distinct chunks took 14 ms against 1.1 ms once
seen, each chunk a pass of the affix loop (a Python call per rule, 6.5 us a chunk) and a new
lexeme for each of its tokens. Here (:class:`ChunkTokenizer`) the tokens of each distinct chunk
are kept as rows of ``Doc.to_array``, and a new chunk is tokenized

* without a rule where none can touch it (71 % of the Hebrew page's distinct chunks): its first
  character begins no prefix, its last ends no suffix, it holds no character an infix needs
  (:func:`pelt.linking.affixes.analysis` reads them from the expressions: :func:`character_flags`)
  and it is no special case. It is one token;
* by spaCy's affix loop in Python (:meth:`ChunkTokenizer.split`), each rule asked only where the
  characters there let it match, where it splits off prefixes and suffixes alone ("word,",
  "(word)": 27 %), 3.5 us a chunk;
* by spaCy otherwise (an infix, a special case: 1 %), all the new ones of a text in one call, one
  chunk a line: a newline between them is a token of its own, so nothing of one chunk is matched
  with the next.

The attributes of the tokens made without spaCy are computed as the vocabulary computes a new
lexeme's (:class:`pelt.linking.tokenizers.LexemeTable`), without the lexeme. A line's tokens are its
chunks' rows, their offsets moved to where each chunk stands. Two things make a line's tokens more
than its chunks', and such a line is tokenized by spaCy as it is: (1) whitespace other than one
space between chunks (spaCy makes a token of the rest); (2) a special case that spaCy's second pass
(its ``PhraseMatcher`` of special cases, on the tokens its rules made of the case's string) could
match across two chunks, Arabic's ``ب. م``: a line where a chunk ends with a token that such a case
has with another right after it, and the next chunk begins with that other.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from itertools import compress, repeat
from typing import Any

import numpy as np
from spacy.attrs import IDX, IS_PUNCT, IS_SPACE, LENGTH, LOWER, ORTH
from spacy.strings import get_string_id as string_id
from spacy.tokenizer import Tokenizer

from pelt.linking.affixes import analysis
from pelt.linking.tokenizers import LexemeTable

# What ``tokenize`` takes of each token, the columns of its arrays.
ARRAY_ATTRS = [ORTH, LOWER, IDX, LENGTH, IS_SPACE, IS_PUNCT]
# A flag table by code point says where a character lets a rule match a chunk: as its first
# character (a prefix may begin with it), as its last (a suffix may end with it), anywhere (a match
# needs one of such characters), or as its first or last only where the chunk also holds a character
# of one of a few sets (``(?<=[0-9])km$`` ends with "m" in "10km", never in "Amsterdam"): bits of
# _HOLDS, which sets a character is of, and of _FIRST_NEEDS and _LAST_NEEDS, which it needs.
_FIRST, _LAST, _ANY = 1, 2, 4
_SETS = 4
_HOLDS, _FIRST_NEEDS, _LAST_NEEDS = 3, 3 + _SETS, 3 + 2 * _SETS  # shifts
# Flags of a chunk's tokens: its last token is the first of a pair of a special case's tokens
# (:func:`second_pass`), its first token the second of one; or its last (first) token is one that
# spaCy's second pass made of a case (``made_ids``): then the token it matched on there, which a
# line's second pass would match on, is not known (_MADE_LAST with _ENDS_BEFORE, _MADE_FIRST with
# _BEGINS_AFTER).
_ENDS_BEFORE, _BEGINS_AFTER, _MADE_LAST, _MADE_FIRST = 1, 2, 4, 8
_SEPARATOR = "\n"
Condition = tuple[frozenset[str], int, frozenset[str] | None]  # characters, where, set they need


def _rule_conditions(rule: Callable[[str], Any] | None, side: int | None) -> list[Condition] | None:
    """Where each character of a chunk lets ``rule`` match it: at its first (``side`` 0) or last
    (-1) character when every alternative is anchored there with known characters there (and
    then, for each alternative, the set one of whose characters its match needs, unless that
    character is of it), else anywhere; None when the expression is not read (then every chunk
    is spaCy's). A rule screened by :func:`pelt.linking.affixes.screened` is read behind its
    screen."""
    rule = getattr(rule, "__wrapped__", rule)
    if rule is None:
        return []
    pattern = getattr(rule, "__self__", None)
    if not isinstance(pattern, re.Pattern) or not isinstance(pattern.pattern, str):
        return None
    found = analysis(pattern.pattern, pattern.flags)
    if found is None:
        return None
    ends = [branch.first if side == 0 else branch.last for branch in found.branches]
    if side is not None and None not in ends and all(b.at_start if side == 0 else b.at_end for b in found.branches):
        where = _FIRST if side == 0 else _LAST
        conditions: list[Condition] = []
        for branch, chars in zip(found.branches, ends):
            alone = analysis(branch.source, pattern.flags)
            needed = None if alone is None else alone.needed
            if needed is None:
                conditions.append((chars, where, None))
            else:
                conditions += [(chars & needed, where, None), (chars - needed, where, needed)]
        return conditions
    return None if found.needed is None else [(found.needed, _ANY, None)]


def character_flags(tokenizer: Tokenizer) -> np.ndarray | None:
    """The flag table of ``tokenizer``'s prefix, suffix and infix rules (the comment of ``_FIRST``
    above), None when a rule is not read. Sets needed beyond ``_SETS`` are joined into the last
    one: a chunk holding a character of either is then tokenized by spaCy."""
    conditions: list[Condition] = []
    for rule, side in ((tokenizer.prefix_search, 0), (tokenizer.suffix_search, -1), (tokenizer.infix_finditer, None)):
        found = _rule_conditions(rule, side)
        if found is None:
            return None
        conditions += found
    sets = sorted({needed for _, _, needed in conditions if needed is not None}, key=sorted)
    sets = [*sets[: _SETS - 1], frozenset().union(*sets[_SETS - 1 :])] if len(sets) > _SETS else sets
    flags = np.zeros(sys.maxunicode + 1, dtype=np.uint16)
    for chars, where, needed in conditions:
        if needed is not None:
            which = next(i for i, known in enumerate(sets) if needed <= known)
            where = 1 << (which + (_FIRST_NEEDS if where == _FIRST else _LAST_NEEDS))
        flags[_codes(chars)] |= where
    for which, known in enumerate(sets):
        flags[_codes(known)] |= 1 << (which + _HOLDS)
    flags[ord(_SEPARATOR)] = 0  # never in a chunk: it separates them
    return flags


def _codes(chars: frozenset[str]) -> np.ndarray:
    return np.fromiter(map(ord, chars), dtype=np.int64, count=len(chars))


def second_pass(tokenizer: Tokenizer) -> tuple[frozenset[tuple[str, str]], frozenset[str]] | None:
    """What spaCy's second pass matches and makes: the pairs of tokens one after the other in a
    special case it matches (its rules' tokens of the case's string, where the case has a space or
    a rule touches it), and the tokens it makes of a case where they are not those (``:-/`` of
    ``:`` and ``-/``); None when a case's tokens hold whitespace (a case that could match across
    the newlines between chunks)."""
    bare = Tokenizer(
        tokenizer.vocab,
        rules={},
        prefix_search=tokenizer.prefix_search,
        suffix_search=tokenizer.suffix_search,
        infix_finditer=tokenizer.infix_finditer,
        token_match=tokenizer.token_match,
        url_match=tokenizer.url_match,
    )
    pairs: set[tuple[str, str]] = set()
    made: set[str] = set()
    for case in tokenizer.rules:
        matched = (
            not tokenizer.faster_heuristics
            or " " in case
            or tokenizer.find_prefix(case)
            or tokenizer.find_suffix(case)
            or tokenizer.find_infix(case)
        )
        if not matched:
            continue
        tokens = [token.text for token in bare(case)]
        if len(tokens) > 1 and any(token.isspace() for token in tokens):
            return None
        pairs.update(zip(tokens, tokens[1:]))
        joined = [token.text for token in Tokenizer.__call__(tokenizer, case)]
        if joined != tokens:
            made.update(joined)
    return frozenset(pairs), frozenset(made)


@dataclass(frozen=True)
class ReadRules:
    """What a ``ChunkTokenizer`` reads of its rules once: the flag table by code point
    (:func:`character_flags`), the characters that let the prefix rule match as a string's first
    (``first``) and the suffix rule as its last (``last``), None where the rule is read as one
    that may match anywhere, the characters that let the infix rule match (``anywhere``), and the
    pairs of tokens of the special cases its second pass matches (:func:`second_pass`), as strings
    and as ``ORTH`` ids, with the sorted ids of their first and second tokens and of the tokens it
    makes of a case (``made_ids``)."""

    flags: np.ndarray
    first: frozenset[str] | None
    last: frozenset[str] | None
    anywhere: frozenset[str]
    pairs: frozenset[tuple[str, str]]
    pair_ids: frozenset[tuple[int, int]]
    before_ids: np.ndarray
    after_ids: np.ndarray
    made_ids: np.ndarray


def read_rules(tokenizer: Tokenizer) -> ReadRules | None:
    """The :class:`ReadRules` of ``tokenizer``, None where its rules are not read."""
    flags = character_flags(tokenizer)
    found = second_pass(tokenizer)
    if flags is None or found is None:
        return None
    pairs, made = found
    sides = []
    for rule, side, where, needs in (
        (tokenizer.prefix_search, 0, _FIRST, _FIRST_NEEDS),
        (tokenizer.suffix_search, -1, _LAST, _LAST_NEEDS),
    ):
        anywhere = any(where == _ANY for _, where, _ in _rule_conditions(rule, side) or ())
        mask = where | (((1 << _SETS) - 1) << needs)
        sides.append(None if anywhere else frozenset(map(chr, np.flatnonzero(flags & mask).tolist())))
    pair_ids = frozenset((string_id(a), string_id(b)) for a, b in pairs)
    return ReadRules(
        flags=flags,
        first=sides[0],
        last=sides[1],
        anywhere=frozenset(map(chr, np.flatnonzero(flags & _ANY).tolist())),
        pairs=pairs,
        pair_ids=pair_ids,
        before_ids=np.array(sorted({a for a, _ in pair_ids}), dtype=np.uint64),
        after_ids=np.array(sorted({b for _, b in pair_ids}), dtype=np.uint64),
        made_ids=np.array(sorted(map(string_id, made)), dtype=np.uint64),
    )


class _Rows:
    """A table of rows that grows at its end, its storage doubled when full: a worker adds the new
    chunks of each text to what it holds, without copying all of it each time."""

    def __init__(self, columns: int, dtype: type) -> None:
        self._data = np.zeros((1024, columns), dtype=dtype)
        self.size = 0

    def add(self, rows: np.ndarray) -> None:
        end = self.size + len(rows)
        if end > len(self._data):
            data = np.zeros((max(end, 2 * len(self._data)), self._data.shape[1]), dtype=self._data.dtype)
            data[: self.size] = self._data[: self.size]
            self._data = data
        self._data[self.size : end] = rows
        self.size = end

    @property
    def rows(self) -> np.ndarray:
        return self._data[: self.size]


class ChunkTokenizer(Tokenizer):
    """spaCy's rule ``Tokenizer`` with ``token_arrays`` (module docstring): each distinct chunk of
    its texts tokenized once, most without spaCy. Its tokens are spaCy's (a test compares them on
    the real pages of every language and on random strings); ``__call__`` is spaCy's.

    Built from a tokenizer whose rules are final (:meth:`of`): what it reads of them is read once
    (``read``, None where they are not read). The chunks it holds count against the pipeline's cap
    (:func:`pelt.linking.sentences.bounded_vocabulary`) with the vocabulary's strings.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.read = read_rules(self)
        self._lexemes = LexemeTable(self.vocab)  # computes the rows of the tokens made here
        self.chunks: dict[str, int] = {}  # chunk -> its row in _chunk_rows
        self._chunk_rows = _Rows(3, np.int64)  # first token row, tokens, flags (_ENDS_BEFORE ...)
        self._token_rows = _Rows(len(ARRAY_ATTRS), np.uint64)  # IDX from the chunk's start

    @classmethod
    def of(cls, tokenizer: Tokenizer) -> Tokenizer:
        """A ``ChunkTokenizer`` with the rules of ``tokenizer`` (spaCy's rule tokenizer), or
        ``tokenizer`` itself where its rules are not read (another tokenizer, an expression the
        analysis does not follow, a special case of whitespace tokens)."""
        if type(tokenizer) is not Tokenizer:
            return tokenizer
        chunked = cls(
            tokenizer.vocab,
            rules=tokenizer.rules,
            prefix_search=tokenizer.prefix_search,
            suffix_search=tokenizer.suffix_search,
            infix_finditer=tokenizer.infix_finditer,
            token_match=tokenizer.token_match,
            url_match=tokenizer.url_match,
            faster_heuristics=tokenizer.faster_heuristics,
            max_cache_size=tokenizer.max_cache_size,
        )
        return tokenizer if chunked.read is None else chunked

    def token_arrays(self, text: str, lines: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
        """``Doc.to_array(ARRAY_ATTRS)`` of spaCy's ``Doc`` of each line ``text[start:end]``, all
        lines in one array, and the number of tokens of each line."""
        line_texts = [text[start:end] for start, end in lines]
        line_chunks = [line.split() for line in line_texts]
        regular = [" ".join(chunks) == line for chunks, line in zip(line_chunks, line_texts)]
        chunks = [chunk for found, ok in zip(line_chunks, regular) if ok for chunk in found]
        per_line = np.array([len(found) if ok else 0 for found, ok in zip(line_chunks, regular)], dtype=np.int64)
        ids = self._chunk_ids(chunks)
        array, sizes = self._assemble(ids, np.fromiter(map(len, chunks), np.int64, len(chunks)), per_line)
        spacys = [i for i, ok in enumerate(regular) if not ok] + self._crossed_lines(ids, per_line)
        if not spacys:
            return array, sizes
        pieces = np.split(array, np.cumsum(sizes)[:-1])
        for line in spacys:
            pieces[line] = self(line_texts[line]).to_array(ARRAY_ATTRS)
            sizes[line] = len(pieces[line])
        return np.concatenate(pieces).reshape(-1, len(ARRAY_ATTRS)), sizes

    def _chunk_ids(self, chunks: list[str]) -> np.ndarray:
        """The row of each chunk in ``_chunk_rows``, the new ones tokenized and added first."""
        held = self.chunks
        ids = np.fromiter(map(held.get, chunks, repeat(-1)), dtype=np.int64, count=len(chunks))
        missing = np.flatnonzero(ids < 0).tolist()
        if missing:
            unseen = [chunks[i] for i in missing]
            self._add(list(dict.fromkeys(unseen)))
            ids[missing] = np.fromiter(map(held.__getitem__, unseen), dtype=np.int64, count=len(unseen))
        return ids

    def _add(self, new: list[str]) -> None:
        """Tokenizes the distinct chunks ``new`` (none held yet) and holds their rows: one token
        each for those no rule touches, the tokens of :meth:`split` for those it splits, spaCy's
        for the others."""
        touched = self._touched(new).tolist()
        done = [chunk for chunk, hit in zip(new, touched) if not hit]  # one token each
        words = list(done)  # the tokens of the chunks tokenized here, one chunk after another
        counts = [1] * len(done)
        spacys: list[str] = []
        split = self.splitter()
        for chunk in compress(new, touched):
            tokens = split(chunk)
            if tokens is None:
                spacys.append(chunk)
            else:
                done.append(chunk)
                words += tokens
                counts.append(len(tokens))
        spacy_rows, spacy_counts = self._spacy_rows(spacys)
        tokens = np.concatenate((self._word_rows(words, counts), spacy_rows))
        count = np.concatenate((np.array(counts, dtype=np.int64), spacy_counts))
        first = np.cumsum(count) - count
        flags = np.zeros(len(count), dtype=np.int64)
        flags[np.isin(tokens[first + count - 1, 0], self.read.before_ids)] |= _ENDS_BEFORE
        flags[np.isin(tokens[first, 0], self.read.after_ids)] |= _BEGINS_AFTER
        if len(spacy_rows):  # an edge token the second pass made of a case: not what it matched on
            spacy_first = np.cumsum(spacy_counts) - spacy_counts
            made = np.isin(spacy_rows[:, 0], self.read.made_ids)
            flags[len(done) :] |= np.where(made[spacy_first + spacy_counts - 1], _ENDS_BEFORE | _MADE_LAST, 0)
            flags[len(done) :] |= np.where(made[spacy_first], _BEGINS_AFTER | _MADE_FIRST, 0)
        start = len(self.chunks)
        self.chunks.update(zip(done + spacys, range(start, start + len(count))))
        self._chunk_rows.add(np.stack((first + self._token_rows.size, count, flags), axis=1))
        self._token_rows.add(tokens)

    def _word_rows(self, words: list[str], counts: list[int]) -> np.ndarray:
        """The rows of ``words``, the tokens of chunks of ``counts`` tokens each, touching one
        another (IDX from their chunk's start)."""
        distinct = list(dict.fromkeys(words))
        place = dict(zip(distinct, range(len(distinct))))
        attributes = self._lexemes.rows_of(distinct)[np.fromiter(map(place.__getitem__, words), np.int64, len(words))]
        length = np.fromiter(map(len, words), np.int64, len(words))
        before = np.cumsum(length) - length
        count = np.array(counts, dtype=np.int64)
        chunk_first = np.cumsum(count) - count
        rows = np.empty((len(words), len(ARRAY_ATTRS)), dtype=np.uint64)
        rows[:, 0:2] = attributes[:, 0:2]  # ORTH, LOWER
        rows[:, 2] = before - np.repeat(before[chunk_first], count)
        rows[:, 3] = length
        rows[:, 4:6] = attributes[:, 2:4]  # IS_SPACE, IS_PUNCT
        return rows

    def split(self, chunk: str) -> list[str] | None:
        """spaCy's tokens of ``chunk`` as its affix loop makes them (:meth:`splitter`), or None."""
        return self.splitter()(chunk)

    def splitter(self) -> Callable[[str], list[str] | None]:
        """A function giving spaCy's tokens of a chunk as its affix loop makes them
        (``Tokenizer._split_affixes``: prefixes and suffixes split off, the rest one token), each
        rule asked only where the characters there let it match (``read``); None where a special
        case, an infix or a case of the second pass could change them (spaCy tokenizes it then).
        What it reads of the tokenizer is read once, for all the chunks of a text."""
        cases, read = self.rules, self.read
        first, last, anywhere, pairs = read.first, read.last, read.anywhere, read.pairs
        firsts = frozenset(a for a, _ in pairs)
        token_match, prefix_search, suffix_search = self.token_match, self.prefix_search, self.suffix_search
        one_token = self._one_token

        def split(chunk: str) -> list[str] | None:
            prefixes: list[str] = []
            suffixes: list[str] = []
            string = chunk
            last_size = 0
            matched = False  # by token_match: one token, that no iteration has looked up in the cases
            while string and len(string) != last_size:
                if token_match is not None and token_match(string):
                    matched = True
                    break
                if string in cases:
                    return None
                last_size = len(string)
                pre_len = suf_len = 0
                if prefix_search is not None and (first is None or string[0] in first):
                    match = prefix_search(string)
                    pre_len = 0 if match is None else match.end() - match.start()
                    if pre_len and string[pre_len:] in cases:
                        return None
                rest = string[pre_len:]
                if rest and suffix_search is not None and (last is None or rest[-1] in last):
                    match = suffix_search(rest)
                    suf_len = 0 if match is None else match.end() - match.start()
                    if suf_len and string[:-suf_len] in cases:
                        return None
                if pre_len and suf_len and pre_len + suf_len <= len(string):
                    prefixes.append(string[:pre_len])
                    suffixes.append(string[-suf_len:])
                    string = string[pre_len:-suf_len]
                elif pre_len:
                    prefixes.append(string[:pre_len])
                    string = rest
                elif suf_len:
                    suffixes.append(string[-suf_len:])
                    string = string[:-suf_len]
            if string and ((matched and string in cases) or not (anywhere.isdisjoint(string) or one_token(string))):
                return None
            if not prefixes and not suffixes:
                return [string]  # looked up in the cases above
            tokens = [*prefixes, string, *reversed(suffixes)] if string else [*prefixes, *reversed(suffixes)]
            if not cases.keys().isdisjoint(tokens) or (
                not firsts.isdisjoint(tokens) and not pairs.isdisjoint(zip(tokens, tokens[1:]))
            ):
                return None
            return tokens

        return split

    def _one_token(self, string: str) -> bool:
        """Whether the rest of the affix loop, a string holding a character an infix needs, is one
        token all the same (``token_match``, ``url_match``, or no infix found)."""
        return bool(
            self.infix_finditer is None
            or (self.token_match is not None and self.token_match(string))
            or (self.url_match is not None and self.url_match(string))
            or not list(self.infix_finditer(string))
        )

    def _touched(self, chunks: list[str]) -> np.ndarray:
        """Whether a rule may touch each chunk: a special case, or a character flagged where it
        stands (:func:`character_flags`)."""
        lengths = np.fromiter(map(len, chunks), np.int64, len(chunks))
        starts = np.cumsum(lengths + 1) - lengths - 1
        joined = _SEPARATOR.join(chunks).encode("utf-32-le", "surrogatepass")
        flags = self.read.flags[np.frombuffer(joined, dtype=np.uint32)]
        first, last, held = flags[starts], flags[starts + lengths - 1], np.bitwise_or.reduceat(flags, starts)
        needs = ((first >> _FIRST_NEEDS) | (last >> _LAST_NEEDS)) & (held >> _HOLDS) & ((1 << _SETS) - 1)
        touched = (first & _FIRST) | (last & _LAST) | (held & _ANY) | needs
        rules = self.rules
        return (touched > 0) | np.fromiter(map(rules.__contains__, chunks), bool, len(chunks))

    def _spacy_rows(self, chunks: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """spaCy's token rows of each of ``chunks`` (IDX from the chunk's start), one after another,
        and the number of each chunk's, from one ``Doc`` of the chunks a line each."""
        if not chunks:
            return np.zeros((0, len(ARRAY_ATTRS)), dtype=np.uint64), np.zeros(0, dtype=np.int64)
        array = self(_SEPARATOR.join(chunks)).to_array(ARRAY_ATTRS)
        lengths = np.fromiter(map(len, chunks), np.int64, len(chunks))
        starts = np.cumsum(lengths + 1) - lengths - 1
        idx = array[:, 2].astype(np.int64)
        chunk = np.searchsorted(starts, idx, side="right") - 1
        inside = idx - starts[chunk] < lengths[chunk]  # not a newline between two chunks
        array = array[inside]
        array[:, 2] -= starts[chunk[inside]].astype(np.uint64)
        return array, np.bincount(chunk[inside], minlength=len(chunks))

    def _assemble(self, ids: np.ndarray, lengths: np.ndarray, per_line: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The token rows of chunks ``ids`` (of ``lengths`` characters, ``per_line`` of them in
        each line, one space between two), IDX from their line's start, and each line's count."""
        chunk_rows = self._chunk_rows.rows[ids]
        first, counts = chunk_rows[:, 0], chunk_rows[:, 1]
        ends = np.cumsum(counts)
        total = int(ends[-1]) if len(ends) else 0
        array = self._token_rows.rows[np.arange(total) + np.repeat(first - ends + counts, counts)]
        step = lengths + 1
        before = np.cumsum(step) - step  # from the first line's start, as if the lines were one
        line_ends = np.cumsum(per_line)
        line_start = np.concatenate((before, [0]))[line_ends - per_line]  # [0]: a line of no chunk
        array[:, 2] += np.repeat(before - np.repeat(line_start, per_line), counts).astype(np.uint64)
        tokens_before = np.concatenate(([0], ends))
        return array, tokens_before[line_ends] - tokens_before[line_ends - per_line]

    def _crossed_lines(self, ids: np.ndarray, per_line: np.ndarray) -> list[int]:
        """The lines where a chunk's last token and the next chunk's first could be matched by a
        special case (module docstring), or where that token of one of them is not known."""
        if len(ids) < 2:
            return []
        chunk_rows = self._chunk_rows.rows[ids]
        line = np.repeat(np.arange(len(per_line)), per_line)
        flags = chunk_rows[:, 2]
        ends_pair, begins_pair = (flags & _ENDS_BEFORE) > 0, (flags & _BEGINS_AFTER) > 0
        crossed = np.flatnonzero(ends_pair[:-1] & begins_pair[1:] & (line[:-1] == line[1:]))
        if not len(crossed):
            return []
        orth = self._token_rows.rows[:, 0]
        ends = orth[chunk_rows[crossed, 0] + chunk_rows[crossed, 1] - 1].tolist()
        begins = orth[chunk_rows[crossed + 1, 0]].tolist()
        unknown = ((flags[crossed] & _MADE_LAST) | (flags[crossed + 1] & _MADE_FIRST)).tolist()
        pair_ids = self.read.pair_ids
        found = zip(crossed.tolist(), zip(ends, begins), unknown)
        return sorted({line[j] for j, pair, unknown in found if unknown or pair in pair_ids})
