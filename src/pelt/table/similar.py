"""An entity's nearest neighbours in its table: how users check that a table makes sense (Wikipedia2Vec's
``most_similar``), without an index to build or keep.

Cosine similarity does not depend on L, so it is computed on the stored sums: a pass over the
memory-mapped record batches, a dot product per row, divided by the row lengths (computed by the
first query and kept), never an N x H array in memory; 1M x 768 answers in a fraction of a
second (``benchmarks/README.md``, "Entity table").
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence
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


def cosines(table: Rows, query: np.ndarray) -> np.ndarray:
    """Cosine of every row's sum with ``query`` (a unit vector), float32 [N]; NaN for rows whose sum is zero.

    numpy's own loops (einsum), not BLAS: a matrix-vector product is memory-bound, and OpenBLAS's
    threads, waiting on each other on a loaded machine, made it 4 to 40 times slower than one core.
    """
    dots = [np.einsum("ij,j->i", sums, query) for _, sums in table.batches()]
    dots = np.concatenate(dots or [np.zeros(0, np.float32)])
    with np.errstate(divide="ignore", invalid="ignore"):
        return (dots / lengths(table)).astype(np.float32)


def most_similar(table: Rows, entity_id: str, k: int = 10) -> list[tuple[str, float]]:
    """``(entity_id, cosine)`` of the ``k`` entities nearest ``entity_id``, most similar first; the
    entity itself and entities with a zero sum are left out."""
    if k < 1:
        raise ValueError(f"most_similar: k must be at least 1, not {k}")
    row = int(table.rows([entity_id])[0])
    query = table.gather(np.array([row]))[0][0].astype(np.float64)
    length = np.linalg.norm(query)
    if length == 0:
        raise ValueError(f"table {table.path}: zero vector sum for {entity_id!r}, which has no direction")
    scores = cosines(table, (query / length).astype(np.float32))
    scores[row] = np.nan
    candidates = np.flatnonzero(~np.isnan(scores))
    if len(candidates) > k:  # every candidate tied with the k-th, so that the cut below breaks ties by id
        kth = scores[candidates][np.argpartition(-scores[candidates], k - 1)[k - 1]]
        candidates = candidates[scores[candidates] >= kth]
    # Rows are in id order: ties go to the smaller id, and -k 2 is the first two of -k 3.
    order = candidates[np.lexsort((candidates, -scores[candidates]))][:k]
    return list(zip(table.ids_at(order.tolist()), scores[order].astype(float).tolist()))
