"""Reading a table: :class:`EntityTable`, the memory-mapped rows found by entity id (or by QID or
alias), their vectors at a norm L, and the check that a model is the one the table was built for;
:func:`merge_tables`, which opens tables to merge and the merged one.
"""

from __future__ import annotations

import contextlib
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

from pelt.table.format import BUILD_KEY, LENGTH_FIELD, META_KEY, file_digest, memory_map_table, sum_lengths
from pelt.table.hub import download_table, push_table
from pelt.table.keys import KeyIndex, as_strings
from pelt.table.merge import FrequencyRule, write_merged
from pelt.table.model_check import model_mismatch
from pelt.table.similar import most_similar

if TYPE_CHECKING:
    from transformers import PreTrainedModel

logger = logging.getLogger(__name__)

Missing = Literal["error", "zero"]
FindBy = Literal["id", "qid", "alias"]
Extra = Literal["none", "lengths", "counts"]  # what a gather reads beside the sums


@contextlib.contextmanager
def _row_buffers(width: int) -> Iterator[None]:
    """numpy's cast buffers one row long (where the width is a multiple of 16, as numpy requires): its
    default buffer, 8,192 values, spans rows, and each row's scale is then copied out to every value
    of the buffer; with a row a buffer, ``scaled`` takes a third less time (1,024 x 768: 0.25 ms
    against 0.37). Each value is computed as before, to the bit."""
    if width < 16 or width % 16:
        yield
        return
    default = np.setbufsize(width)  # numpy's setting is per thread (a context variable in numpy 2)
    try:
        yield
    finally:
        np.setbufsize(default)


