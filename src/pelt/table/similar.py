"""An entity's nearest neighbours in its table: how users check that a table makes sense (Wikipedia2Vec's
``most_similar``), without an index to build or keep.

Cosine similarity does not depend on L, so it is computed on the stored sums: a pass over the
memory-mapped record batches on every CPU, a dot product per row (:data:`_DOT`), divided by the row
lengths (the sidecar's, read by the first query and kept), never an N x H array in memory (4 bytes a
row: the scores); 1M x 768 answers in a tenth of a second (``benchmarks/README.md``, "Entity table").
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

import numpy as np
import pyarrow as pa

from pelt.table.format import LENGTH_FIELD


class Rows(Protocol):
    """What similarity reads of a table (:class:`pelt.table.lookup.EntityTable`, which calls this
    module, so that this module needs nothing of it): its rows' sums in batches, and ids by row."""

    path: object

    def batches(self) -> Iterator[tuple[object, np.ndarray]]: ...
    def column(self, name: str) -> pa.ChunkedArray: ...
    def rows(self, ids: Sequence[str]) -> np.ndarray: ...
    def gather(self, rows: np.ndarray) -> tuple[np.ndarray, ...]: ...
    def ids_at(self, rows: Sequence[int]) -> list[str]: ...


_CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


Batches = list[tuple[np.ndarray, slice]]


def _batches(table: Rows) -> Batches:
    """The sums of each record batch and its slice of the rows."""
    batches, start = [], 0
    for _, sums in table.batches():
        batches.append((sums, slice(start, start + len(sums))))
        start += len(sums)
    return batches


def _each(batches: Batches, work: Callable[[np.ndarray, slice], object]) -> None:
    """``work(sums, rows)`` for each batch, on a thread a CPU (numpy lets go of the GIL in its loops), each
    thread taking the next batch as it finishes one: a CPU that others' work holds back takes fewer."""
    if _CPUS > 1 and len(batches) > 1:
        with ThreadPoolExecutor(min(_CPUS, len(batches))) as pool:
            list(pool.map(lambda batch: work(*batch), batches))
    else:
        for sums, rows in batches:
            work(sums, rows)


_LENGTHS: weakref.WeakKeyDictionary[Rows, np.ndarray] = weakref.WeakKeyDictionary()


def lengths(table: Rows) -> np.ndarray:
    """||sum|| of every row, float32 [N]: the lengths the sidecar stores, read once per table (4 bytes
    an entity), so that no query reads a row twice."""
    if table not in _LENGTHS:
        _LENGTHS[table] = table.column(LENGTH_FIELD.name).to_numpy().astype(np.float32)
    return _LENGTHS[table]


def _einsum_dot(sums: np.ndarray, query: np.ndarray, out: np.ndarray) -> np.ndarray:
    """The dot products where numpy has no ``vecdot`` (1.26): einsum's loop."""
    return np.einsum("ij,j->i", sums, query, out=out)


# The dot products: one BLAS dot a row (``np.vecdot``, numpy 2), the record batches spread over a thread a
# CPU. On the 2-core VM, 1M x 768, that took 0.91x the time of one BLAS matrix-vector product over the
# whole array (OpenBLAS's own threads), where einsum, spread alike, took 1.35x, and BLAS's product a
# record batch at a time 2 to 11 times (its threads waiting on each other at each of 62 to 305 calls,
# worse under load). A rule, not a race timed at the first query (which once chose the product by
# batch, then 11x): a table's scores are the same in every process.
_DOT: Callable[..., np.ndarray] = getattr(np, "vecdot", _einsum_dot)


def cosines(table: Rows, query: np.ndarray) -> np.ndarray:
    """Cosine of every row's sum with ``query`` (a unit vector), float32 [N]; NaN for rows whose sum is
    zero. Each batch's dot products are divided by its lengths where they were computed, in cache."""
    norms = lengths(table)
    scores = np.empty(len(norms), np.float32)

    def score(sums: np.ndarray, rows: slice) -> None:
        _DOT(sums, query, out=scores[rows])
        with np.errstate(divide="ignore", invalid="ignore"):  # in the thread: numpy's error state is its own
            np.divide(scores[rows], norms[rows], out=scores[rows])

    _each(_batches(table), score)
    return scores


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
    # Every candidate tied with the k-th is kept, so that the cut below breaks ties by id. NaN (a zero
    # sum, the query itself) sorts last: a NaN k-th means fewer than k entities to rank, all kept.
    kth = scores[np.argpartition(-scores, k - 1)[k - 1]] if len(scores) > k else np.nan
    candidates = np.flatnonzero(scores >= kth) if not np.isnan(kth) else np.flatnonzero(~np.isnan(scores))
    # Rows are in id order: ties go to the smaller id, and -k 2 is the first two of -k 3.
    order = candidates[np.lexsort((candidates, -scores[candidates]))][:k]
    return list(zip(table.ids_at(order.tolist()), scores[order].astype(float).tolist()))
