"""An entity's nearest neighbours in its table: how users check that a table makes sense (Wikipedia2Vec's
``most_similar``), without an index to build or keep.

Cosine similarity does not depend on L, so it is computed on the stored sums: a pass over the
memory-mapped record batches, a dot product per row, divided by the row lengths (computed by the
first query and kept), never an N x H array in memory, by BLAS or einsum, whichever the machine
runs faster (:func:`_kernel`); 1M x 768 answers in a fraction of a second (``benchmarks/README.md``,
"Entity table").
"""

from __future__ import annotations

import itertools
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

import numpy as np


class Rows(Protocol):
    """What similarity reads of a table (:class:`pelt.table.lookup.EntityTable`, which calls this
    module, so that this module needs nothing of it): its rows' sums in batches, and ids by row."""

    path: object

    def batches(self) -> Iterator[tuple[object, np.ndarray]]: ...
    def rows(self, ids: Sequence[str]) -> np.ndarray: ...
    def gather(self, rows: np.ndarray) -> tuple[np.ndarray, ...]: ...
    def ids_at(self, rows: Sequence[int]) -> list[str]: ...


_LENGTHS: weakref.WeakKeyDictionary[Rows, np.ndarray] = weakref.WeakKeyDictionary()


def lengths(table: Rows) -> np.ndarray:
    """||sum|| of every row, float32 [N]: computed once per table (4 bytes an entity), so that later
    queries read each row once."""
    if table not in _LENGTHS:
        rows = [np.sqrt(np.einsum("ij,ij->i", sums, sums)) for _, sums in table.batches()]
        _LENGTHS[table] = np.concatenate(rows or [np.zeros(0, np.float32)])
    return _LENGTHS[table]


# Two ways to a record batch's dot products with the query. BLAS (sgemv) took 1.6x less CPU than einsum
# on one 2-core VM; on another, OpenBLAS's threads, waiting on each other under load, made it 4 to 40
# times slower than einsum's one core. Which is faster is a property of the machine and its load, so
# it is measured (:func:`_kernel`), not assumed.
_KERNELS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "blas": lambda sums, query: sums @ query,
    "einsum": lambda sums, query: np.einsum("ij,j->i", sums, query),
}
_SAMPLE_BATCHES = 4  # record batches each kernel is timed on, twice, by a table's first query
_CHOSEN: weakref.WeakKeyDictionary[Rows, str] = weakref.WeakKeyDictionary()


def _kernel(table: Rows, query: np.ndarray) -> str:
    """The faster kernel for this table on this machine, by wall time on its first record batches at its
    first query (all rows then use that one, so that equal rows score equal and ties break by id)."""
    if table not in _CHOSEN:
        sample = [sums for _, sums in itertools.islice(table.batches(), _SAMPLE_BATCHES)]
        spent = dict.fromkeys(_KERNELS, 0.0)
        for _ in range(2):  # the first round also brings the pages in, for both alike
            for name, kernel in _KERNELS.items():
                began = time.perf_counter()
                for sums in sample:
                    kernel(sums, query)
                spent[name] += time.perf_counter() - began
        _CHOSEN[table] = min(spent, key=spent.__getitem__)
    return _CHOSEN[table]


def cosines(table: Rows, query: np.ndarray) -> np.ndarray:
    """Cosine of every row's sum with ``query`` (a unit vector), float32 [N]; NaN for rows whose sum is zero."""
    kernel = _KERNELS[_kernel(table, query)]
    dots = [kernel(sums, query) for _, sums in table.batches()]
    dots = np.concatenate(dots or [np.zeros(0, np.float32)])
    with np.errstate(divide="ignore", invalid="ignore"):
        return (dots / lengths(table)).astype(np.float32)


def most_similar(table: Rows, entity_id: str, k: int = 10) -> list[tuple[str, float]]:
    """``(entity_id, cosine)`` of the ``k`` entities nearest ``entity_id``, most similar first; the
    entity itself and entities with a zero sum are left out."""
    row = int(table.rows([entity_id])[0])
    query = table.gather(np.array([row]))[0][0]
    if not np.any(query):
        raise ValueError(f"table {table.path}: zero vector sum for {entity_id!r}, which has no direction")
    return nearest(table, query, k, exclude=row)


def nearest(table: Rows, query: np.ndarray, k: int = 10, exclude: int | None = None) -> list[tuple[str, float]]:
    """``(entity_id, cosine)`` of the ``k`` entities nearest the vector ``query`` (any length: a cosine
    ignores it), most similar first, leaving out row ``exclude`` and entities with a zero sum: a query
    that is no entity of the table (a vector file, a word's embedding) ranks as an entity's does."""
    if k < 1:
        raise ValueError(f"most_similar: k must be at least 1, not {k}")
    query = np.asarray(query, np.float64).reshape(-1)
    length = np.linalg.norm(query)
    if not np.isfinite(length) or length == 0:
        raise ValueError("the query vector is zero or not finite: it has no direction to compare")
    scores = cosines(table, (query / length).astype(np.float32))
    if exclude is not None:
        scores[exclude] = np.nan
    candidates = np.flatnonzero(~np.isnan(scores))
    if len(candidates) > k:  # every candidate tied with the k-th, so that the cut below breaks ties by id
        kth = scores[candidates][np.argpartition(-scores[candidates], k - 1)[k - 1]]
        candidates = candidates[scores[candidates] >= kth]
    # Rows are in id order: ties go to the smaller id, and -k 2 is the first two of -k 3.
    order = candidates[np.lexsort((candidates, -scores[candidates]))][:k]
    return list(zip(table.ids_at(order.tolist()), scores[order].astype(float).tolist()))