class _FileRows:
    """Rows of every record batch of a memory-mapped sidecar, read by numpy in one fancy index each: the
    file seen as overlapping rows of H floats (a row starting at every 4th byte), so that a table row is
    the view's row at its vector's offset in the file. One call where a loop over the record batches
    (62 at 1M rows) cost several times the copy itself; only the rows asked for are read."""

    def __init__(self, data: pa.Buffer, width: int, batches: Sequence[pa.RecordBatch]):
        floats = np.frombuffer(data, np.float32, count=data.size // 4)
        self._rows = np.lib.stride_tricks.as_strided(
            floats, shape=(max(0, len(floats) - width + 1), width), strides=(4, 4), writeable=False
        )
        self._ints = np.frombuffer(data, np.int64, count=data.size // 8)
        self._doubles = np.frombuffer(data, np.float64, count=data.size // 8)
        self._width = width

        def at(column: str, size: int) -> np.ndarray:
            return np.array([_offset(data, b.column(column), size) for b in batches], np.int64)

        self._vector_at = np.array([_offset(data, b.column("vector_sum").flatten(), 4) for b in batches], np.int64)
        self._n_at, self._freq_at, self._length_at = at("n_sentences", 8), at("frequency", 8), at(LENGTH_FIELD.name, 8)

    def gather(self, starts: np.ndarray, rows: np.ndarray, extra: Extra) -> tuple[np.ndarray, ...]:
        """Sums of ``rows`` (each in the table), given each batch's first row; then their lengths (a
        lookup's), or their n_sentences and frequency: a cache miss a column a row, read only if asked."""
        batch = np.searchsorted(starts, rows, side="right") - 1
        local = rows - starts[batch]
        sums = self._rows[self._vector_at[batch] + local * self._width]
        if extra == "lengths":
            return sums, self._doubles[self._length_at[batch] + local]
        if extra == "counts":
            return sums, self._ints[self._n_at[batch] + local], self._ints[self._freq_at[batch] + local]
        return (sums,)


def _offset(data: pa.Buffer, array: pa.Array, size: int) -> int:
    """Where ``array``'s first value lies in ``data``, in units of its ``size``-byte values; ValueError
    unless it lies within (a record batch of this file) and is aligned, as Arrow's IPC format aligns it."""
    values = array.buffers()[1]
    start = values.address - data.address + array.offset * size
    if start % size or not 0 <= start <= data.size - len(array) * size:
        raise ValueError("table sidecar: a column is not an aligned part of the mapped file")
    return start // size


class EntityTable:
    """A read-only, memory-mapped entity table; see :mod:`pelt.table.format` for the storage choice."""

    def __init__(self, path: Path, parquet_schema: pa.Schema, data: pa.Buffer):
        """``data``: the sidecar's bytes, memory-mapped (:func:`pelt.table.format.memory_map_table`), whose
        rows these are; ``parquet_schema``: the table's metadata, from the Parquet file alone (a sidecar's
        never counts, see :mod:`pelt.table.format`)."""
        self.path = path
        self.allow_other_weights = False  # check_model's default; see open()
        self._weights_checked: weakref.WeakSet[PreTrainedModel] = weakref.WeakSet()
        self._data = data
        self._reader = pa.ipc.open_file(data)
        schema = self._schema = self._reader.schema
        self._parquet_metadata = parquet_schema.metadata
        self.metadata: dict[str, object] = json.loads(self._parquet_metadata[META_KEY])
        self.hidden_size: int = schema.field("vector_sum").type.list_size
        self.has_ids: bool = "qid" in schema.names  # the qid and aliases columns (format.ID_FIELDS)
        self._keys: dict[tuple[FindBy, bool], KeyIndex] = {}
        self._found: tuple[list[str | None], tuple[str | None, ...], np.ndarray] | None = None  # see find()

    # What reading rows needs is set up on first use, so that opening costs what np.load does, about:
    # the record batches (a message each to parse, 62 at 1M rows), their first rows, and their vectors.

    @functools.cached_property
    def _batches(self) -> list[pa.RecordBatch]:
        return [self._reader.get_batch(i) for i in range(self._reader.num_record_batches)]

    @functools.cached_property
    def _starts(self) -> np.ndarray:
        return np.cumsum([0] + [b.num_rows for b in self._batches])

    @functools.cached_property
    def _vectors(self) -> list[np.ndarray]:
        return [
            b.column("vector_sum").flatten().to_numpy(zero_copy_only=True).reshape(-1, self.hidden_size)
            for b in self._batches
        ]

    @functools.cached_property
    def _file(self) -> _FileRows:
        return _FileRows(self._data, self.hidden_size, self._batches)

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
        return int(self._starts[-1])

    @functools.cached_property
    def build_id(self) -> str:
        """A digest of the content (see :func:`pelt.table.format.content_id`), which merging records; for a
        Parquet file that another tool wrote without one, the SHA-256 of its bytes (hashed on first use)."""
        recorded = self._parquet_metadata.get(BUILD_KEY)
        return recorded.decode() if recorded is not None else file_digest(self.path)

    def __contains__(self, entity_id: object) -> bool:
        return isinstance(entity_id, str) and self._index("id", False).find_one(entity_id) >= 0

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
        found = self._found
        if found is not None and ids is found[0] and tuple(ids) == found[1]:  # find's answer, unchanged
            rows = found[2].copy()
        else:
            rows = self._index("id", False).find(as_strings(ids))
        if missing == "error" and (rows < 0).any():
            unknown = [i for i, r in zip(ids, rows) if r < 0]
            raise KeyError(f"{len(unknown)} entities not in table {self.path}: {unknown[:20]}")
        return rows

    def gather(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Vector sums (float32), n_sentences and frequency of rows (-1 gives zeros); reads only those rows,
        O(len(rows)) memory whatever the table's size.

        By row rather than by id, for callers that aligned rows themselves (merging aligns every
        input's rows to the merged ids once, then reads them chunk by chunk).
        """
        sums, n, freq = self._read(rows, "counts")
        return sums, n, freq

    def _read(self, rows: np.ndarray, extra: Extra) -> tuple[np.ndarray, ...]:
        """Sums of ``rows`` and the ``extra`` columns :meth:`_FileRows.gather` reads, zeros for -1."""
        rows = np.asarray(rows, np.int64)
        if len(rows) and rows.max() >= len(self):
            raise IndexError(f"table {self.path} has {len(self)} rows, not {int(rows.max()) + 1}")
        known = rows >= 0
        if not len(self) or not known.any():
            columns = {"none": (), "lengths": (np.float64,), "counts": (np.int64, np.int64)}[extra]
            return np.zeros((len(rows), self.hidden_size), np.float32), *(np.zeros(len(rows), t) for t in columns)
        read = self._file.gather(self._starts, np.where(known, rows, 0), extra)
        if not known.all():
            for column in read:
                column[~known] = 0
        return read

    def vector_sums(self, ids: Sequence[str], missing: Missing = "error") -> np.ndarray:
        """The stored unnormalised sums [len(ids), H] (zeros for unknown ids with ``missing="zero"``)."""
        return self._read(self.rows(ids, missing), "none")[0]

    def counts(self, ids: Sequence[str], missing: Missing = "error") -> tuple[np.ndarray, np.ndarray]:
        """``(n_sentences, frequency)`` of each id (zeros for unknown ids with ``missing="zero"``)."""
        _, n, freq = self.gather(self.rows(ids, missing))
        return n, freq

    def lookup(self, ids: Sequence[str], norm: float | None = None, missing: Missing = "error") -> np.ndarray:
        """E(e) = L * sum / ||sum|| for each id, float32 [len(ids), H]; L defaults to the table's norm.

        With ``missing="zero"`` unknown ids give zero rows instead of a KeyError.
        """
        rows = self.rows(ids, missing)
        sums, lengths = self._read(rows, "lengths")
        return self.scaled(sums, norm, ids, known=rows >= 0, lengths=lengths, out=sums)

    def scaled(
        self,
        sums: np.ndarray,
        norm: float | None,
        ids: Sequence[str],
        known: np.ndarray | None = None,
        lengths: np.ndarray | None = None,
        out: np.ndarray | None = None,
    ) -> np.ndarray:
        """``L * sums / ||sums||`` row by row, float32, into ``out`` if given (``sums`` itself, where the
        caller's copy may be overwritten); ValueError names the ``ids`` of zero sums among the ``known``
        rows (default: all). One definition for :meth:`lookup` and the exports, so that an exported
        vector is exactly the looked-up one. In float64, as every table so far was read: scaling in
        float32 is faster but moves vectors by an ulp, which bf16 fine-tuning turns into a tenth of a
        point of accuracy (the demo's FewRel 1.0 5-1, seed 42: 58.10 against 57.98). The float64
        values of ``np.linalg.norm`` and ``(sums * scale).astype(np.float32)``, bit for bit: the
        ``lengths`` the sidecar stores (:func:`pelt.table.format.sum_lengths`, computed here when not
        given), and the product cast as numpy computes it, with no float64 copy."""
        lengths = (sum_lengths(sums) if lengths is None else lengths)[:, None]
        degenerate = lengths[:, 0] == 0
        if known is not None:
            degenerate &= known
        if degenerate.any():
            raise ValueError(f"table {self.path}: zero vector sum for {[ids[i] for i in np.flatnonzero(degenerate)]}")
        scale = (self.norm if norm is None else float(norm)) / np.where(lengths == 0, 1.0, lengths)
        out = np.empty(sums.shape, np.float32) if out is None else out
        with _row_buffers(sums.shape[1]):
            return np.multiply(sums, scale, dtype=np.float64, out=out, casting="unsafe")

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

    def _index(self, by: FindBy, ignore_case: bool) -> KeyIndex:
        """The :class:`KeyIndex` of one kind of key (case-folded with ``ignore_case``), built on first use
        from the columns alone (the frequency column, not the vectors, decides between rows of one key)."""
        if (by, ignore_case) not in self._keys:
            rows = None  # a key a row, in order
            if by == "alias":
                aliases = pa.concat_arrays([b.column("aliases") for b in self._batches])
                keys, rows = pc.list_flatten(aliases), pc.list_parent_indices(aliases).to_numpy().astype(np.int64)
            else:
                keys = self._id_column if by == "id" else self.column("qid")
            keys = pc.cast(keys, pa.large_string())
            keys = pc.utf8_lower(keys) if ignore_case else keys
            keys = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
            frequency = self.column("frequency").to_numpy()
            self._keys[(by, ignore_case)] = KeyIndex(keys, frequency if rows is None else frequency[rows], rows)
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
        The rows of the list returned last are kept, so that :meth:`rows` (and :meth:`lookup`) given
        that very list, unchanged, need not search them again.
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
        queries = as_strings(names)
        if ignore_case:
            queries = pc.utf8_lower(queries)
        found = np.full(len(queries), -1, np.int64)
        for kind in by:
            left = np.flatnonzero(found < 0)
            if not len(left):  # every name found: the later kinds' indexes are not even built
                break
            found[left] = self._index(kind, ignore_case).find(queries.take(left))
        ids = self.ids_at(found)
        self._found = ids, tuple(ids), found
        return ids

    def ids_at(self, rows: Sequence[int] | np.ndarray) -> list[str | None]:
        """The entity id of each row (rows as :meth:`rows` gives them; None for -1), in one Arrow take."""
        rows = np.asarray(rows, np.int64)
        return self._id_column.take(pa.array(rows, mask=rows < 0)).to_pylist()

    @functools.cached_property
    def _id_column(self) -> pa.LargeStringArray:
        """The ids in one array (8 bytes of offset plus the UTF-8 an entity): a take across the sidecar's
        record batches would concatenate them at every call."""
        return pa.concat_arrays([b.column("entity_id") for b in self._batches] or [pa.array([], pa.large_string())])

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

    # Publishing as the Hub's libraries name it (``datasets.Dataset.push_to_hub``): a method of the table,
    # the function ``pelt table push`` calls too, so that both write the same repository and card.
    push_to_hub = push_table

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
    sum_overlap: bool = False,
) -> EntityTable:
    """Merge tables built from disjoint sets of sentences: sums and ``n_sentences`` add.

    ``sum_overlap``: whether an entity in several tables is summed (shards of one sample share most of
    their entities); without it such an entity is a ValueError naming a few, since a table does not
    record its sentences and the same text merged twice would count double.

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
    write_merged(opened, out_path, frequency=frequency, ids=ids, corpus=corpus, sum_overlap=sum_overlap)
    return EntityTable.open(out_path)
