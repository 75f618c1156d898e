"""Entity lookup tables: writing, memory-mapped reading, lookup and merging.

Storage.  ``table.parquet`` is the contract (``entity_id``, ``n_sentences``, ``frequency``,
``vector_sum`` as fixed_size_list<float32>[H], sorted by ``entity_id``, metadata as JSON under the
schema-metadata key ``pelt``; and, where the builder knew them, the ids users have: ``qid``, the
Wikidata item, and ``aliases``, the redirect titles and link texts that name the entity, which
:meth:`EntityTable.find` resolves).  Parquet cannot serve random rows cheaply: pages are encoded (a
fixed-size list still carries repetition levels) and usually compressed, so fetching one vector
means decoding its whole page, and opening a 5M x 768 table (15 GB) that way would need it in RAM.
Every table therefore gets an Arrow IPC sidecar (``table.arrow``, uncompressed) with the same rows:
an IPC file is its own in-memory layout, so :func:`pyarrow.memory_map` gives zero-copy numpy views,
opening costs only the footer, and a lookup touches just the pages of the rows it reads (found by
binary search over the sorted ids, so no id -> row dict of millions of Python strings either).
Writer and sidecar share a random build id; a missing or stale sidecar (a copied or rewritten
Parquet file) is rebuilt from the Parquet file, row group by row group.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import logging
import os
import tempfile
import uuid
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

if TYPE_CHECKING:
    from transformers import PreTrainedModel

logger = logging.getLogger(__name__)

REQUIRED_METADATA = ("model", "revision", "hidden_size", "representation", "max_seq_len", "norm")
_META_KEY = b"pelt"
_BUILD_KEY = b"pelt_build"
_CHUNK_ROWS = 16_384  # rows per Parquet row group / IPC record batch / merge step (~50 MB at H=768)

Missing = Literal["error", "zero"]


# Optional columns, after the vectors: the ids a user may hold instead of the entity id.
ID_FIELDS = (pa.field("qid", pa.string()), pa.field("aliases", pa.list_(pa.string())))
FindBy = Literal["id", "qid", "alias"]


def _schema(hidden_size: int, metadata: Mapping[str, object], build_id: str, with_ids: bool = False) -> pa.Schema:
    return pa.schema(
        [
            pa.field("entity_id", pa.string(), nullable=False),
            pa.field("n_sentences", pa.int64(), nullable=False),
            pa.field("frequency", pa.int64(), nullable=False),
            pa.field("vector_sum", pa.list_(pa.float32(), hidden_size), nullable=False),
            *(ID_FIELDS if with_ids else ()),
        ],
        metadata={_META_KEY: json.dumps(dict(metadata), sort_keys=True), _BUILD_KEY: build_id},
    )


def sidecar_path(path: str | os.PathLike[str]) -> Path:
    """Where the memory-mappable copy of a table lives: beside it, ``.parquet`` replaced by ``.arrow``."""
    return Path(path).with_suffix(".arrow")


def _record_batch(
    schema: pa.Schema,
    ids: pa.Array,
    sums: np.ndarray,
    n: np.ndarray,
    freq: np.ndarray,
    id_columns: Sequence[pa.Array] = (),
) -> pa.RecordBatch:
    flat = pa.array(np.ascontiguousarray(sums, np.float32).ravel())
    vectors = pa.FixedSizeListArray.from_arrays(flat, sums.shape[1])
    return pa.record_batch(
        [ids.cast(pa.string()), pa.array(n, pa.int64()), pa.array(freq, pa.int64()), vectors, *id_columns],
        schema=schema,
    )


def _check_metadata(metadata: Mapping[str, object], hidden_size: int) -> dict[str, object]:
    missing = [k for k in REQUIRED_METADATA if k not in metadata]
    if missing:
        raise ValueError(f"table metadata lacks {missing}")
    if int(metadata["hidden_size"]) != hidden_size:
        raise ValueError(f"metadata hidden_size {metadata['hidden_size']} != vector width {hidden_size}")
    return dict(metadata)


def _ipc_schema(schema: pa.Schema) -> pa.Schema:
    """The sidecar's schema: 64-bit string offsets, so ids of any total size fit one record batch."""
    return schema.set(0, schema.field("entity_id").with_type(pa.large_string()))


