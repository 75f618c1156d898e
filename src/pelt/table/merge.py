"""Merging tables of disjoint shards into one: the inputs' checks, their rows aligned by entity id,
sums added, and the ids users have (qid, aliases) carried over.

The merge proper works on tables already open (:class:`OpenTable`); :func:`pelt.table.lookup.merge_tables`
opens them, so that this module sits below :class:`~pelt.table.lookup.EntityTable` and its ``merge`` method.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Literal, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pelt.table.format import CHUNK_ROWS, ID_FIELDS, content_id, record_batch, table_schema, write_files
from pelt.table.model_check import model_label, same_model

logger = logging.getLogger(__name__)

# What a merged row's frequency is: ``max`` for shards of one sample, ``sum`` for disjoint corpora.
FrequencyRule = Literal["max", "sum"]


class OpenTable(Protocol):
    """What merging reads of an input table; :class:`pelt.table.lookup.EntityTable` is one (described
    here rather than imported, since that class's ``merge`` calls down into this module)."""

    path: Path
    metadata: dict[str, object]
    hidden_size: int
    build_id: str
    has_ids: bool

    def column(self, name: str) -> pa.ChunkedArray: ...

    def gather(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...


_IdSource = tuple[pa.Table, np.ndarray]  # (qid, aliases) columns, and each merged row's row in them (-1: none)


def _id_sources(
    opened: Sequence[OpenTable], rows: Sequence[np.ndarray], all_ids: pa.Array, ids: str | os.PathLike[str] | None
) -> list[_IdSource]:
    """Where merged rows get their qid and aliases, first source first: the ``ids`` file, then each
    input table with the columns."""
    sources = []
    if ids is not None:
        given = pq.read_table(ids, columns=["entity_id", *(f.name for f in ID_FIELDS)])
        where = pc.index_in(all_ids, value_set=given.column("entity_id").cast(pa.large_string()))
        sources.append((given.drop(["entity_id"]), pc.fill_null(where, -1).to_numpy()))
    for t, r in zip(opened, rows):
        if t.has_ids:
            sources.append((pa.table({f.name: t.column(f.name) for f in ID_FIELDS}), r))
    return sources


def _merged_id_columns(sources: Sequence[_IdSource], lo: int, hi: int) -> list[pa.Array]:
    """The qid and aliases of merged rows lo..hi: each from the first source that has a value."""
    merged = [pa.nulls(hi - lo, f.type) for f in ID_FIELDS]
    for columns, where in sources:
        positions = where[lo:hi]
        taken = columns.take(pa.array(positions, mask=positions < 0))
        merged = [pc.coalesce(m, taken.column(f.name).combine_chunks()) for m, f in zip(merged, ID_FIELDS)]
    return merged


def _refuse_overlap(opened: Sequence[OpenTable], rows: Sequence[np.ndarray], all_ids: pa.Array) -> None:
    """ValueError, in one line naming a few, if an entity is in more than one table: nothing in a table
    says which sentences it was built from, so two tables of one entity may be shards of one sample
    (whose sums add) or the same text twice (counted double); the caller says which."""
    shared = np.flatnonzero(np.sum([r >= 0 for r in rows], axis=0) > 1)
    if len(shared):
        named = ", ".join(repr(i) for i in all_ids.take(shared[:5]).to_pylist())
        more = f" and {len(shared) - 5} more" if len(shared) > 5 else ""
        raise ValueError(
            f"cannot merge {', '.join(str(t.path) for t in opened)}: {len(shared)} entities are in more than one "
            f"table ({named}{more}); if they are shards of disjoint sentences, add their sums with sum_overlap=True "
            "(pelt table merge --sum-overlap)"
        )


def write_merged(
    opened: Sequence[OpenTable],
    out_path: str | os.PathLike[str],
    *,
    frequency: FrequencyRule,
    ids: str | os.PathLike[str] | None,
    corpus: Mapping[str, str] | None = None,
    sum_overlap: bool = False,
) -> None:
    """Write the merge of ``opened`` (at least one table) to ``out_path``, as :func:`pelt.table.lookup.merge_tables`
    describes; refuses tables of different models, representations or sizes, whose sums do not add, and
    tables sharing entities unless ``sum_overlap``."""
    first = opened[0]
    for t in opened[1:]:
        if not same_model(t.metadata, first.metadata):
            ours, theirs = (model_label(m) for m in (t.metadata, first.metadata))
            raise ValueError(f"cannot merge {t.path} into {first.path}: model differs ({ours} != {theirs})")
        for key in ("hidden_size", "representation", "max_seq_len", "model_type"):
            if t.metadata.get(key) != first.metadata.get(key):
                raise ValueError(
                    f"cannot merge {t.path} into {first.path}: {key} differs "
                    f"({t.metadata.get(key)!r} != {first.metadata.get(key)!r})"
                )
    columns = [t.column("entity_id") for t in opened]
    all_ids = pc.unique(pa.chunked_array([c for col in columns for c in col.chunks], pa.large_string()))
    all_ids = all_ids.take(pc.sort_indices(all_ids))
    rows = [pc.fill_null(pc.index_in(all_ids, value_set=col), -1).to_numpy() for col in columns]
    if not sum_overlap:
        _refuse_overlap(opened, rows, all_ids)
    inputs = sorted(t.build_id for t in opened)  # their contents determine the merged content
    sources = _id_sources(opened, rows, all_ids, ids)
    if ids is not None:
        inputs.append(hashlib.blake2b(json.dumps(sources[0][0].to_pylist()).encode()).hexdigest())
    metadata = {**first.metadata, **(corpus or {})}
    build_id = content_id(metadata, [*inputs, frequency])
    schema = table_schema(first.hidden_size, metadata, build_id, with_ids=bool(sources))

    def batches() -> Iterator[pa.RecordBatch]:
        for lo in range(0, len(all_ids), CHUNK_ROWS):
            hi = min(lo + CHUNK_ROWS, len(all_ids))
            sums = np.zeros((hi - lo, first.hidden_size), np.float64)
            n = np.zeros(hi - lo, np.int64)
            freq = np.zeros(hi - lo, np.int64)
            for t, r in zip(opened, rows):
                s, c, f = t.gather(r[lo:hi])
                sums += s
                n += c
                freq = np.maximum(freq, f) if frequency == "max" else freq + f
            id_columns = _merged_id_columns(sources, lo, hi) if sources else ()
            yield record_batch(schema, all_ids[lo:hi].cast(pa.string()), sums, n, freq, id_columns)

    write_files(Path(out_path), schema, batches())
    logger.info("merged %d tables into %s: %d entities", len(opened), out_path, len(all_ids))
