"""A table's vectors in the formats other tools read: word2vec text (gensim's ``KeyedVectors``, the
format Wikipedia2Vec users have), ``.npy`` and safetensors (each with an ids file beside it).

What is exported is what :meth:`~pelt.table.lookup.EntityTable.lookup` returns, E = L * sum / ||sum||
at the table's default L (or ``norm``), so that a vector used elsewhere is the one pelt injects;
``raw=True`` exports the stored sums instead (to renormalise or average them another way). Rows
are read a record batch at a time; only safetensors, whose writer takes whole arrays, holds the
N x H vectors in memory.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import pyarrow.compute as pc

if TYPE_CHECKING:
    from pelt.table.lookup import EntityTable

ExportFormat = Literal["word2vec", "npy", "safetensors"]
FORMATS: tuple[ExportFormat, ...] = ("word2vec", "npy", "safetensors")
_SEPARATORS = r"[ \t\r\n]"


def ids_path(out: str | os.PathLike[str]) -> Path:
    """The ids file beside an ``.npy`` or safetensors export: ``vectors.npy`` -> ``vectors.ids.txt``."""
    return Path(out).with_suffix(".ids.txt")


def word2vec_key(entity_id: str) -> str:
    """An id as a word2vec key: readers split lines on whitespace, so whitespace becomes ``_``
    (Wikipedia's own spelling of a space in titles)."""
    return re.sub(_SEPARATORS, "_", entity_id)


def _vectors(table: EntityTable, norm: float | None, raw: bool) -> Iterator[tuple[list[str], np.ndarray]]:
    for column, sums in table.batches():
        ids = column.to_pylist()
        yield ids, (np.asarray(sums, np.float32) if raw else table.scaled(sums, norm, ids))


def _check_ids(table: EntityTable, word2vec: bool) -> None:
    """Refuse ids the format would garble, before any file is written."""
    ids = table.column("entity_id")
    if word2vec:
        keys = pc.replace_substring_regex(ids, _SEPARATORS, "_")
        if pc.count_distinct(keys).as_py() != len(ids):
            raise ValueError(f"table {table.path}: two ids differ only in spaces and underscores; no word2vec keys")
    elif pc.any(pc.match_substring_regex(ids, r"[\r\n]")).as_py():
        raise ValueError(f"table {table.path}: an id holds a line break, which the ids file cannot carry")


def export_table(
    table: EntityTable,
    out: str | os.PathLike[str],
    fmt: ExportFormat,
    *,
    norm: float | None = None,
    raw: bool = False,
) -> list[Path]:
    """Write the table's vectors to ``out`` in ``fmt``; returns the files written (the ids file second)."""
    if fmt not in FORMATS:
        raise ValueError(f"export format {fmt!r}; expected one of {', '.join(FORMATS)}")
    _check_ids(table, fmt == "word2vec")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    n, hidden = len(table), table.hidden_size
    if fmt == "word2vec":
        row_format = " ".join(["%.9g"] * hidden) + "\n"  # 9 digits: every float32 reads back exactly
        with out.open("w", encoding="utf-8") as f:
            f.write(f"{n} {hidden}\n")
            for ids, vectors in _vectors(table, norm, raw):
                f.writelines(word2vec_key(i) + " " + row_format % tuple(v) for i, v in zip(ids, vectors.tolist()))
        return [out]
    if fmt == "npy":
        array = np.lib.format.open_memmap(out, mode="w+", dtype=np.float32, shape=(n, hidden))
    else:
        array = np.empty((n, hidden), np.float32)
    row = 0
    with ids_path(out).open("w", encoding="utf-8") as f:
        for ids, vectors in _vectors(table, norm, raw):
            array[row : row + len(ids)] = vectors
            row += len(ids)
            f.writelines(i + "\n" for i in ids)
    if fmt == "npy":
        array.flush()
    else:
        from safetensors.numpy import save_file  # only this format needs it

        what = "sum" if raw else f"lookup at L={table.norm if norm is None else float(norm)}"
        save_file({"vectors": array}, str(out), metadata={"pelt": json.dumps(table.metadata), "vectors": what})
        _as_created(out)
    return [out, ids_path(out)]


def _as_created(path: Path) -> None:
    """The mode a file created here gets (0644 under the usual umask): safetensors writes through a
    private temporary file (0600), which would leave the export unreadable to the user's group."""
    umask = os.umask(0)
    os.umask(umask)
    path.chmod(0o666 & ~umask)