def _to_ipc(batch: pa.RecordBatch, ipc_schema: pa.Schema) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([batch.column(0).cast(pa.large_string()), *batch.columns[1:]], schema=ipc_schema)


def _write_files(path: Path, schema: pa.Schema, batches: Iterable[pa.RecordBatch]) -> None:
    """Stream batches into the Parquet file and its sidecar; each appears (atomically) only when complete."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp_parquet = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    tmp_arrow = path.with_name(f".{sidecar_path(path).name}.{uuid.uuid4().hex}.tmp")
    ipc_schema = _ipc_schema(schema)
    try:
        with (
            pq.ParquetWriter(tmp_parquet, schema, compression="zstd") as pw,
            pa.ipc.new_file(tmp_arrow, ipc_schema) as aw,
        ):
            for batch in batches:
                pw.write_batch(batch, row_group_size=_CHUNK_ROWS)
                aw.write_batch(_to_ipc(batch, ipc_schema))
        os.replace(tmp_arrow, sidecar_path(path))
        os.replace(tmp_parquet, path)
    finally:
        for tmp in (tmp_parquet, tmp_arrow):
            tmp.unlink(missing_ok=True)


def write_table(
    path: str | os.PathLike[str],
    entity_ids: Sequence[str],
    vector_sum: np.ndarray,
    n_sentences: Sequence[int] | np.ndarray,
    frequency: Sequence[int] | np.ndarray,
    metadata: Mapping[str, object],
    *,
    qids: Sequence[str | None] | None = None,
    aliases: Sequence[Sequence[str]] | None = None,
) -> None:
    """Write a table (rows sorted by entity id, which lookups binary-search) and its sidecar.

    ``vector_sum`` is the unnormalised sum [N, H]; it is stored as float32 (float64 input is rounded
    once, here).  ``metadata`` must hold :data:`REQUIRED_METADATA` (:func:`pelt.encoding.table_metadata`
    fills it from the model).  ``qids`` and ``aliases`` (one per id, None / empty where unknown) add
    the ``qid`` and ``aliases`` columns that :meth:`EntityTable.find` reads.
    """
    vector_sum = np.asarray(vector_sum)
    n_sentences = np.asarray(n_sentences, dtype=np.int64)
    frequency = np.asarray(frequency, dtype=np.int64)
    if vector_sum.ndim != 2 or not len(entity_ids) == len(vector_sum) == len(n_sentences) == len(frequency):
        raise ValueError(
            f"write_table: {len(entity_ids)} ids, vector_sum {vector_sum.shape}, {len(n_sentences)} counts and "
            f"{len(frequency)} frequencies do not line up"
        )
    meta = _check_metadata(metadata, vector_sum.shape[1])
    ids = pa.array(entity_ids, pa.string())
    if ids.null_count:
        raise ValueError("write_table: null entity id")
    order = pc.sort_indices(ids).to_numpy()
    ids = ids.take(order)
    _check_sorted_unique(ids)
    id_columns = _id_columns(len(entity_ids), qids, aliases)
    content = [*entity_ids, *([json.dumps(c.to_pylist()) for c in id_columns])]
    schema = _schema(
        vector_sum.shape[1], meta, _content_id(meta, content, vector_sum, n_sentences, frequency), bool(id_columns)
    )
    id_columns = [c.take(order) for c in id_columns]

    def batches() -> Iterator[pa.RecordBatch]:
        for lo in range(0, len(order), _CHUNK_ROWS):
            rows = order[lo : lo + _CHUNK_ROWS]
            sums = vector_sum[rows]
            if not np.isfinite(sums).all():  # checked by chunk: no N x H temporary
                raise ValueError("write_table: vector_sum holds NaN or inf")
            chunk_ids = [c[lo : lo + _CHUNK_ROWS] for c in id_columns]
            yield _record_batch(schema, ids[lo : lo + _CHUNK_ROWS], sums, n_sentences[rows], frequency[rows], chunk_ids)

    _write_files(Path(path), schema, batches())
    logger.info("wrote table %s: %d entities, H=%d", path, len(order), vector_sum.shape[1])


def _id_columns(n: int, qids: Sequence[str | None] | None, aliases: Sequence[Sequence[str]] | None) -> list[pa.Array]:
    """The ``qid`` and ``aliases`` columns in input order, or none when neither is given."""
    if qids is None and aliases is None:
        return []
    qids = [None] * n if qids is None else list(qids)
    aliases = [[]] * n if aliases is None else [list(a or []) for a in aliases]
    if not len(qids) == len(aliases) == n:
        raise ValueError(f"write_table: {n} ids, {len(qids)} qids and {len(aliases)} alias lists do not line up")
    return [pa.array(qids, ID_FIELDS[0].type), pa.array(aliases, ID_FIELDS[1].type)]


def _content_id(metadata: Mapping[str, object], strings: Sequence[str], *arrays: np.ndarray) -> str:
    """A digest of what is written, used as build id, so that rewriting a table gives identical bytes.

    (A build id only has to differ between different contents; see the module docstring.)
    """
    digest = hashlib.blake2b(json.dumps(dict(metadata), sort_keys=True).encode(), digest_size=16)
    digest.update("\0".join(strings).encode())
    for array in arrays:
        for lo in range(0, len(array), _CHUNK_ROWS):  # by chunk: no copy of a whole non-contiguous array
            digest.update(np.ascontiguousarray(array[lo : lo + _CHUNK_ROWS]))
    return digest.hexdigest()


def _check_sorted_unique(ids: pa.Array | pa.ChunkedArray) -> None:
    """Lookups binary-search the ids, so they must be strictly increasing (byte order = code-point order)."""
    if len(ids) > 1:
        bad = pc.greater_equal(ids[:-1], ids[1:])
        if pc.any(bad).as_py():
            first = pc.index(bad, True).as_py()
            raise ValueError(f"entity ids not strictly increasing at {ids[first]!s} / {ids[first + 1]!s}: duplicates?")


class _SortedIds:
    """Binary search over the memory-mapped, sorted id column (chunked into record batches).

    Two levels: Python's C bisect over each chunk's first id, then a plain binary search inside the
    chunk on memoryviews of the Arrow buffers (int64 offsets, UTF-8 bytes); only the ~log2(N) ids
    compared are ever read, and no per-id Python object is kept.
    """

    def __init__(self, chunks: Sequence[pa.LargeStringArray]):
        chunks = [c for c in chunks if len(c)]  # empty ones hold no row and have no first id
        self._chunks = []
        for c in chunks:
            offsets = memoryview(c.buffers()[1]).cast("q")[c.offset : c.offset + len(c) + 1]
            self._chunks.append((offsets, memoryview(c.buffers()[2])))
        self._first = [bytes(data[offsets[0] : offsets[1]]) for offsets, data in self._chunks]
        self._starts = np.cumsum([0] + [len(c) for c in chunks])

    def __len__(self) -> int:
        return int(self._starts[-1])

    def find(self, entity_id: str) -> int:
        """Row of ``entity_id``, or -1."""
        key = entity_id.encode()
        c = bisect.bisect_right(self._first, key) - 1
        if c < 0:
            return -1
        offsets, data = self._chunks[c]
        lo, hi = 0, len(offsets) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if bytes(data[offsets[mid] : offsets[mid + 1]]) < key:
                lo = mid + 1
            else:
                hi = mid
        found = lo < len(offsets) - 1 and bytes(data[offsets[lo] : offsets[lo + 1]]) == key
        return int(self._starts[c]) + lo if found else -1


class EntityTable:
    """A read-only, memory-mapped entity table; see the module docstring for the storage choice."""

    def __init__(self, path: Path, reader: pa.ipc.RecordBatchFileReader):
        self.path = path
        self.allow_other_weights = False  # check_model's default; see open()
        self._weights_checked: weakref.WeakSet[PreTrainedModel] = weakref.WeakSet()
        self._batches = [reader.get_batch(i) for i in range(reader.num_record_batches)]
        schema = self._schema = reader.schema
        self.metadata: dict[str, object] = json.loads(schema.metadata[_META_KEY])
        self.build_id: str = schema.metadata[_BUILD_KEY].decode()  # a digest of the content (see write_table)
        self.hidden_size: int = schema.field("vector_sum").type.list_size
        self._starts = np.cumsum([0] + [b.num_rows for b in self._batches])
        self._ids = _SortedIds([b.column("entity_id") for b in self._batches])
        self._vectors = [
            b.column("vector_sum").flatten().to_numpy(zero_copy_only=True).reshape(-1, self.hidden_size)
            for b in self._batches
        ]
        self._counts = [(b.column("n_sentences").to_numpy(), b.column("frequency").to_numpy()) for b in self._batches]
        self.has_ids: bool = "qid" in schema.names  # the qid and aliases columns (ID_FIELDS)
        self._keys: dict[tuple[str, bool], tuple[pa.Array, np.ndarray]] = {}

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, allow_other_weights: bool = False) -> EntityTable:
        """Open ``table.parquet`` through its sidecar, (re)building the sidecar when missing or stale.

        ``allow_other_weights``: the default of :meth:`check_model` for this table.
        """
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"entity table {path} does not exist")
        build = pq.read_schema(path).metadata or {}
        if _META_KEY not in build:
            raise ValueError(f"{path} is not a pelt entity table (no {_META_KEY.decode()!r} schema metadata)")
        for candidate in (sidecar_path(path), _fallback_sidecar(build.get(_BUILD_KEY, b"none"))):
            reader = _open_sidecar(candidate, build.get(_BUILD_KEY))
            if reader is not None:
                break
        else:
            reader = _rebuild_sidecar(path)
        table = cls(path, reader)
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
            path = Path(_download_table(str(source), filename, revision))
        elif path.is_dir():
            path = path / filename
        return cls.open(path, allow_other_weights=allow_other_weights)

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, entity_id: object) -> bool:
        return isinstance(entity_id, str) and self._ids.find(entity_id) >= 0

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
        rows = np.fromiter((self._ids.find(i) for i in ids), np.int64, count=len(ids))
        if missing == "error" and (rows < 0).any():
            unknown = [i for i, r in zip(ids, rows) if r < 0]
            raise KeyError(f"{len(unknown)} entities not in table {self.path}: {unknown[:20]}")
        return rows

    def _gather(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Vector sums (float32), n_sentences and frequency of rows (-1 gives zeros); reads only those rows."""
        sums = np.zeros((len(rows), self.hidden_size), np.float32)
        n = np.zeros(len(rows), np.int64)
        freq = np.zeros(len(rows), np.int64)
        chunk = np.searchsorted(self._starts, rows, side="right") - 1
        for c in np.unique(chunk[rows >= 0]):
            sel = np.flatnonzero((chunk == c) & (rows >= 0))
            local = rows[sel] - self._starts[c]
            sums[sel] = self._vectors[c][local]
            n[sel] = self._counts[c][0][local]
            freq[sel] = self._counts[c][1][local]
        return sums, n, freq

    def vector_sums(self, ids: Sequence[str], missing: Missing = "error") -> np.ndarray:
        """The stored unnormalised sums [len(ids), H] (zeros for unknown ids with ``missing="zero"``)."""
        return self._gather(self.rows(ids, missing))[0]

    def counts(self, ids: Sequence[str], missing: Missing = "error") -> tuple[np.ndarray, np.ndarray]:
        """``(n_sentences, frequency)`` of each id (zeros for unknown ids with ``missing="zero"``)."""
        _, n, freq = self._gather(self.rows(ids, missing))
        return n, freq

    def lookup(self, ids: Sequence[str], norm: float | None = None, missing: Missing = "error") -> np.ndarray:
        """E(e) = L * sum / ||sum|| for each id, float32 [len(ids), H]; L defaults to the table's norm.

        With ``missing="zero"`` unknown ids give zero rows instead of a KeyError.
        """
        rows = self.rows(ids, missing)
        sums = self._gather(rows)[0].astype(np.float64)
        lengths = np.linalg.norm(sums, axis=1, keepdims=True)
        degenerate = (rows >= 0) & (lengths[:, 0] == 0)
        if degenerate.any():
            raise ValueError(f"table {self.path}: zero vector sum for {[ids[i] for i in np.flatnonzero(degenerate)]}")
        scale = (self.norm if norm is None else float(norm)) / np.where(lengths == 0, 1.0, lengths)
        return (sums * scale).astype(np.float32)

    def _column(self, name: str) -> pa.ChunkedArray:
        return pa.chunked_array([b.column(name) for b in self._batches], self._schema.field(name).type)

    def _key_index(self, by: FindBy, ignore_case: bool) -> tuple[pa.Array, np.ndarray]:
        """Distinct keys of one kind (case-folded with ``ignore_case``), sorted, and the row each names.

        Built on first use, as Arrow arrays (no Python object per entity). A key of several rows (an
        alias of two entities; two ids equal but for case) names the most frequent, then the first.
        """
        if (by, ignore_case) in self._keys:
            return self._keys[(by, ignore_case)]
        if by == "id":
            keys, rows = self._column("entity_id"), pa.array(np.arange(len(self)))
        elif by == "qid":
            keys, rows = self._column("qid"), pa.array(np.arange(len(self)))
        else:
            aliases = pa.concat_arrays([b.column("aliases") for b in self._batches])
            keys, rows = pc.list_flatten(aliases), pc.list_parent_indices(aliases)
        keys = pc.cast(keys, pa.large_string())
        if ignore_case:
            keys = pc.utf8_lower(keys)
        frequency = self._gather(rows.to_numpy())[2]
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
        (:func:`pelt.models.weights_digest`), so a copy in another folder or the same model from the
        hub passes; tables written before digests were recorded fall back to comparing names.
        ``allow_other_weights`` (default: what :meth:`open` was given) accepts different weights of
        the same shape, e.g. a fine-tuned model using its base model's table; it is logged.

        The weights are checked once per model object: :func:`pelt.injection.inject` calls this for
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
        mismatch = _model_mismatch(self.metadata, model)
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


