"""Finding alias occurrences in tokenized text: the candidate names of the linking heuristic.

The paper's candidate names are every occurrence of any alias, matched on spaCy tokens,
case-sensitive, longest match first. A spaCy ``PhraseMatcher`` would do this but must be built in
every Python worker, at ~120 us and ~2.5 KB per alias (measured on real aliases): for the tens of
millions of aliases of enwiki, most of an hour and tens of GB per worker. Instead:

* A name is a token sequence (:func:`name_key`), identified by a 64-bit hash chained over spaCy's
  per-token string ids (``ORTH``; ``LOWER`` for matching in any casing). The text's tokens
  arrive as arrays (:class:`pelt.linking.sentences.Tokens`), so the hash of every n-gram of a document is a
  few numpy operations, with no strings built.
* Every Python worker gets a broadcast Bloom filter of the names and their proper token prefixes
  (~10 bits each: ~60 MB for 50 M entries). N-grams grow from every token, all at once, only while
  the filter says they are a prefix of some name, so the work per token is a few vectorised probes
  whatever the number of aliases. Whole-name hits are candidates; an exact join against the
  aliases then removes the filter's false positives (~1 %), and the longest match per span is kept
  (:func:`pelt.linking.candidates.longest_names`): the PhraseMatcher's result (a test checks it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from pelt.corpus.wikipedia.site import DEFAULT_LANGUAGE
from pelt.linking.sentences import Tokens, nlp, string_id

# splitmix64's finaliser: a fast, well-mixed bijection of 64-bit integers.
_MIX1, _MIX2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
# Tags of the two kinds of filter entry: a whole name, or a proper token prefix of one (worth
# extending); and the salt of the filter's second hash.
_WHOLE, _PREFIX, _STEP = np.uint64(0x57484F4C45), np.uint64(0x505245464958), np.uint64(0x53544550)
# Keys past the filter's first bit up to which their other bits are read in one array
# (:meth:`BloomFilter.contains`).
_AT_ONCE = 4096


def _mix(x: np.ndarray) -> np.ndarray:
    x = x ^ (x >> np.uint64(30))
    x = x * _MIX1
    x = x ^ (x >> np.uint64(27))
    x = x * _MIX2
    return x ^ (x >> np.uint64(31))


def _extend(chain: np.ndarray, token_hashes: np.ndarray) -> np.ndarray:
    """The hash of token sequences one token longer (a chain of zeros starts sequences)."""
    return _mix(chain * _GOLDEN + token_hashes)


def name_key(text: str, language: str = DEFAULT_LANGUAGE) -> str:
    """The identity of a name for matching: its spaCy tokens joined by one space.

    Matching compares token sequences, as spaCy's ``PhraseMatcher`` on ``ORTH`` does, so a name
    never matches inside a longer word ("Paris" in "Parisian"); strings with the same tokens
    ("U.S.A" and "U.S. A", "New York" and "New  York") are the same name. Tokenized as the text
    is, by the corpus language's tokenizer: a Chinese name is its characters ("北京" -> "北 京").
    """
    return " ".join(token.text for token in nlp(language).tokenizer(text) if not token.is_space)


class BloomFilter:
    """A set of 64-bit keys with no false negatives and about ``error_rate`` false positives.

    About 10 bits per key instead of the names themselves: what lets every Python worker test each
    n-gram of its text against the tens of millions of alias prefixes of all of Wikipedia. Adding
    and testing are vectorised over key arrays.
    """

    def __init__(self, n_bits: int, n_hashes: int) -> None:
        self.n_bits = n_bits
        self.n_hashes = n_hashes
        self.bits = np.zeros((n_bits + 7) // 8, dtype=np.uint8)

    @classmethod
    def for_items(cls, n_items: int, error_rate: float = 0.01) -> BloomFilter:
        """The optimal size for ``n_items`` (standard formulas: m = -n ln p / ln^2 2, k = m/n ln 2)."""
        n_items = max(n_items, 1)
        n_bits = max(64, math.ceil(-n_items * math.log(error_rate) / math.log(2) ** 2))
        return cls(n_bits, max(1, round(n_bits / n_items * math.log(2))))

    def _position(self, keys: np.ndarray, steps: np.ndarray, i: int) -> np.ndarray:
        """Bit ``i`` of each key: ``key + i * step`` (Kirsch-Mitzenmacher: two hashes make all k)."""
        return (keys + np.uint64(i) * steps) % np.uint64(self.n_bits)

    @staticmethod
    def _steps(keys: np.ndarray) -> np.ndarray:
        return _mix(keys ^ _STEP) | np.uint64(1)

    def add(self, keys: np.ndarray) -> None:
        keys = np.asarray(keys, dtype=np.uint64)
        steps = self._steps(keys)
        for i in range(self.n_hashes):
            pos = self._position(keys, steps, i)
            np.bitwise_or.at(self.bits, pos >> np.uint64(3), np.left_shift(1, pos & np.uint64(7)).astype(np.uint8))

    def contains(self, keys: np.ndarray) -> np.ndarray:
        """One bool per key. Keys leave at their first clear bit: most n-grams of a text are not
        names, so most of the k bits are never looked at. Where few keys pass the first bit (a
        name's later tokens, a short text) their other k - 1 bits are read at once, in one array:
        each round of numpy calls costs microseconds whatever its size, and a Chinese sentence's
        n-grams grow a token at a time through many small rounds (its pages' probes: 9.3 ms one
        bit at a time, 6.7 ms so)."""
        keys = np.asarray(keys, dtype=np.uint64)
        steps = self._steps(keys)
        left = np.flatnonzero(self._bit_set(self._position(keys, steps, 0)))
        if len(left) <= _AT_ONCE and self.n_hashes > 1:
            rounds = np.arange(1, self.n_hashes, dtype=np.uint64)
            at_once = (keys[left, None] + rounds * steps[left, None]) % np.uint64(self.n_bits)
            left = left[self._bit_set(at_once).all(axis=1)]
        else:
            for i in range(1, self.n_hashes):
                left = left[self._bit_set(self._position(keys[left], steps[left], i))]
        found = np.zeros(len(keys), dtype=bool)
        found[left] = True
        return found

    def _bit_set(self, pos: np.ndarray) -> np.ndarray:
        return ((self.bits[pos >> np.uint64(3)] >> (pos & np.uint64(7)).astype(np.uint8)) & 1).astype(bool)

    def union(self, other: BloomFilter) -> BloomFilter:
        """Merge a filter of the same size built from other keys (one per Spark partition)."""
        if (self.n_bits, self.n_hashes) != (other.n_bits, other.n_hashes):
            raise ValueError("cannot merge Bloom filters of different sizes")
        self.bits |= other.bits
        return self


def filter_entries(names: Sequence[str]) -> np.ndarray:
    """The filter keys of name keys: each whole name, and each of its proper token prefixes."""
    tokens = [name.split(" ") for name in names]
    lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    chain = np.zeros(len(tokens), dtype=np.uint64)
    entries = []
    for level in range(int(lengths.max(initial=0))):
        rows = np.flatnonzero(lengths > level)
        hashes = np.fromiter((string_id(tokens[row][level]) for row in rows), dtype=np.uint64, count=len(rows))
        chain[rows] = _extend(chain[rows], hashes)
        done = lengths[rows] == level + 1
        entries += [_mix(chain[rows[done]] ^ _WHOLE), _mix(chain[rows[~done]] ^ _PREFIX)]
    return np.concatenate(entries) if entries else np.zeros(0, dtype=np.uint64)


def name_filter(names: Sequence[str], error_rate: float = 0.01) -> BloomFilter:
    """A filter of ``names`` (name keys), sized for them."""
    entries = filter_entries(names)
    bloom = BloomFilter.for_items(len(entries), error_rate)
    bloom.add(entries)
    return bloom


def candidate_names(
    text: str,
    tokens: Tokens,
    sentences: Sequence[tuple[int, int]],
    bloom: BloomFilter,
    blocked: Iterable[tuple[int, int]] = (),
    fold_case: bool = False,
    recognised: Sequence[set[tuple[int, int]]] | None = None,
) -> list[dict[str, Any]]:
    """Token n-grams inside one sentence of ``text`` that the filter says are names.

    Returns ``sent_idx``, ``start``/``end`` (chars in the sentence), ``n_tokens`` and ``name`` (the
    name key) per candidate. No n-gram touches a ``blocked`` char span (the anchors: a name never
    overlaps a link). With ``fold_case`` n-grams are also tried in lower case, so a name written all
    in lower case (FewRel 2.0 and Wiki80 lowercase their entity names) matches "HBV" or "Aspirin" at
    the start of a sentence, while a name with capitals still matches only as written: a
    lower-cased n-gram can never equal it. With ``recognised`` (per sentence, the char spans an NER
    pipeline found: the paper's appendix recognises names with spaCy) a candidate must be one of them.
    """
    words = np.flatnonzero(~tokens.is_space)
    n = len(words)
    if not n or not sentences:
        return []
    start, end = tokens.start[words], tokens.end[words]
    bounds = np.array(sentences, dtype=np.int64)
    sent = np.searchsorted(bounds[:, 0], start, side="right") - 1
    usable = (sent >= 0) & (end <= bounds[np.maximum(sent, 0), 1])
    blocked = list(blocked)
    if blocked:
        usable &= _clear_of(blocked, len(text), start, end)

    # The hits in the order they are found (pass, n-gram length, first token): each (first, last)
    # once a pass, so only the folded pass can repeat a span, with the same key where it was
    # written in lower case. Kept as arrays, with no tuple or dict per n-gram until the output.
    firsts: list[np.ndarray] = []
    lasts: list[np.ndarray] = []
    passes: list[np.ndarray] = []
    for folded, hashes in ((False, tokens.orth[words]), (True, tokens.lower[words]))[: 2 if fold_case else 1]:
        first = np.flatnonzero(usable)
        last = first
        chain = _extend(np.zeros(len(first), dtype=np.uint64), hashes[first])
        while len(first):
            # One probe of the filter for both entries of every n-gram: a whole name, a prefix.
            probed = bloom.contains(_mix(np.concatenate((chain ^ _WHOLE, chain ^ _PREFIX))))
            hits, grow = probed[: len(chain)], probed[len(chain) :]
            if hits.any():
                firsts.append(first[hits])
                lasts.append(last[hits])
                passes.append(np.full(len(firsts[-1]), folded))
            first, last, chain = first[grow], last[grow] + 1, chain[grow]
            ok = last < n
            ok[ok] = usable[last[ok]] & (sent[last[ok]] == sent[first[ok]])
            first, last, chain = first[ok], last[ok], chain[ok]
            chain = _extend(chain, hashes[last])

    if not firsts:
        return []
    first, last = np.concatenate(firsts), np.concatenate(lasts)
    sents = sent[first]
    offsets = bounds[sents, 0]
    found = zip(
        sents.tolist(),
        (start[first] - offsets).tolist(),
        (end[last] - offsets).tolist(),
        (last - first + 1).tolist(),
        _name_keys(text, start, end, first, last),
    )
    if fold_case:
        found = (
            (sent_idx, begin, stop, n_tokens, name.lower() if folded else name)
            for (sent_idx, begin, stop, n_tokens, name), folded in zip(found, np.concatenate(passes).tolist())
        )
    if recognised is not None:
        found = (f for f in found if (f[1], f[2]) in recognised[f[0]])
    if fold_case:  # a span found as written and folded, with the same key: the first kept
        found = iter({(f[0], f[1], f[2], f[4]): f for f in found}.values())
    return [
        {"sent_idx": sent_idx, "start": begin, "end": stop, "n_tokens": n_tokens, "name": name}
        for sent_idx, begin, stop, n_tokens, name in found
    ]


def _clear_of(blocked: list[tuple[int, int]], length: int, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Whether each token span ``start..end`` touches no char of the ``blocked`` spans of a text of
    ``length`` chars: the blocked chars counted before each offset, equal at both ends."""
    marks = np.zeros(length + 1, dtype=np.int64)
    for b_start, b_end in blocked:
        marks[b_start] += 1
        marks[b_end] -= 1
    blocked_before = np.concatenate(([0], np.cumsum(np.cumsum(marks)[:-1] > 0)))
    return blocked_before[end] == blocked_before[start]


def _name_keys(text: str, start: np.ndarray, end: np.ndarray, first: np.ndarray, last: np.ndarray) -> list[str]:
    """The name key of each n-gram of tokens ``first..last``: their texts joined by one space.

    Most are one slice of the text: tokens already one space apart (English), or characters with
    nothing between them (Chinese: each a token, joined with spaces by ``str.join`` of the slice);
    only n-grams with other gaps are joined token by token. Per occurrence in Python, a join of the
    token slices was half the time of finding Chinese names, with hundreds of nested occurrences a
    sentence."""
    gap = start[1:] - end[:-1]
    code_points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    one_space = np.zeros(len(gap), dtype=bool)
    single = gap == 1
    one_space[single] = code_points[end[:-1][single]] == ord(" ")
    one_char = (end - start) == 1
    touching = (gap == 0) & one_char[:-1] & one_char[1:]
    pairs = last - first
    spaced = np.concatenate(([0], np.cumsum(one_space)))
    joined = np.concatenate(([0], np.cumsum(touching)))
    whole = ((spaced[last] - spaced[first]) == pairs).tolist()
    chars = ((joined[last] - joined[first]) == pairs).tolist()
    starts, ends = start.tolist(), end.tolist()
    # The text with a space after every character: " ".join(text[a:b]) is spaced[2a : 2b - 1].
    spaced = ""
    if any(chars):
        spaced_points = np.full(max(2 * len(code_points) - 1, 0), ord(" "), dtype=np.uint32)
        spaced_points[::2] = code_points
        spaced = spaced_points.tobytes().decode("utf-32-le")
    keys = []
    for i, j, is_whole, is_chars in zip(first.tolist(), last.tolist(), whole, chars):
        if is_whole:
            keys.append(text[starts[i] : ends[j]])
        elif is_chars:
            keys.append(spaced[2 * starts[i] : 2 * ends[j] - 1])
        else:
            keys.append(" ".join(text[starts[k] : ends[k]] for k in range(i, j + 1)))
    return keys
