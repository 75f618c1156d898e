"""E(e) = L * sum / ||sum||, bit for bit as the float64 definition gives it, from the lengths each
sidecar stores beside the sums (``sum_length``), which are verified with the sums and rebuilt where a
sidecar lacks them."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import pelt.table.format
from pelt.table import EntityTable, write_table
from pelt.table.format import LENGTH_FIELD, sidecar_path

ROWS = 300


@pytest.fixture(params=[768, 200])
def width(request) -> int:
    """768: a row a cast buffer (a multiple of 16) and more than numpy's 128-element block (the squares
    summed pairwise); 200: numpy's own buffers."""
    return request.param


@pytest.fixture
def sums(width) -> np.ndarray:
    """Sums from 1e-30 to 1e30 in length, each scaled differently: a float32 rounding shows at any."""
    rng = np.random.default_rng(2)
    return (rng.normal(size=(ROWS, width)) * 10.0 ** rng.integers(-30, 30, size=(ROWS, 1))).astype(np.float32)


@pytest.fixture
def ids() -> list[str]:
    return [f"E{i:03d}" for i in range(ROWS)]


@pytest.fixture
def path(tmp_path, sums, ids, monkeypatch):
    monkeypatch.setattr(pelt.table.format, "CHUNK_ROWS", 64)  # five record batches
    meta = {"model": "m", "revision": "r", "hidden_size": sums.shape[1], "representation": "r", "max_seq_len": 8}
    write_table(tmp_path / "t.parquet", ids, sums, [1] * ROWS, [1] * ROWS, {**meta, "norm": 7.0})
    return tmp_path / "t.parquet"


def definition(sums: np.ndarray, norm: float) -> np.ndarray:
    """The PELT vector as written, in float64, rounded once to float32."""
    wide = sums.astype(np.float64)
    return (wide * (norm / np.linalg.norm(wide, axis=1, keepdims=True))).astype(np.float32)


def bits(vectors: np.ndarray) -> list:
    return vectors.view(np.uint32).tolist()


def test_lookup_scales_in_float64_bit_for_bit(path, sums, ids):
    """At any magnitude, across record batches, in any order, one row or many, beside unknown ids (zeros);
    the stored lengths are ``np.linalg.norm``'s, and scaling rows without them (the exports) agrees;
    numpy's buffer size, set for the scaling, is the caller's again after it."""
    buffer_size = np.getbufsize()
    table = EntityTable.open(path)
    assert len(table._batches) == 5
    assert table.column(LENGTH_FIELD.name).to_numpy().view(np.uint64).tolist() == (
        np.linalg.norm(sums.astype(np.float64), axis=1).view(np.uint64).tolist()
    )
    order = np.random.default_rng(3).permutation(ROWS)[:100].tolist() * 2
    for norm in (None, 3.3):
        want = definition(sums, norm or 7.0)
        assert bits(table.lookup(ids, norm=norm)) == bits(want)
        assert bits(table.lookup([ids[i] for i in order], norm=norm)) == bits(want[order])
        for i in order[:5]:
            assert bits(table.lookup([ids[i]], norm=norm)) == bits(want[i : i + 1])
        looked_up = table.lookup(["nobody", ids[7]], norm=norm, missing="zero")
        assert not looked_up[0].any() and bits(looked_up[1:]) == bits(want[7:8])
        assert bits(table.scaled(table.vector_sums(ids), norm, ids)) == bits(want)
    assert np.getbufsize() == buffer_size


def _rewrite_sidecar(path, lengths: np.ndarray | None) -> None:
    """The sidecar with ``lengths`` in place of its own, or without the column (as sidecars were before)."""
    rows = pa.ipc.open_file(sidecar_path(path)).read_all()
    at = rows.schema.get_field_index(LENGTH_FIELD.name)
    rows = rows.remove_column(at) if lengths is None else rows.set_column(at, LENGTH_FIELD, pa.array(lengths))
    with pa.ipc.new_file(sidecar_path(path), rows.schema) as writer:
        for batch in rows.to_batches(max_chunksize=64):
            writer.write_batch(batch)


def test_a_sidecar_whose_lengths_are_not_its_sums_is_rebuilt(path, sums, ids):
    """Lengths are compared as the sums are, bit for bit: a sidecar holding the right sums and other
    lengths (which would scale every lookup wrongly) is not served but rebuilt."""
    lengths = np.linalg.norm(sums.astype(np.float64), axis=1)
    _rewrite_sidecar(path, np.nextafter(lengths, np.inf))  # an ulp off
    assert bits(EntityTable.open(path).lookup(ids)) == bits(definition(sums, 7.0))
    assert pa.ipc.open_file(sidecar_path(path)).read_all().column(LENGTH_FIELD.name).to_pylist() == lengths.tolist()


def test_a_sidecar_of_the_older_layout_is_rebuilt_though_stamped(path, sums, ids, monkeypatch):
    """A sidecar written before lengths were stored, and stamped as verified then: the stamp, of another
    layout, no longer counts, and the sidecar is verified, found to lack them, and rebuilt."""
    _rewrite_sidecar(path, None)
    with monkeypatch.context() as before:
        before.setattr(pelt.table.format, "SIDECAR_LAYOUT", 1)
        pelt.table.format._remember_verified(pelt.table.format._stat_key(path, sidecar_path(path)), path)
    assert bits(EntityTable.open(path).lookup(ids)) == bits(definition(sums, 7.0))
    assert LENGTH_FIELD.name in pa.ipc.open_file(sidecar_path(path)).schema.names


def test_a_stamp_of_another_numpy_no_longer_vouches_for_the_lengths(path, sums, ids, monkeypatch):
    """The stored lengths are numpy's norm to the bit, so a stamp taken under another numpy version is
    not trusted: the sidecar is verified again, its wrong lengths found, and it is rebuilt."""
    lengths = np.linalg.norm(sums.astype(np.float64), axis=1)
    _rewrite_sidecar(path, np.nextafter(lengths, np.inf))  # what another numpy might have summed
    with monkeypatch.context() as before:
        before.setattr(np, "__version__", "0.0-another")
        pelt.table.format._remember_verified(pelt.table.format._stat_key(path, sidecar_path(path)), path)
    assert bits(EntityTable.open(path).lookup(ids)) == bits(definition(sums, 7.0))
    assert pa.ipc.open_file(sidecar_path(path)).read_all().column(LENGTH_FIELD.name).to_pylist() == lengths.tolist()