def _model_mismatch(metadata: Mapping[str, object], model: PreTrainedModel) -> str | None:
    """Why ``model`` is not the one a table's metadata names, or None when it is."""
    recorded = metadata.get("model_digest")
    if recorded is not None:
        from pelt.models import weights_digest  # here: importing torch would slow every `pelt table` command

        digest = weights_digest(model)
        if digest == recorded:
            return None
        return f"built for model {metadata['model']!r} with weights {recorded}, {model.name_or_path!r} has {digest}"
    from pelt.models import same_model_name

    if same_model_name(str(metadata["model"]), model.name_or_path):
        return None
    return f"built for model {metadata['model']!r}, not {model.name_or_path!r}"


def _same_model(a: Mapping[str, object], b: Mapping[str, object]) -> bool:
    """Tables name one model when their weight digests agree, or (without digests) their model names do."""
    if a.get("model_digest") is not None and b.get("model_digest") is not None:
        return a["model_digest"] == b["model_digest"]
    return a.get("model") == b.get("model")


def _model_name(metadata: Mapping[str, object]) -> str:
    return f"{metadata.get('model')!r} (weights {metadata.get('model_digest')})"


def _download_table(repo_id: str, filename: str, revision: str | None) -> str:
    """The local path of ``filename`` from a hub dataset repository (downloaded once, then cached)."""
    from huggingface_hub import snapshot_download  # only tables from the hub need it

    patterns = [filename, str(sidecar_path(filename))]
    try:
        folder = snapshot_download(repo_id, repo_type="dataset", revision=revision, allow_patterns=patterns)
    except (OSError, ValueError) as err:  # the hub's HTTP, offline and bad-repo-id errors
        raise FileNotFoundError(
            f"entity table {repo_id!r} is neither a local path nor a reachable Hugging Face Hub dataset: {err}"
        ) from err
    path = Path(folder) / filename
    if not path.exists():
        raise FileNotFoundError(f"hub dataset {repo_id!r} (revision {revision or 'main'}) has no {filename}")
    logger.info("entity table %s from hub dataset %s", path, repo_id)
    return str(path)


