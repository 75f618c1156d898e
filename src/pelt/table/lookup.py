"""Reading a table: :class:`EntityTable`, the memory-mapped rows found by entity id (or by QID or
alias), their vectors at a norm L, and the check that a model is the one the table was built for;
:func:`merge_tables`, which opens tables to merge and the merged one.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import weakref
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pelt.table.format import BUILD_KEY, META_KEY, file_digest, memory_map_table
from pelt.table.hub import download_table
from pelt.table.merge import FrequencyRule, write_merged
from pelt.table.model_check import model_mismatch
from pelt.table.similar import most_similar

if TYPE_CHECKING:
    from transformers import PreTrainedModel

logger = logging.getLogger(__name__)

Missing = Literal["error", "zero"]
FindBy = Literal["id", "qid", "alias"]


_FEW = 16  # below this many ids, one search each is faster than the batch's array calls


class _SortedIds:
    """Search of the sorted id column for a batch of ids at once, in numpy and Arrow calls, not per id
    in Python (which cost 15 us an id, most of a lookup's time at 1M entities).

    Each id's first 8 bytes, as a big-endian integer (zero-padded), sort as the ids do, so a search
    over these keys in numpy finds the rows sharing a query's key; the few queries whose key several
    rows share (titles starting ``List of``) are settled by a binary search over those rows, all such
    queries halving their ranges together, one Arrow take and comparison a step. Built on first
    use: the keys (8 bytes an entity) and the column copied into one Arrow array
    (8 bytes of offset plus the id's UTF-8: a take across the sidecar's record batches would
    concatenate them at every call), 23 MiB for a million Wikidata-style ids; no Python object per id.
    """

    def __init__(self, chunks: Sequence[pa.LargeStringArray]):
        self._chunks = list(chunks)
        self._n = sum(len(c) for c in self._chunks)

    def __len__(self) -> int:
        return self._n

    @functools.cached_property
    def _column(self) -> pa.LargeStringArray:
        return pa.concat_arrays(self._chunks) if self._chunks else pa.array([], pa.large_string())

    @functools.cached_property
    def _keys(self) -> np.ndarray:
        return _prefix_keys(self._column)

    def find_one(self, entity_id: str) -> int:
        """Row of one id, -1 where absent, in a few microseconds: injection asks ``id in table`` per mention,
        and :meth:`find`'s twenty-odd array calls would cost more than the old per-id search."""
        if not self._n:
            return -1
        key = np.uint64(int.from_bytes(entity_id.encode()[:8].ljust(8, b"\0"), "big"))
        lo = int(np.searchsorted(self._keys, key))
        if lo + 1 < self._n and self._keys[lo + 1] == key:
            hi = np.searchsorted(self._keys, [key], side="right")
            lo = int(self._search(pa.array([entity_id], pa.large_string()), np.array([lo]), hi)[0])
        return lo if lo < self._n and self._column[lo].as_py() == entity_id else -1

    def find(self, entity_ids: Sequence[str]) -> np.ndarray:
        """Row of each id, -1 where absent."""
        if len(entity_ids) < _FEW:
            return np.array([self.find_one(i) for i in entity_ids], np.int64)
        queries = pa.array(entity_ids, pa.large_string())
        if not self._n:
            return np.full(len(queries), -1, np.int64)
        keys = _prefix_keys(queries)
        order = np.argsort(keys)  # sorted needles: numpy's searchsorted narrows each search by the last
        lo = np.empty(len(keys), np.int64)
        lo[order] = np.searchsorted(self._keys, keys[order])
        candidate = np.minimum(lo, self._n - 1)
        after = np.minimum(lo + 1, self._n - 1)
        shared = np.flatnonzero((self._keys[candidate] == keys) & (after > candidate) & (self._keys[after] == keys))
        if len(shared):
            hi = np.searchsorted(self._keys, keys[shared], side="right")
            lo[shared] = self._search(queries.take(shared), lo[shared], hi)
            candidate = np.minimum(lo, self._n - 1)
        equal = pc.equal(self._column.take(candidate), queries).to_numpy(zero_copy_only=False)
        return np.where(equal, candidate, -1)

    def _search(self, queries: pa.Array, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """The first row in [lo, hi) whose id is not below its query's (ranges halve together)."""
        for _ in range(int((hi - lo).max()).bit_length()):  # a range of r rows is empty after bit_length(r) halvings
            mid = np.minimum((lo + hi) // 2, self._n - 1)
            below = pc.less(self._column.take(mid), queries).to_numpy(zero_copy_only=False)
            searching = lo < hi
            lo = np.where(searching & below, mid + 1, lo)
            hi = np.where(searching & ~below, mid, hi)
        return lo


def _prefix_keys(strings: pa.LargeStringArray) -> np.ndarray:
    """The first 8 UTF-8 bytes of each string as a big-endian uint64, zero-padded: ordered as the strings."""
    offsets = np.frombuffer(strings.buffers()[1], np.int64)[strings.offset : strings.offset + len(strings) + 1]
    data = np.frombuffer(strings.buffers()[2] or b"\0", np.uint8)
    starts, lengths = offsets[:-1], np.diff(offsets)
    keys = np.zeros(len(strings), np.uint64)
    for i in range(8):
        byte = np.where(lengths > i, data[np.minimum(starts + i, len(data) - 1)], 0)
        keys = (keys << np.uint64(8)) | byte.astype(np.uint64)
    return keys


class EntityTable:
    """A read-only, memory-mapped entity table; see :mod:`pelt.table.format` for the storage choice."""

    def __init__(self, path: Path, parquet_schema: pa.Schema, reader: pa.ipc.RecordBatchFileReader):
        """``reader``: the rows, from the sidecar; ``parquet_schema``: the table's metadata, from the Parquet
        file alone (a sidecar's never counts, see :mod:`pelt.table.format`)."""
        self.path = path
        self.allow_other_weights = False  # check_model's default; see open()
        self._weights_checked: weakref.WeakSet[PreTrainedModel] = weakref.WeakSet()
        self._batches = [reader.get_batch(i) for i in range(reader.num_record_batches)]
        schema = self._schema = reader.schema
        self._parquet_metadata = parquet_schema.metadata
        self.metadata: dict[str, object] = json.loads(self._parquet_metadata[META_KEY])
        self.hidden_size: int = schema.field("vector_sum").type.list_size
        self._starts = np.cumsum([0] + [b.num_rows for b in self._batches])
        self._ids = _SortedIds([b.column("entity_id") for b in self._batches])
        self._vectors = [
            b.column("vector_sum").flatten().to_numpy(zero_copy_only=True).reshape(-1, self.hidden_size)
            for b in self._batches
        ]
        self._counts = [(b.column("n_sentences").to_numpy(), b.column("frequency").to_numpy()) for b in self._batches]
        self.has_ids: bool = "qid" in schema.names  # the qid and aliases columns (format.ID_FIELDS)
        self._keys: dict[tuple[str, bool], tuple[pa.Array, np.ndarray]] = {}

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, allow_other_weights: bool = False) -> EntityTable:
        """Open ``table.parquet`` through its sidecar, (re)building the sidecar when missing or stale.

        ``allow_other_weights``: the default of :meth:`check_model` for this table.
        """
        path = Path(path)
        table = cls(path, *memory_map_table(path))
        table.allow_other_weights = allow_other_weights
        return table

    @classmethod
    def load(
        cls,
        source: str | os.PathLike[str],
        *,
        filename: str = "table.parquet",
        revision: str | None = None,
        allow_other_weights: bool = False,
    ) -> EntityTable:
        """Open a table from a file, a folder holding ``filename``, or a Hugging Face Hub dataset repository.

        A ``source`` that is not a path here is taken as a dataset repo id (``user/name``) and only
        ``filename`` (and its sidecar, if the repo has one) is fetched, at ``revision`` when given,
        into the hub's local cache; with ``HF_HUB_OFFLINE=1`` the cached copy is used.
        """
        path = Path(source)
        if not path.exists():
            path = Path(download_table(str(source), filename, revision))
        elif path.is_dir():
            path = path / filename
        return cls.open(path, allow_other_weights=allow_other_weights)

    def __len__(self) -> int:
        return len(self._ids)

    @functools.cached_property
    def build_id(self) -> str:
        """A digest of the content (see :func:`pelt.table.format.content_id`), which merging records; for a
        Parquet file that another tool wrote without one, the SHA-256 of its bytes (hashed on first use)."""
        recorded = self._parquet_metadata.get(BUILD_KEY)
        return recorded.decode() if recorded is not None else file_digest(self.path)

    def __contains__(self, entity_id: object) -> bool:
        return isinstance(entity_id, str) and self._ids.find_one(entity_id) >= 0

    def __repr__(self) -> str:
        return f"EntityTable({str(self.path)!r}, {len(self)} entities, H={self.hidden_size})"

    @property
    def norm(self) -> float:
        """The default L this table was built with (used by :meth:`lookup` when no norm is given)."""
        return float(self.metadata["norm"])

    def ids(self) -> Iterator[str]:
        """All entity ids, in sorted order (streamed: a large table's ids are not materialised)."""
        for b in self._batches:
            for value in b.column("entity_id"):
                yield value.as_py()

    def id_rows(self) -> Iterator[tuple[str, str | None, list[str]]]:
        """``(entity_id, qid, aliases)`` of every row, in id order, streamed (None and [] where unknown)."""
        for b in self._batches:
            if not self.has_ids:
                yield from ((value.as_py(), None, []) for value in b.column("entity_id"))
                continue
            for entity_id, qid, aliases in zip(*(b.column(c).to_pylist() for c in ("entity_id", "qid", "aliases"))):
                yield entity_id, qid, aliases or []

    def rows(self, ids: Sequence[str], missing: Missing = "error") -> np.ndarray:
        """Row index of each id (-1 where unknown and ``missing="zero"``); KeyError lists unknown ids otherwise."""
        if missing not in ("error", "zero"):
            raise ValueError(f"missing must be 'error' or 'zero', not {missing!r}")
        rows = self._ids.find(ids)
        if missing == "error" and (rows < 0).any():
            unknown = [i for i, r in zip(ids, rows) if r < 0]
            raise KeyError(f"{len(unknown)} entities not in table {self.path}: {unknown[:20]}")
        return rows

    def gather(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Vector sums (float32), n_sentences and frequency of rows (-1 gives zeros); reads only those rows.

        By row rather than by id, for callers that aligned rows themselves (merging aligns every
        input's rows to the merged ids once, then reads them chunk by chunk).
        """
        sums = np.zeros((len(rows), self.hidden_size), np.float32)
        n = np.zeros(len(rows), np.int64)
        freq = np.zeros(len(rows), np.int64)
        order = np.argsort(rows, kind="stable")
        order = order[rows[order] >= 0]
        bounds = np.searchsorted(rows[order], self._starts)  # each record batch's rows: one slice of order
        for c in np.flatnonzero(np.diff(bounds)):
            sel = order[bounds[c] : bounds[c + 1]]
            local = rows[sel] - self._starts[c]
            sums[sel] = self._vectors[c][local]
            n[sel] = self._counts[c][0][local]
            freq[sel] = self._counts[c][1][local]
        return sums, n, freq

    def vector_sums(self, ids: Sequence[str], missing: Missing = "error") -> np.ndarray:
        """The stored unnormalised sums [len(ids), H] (zeros for unknown ids with ``missing="zero"``)."""
        return self.gather(self.rows(ids, missing))[0]

    def counts(self, ids: Sequence[str], missing: Missing = "error") -> tuple[np.ndarray, np.ndarray]:
        """``(n_sentences, frequency)`` of each id (zeros for unknown ids with ``missing="zero"``)."""
        _, n, freq = self.gather(self.rows(ids, missing))
        return n, freq

    def lookup(self, ids: Sequence[str], norm: float | None = None, missing: Missing = "error") -> np.ndarray:
        """E(e) = L * sum / ||sum|| for each id, float32 [len(ids), H]; L defaults to the table's norm.

        With ``missing="zero"`` unknown ids give zero rows instead of a KeyError.
        """
        rows = self.rows(ids, missing)
        return self.scaled(self.gather(rows)[0], norm, ids, known=rows >= 0)

    def scaled(
        self, sums: np.ndarray, norm: float | None, ids: Sequence[str], known: np.ndarray | None = None
    ) -> np.ndarray:
        """``L * sums / ||sums||`` row by row, float32; ValueError names the ``ids`` of zero sums among the
        ``known`` rows (default: all). One definition for :meth:`lookup` and the exports, so that an
        exported vector is exactly the looked-up one."""
        sums = sums.astype(np.float64)
        lengths = np.linalg.norm(sums, axis=1, keepdims=True)
        degenerate = lengths[:, 0] == 0
        if known is not None:
            degenerate &= known
        if degenerate.any():
            raise ValueError(f"table {self.path}: zero vector sum for {[ids[i] for i in np.flatnonzero(degenerate)]}")
        scale = (self.norm if norm is None else float(norm)) / np.where(lengths == 0, 1.0, lengths)
        return (sums * scale).astype(np.float32)

    def batches(self) -> Iterator[tuple[pa.LargeStringArray, np.ndarray]]:
        """The ids and vector sums [rows, H] of each record batch, in id order, as zero-copy views of the
        memory map: for readers of every row (similarity, exports) that must not hold N x H at once."""
        for batch, sums in zip(self._batches, self._vectors):
            yield batch.column("entity_id"), sums

    def most_similar(self, entity_id: str, k: int = 10) -> list[tuple[str, float]]:
        """The ``k`` entities nearest ``entity_id`` by cosine; see :func:`pelt.table.similar.most_similar`."""
        return most_similar(self, entity_id, k)

    def column(self, name: str) -> pa.ChunkedArray:
        """A whole column over the memory-mapped record batches, without copying; for readers of every
        row at once (the id indexes of :meth:`find`, merging)."""
        return pa.chunked_array([b.column(name) for b in self._batches], self._schema.field(name).type)

    def _key_index(self, by: FindBy, ignore_case: bool) -> tuple[pa.Array, np.ndarray]:
        """Distinct keys of one kind (case-folded with ``ignore_case``), sorted, and the row each names.

        Built on first use, as Arrow arrays (no Python object per entity). A key of several rows (an
        alias of two entities; two ids equal but for case) names the most frequent, then the first.
        """
        if (by, ignore_case) in self._keys:
            return self._keys[(by, ignore_case)]
        if by == "id":
            keys, rows = self.column("entity_id"), pa.array(np.arange(len(self)))
        elif by == "qid":
            keys, rows = self.column("qid"), pa.array(np.arange(len(self)))
        else:
            aliases = pa.concat_arrays([b.column("aliases") for b in self._batches])
            keys, rows = pc.list_flatten(aliases), pc.list_parent_indices(aliases)
        keys = pc.cast(keys, pa.large_string())
        if ignore_case:
            keys = pc.utf8_lower(keys)
        frequency = self.gather(rows.to_numpy())[2]
        order = pa.table({"key": keys, "freq": -frequency, "row": rows}).filter(pc.is_valid(keys))
        order = order.sort_by([("key", "ascending"), ("freq", "ascending"), ("row", "ascending")])
        sorted_keys = order.column("key").combine_chunks()
        first = np.ones(len(sorted_keys), bool)
        if len(sorted_keys) > 1:
            first[1:] = pc.not_equal(sorted_keys[1:], sorted_keys[:-1]).to_numpy(zero_copy_only=False)
        self._keys[(by, ignore_case)] = (sorted_keys.filter(first), order.column("row").to_numpy()[first])
        return self._keys[(by, ignore_case)]

    def find(
        self, names: Sequence[str], by: Sequence[FindBy] | None = None, ignore_case: bool = False
    ) -> list[str | None]:
        """The entity id each of ``names`` stands for, or None: tried as an entity id (the Wikipedia
        title), a Wikidata QID, then a redirect title or link text, in the order of ``by`` (default:
        each of these the table has).

        Users hold the ids they have (``Q7186``, ``Curie``, ``marie curie``), not this table's; this is
        where they become entity ids for :meth:`lookup`.  ``ignore_case`` compares case-folded.
        QIDs and aliases need a table built with them (:attr:`has_ids`); asking one without is an error.
        """
        by = by or (("id", "qid", "alias") if self.has_ids else ("id",))
        unknown = set(by) - {"id", "qid", "alias"}
        if unknown or (not self.has_ids and set(by) - {"id"}):
            raise ValueError(
                f"find: by={list(by)}; expected id, qid or alias"
                + ("" if unknown else f", and table {self.path} has no qid/aliases columns: use by=['id']")
            )
        if not len(self):
            return [None] * len(names)
        queries = pa.array(list(names), pa.large_string())
        if ignore_case:
            queries = pc.utf8_lower(queries)
        found = np.full(len(queries), -1, np.int64)
        for kind in by:
            if kind == "id" and not ignore_case:  # the sorted ids answer without an index
                found = np.where(found < 0, self.rows(list(names), missing="zero"), found)
                continue
            keys, rows = self._key_index(kind, ignore_case)
            position = pc.index_in(queries, value_set=keys).to_numpy(zero_copy_only=False)
            hit = (found < 0) & ~np.isnan(position.astype(float))
            found[hit] = rows[position[hit].astype(np.int64)]
        return [None if row < 0 else self._column_value("entity_id", row) for row in found]

    def ids_at(self, rows: Sequence[int]) -> list[str]:
        """The entity id of each row (rows as :meth:`rows` gives them)."""
        return [self._column_value("entity_id", int(row)) for row in rows]

    def _column_value(self, name: str, row: int) -> object:
        chunk = int(np.searchsorted(self._starts, row, side="right") - 1)
        return self._batches[chunk].column(name)[row - int(self._starts[chunk])].as_py()

    def qids(self, ids: Sequence[str]) -> list[str | None]:
        """The Wikidata QID of each entity id (None where unknown or the table has no qid column)."""
        rows = self.rows(ids)
        return [self._column_value("qid", row) if self.has_ids else None for row in rows]

    def aliases(self, ids: Sequence[str]) -> list[list[str]]:
        """The redirect titles and link texts of each entity id (empty where none were stored)."""
        rows = self.rows(ids)
        return [(self._column_value("aliases", row) or []) if self.has_ids else [] for row in rows]

    def check_model(self, model: PreTrainedModel, *, allow_other_weights: bool | None = None) -> None:
        """Raise ValueError unless ``model`` is the model this table was built for.

        Hidden size and model type must always agree.  The model is recognised by its weights
        (:func:`pelt.encoding.models.weights_digest`), so a copy in another folder or the same model from the
        hub passes; tables written before digests were recorded fall back to comparing names.
        ``allow_other_weights`` (default: what :meth:`open` was given) accepts different weights of
        the same shape, e.g. a fine-tuned model using its base model's table; it is logged.

        The weights are checked once per model object: :func:`pelt.encoding.injection.inject` calls this for
        every batch, and a model being fine-tuned with the table changes its weights after the
        first step (the table was built for the weights it started from).
        """
        config = model.config
        built_for = str(self.metadata["model"])
        if config.hidden_size != self.hidden_size:
            raise ValueError(
                f"table {self.path} holds H={self.hidden_size} vectors of {built_for!r}; "
                f"model {model.name_or_path!r} has hidden size {config.hidden_size}"
            )
        model_type = self.metadata.get("model_type")
        if model_type is not None and model_type != config.model_type:
            raise ValueError(f"table {self.path} was built for a {model_type} model, not {config.model_type}")
        if model in self._weights_checked:
            return
        mismatch = model_mismatch(self.metadata, model)
        if mismatch is not None:
            allow = self.allow_other_weights if allow_other_weights is None else allow_other_weights
            if not allow:
                raise ValueError(
                    f"table {self.path}: {mismatch}; pass allow_other_weights=True to use it with other weights "
                    "of the same shape (e.g. a model fine-tuned from the one it was built for)"
                )
            logger.warning("table %s used with other weights, as allowed: %s", self.path, mismatch)
        self._weights_checked.add(model)

    def merge(
        self, *others: EntityTable | str | os.PathLike[str], out_path: str | os.PathLike[str], **kw
    ) -> EntityTable:
        """This table merged with ``others`` into ``out_path``; see :func:`merge_tables`."""
        return merge_tables([self, *others], out_path, **kw)


def merge_tables(
    tables: Sequence[EntityTable | str | os.PathLike[str]],
    out_path: str | os.PathLike[str],
    *,
    frequency: FrequencyRule = "max",
    ids: str | os.PathLike[str] | None = None,
    corpus: Mapping[str, str] | None = None,
) -> EntityTable:
    """Merge tables built from disjoint sets of sentences: sums and ``n_sentences`` add.

    ``corpus``: what the merged table records of the text it was built from (the workflow's
    ``corpus``, its name, and ``language``), read by ``pelt table info`` and the hub card.

    ``ids``: a Parquet file or folder of ``entity_id``, ``qid``, ``aliases`` (the linking stage's
    entity ids) whose values the merged rows get; else each row keeps those of the first input
    table that has them (:mod:`pelt.table.merge`).

    ``frequency`` counts mentions *before* sampling, so shards of one sample all carry the same
    value and ``max`` is right; use ``sum`` for tables of disjoint corpora.  Sums are added in
    float64 and rounded once, so the result does not depend on the order of ``tables``.  The merge
    streams in chunks of rows: memory stays bounded for tables of millions of entities.
    """
    opened = [t if isinstance(t, EntityTable) else EntityTable.open(t) for t in tables]
    if not opened:
        raise ValueError("merge_tables: no tables given")
    write_merged(opened, out_path, frequency=frequency, ids=ids, corpus=corpus)
    return EntityTable.open(out_path)
