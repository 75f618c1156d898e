"""The table file: its Parquet schema, writing it, and the memory-mapped sidecar that readers open.

Storage.  ``table.parquet`` is the contract (``entity_id``, ``n_sentences``, ``frequency``,
``vector_sum`` as fixed_size_list<float32>[H], sorted by ``entity_id``, metadata as JSON under the
schema-metadata key ``pelt``; and, where the builder knew them, the ids users have: ``qid``, the
Wikidata item, and ``aliases``, the redirect titles and link texts that name the entity, which
:meth:`pelt.table.lookup.EntityTable.find` resolves).  Parquet cannot serve random rows cheaply: pages
are encoded (a fixed-size list still carries repetition levels) and usually compressed, so fetching
one vector means decoding its whole page, and opening a 5M x 768 table (15 GB) that way would need it
in RAM.  Every table therefore gets an Arrow IPC sidecar (``table.arrow``, uncompressed) with the same
rows: an IPC file is its own in-memory layout, so :func:`pyarrow.memory_map` gives zero-copy numpy
views, nothing is copied into RAM, and a lookup touches just the pages of the rows it reads (found
by a hashed index of the ids, :mod:`pelt.table.keys`, so no id -> row dict of millions of Python
strings either). The sidecar holds one column more, each sum's length in float64
(:data:`LENGTH_FIELD`), so that a lookup scales the rows it reads without computing their lengths.

The sidecar is a copy, never a source: what a table holds is what its Parquet file holds. Its
metadata (model digest, norm) is always read from the Parquet schema, and a sidecar is served only
once its rows were found equal to the Parquet file's, compared batch by batch after decoding the
Parquet file (the vectors bit for bit), or when it was rebuilt from that file here. Nothing a
sidecar says of itself counts, digests included: whoever plants a sidecar can compute any digest
of the Parquet file it sits beside. That comparison costs about what a rebuild does, so it is
done once: a stamp in the user's private cache (0700) records that this pair of files was verified
as they are now (:func:`_stat_key`), and later opens cost a stat of each; the stamp holds the
Parquet schema too, so that they parse no Parquet footer either. The same pass refuses
vectors that are not finite. A missing, stale or damaged sidecar is rebuilt from the Parquet
file, row group by row group; where the table's folder is read-only it goes to the private cache,
named by the SHA-256 of the Parquet file's bytes, never by anything the file says of itself.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import mmap
import os
import stat
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

logger = logging.getLogger(__name__)

REQUIRED_METADATA = ("model", "revision", "hidden_size", "representation", "max_seq_len", "norm")
META_KEY = b"pelt"
BUILD_KEY = b"pelt_build"
CHUNK_ROWS = 16_384  # rows per Parquet row group / IPC record batch / merge step (~50 MB at H=768)

# Optional columns, after the vectors: the ids a user may hold instead of the entity id.
ID_FIELDS = (pa.field("qid", pa.string()), pa.field("aliases", pa.list_(pa.string())))

# The sidecar's last column, which the Parquet file has not: each sum's length ||sum|| in float64
# (:func:`sum_lengths`), so that a lookup scales the rows it reads without computing their lengths
# (half of what scaling took at 1,024 x 768). Derived from the vectors, it is verified as they are.
LENGTH_FIELD = pa.field("sum_length", pa.float64(), nullable=False)
# The sidecar's layout, mixed into every stamp's key: a sidecar stamped under another layout (before
# ``sum_length``) is verified again, found to differ from what this one builds, and rebuilt.
SIDECAR_LAYOUT = 2
_LENGTH_ROWS = 1024  # rows squared at a time: 6 MB of float64 at H=768, not a record batch's 100 MB


def table_schema(hidden_size: int, metadata: Mapping[str, object], build_id: str, with_ids: bool = False) -> pa.Schema:
    return pa.schema(
        [
            pa.field("entity_id", pa.string(), nullable=False),
            pa.field("n_sentences", pa.int64(), nullable=False),
            pa.field("frequency", pa.int64(), nullable=False),
            pa.field("vector_sum", pa.list_(pa.float32(), hidden_size), nullable=False),
            *(ID_FIELDS if with_ids else ()),
        ],
        metadata={META_KEY: json.dumps(dict(metadata), sort_keys=True), BUILD_KEY: build_id},
    )


def sidecar_path(path: str | os.PathLike[str]) -> Path:
    """Where the memory-mappable copy of a table lives: beside it, ``.parquet`` replaced by ``.arrow``."""
    return Path(path).with_suffix(".arrow")


def record_batch(
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
    try:
        width, norm = int(metadata["hidden_size"]), float(metadata["norm"])  # type: ignore[arg-type]
    except (TypeError, ValueError) as err:
        raise ValueError(f"metadata hidden_size or norm is not a number: {err}") from None
    if width != hidden_size:
        raise ValueError(f"metadata hidden_size {metadata['hidden_size']} != vector width {hidden_size}")
    if not (math.isfinite(norm) and norm > 0):  # JSON has NaN and Infinity; every lookup would be scaled by it
        raise ValueError(f"metadata norm {metadata['norm']!r} is not a finite positive number")
    return dict(metadata)


def check_table_schema(path: Path, schema: pa.Schema) -> None:
    """ValueError naming ``path`` unless its schema is a table's: readers then index it without a
    KeyError or JSONDecodeError from metadata that someone crafted."""
    metadata = schema.metadata or {}
    if META_KEY not in metadata:
        raise ValueError(f"{path} is not a pelt entity table (no {META_KEY.decode()!r} schema metadata)")
    try:
        meta = json.loads(metadata[META_KEY])
        if not isinstance(meta, dict):
            raise ValueError(f"{META_KEY.decode()!r} metadata is not a JSON object")
        for name, kind in (("entity_id", pa.types.is_string), ("n_sentences", pa.types.is_int64)):
            if not kind(schema.field(name).type):
                raise ValueError(f"column {name} is {schema.field(name).type}")
        vectors = schema.field("vector_sum").type
        if not (pa.types.is_fixed_size_list(vectors) and pa.types.is_float32(vectors.value_type)):
            raise ValueError(f"vector_sum is {vectors}, not fixed_size_list<float32>")
        if not pa.types.is_int64(schema.field("frequency").type):
            raise ValueError(f"column frequency is {schema.field('frequency').type}")
        _check_metadata(meta, vectors.list_size)
    except (KeyError, ValueError) as err:  # KeyError: a missing column; JSONDecodeError is a ValueError
        raise ValueError(f"{path} is not a valid pelt entity table: {err}") from None


def sum_lengths(sums: np.ndarray) -> np.ndarray:
    """||sum|| of each row [N, H] in float64: ``np.linalg.norm(sums.astype(np.float64), axis=1)`` bit for
    bit (the same squares, summed along each row in numpy's pairwise order), without its float64 copy
    of the rows. The one computation of a length, whether stored in a sidecar or of rows at hand."""
    out = np.empty(len(sums), np.float64)
    for lo in range(0, len(sums), _LENGTH_ROWS):
        block = sums[lo : lo + _LENGTH_ROWS]
        np.add.reduce(np.square(block, dtype=np.float64), axis=1, out=out[lo : lo + len(block)])
    return np.sqrt(out, out=out)


def _ipc_schema(schema: pa.Schema) -> pa.Schema:
    """The sidecar's schema: 64-bit string offsets, so ids of any total size fit one record batch; and
    each sum's length, last (:data:`LENGTH_FIELD`)."""
    return schema.set(0, schema.field("entity_id").with_type(pa.large_string())).append(LENGTH_FIELD)


def _to_ipc(batch: pa.RecordBatch, ipc_schema: pa.Schema) -> pa.RecordBatch:
    """A Parquet batch as the sidecar holds it: large-string ids, the sums' lengths appended."""
    lengths = pa.array(sum_lengths(_vector_values(batch)), pa.float64())
    columns = [batch.column(0).cast(pa.large_string()), *batch.columns[1:], lengths]
    return pa.RecordBatch.from_arrays(columns, schema=ipc_schema)


def _vector_values(batch: pa.RecordBatch) -> np.ndarray:
    """The batch's sums as a float32 array [rows, H] (a null vector, as Parquet reads one back, is NaN)."""
    vectors = batch.column("vector_sum")
    width = vectors.type.list_size
    values = vectors.values.slice(vectors.offset * width, len(vectors) * width).to_numpy(zero_copy_only=False)
    return values.reshape(-1, width)


def write_files(path: Path, schema: pa.Schema, batches: Iterable[pa.RecordBatch]) -> None:
    """Stream batches into the Parquet file, then its sidecar; each appears (atomically) only when complete,
    and neither when a vector is not finite (checked as the sidecar is built)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp_parquet = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with pq.ParquetWriter(tmp_parquet, schema, compression="zstd") as pw:
            for batch in batches:
                pw.write_batch(batch, row_group_size=CHUNK_ROWS)
        _write_sidecar(sidecar_path(path), tmp_parquet, path)
        os.replace(tmp_parquet, path)
    finally:
        tmp_parquet.unlink(missing_ok=True)
    _remember_verified(_stat_key(path, sidecar_path(path)), path)  # built from these very bytes


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
    once, here).  ``metadata`` must hold :data:`REQUIRED_METADATA` (:func:`pelt.encoding.encode.table_metadata`
    fills it from the model).  ``qids`` and ``aliases`` (one per id, None / empty where unknown) add
    the ``qid`` and ``aliases`` columns that :meth:`pelt.table.lookup.EntityTable.find` reads.
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
    schema = table_schema(
        vector_sum.shape[1], meta, content_id(meta, content, vector_sum, n_sentences, frequency), bool(id_columns)
    )
    id_columns = [c.take(order) for c in id_columns]

    def batches() -> Iterator[pa.RecordBatch]:
        for lo in range(0, len(order), CHUNK_ROWS):
            rows = order[lo : lo + CHUNK_ROWS]
            sums = vector_sum[rows]
            chunk_ids = [c[lo : lo + CHUNK_ROWS] for c in id_columns]
            yield record_batch(schema, ids[lo : lo + CHUNK_ROWS], sums, n_sentences[rows], frequency[rows], chunk_ids)

    write_files(Path(path), schema, batches())
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


def content_id(metadata: Mapping[str, object], strings: Sequence[str], *arrays: np.ndarray) -> str:
    """A digest of what is written, used as build id, so that rewriting a table gives identical bytes.

    (A build id only has to differ between different contents; see the module docstring.)
    """
    digest = hashlib.blake2b(json.dumps(dict(metadata), sort_keys=True).encode(), digest_size=16)
    digest.update("\0".join(strings).encode())
    for array in arrays:
        for lo in range(0, len(array), CHUNK_ROWS):  # by chunk: no copy of a whole non-contiguous array
            digest.update(np.ascontiguousarray(array[lo : lo + CHUNK_ROWS]))
    return digest.hexdigest()


def _check_sorted_unique(ids: pa.Array | pa.ChunkedArray) -> None:
    """Lookups binary-search the ids, so they must be strictly increasing (byte order = code-point order)."""
    if len(ids) > 1:
        bad = pc.greater_equal(ids[:-1], ids[1:])
        if pc.any(bad).as_py():
            first = pc.index(bad, True).as_py()
            raise ValueError(f"entity ids not strictly increasing at {ids[first]!s} / {ids[first + 1]!s}: duplicates?")


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes: the name of a table's sidecar in the private cache, and the build id of a
    Parquet file written without one (:attr:`pelt.table.lookup.EntityTable.build_id`)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _check_finite(table: Path, batch: pa.RecordBatch, first_row: int) -> None:
    """ValueError, in one line naming the rows (and their ids), if a vector of ``batch`` (rows from
    ``first_row`` of ``table``) holds NaN or inf or is null: every lookup of such a row would be NaN.
    Vectorised over the batch, in the pass that builds or verifies a sidecar: a stamped open pays nothing."""
    bad = ~np.isfinite(_vector_values(batch)).all(axis=1)
    if bad.any():
        rows = np.flatnonzero(bad)
        ids = batch.column("entity_id").take(rows[:5]).to_pylist()
        named = ", ".join(f"{first_row + r} ({i!r})" for r, i in zip(rows, ids))
        more = f" and {len(rows) - 5} more" if len(rows) > 5 else ""
        raise ValueError(f"table {table}: vector_sum is NaN, inf or null in rows {named}{more}")


def memory_map_table(path: Path) -> tuple[pa.Schema, pa.Buffer]:
    """The Parquet schema of ``table.parquet`` (whose metadata is the table's) and the bytes of a sidecar
    holding the Parquet file's rows, memory-mapped (an IPC file: ``pa.ipc.open_file`` reads it without
    copying, and every record batch is a slice of these bytes, which lets a reader gather rows of all
    batches in one numpy call): one stamped as verified, one verified now, or one (re)built from the
    Parquet file; the one way in for readers, so that none of them ever decodes the Parquet pages but
    to verify or build a sidecar."""
    if not path.exists():
        raise FileNotFoundError(f"entity table {path} does not exist")
    verified = _verified_before(path)
    if verified is not None:
        check_table_schema(path, verified[1])
        return verified[1], mapped(verified[0])
    try:
        schema = pq.read_schema(path)
    except pa.ArrowException as err:
        raise ValueError(f"{path} is not a Parquet file: {err}") from None
    check_table_schema(path, schema)
    candidates = []
    for candidate in _sidecars(path):
        found = _open_sidecar(candidate, path, schema)
        if found is not None:
            _remember_verified(found[1], path)
            return schema, found[0]
        candidates.append(candidate)
    data, key = _rebuild_sidecar(path, candidates)
    _remember_verified(key, path)
    return schema, data


def mapped(sidecar: Path) -> pa.Buffer:
    """The whole file, memory-mapped read-only: a zero-copy buffer, which keeps the mapping alive as long
    as it or any slice of it (a record batch's column) is referenced. Python's mmap, not
    ``pa.memory_map``, whose ``read_buffer`` advises the kernel that the whole file will be needed
    (``MADV_WILLNEED``): 0.13 ms of an open at 3 GB, and a read-ahead of every page of a file of which
    a lookup reads a few rows."""
    with open(sidecar, "rb") as fh:
        if not os.fstat(fh.fileno()).st_size:  # mmap refuses an empty file; Arrow then refuses the buffer
            return pa.py_buffer(b"")
        return pa.py_buffer(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ))


def _sidecars(path: Path) -> Iterator[Path]:
    """Where a sidecar of ``path`` may be: beside it, then in the private cache (the Parquet file is
    hashed for that name only when the first is not the one)."""
    yield sidecar_path(path)
    yield _cache_dir() / f"{file_digest(path)}.arrow"


def _stat_key(*paths: Path) -> str:
    """What changes whenever a file's bytes do: device, inode, size and ctime (which no user can set
    back, unlike mtime), the way git's index tells an unchanged file without reading it; and the
    sidecar layout (:data:`SIDECAR_LAYOUT`) that a stamp vouches for, and numpy's version, since the
    stored lengths are numpy's norm to the bit: after an upgrade the sidecar is verified again."""
    parts = [f"layout {SIDECAR_LAYOUT}", f"numpy {np.__version__}"]
    for path in paths:
        info = path.stat()
        parts.append(f"{os.path.realpath(path)}|{info.st_dev}|{info.st_ino}|{info.st_size}|{info.st_ctime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _stamps() -> Path:
    """The stamps of verified pairs. Not ``verified/``, whose stamps (from before sidecars were compared
    with their Parquet file) vouch only for digests that a sidecar declared of itself."""
    return _cache_dir().parent / "verified-rows"


def _verified_before(path: Path) -> tuple[Path, pa.Schema] | None:
    """The sidecar this table was verified with (its rows compared with the Parquet file's) and neither
    has changed since, with the Parquet schema its stamp holds: decoding a table of millions of rows on
    every open would cost minutes, and parsing its Parquet footer half of what such an open costs."""
    stamps = _stamps()
    if not stamps.is_dir() or not _private(stamps):
        return None
    for sidecar in _stamped_sidecars(path):
        if not sidecar.exists():
            continue
        key = _stat_key(path, sidecar)
        try:
            stamp = (stamps / key).read_bytes()
        except FileNotFoundError:
            continue
        try:
            return sidecar, pa.ipc.read_schema(pa.py_buffer(stamp))
        except pa.ArrowException:  # a stamp from before stamps held the schema: read now, after the key
            return sidecar, _remember_verified(key, path)
    return None


def _stamped_sidecars(path: Path) -> Iterator[Path]:
    """Where a verified sidecar of ``path`` may be: beside it, then (only if need be) in the cache."""
    yield sidecar_path(path)
    yield from _cache_dir().glob("*.arrow")


def _remember_verified(key: str, path: Path) -> pa.Schema:
    """A stamp, in the private cache, that a sidecar was verified against its table ``path`` as they were
    at ``key`` (taken before verifying: a file changed since then no longer matches it), holding the
    table's Parquet schema, which it returns. The schema is read after ``key`` was taken: the stamp
    never holds the schema of another file than the one ``key`` names, which a changed file no longer is."""
    schema = pq.read_schema(path)
    try:
        _private_folder(_stamps())
        tmp = _stamps() / f".{key}.{uuid.uuid4().hex}.tmp"
        tmp.write_bytes(schema.serialize().to_pybytes())
        os.replace(tmp, _stamps() / key)  # whole or not at all: a reader never sees half a schema
    except OSError as err:
        logger.info("cannot remember that a table was verified (%s): the next open verifies it again", err)
    return schema


def _cache_dir() -> Path:
    """Where sidecars go when a table's folder is read-only: the user's cache, not a shared temp dir."""
    return Path(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pelt", "tables")


def _private(folder: Path) -> bool:
    """Whether the cache folder and its parent are the user's alone: nobody else can plant a sidecar there."""
    for part in (folder, folder.parent):
        info = part.stat()
        if info.st_uid != os.getuid() or info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            return False
    return True


def _open_sidecar(sidecar: Path, path: Path, schema: pa.Schema) -> tuple[pa.Buffer, str] | None:
    """The sidecar at ``sidecar`` (its bytes, :func:`mapped`) and the stamp key of the pair, if its rows
    are those of the Parquet file ``path``; None (logged) if it is absent, in a cache folder others can
    write, stale or damaged. ValueError if the Parquet file's vectors are not finite."""
    if not sidecar.exists():
        return None
    if sidecar.parent == _cache_dir() and not _private(sidecar.parent):
        logger.warning("table cache %s is not private (0700, yours): not used", sidecar.parent)
        return None
    try:
        key = _stat_key(path, sidecar)  # before reading: a change during the comparison misses the stamp
        data = mapped(sidecar)
        if _same_rows(pa.ipc.open_file(data), path, schema):
            return data, key
        logger.warning(
            "table sidecar %s does not hold the rows of %s (or is of an older layout); rebuilding it", sidecar, path
        )
    except (pa.ArrowException, OSError) as err:
        logger.warning("unreadable table sidecar %s (%s); rebuilding it", sidecar, err)
    return None


def _same_rows(reader: pa.ipc.RecordBatchFileReader, path: Path, schema: pa.Schema) -> bool:
    """Whether the sidecar's columns and record batches are the Parquet file's, batch for batch as
    :func:`_write_sidecar` writes them, the vectors bit for bit (Arrow's equality takes -0.0 for 0.0)."""
    ipc_schema = _ipc_schema(schema)
    if not reader.schema.equals(ipc_schema):
        return False
    batches = rows = 0
    for batch in _parquet_batches(path):
        batch = _to_ipc(batch, ipc_schema)
        _check_finite(path, batch, rows)
        if batches >= reader.num_record_batches or not _same_batch(reader.get_batch(batches), batch):
            return False
        batches, rows = batches + 1, rows + batch.num_rows
    return batches == reader.num_record_batches


def _parquet_batches(path: Path) -> Iterator[pa.RecordBatch]:
    """The rows of a Parquet file in record batches of CHUNK_ROWS (the last one fewer), as
    ``iter_batches(batch_size=CHUNK_ROWS)`` cuts them, read a row group at a time: ``iter_batches``
    (pyarrow 26) kept what it had read until the end, the whole table in memory (3 GB at 1M x 768)
    to build or verify a sidecar, 15 GB at 5M; this keeps a row group and less than a batch."""
    pf = pq.ParquetFile(path)
    rows = pf.schema_arrow.empty_table()
    for group in range(pf.num_row_groups):
        rows = pa.concat_tables([rows, pf.read_row_group(group)])
        while rows.num_rows >= CHUNK_ROWS or (group == pf.num_row_groups - 1 and rows.num_rows):
            yield rows.slice(0, CHUNK_ROWS).combine_chunks().to_batches()[0]
            rows = rows.slice(CHUNK_ROWS)


def _same_batch(got: pa.RecordBatch, want: pa.RecordBatch) -> bool:
    """Whether two batches of one schema hold the same rows, the vectors and lengths compared as bits."""
    if got.num_rows != want.num_rows:
        return False
    for name in want.schema.names:
        a, b = got.column(name), want.column(name)
        if name in ("vector_sum", LENGTH_FIELD.name):
            a, b = (_bits(c) for c in (a, b))
            if not np.array_equal(a, b):
                return False
        elif not a.equals(b):
            return False
    return True


def _bits(column: pa.Array) -> np.ndarray:
    """A float column's values (a fixed-size list's, flattened) as unsigned integers of their width."""
    values = (column.flatten() if pa.types.is_fixed_size_list(column.type) else column).to_numpy(zero_copy_only=False)
    return values.view(np.uint32 if values.itemsize == 4 else np.uint64)


def _write_sidecar(target: Path, parquet: Path, table: Path) -> None:
    """The sidecar of the Parquet file ``parquet`` (the table ``table``, named in errors): its schema and
    rows, batch by batch; ValueError if a vector is not finite."""
    ipc_schema = _ipc_schema(pq.read_schema(parquet))
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
    try:
        rows = 0
        with pa.ipc.new_file(tmp, ipc_schema) as writer:
            for batch in _parquet_batches(parquet):
                batch = _to_ipc(batch, ipc_schema)
                _check_finite(table, batch, rows)
                writer.write_batch(batch)
                rows += batch.num_rows
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _private_folder(cache: Path) -> None:
    """The cache folder, created the user's alone (0700); an error if it cannot be."""
    cache.mkdir(mode=0o700, parents=True, exist_ok=True)
    for folder in (cache.parent, cache):
        folder.chmod(0o700)
    if not _private(cache):
        raise OSError(f"{cache} is not private (0700, yours)")


def _rebuild_sidecar(path: Path, targets: Sequence[Path]) -> tuple[pa.Buffer, str]:
    """Stream a Parquet table into a fresh sidecar at the first of ``targets`` that can be written (beside
    it, or in the private cache if that is read-only); the sidecar's bytes and the stamp key of the pair."""
    _check_sorted_unique(pq.read_table(path, columns=["entity_id"]).column(0))
    cache = _cache_dir()
    for target in targets:
        try:
            if target.parent == cache:
                _private_folder(cache)
            _write_sidecar(target, path, path)
        except OSError as err:  # read-only directory or file system
            logger.warning("cannot write table sidecar %s (%s); trying the private cache", target, err)
            continue
        logger.info("built table sidecar %s", target)
        return mapped(target), _stat_key(path, target)
    raise OSError(f"no writable place for the sidecar of {path}")