def _fallback_sidecar(build_id: bytes) -> Path:
    """Sidecar location when the table's directory is read-only (keyed by build id, so never stale)."""
    return Path(tempfile.gettempdir()) / "pelt-tables" / f"{build_id.decode()}.arrow"


def _open_sidecar(path: Path, build_id: bytes | None) -> pa.ipc.RecordBatchFileReader | None:
    if build_id is None or not path.exists():
        return None
    try:
        reader = pa.ipc.open_file(pa.memory_map(str(path)))
    except pa.ArrowInvalid:
        logger.warning("unreadable table sidecar %s; rebuilding it", path)
        return None
    if (reader.schema.metadata or {}).get(_BUILD_KEY) != build_id:
        logger.info("table sidecar %s is stale; rebuilding it", path)
        return None
    return reader


def _write_sidecar(target: Path, ipc_schema: pa.Schema, pf: pq.ParquetFile) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
    try:
        with pa.ipc.new_file(tmp, ipc_schema) as writer:
            for batch in pf.iter_batches(batch_size=_CHUNK_ROWS):
                writer.write_batch(_to_ipc(batch, ipc_schema))
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _rebuild_sidecar(path: Path) -> pa.ipc.RecordBatchFileReader:
    """Stream a Parquet table into a fresh sidecar (beside it, or in the temp dir if that is read-only)."""
    pf = pq.ParquetFile(path)
    _check_sorted_unique(pq.read_table(path, columns=["entity_id"]).column(0))
    metadata = dict(pf.schema_arrow.metadata or {})
    build_id = metadata.get(_BUILD_KEY) or uuid.uuid4().hex.encode()
    metadata[_BUILD_KEY] = build_id
    ipc_schema = _ipc_schema(pf.schema_arrow.with_metadata(metadata))
    for target in (sidecar_path(path), _fallback_sidecar(build_id)):
        try:
            _write_sidecar(target, ipc_schema, pf)
        except OSError as err:  # read-only directory or file system
            logger.warning("cannot write table sidecar %s (%s); trying the temp dir", target, err)
            continue
        logger.info("built table sidecar %s", target)
        return pa.ipc.open_file(pa.memory_map(str(target)))
    raise OSError(f"no writable place for the sidecar of {path}")


