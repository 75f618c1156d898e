"""Finding the row each key names (entity ids, QIDs, aliases, case-folded or not) for a batch of keys,
in a few numpy calls: :class:`KeyIndex`, over a 64-bit hash of every key (:func:`key_hashes`), which
:class:`pelt.table.lookup.EntityTable` builds for a kind of key the first time it is asked for one.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_MASK = (1 << 64) - 1
_BASE = 0x100000001B3  # odd (FNV's prime): the hash's multiplier, invertible mod 2**64
_HASH_BYTES = 1 << 16  # bytes hashed per numpy step: the power tables' length (512 KiB each)
_SCAN = 16  # longest bucket scanned (about one key a bucket); a longer one, crafted, is binary-searched


def hash_one(key: str) -> int:
    """:func:`key_hashes` of one string, in Python: ``id in table`` asks this per mention, where a numpy
    call for one string would cost ten times as long."""
    value, power = 0, 1
    for byte in key.encode():
        value = (value + (byte + 1) * power) & _MASK
        power = (power * _BASE) & _MASK
    return value


@functools.lru_cache(maxsize=1)
def _powers(length: int) -> tuple[np.ndarray, np.ndarray]:
    """BASE**i and BASE**-i mod 2**64 for i < ``length``, uint64: kept, as every batch of keys needs them."""
    tables = np.empty((2, length), np.uint64)
    tables[:] = np.array([[_BASE], [pow(_BASE, -1, 1 << 64)]], np.uint64)  # exact: no float on the way
    tables[:, 0] = 1
    return tuple(np.cumprod(tables, axis=1, dtype=np.uint64))


def key_hashes(strings: pa.LargeStringArray) -> np.ndarray:
    """sum((byte_i + 1) * BASE**i) mod 2**64 over each string's UTF-8 bytes, uint64, vectorised (no Python
    object per string). Not a secure hash: equal hashes are only candidates, settled by comparing the
    strings (:class:`KeyIndex`), so colliding keys (crafted ones included) cost time, never a wrong row.

    In three passes over the bytes: the sum over every byte of a step, each at its power of BASE from
    the step's first byte (a table), summed cumulatively; a string's sum, the difference of two totals,
    is then BASE**start times its hash, which BASE**-start (BASE is odd) brings back."""
    offsets = np.frombuffer(strings.buffers()[1], np.int64)[strings.offset : strings.offset + len(strings) + 1]
    data = np.frombuffer(strings.buffers()[2] or b"\0", np.uint8)
    out = np.zeros(len(strings), np.uint64)
    lo = 0
    while lo < len(strings):
        hi = max(lo + 1, int(np.searchsorted(offsets, offsets[lo] + _HASH_BYTES, side="right")) - 1)
        first, last = int(offsets[lo]), int(offsets[hi])
        powers, inverses = _powers(max(_HASH_BYTES, last - first))
        terms = np.add(data[first:last], 1, dtype=np.uint64)
        terms *= powers[: last - first]
        total = np.zeros(last - first + 1, np.uint64)
        np.cumsum(terms, out=total[1:])
        starts = offsets[lo : hi + 1] - first
        out[lo:hi] = (total[starts[1:]] - total[starts[:-1]]) * inverses[starts[:-1]]  # wraps mod 2**64
        lo = hi
    return out


def as_strings(values: Sequence[str | None]) -> pa.LargeStringArray:
    """``values`` as one Arrow array; where they are all ASCII ``str`` (most titles and every QID), from
    their concatenation and lengths, in half the time of ``pa.array``, which takes them one by one."""
    values = list(values)
    try:
        text = "".join(values)
    except TypeError:  # None (a null) or not a string: Arrow says which
        return pa.array(values, pa.large_string())
    if not text.isascii():  # lengths in characters would not be lengths in bytes
        return pa.array(values, pa.large_string())
    offsets = np.zeros(len(values) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, values), np.int64, len(values)), out=offsets[1:])
    return pa.LargeStringArray.from_buffers(len(values), pa.py_buffer(offsets), pa.py_buffer(text.encode()))


class KeyIndex:
    """The row each key of a string column names (entity ids, QIDs, aliases, case-folded or not), found
    for a batch of keys in a few numpy calls: a 64-bit hash of every key (:func:`key_hashes`), sorted, is
    looked up in buckets by its top bits and the hit confirmed by comparing the strings in Arrow.

    A hash, not the sorted strings: Wikipedia titles share long prefixes (82 % of them share their
    first 8 bytes with another), which made a search over the strings a binary search in Arrow calls;
    and not ``pc.index_in`` or a dict, which rebuild a hash table of every key per call or hold a
    Python object per key. Buckets, not ``np.searchsorted``: a binary search of 1M hashes misses the
    cache about ten times a key, a bucket (where it starts, then its key or two) twice. 20 to 24 bytes
    a key (hash, position, bucket starts; an alias's row 8 more) beside the keys themselves; built once.

    A key of several rows (an alias of two entities; two ids equal but for case) names the row of
    highest ``priority`` (frequency), then the first. ``rows``: each key's row, where that is not its
    position (aliases, several a row).
    """

    def __init__(self, keys: pa.LargeStringArray, priority: np.ndarray, rows: np.ndarray | None = None):
        self._keys = keys
        hashes = key_hashes(keys)
        order = np.argsort(hashes)  # numpy's SIMD sort: 0.02 s for 1M keys where a lexsort took 0.09
        if keys.null_count:
            order = order[keys.is_valid().to_numpy(zero_copy_only=False)[order]]
        hashes = hashes[order]
        self._hashes, order = self._first_of_each_key(hashes, self._settle_ties(hashes, order, priority, rows))
        self._positions, self._rows = order, None if rows is None else rows[order]
        bits = max(1, len(order).bit_length())  # 2**bits buckets: one key a bucket or fewer
        self._shift = np.uint64(64 - bits)
        self._starts = np.zeros((1 << bits) + 1, np.int32 if len(order) < 2**31 else np.int64)
        np.cumsum(np.bincount((self._hashes >> self._shift).astype(np.intp), minlength=1 << bits), out=self._starts[1:])

    @staticmethod
    def _settle_ties(
        hashes: np.ndarray, order: np.ndarray, priority: np.ndarray, rows: np.ndarray | None
    ) -> np.ndarray:
        """``order`` (positions in the keys, by their sorted ``hashes``, ties in any order) with each run of
        one hash in order of preference: highest priority, then the first row. Sorted again are the
        runs' positions alone: a key of several rows, or a collision, a few keys in a hundred."""
        same = hashes[1:] == hashes[:-1]
        tied = np.zeros(len(order), bool)
        tied[1:] = same
        tied[:-1] |= same
        at = np.flatnonzero(tied)
        positions = order[at]
        row = positions if rows is None else rows[positions]
        order[at] = positions[np.lexsort((row, -priority[positions], hashes[at]))]
        return order

    def _first_of_each_key(self, hashes: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``hashes`` and ``order`` (positions in the keys, by hash then preference) less every position
        whose key an earlier one of its hash already is: repeated keys in Arrow, true collisions in Python."""
        same = np.zeros(len(order), bool)
        same[1:] = hashes[1:] == hashes[:-1]
        repeats = np.flatnonzero(same)
        if not len(repeats):
            return hashes, order
        run = np.maximum.accumulate(np.where(same, 0, np.arange(len(order))))  # where each hash's run starts
        equal = pc.equal(self._keys.take(order[repeats]), self._keys.take(order[run[repeats]]))
        drop = np.zeros(len(order), bool)
        drop[repeats] = equal.to_numpy(zero_copy_only=False)
        for i in repeats[~drop[repeats]]:  # a key whose hash another key has: rare
            earlier = {self._keys[int(j)].as_py() for j in order[run[i] : i][~drop[run[i] : i]]}
            drop[i] = self._keys[int(order[i])].as_py() in earlier
        return hashes[~drop], order[~drop]

    def find_one(self, key: str) -> int:
        """Row of one key, -1 where absent, in microseconds: injection asks ``id in table`` per mention."""
        value = np.uint64(hash_one(key))
        at = int(np.searchsorted(self._hashes, value))
        while at < len(self._hashes) and self._hashes[at] == value:
            if self._keys[int(self._positions[at])].as_py() == key:
                return int(self._positions[at] if self._rows is None else self._rows[at])
            at += 1
        return -1

    def _search(self, wanted: np.ndarray) -> np.ndarray:
        """Where each hash first is among the sorted ones, if it is (else a position that holds another):
        its bucket's start, moved past the smaller hashes of its bucket, one step for all at a time."""
        bucket = (wanted >> self._shift).astype(np.intp)
        at, final = self._starts[bucket].astype(np.intp), self._starts[bucket + 1] - 1  # a bucket's first, last
        last = len(self._hashes) - 1
        longest = int((final - at).max(initial=-1)) + 1
        if longest > _SCAN:  # keys crafted into one bucket: a binary search, whatever their number
            return np.minimum(np.searchsorted(self._hashes, wanted), last)
        for _ in range(longest - 1):  # the last of a bucket is reached past the others
            at += (at < final) & (self._hashes[np.minimum(at, last)] < wanted)
        return np.minimum(at, last)

    def find(self, queries: pa.LargeStringArray) -> np.ndarray:
        """Row of each query, -1 where absent (or null)."""
        if not len(self._hashes):
            return np.full(len(queries), -1, np.int64)
        wanted = key_hashes(queries)
        at = self._search(wanted)
        hit = self._hashes[at] == wanted
        positions = self._positions[at]
        equal = pc.equal(self._keys.take(positions), queries)
        equal = hit & pc.fill_null(equal, False).to_numpy(zero_copy_only=False)
        found = np.where(equal, positions if self._rows is None else self._rows[at], -1)
        for i in np.flatnonzero(hit & ~equal):  # the hash of another key: look further along its run
            if queries[int(i)].is_valid:
                found[i] = self.find_one(queries[int(i)].as_py())
        return found