_IdSource = tuple[pa.Table, np.ndarray]  # (qid, aliases) columns, and each merged row's row in them (-1: none)


def _id_sources(
    opened: Sequence[EntityTable], rows: Sequence[np.ndarray], all_ids: pa.Array, ids: str | os.PathLike[str] | None
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
            sources.append((pa.table({f.name: t._column(f.name) for f in ID_FIELDS}), r))
    return sources


def _merged_id_columns(sources: Sequence[_IdSource], lo: int, hi: int) -> list[pa.Array]:
    """The qid and aliases of merged rows lo..hi: each from the first source that has a value."""
    merged = [pa.nulls(hi - lo, f.type) for f in ID_FIELDS]
    for columns, where in sources:
        positions = where[lo:hi]
        taken = columns.take(pa.array(positions, mask=positions < 0))
        merged = [pc.coalesce(m, taken.column(f.name).combine_chunks()) for m, f in zip(merged, ID_FIELDS)]
    return merged


def merge_tables(
    tables: Sequence[EntityTable | str | os.PathLike[str]],
    out_path: str | os.PathLike[str],
    *,
    frequency: Literal["max", "sum"] = "max",
    ids: str | os.PathLike[str] | None = None,
) -> EntityTable:
    """Merge tables built from disjoint sets of sentences: sums and ``n_sentences`` add.

    ``ids``: a Parquet file or folder of ``entity_id``, ``qid``, ``aliases`` (the linking stage's
    entity ids) whose values the merged rows get; else each row keeps those of the first input
    table that has them (:func:`_merged_id_columns`).

    ``frequency`` counts mentions *before* sampling, so shards of one sample all carry the same
    value and ``max`` is right; use ``sum`` for tables of disjoint corpora.  Sums are added in
    float64 and rounded once, so the result does not depend on the order of ``tables``.  The merge
    streams in chunks of rows: memory stays bounded for tables of millions of entities.
    """
    opened = [t if isinstance(t, EntityTable) else EntityTable.open(t) for t in tables]
    if not opened:
        raise ValueError("merge_tables: no tables given")
    first = opened[0]
    for t in opened[1:]:
        if not _same_model(t.metadata, first.metadata):
            ours, theirs = (_model_name(m) for m in (t.metadata, first.metadata))
            raise ValueError(f"cannot merge {t.path} into {first.path}: model differs ({ours} != {theirs})")
        for key in ("hidden_size", "representation", "max_seq_len", "model_type"):
            if t.metadata.get(key) != first.metadata.get(key):
                raise ValueError(
                    f"cannot merge {t.path} into {first.path}: {key} differs "
                    f"({t.metadata.get(key)!r} != {first.metadata.get(key)!r})"
                )
    columns = [pa.chunked_array([b.column("entity_id") for b in t._batches], pa.large_string()) for t in opened]
    all_ids = pc.unique(pa.chunked_array([c for col in columns for c in col.chunks], pa.large_string()))
    all_ids = all_ids.take(pc.sort_indices(all_ids))
    rows = [pc.fill_null(pc.index_in(all_ids, value_set=col), -1).to_numpy() for col in columns]
    inputs = sorted(t.build_id for t in opened)  # their contents determine the merged content
    sources = _id_sources(opened, rows, all_ids, ids)
    if ids is not None:
        inputs.append(hashlib.blake2b(json.dumps(sources[0][0].to_pylist()).encode()).hexdigest())
    content_id = _content_id(first.metadata, [*inputs, frequency])
    schema = _schema(first.hidden_size, first.metadata, content_id, with_ids=bool(sources))

    def batches() -> Iterator[pa.RecordBatch]:
        for lo in range(0, len(all_ids), _CHUNK_ROWS):
            hi = min(lo + _CHUNK_ROWS, len(all_ids))
            sums = np.zeros((hi - lo, first.hidden_size), np.float64)
            n = np.zeros(hi - lo, np.int64)
            freq = np.zeros(hi - lo, np.int64)
            for t, r in zip(opened, rows):
                s, c, f = t._gather(r[lo:hi])
                sums += s
                n += c
                freq = np.maximum(freq, f) if frequency == "max" else freq + f
            id_columns = _merged_id_columns(sources, lo, hi) if sources else ()
            yield _record_batch(schema, all_ids[lo:hi].cast(pa.string()), sums, n, freq, id_columns)

    _write_files(Path(out_path), schema, batches())
    logger.info("merged %d tables into %s: %d entities", len(opened), out_path, len(all_ids))
    return EntityTable.open(out_path)
