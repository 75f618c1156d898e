"""EntityTable: the Parquet contract, memory-mapped lookup, model checks and exact merging."""

from __future__ import annotations

import hashlib
import json
import os
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pelt.table.format
import pelt.table.keys
import pelt.table.lookup
from pelt.encoding.models import load_masked_lm
from pelt.logs import corpus_language
from pelt.table import EntityTable, merge_tables, write_table
from pelt.table.format import sidecar_path

H = 8
META = {
    "model": "some/model",
    "revision": "abc123",
    "model_type": "roberta",
    "hidden_size": H,
    "representation": "lm_head.dense>gelu>lm_head.layer_norm at the mask",
    "max_seq_len": 128,
    "norm": 7.0,
}
IDS = ["Warsaw", "Paris", "Zürich", "Star Trek: Voyager", "Ada_Lovelace"]


@pytest.fixture
def sums() -> np.ndarray:
    return np.random.default_rng(0).normal(size=(len(IDS), H)).astype(np.float32)


@pytest.fixture
def table_path(tmp_path, sums):
    path = tmp_path / "table.parquet"
    write_table(path, IDS, sums, [1, 2, 3, 4, 5], [10, 20, 30, 40, 50], META)
    return path


def test_parquet_follows_the_contract(table_path, sums):
    table = pq.read_table(table_path)
    assert table.schema.names == ["entity_id", "n_sentences", "frequency", "vector_sum"]
    assert table.schema.field("vector_sum").type == pa.list_(pa.float32(), H)
    assert table.schema.field("n_sentences").type == pa.int64() == table.schema.field("frequency").type
    assert table.column("entity_id").to_pylist() == sorted(IDS)
    assert json.loads(table.schema.metadata[b"pelt"]) == META
    row = table.to_pylist()[sorted(IDS).index("Paris")]
    assert (row["n_sentences"], row["frequency"]) == (2, 20)
    np.testing.assert_array_equal(np.array(row["vector_sum"], np.float32), sums[1])


def test_lookup_contains_len_metadata(table_path, sums):
    table = EntityTable.open(table_path)
    assert len(table) == 5 and table.hidden_size == H and table.metadata == META
    assert "Zürich" in table and "Star Trek: Voyager" in table and "Zurich" not in table and 3 not in table
    assert list(table.ids()) == sorted(IDS)
    np.testing.assert_array_equal(table.vector_sums(["Zürich", "Warsaw"]), sums[[2, 0]])
    assert [c.tolist() for c in table.counts(["Ada_Lovelace"])] == [[5], [50]]
    e = table.lookup(["Paris", "Paris", "Warsaw"])
    assert e.dtype == np.float32 and e.shape == (3, H)
    np.testing.assert_allclose(np.linalg.norm(e, axis=1), 7.0, rtol=1e-6)
    np.testing.assert_allclose(e[0], 7.0 * sums[1] / np.linalg.norm(sums[1]), rtol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(table.lookup(["Paris"], norm=3.0)), 3.0, rtol=1e-6)
    with pytest.raises(KeyError, match=r"2 entities not in table .*\['nope', 'Nope'\]"):
        table.lookup(["Paris", "nope", "Nope"])
    zero = table.lookup(["nope", "Paris"], missing="zero")
    assert not zero[0].any() and np.allclose(zero[1], e[0])


def test_lookup_reads_the_sidecar_across_record_batches(tmp_path, monkeypatch):
    monkeypatch.setattr(pelt.table.format, "CHUNK_ROWS", 3)  # several batches and row groups
    ids = [f"E{i:03d}" for i in range(10)][::-1]
    vectors = np.arange(10 * H, dtype=np.float32).reshape(10, H) + 1
    write_table(tmp_path / "t.parquet", ids, vectors, range(10), range(10), META)
    table = EntityTable.open(tmp_path / "t.parquet")
    assert len(table._batches) == 4 and pq.ParquetFile(tmp_path / "t.parquet").num_row_groups == 4
    assert all(i in table for i in ids) and "E010" not in table and "E" not in table
    np.testing.assert_array_equal(table.vector_sums(["E000", "E005", "E009"]), vectors[[9, 4, 0]])


def test_sidecar_is_rebuilt_when_missing_or_stale(table_path, tmp_path, sums, monkeypatch):
    sidecar_path(table_path).unlink()
    assert EntityTable.open(table_path).vector_sums(["Paris"]).tolist() == [sums[1].tolist()]
    assert sidecar_path(table_path).exists()
    # a newer table written elsewhere and copied over this one: the old sidecar must not be used
    write_table(tmp_path / "new" / "table.parquet", ["Paris"], np.ones((1, H)), [1], [1], META)
    shutil.copy(tmp_path / "new" / "table.parquet", table_path)
    assert list(EntityTable.open(table_path).ids()) == ["Paris"]
    # a directory where no sidecar can be written: one in the user's private cache is used
    monkeypatch.setattr(pelt.table.format, "sidecar_path", lambda p: table_path / "cannot" / "be.arrow")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    table = EntityTable.open(table_path)
    assert list(table.ids()) == ["Paris"] and len(os.listdir(tmp_path / "cache" / "pelt" / "tables")) == 1


def test_a_sidecar_is_used_only_when_it_verifies(table_path, tmp_path, sums, monkeypatch):
    """A sidecar planted in the cache for a table copied without its own, or one with flipped bytes,
    is never served: the sidecar is rebuilt from the Parquet file."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    sidecar = sidecar_path(table_path)
    data = bytearray(sidecar.read_bytes())
    at = data.index(sums[1].tobytes())  # Paris's vector
    data[at : at + 64] = bytes(64)
    sidecar.write_bytes(data)
    np.testing.assert_array_equal(EntityTable.open(table_path).vector_sums(["Paris"]), sums[1:2])
    # a table copied alone where no sidecar can be written; another table's sidecar planted in the
    # cache under its build id and under its content digest: neither is served
    write_table(tmp_path / "other" / "table.parquet", IDS, sums * 2, [1] * 5, [1] * 5, META)
    other_sidecar = sidecar_path(tmp_path / "other" / "table.parquet")
    copy = tmp_path / "copy" / "table.parquet"
    copy.parent.mkdir()
    shutil.copy(table_path, copy)
    monkeypatch.setattr(pelt.table.format, "sidecar_path", lambda p: table_path / "cannot" / "be.arrow")
    cache = tmp_path / "cache" / "pelt"
    (cache / "tables").mkdir(parents=True, exist_ok=True)
    for private in (True, False):  # a private cache is verified; one others can write is not used
        for name in (pq.read_schema(copy).metadata[b"pelt_build"].decode(), pelt.table.format.file_digest(copy)):
            shutil.copy(other_sidecar, cache / "tables" / f"{name}.arrow")
        for folder in (cache, cache / "tables"):
            folder.chmod(0o700 if private else 0o777)
        np.testing.assert_array_equal(EntityTable.open(copy).vector_sums(["Paris"]), sums[1:2])
        assert (cache.stat().st_mode & 0o777, (cache / "tables").stat().st_mode & 0o777) == (0o700, 0o700)


def test_a_verified_table_is_not_verified_again_until_a_file_changes(table_path, tmp_path, sums, monkeypatch):
    """Comparing a sidecar with its Parquet file on every open would cost minutes for millions of rows:
    once verified, a table opens from a stat of both (ctime, size, inode), and any change of either
    verifies again."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    compared = []
    same_rows = pelt.table.format._same_rows
    monkeypatch.setattr(pelt.table.format, "_same_rows", lambda *args: compared.append(args[1]) or same_rows(*args))
    for _ in range(3):
        np.testing.assert_array_equal(EntityTable.open(table_path).vector_sums(["Paris"]), sums[1:2])
    assert compared == [table_path]  # the first open only
    sidecar = sidecar_path(table_path)
    data = bytearray(sidecar.read_bytes())
    at = data.index(sums[1].tobytes())
    data[at : at + 64] = bytes(64)
    sidecar.write_bytes(data)  # same size, same inode: the ctime tells
    np.testing.assert_array_equal(EntityTable.open(table_path).vector_sums(["Paris"]), sums[1:2])
    assert compared == [table_path, table_path]


def test_a_stamped_open_reads_the_schema_from_its_stamp(table_path, tmp_path, monkeypatch):
    """Opening costs what np.load does (issue 57): a verified pair opens without parsing the Parquet
    footer, from the schema its private stamp holds; a stamp from before stamps held it (empty) is
    filled on the next open, and an empty sidecar is rebuilt like any damaged one."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    sidecar_path(table_path).write_bytes(b"")
    assert EntityTable.open(table_path).metadata == META  # rebuilt, verified, stamped
    (stamp,) = (tmp_path / "cache" / "pelt" / "verified-rows").iterdir()
    assert pa.ipc.read_schema(pa.py_buffer(stamp.read_bytes())).equals(pq.read_schema(table_path), check_metadata=True)
    stamp.write_bytes(b"")
    assert EntityTable.open(table_path).metadata == META and stamp.read_bytes()  # read from the file, kept
    monkeypatch.setattr(pelt.table.format.pq, "read_schema", lambda path: pytest.fail("parsed the footer"))
    table = EntityTable.open(table_path)
    assert (
        table.metadata == META
        and table.build_id == pq.ParquetFile(table_path).schema_arrow.metadata[b"pelt_build"].decode()
    )


def test_a_sidecar_is_built_from_the_batches_iter_batches_cuts(tmp_path, monkeypatch):
    """Building or verifying a sidecar reads a row group at a time (``iter_batches`` kept every batch it
    had read: the whole table in memory), into the batches ``iter_batches`` cut, whatever the row groups."""
    monkeypatch.setattr(pelt.table.format, "CHUNK_ROWS", 16)
    rows = pa.table({"a": range(100), "b": [str(i) for i in range(100)]})
    for group in (7, 10, 16, 40, 100):
        pq.write_table(rows, tmp_path / "t.parquet", row_group_size=group)
        want = pq.ParquetFile(tmp_path / "t.parquet").iter_batches(batch_size=16)
        got = pelt.table.format._parquet_batches(tmp_path / "t.parquet")
        assert [b.to_pydict() for b in got] == [b.to_pydict() for b in want], group


def test_rows_of_the_ids_find_returned_are_not_searched_again(ids_table, monkeypatch):
    """``lookup(find(names))`` searches once: the rows of find's answer are kept, and used for that very
    list only while it is unchanged."""
    found = ids_table.find(["Q90", "nobody", "Ada"])
    searched: list[int] = []
    real = pelt.table.keys.KeyIndex.find
    monkeypatch.setattr(pelt.table.keys.KeyIndex, "find", lambda i, q: searched.append(len(q)) or real(i, q))
    np.testing.assert_array_equal(ids_table.lookup(found, missing="zero")[0], ids_table.lookup(["Paris"])[0])
    assert ids_table.rows(found, missing="zero").tolist() == [1, -1, 0] and searched == [1]
    with pytest.raises(KeyError, match=r"\[None\]"):
        ids_table.rows(found)
    found[1] = "Warsaw"  # changed: searched again
    assert ids_table.rows(found).tolist() == [1, 3, 0] and searched == [1, 3]
    assert ids_table.rows(list(found)).tolist() == [1, 3, 0] and searched == [1, 3, 3]


def _forge_sidecar(parquet, vectors: np.ndarray, metadata: dict, lengths: np.ndarray | None = None) -> None:
    """A sidecar of other rows and metadata, beside an untouched Parquet file, with every digest a sidecar
    could carry consistent: that of the Parquet file's bytes and of each batch's own bytes; and the
    lengths of its vectors, unless ``lengths`` are given."""
    rows = pq.read_table(parquet)
    ids = rows.schema.field("entity_id").with_type(pa.large_string())
    rows = rows.set_column(0, ids, rows.column("entity_id").cast(pa.large_string()))
    vectors = vectors.astype(np.float32)
    flat = pa.array(vectors.ravel())
    rows = rows.set_column(3, rows.schema.field("vector_sum"), pa.FixedSizeListArray.from_arrays(flat, H))
    lengths = np.linalg.norm(vectors.astype(np.float64), axis=1) if lengths is None else lengths
    rows = rows.append_column(pelt.table.format.LENGTH_FIELD, pa.array(lengths, pa.float64()))
    schema_metadata = {
        **rows.schema.metadata,
        b"pelt": json.dumps(metadata).encode(),
        b"pelt_parquet_sha256": pelt.table.format.file_digest(parquet).encode(),
    }
    rows = rows.replace_schema_metadata(schema_metadata)
    with pa.ipc.new_file(sidecar_path(parquet), rows.schema) as writer:
        for batch in rows.to_batches():
            digest = hashlib.sha256(batch.serialize()).hexdigest().encode()
            writer.write_batch(batch, custom_metadata={b"pelt_sha256": digest})


def test_a_forged_sidecar_is_never_served(table_path, tmp_path, sums, monkeypatch):
    """The table is its Parquet file: a sidecar planted beside it, self-consistent digests and all,
    gives neither its vectors nor its metadata (model digest, norm), which would defeat the model
    check; its rows are compared with the Parquet file's, and its metadata is never read."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    forged_meta = {**META, "model": "other/model", "model_digest": "f" * 64, "norm": 1.0}
    _forge_sidecar(table_path, np.full_like(sums, -999.0), forged_meta)
    table = EntityTable.open(table_path)
    np.testing.assert_array_equal(table.vector_sums(sorted(IDS)), sums[np.argsort(IDS)])
    assert table.metadata == META and table.norm == 7.0
    rebuilt = pa.ipc.open_file(sidecar_path(table_path)).read_all().column("vector_sum")
    assert rebuilt.to_pylist() == sums[np.argsort(IDS)].tolist()  # rebuilt from the Parquet file
    # the Parquet file's very rows with other metadata: the rows may be served, the metadata never
    _forge_sidecar(table_path, sums[np.argsort(IDS)], forged_meta)
    table = EntityTable.open(table_path)
    assert table.metadata == META and table.build_id == pq.read_schema(table_path).metadata[b"pelt_build"].decode()
    # the vectors compared bit for bit: a zero made -0.0 is not the Parquet file's
    zeroed = sums.copy()
    zeroed[:, 0] = 0.0
    write_table(table_path, IDS, zeroed, [1] * 5, [1] * 5, META)
    flipped = zeroed[np.argsort(IDS)]
    flipped[:, 0] = -0.0
    _forge_sidecar(table_path, flipped, META)
    assert not np.signbit(EntityTable.open(table_path).vector_sums(IDS)[:, 0]).any()


def test_a_table_written_without_a_build_id_is_named_by_its_bytes(table_path, tmp_path):
    """Merging records its inputs' build ids; a Parquet file another tool wrote without one gets the
    SHA-256 of its bytes, the same at every open (not an id a sidecar made up)."""
    rows = pq.read_table(table_path)
    path = tmp_path / "foreign" / "table.parquet"
    path.parent.mkdir()
    pq.write_table(rows.replace_schema_metadata({b"pelt": rows.schema.metadata[b"pelt"]}), path)
    sidecar_path(path).unlink(missing_ok=True)
    first = EntityTable.open(path).build_id
    sidecar_path(path).unlink()
    assert first == EntityTable.open(path).build_id == pelt.table.format.file_digest(path)


def test_non_finite_vectors_or_norm_are_refused_on_open(table_path, tmp_path, sums, monkeypatch):
    """write_table refuses NaN, and so does open, whoever wrote the file: a vector with NaN or inf, a
    null vector, or a norm that is NaN, infinite or not positive is one line naming the rows or the
    norm, with the sidecar beside it or without, and no sidecar is built."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rows = pq.read_table(table_path)
    ordered = sums[np.argsort(IDS)]  # the rows as stored: Ada_Lovelace, Paris, Star Trek: Voyager, ...
    path = tmp_path / "bad" / "table.parquet"
    path.parent.mkdir()
    for value in (np.nan, np.inf, -np.inf):
        bad = ordered.copy()
        bad[[1, 2], 3] = value
        vectors = pa.FixedSizeListArray.from_arrays(pa.array(bad.ravel()), H)
        pq.write_table(rows.set_column(3, rows.schema.field("vector_sum"), vectors), path)
        for with_sidecar in (False, True):
            if with_sidecar:
                _forge_sidecar(path, bad, META)
            with pytest.raises(ValueError) as err:
                EntityTable.open(path)
            assert str(err.value) == (
                f"table {path}: vector_sum is NaN, inf or null in rows 1 ('Paris'), 2 ('Star Trek: Voyager')"
            )
            assert sidecar_path(path).exists() == with_sidecar and not (tmp_path / "cache" / "pelt" / "tables").exists()
        sidecar_path(path).unlink()
    vectors = pa.array([None, *ordered[1:].tolist()], pa.list_(pa.float32(), H))
    pq.write_table(rows.set_column(3, pa.field("vector_sum", vectors.type), vectors), path)
    with pytest.raises(ValueError, match=r"^table .*: vector_sum is NaN, inf or null in rows 0 \('Ada_Lovelace'\)$"):
        EntityTable.open(path)
    for norm in (float("nan"), float("inf"), 0.0, -7.0):
        meta = json.dumps({**META, "norm": norm}).encode()
        pq.write_table(rows.replace_schema_metadata({**rows.schema.metadata, b"pelt": meta}), path)
        with pytest.raises(ValueError, match=rf"^{path} is not a valid .*: metadata norm {norm!r} is not a finite"):
            EntityTable.open(path)
        with pytest.raises(ValueError, match="is not a finite positive number"):
            write_table(tmp_path / "t.parquet", IDS, sums, [1] * 5, [1] * 5, {**META, "norm": norm})


def test_crafted_metadata_is_one_clear_error(tmp_path, sums, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "t.parquet"
    write_table(path, IDS, sums, [1] * 5, [1] * 5, META)
    table = pq.read_table(path)
    crafted = {
        b"not json": b"{",
        b"a list": b"[1]",
        b"no norm": json.dumps({k: v for k, v in META.items() if k != "norm"}).encode(),
        b"wrong width": json.dumps({**META, "hidden_size": H + 1}).encode(),
        b"width not a number": json.dumps({**META, "hidden_size": [H]}).encode(),
    }
    for case, meta in crafted.items():
        bad = tmp_path / f"{case.decode().replace(' ', '_')}.parquet"
        pq.write_table(table.replace_schema_metadata({b"pelt": meta, b"pelt_build": b"../../x"}), bad)
        with pytest.raises(ValueError, match=f"{bad} is not a valid pelt entity table"):
            EntityTable.open(bad)
    assert not list(tmp_path.glob("**/x.arrow")) and not (tmp_path.parent / "x.arrow").exists()
    bad = tmp_path / "ints.parquet"  # vectors of another type
    pq.write_table(table.set_column(3, "vector_sum", pa.array([[1]] * 5, pa.list_(pa.int64(), 1))), bad)
    with pytest.raises(ValueError, match=f"{bad} is not a valid pelt entity table: vector_sum"):
        EntityTable.open(bad)


def test_write_table_rejects_bad_input(tmp_path, sums):
    path = tmp_path / "t.parquet"
    with pytest.raises(ValueError, match="not strictly increasing"):
        write_table(path, ["a", "b", "a", "c", "d"], sums, [1] * 5, [1] * 5, META)
    with pytest.raises(ValueError, match="lacks \\['norm'\\]"):
        write_table(path, IDS, sums, [1] * 5, [1] * 5, {k: v for k, v in META.items() if k != "norm"})
    with pytest.raises(ValueError, match="hidden_size 8 != vector width 4"):
        write_table(path, IDS, sums[:, :4], [1] * 5, [1] * 5, META)
    with pytest.raises(ValueError, match="do not line up"):
        write_table(path, IDS[:4], sums, [1] * 5, [1] * 5, META)
    bad = sums.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        write_table(path, IDS, bad, [1] * 5, [1] * 5, META)
    assert not path.exists() and not sidecar_path(path).exists()
    pq.write_table(pa.table({"entity_id": ["a"]}), path)
    with pytest.raises(ValueError, match="not a pelt entity table"):
        EntityTable.open(path)
    with pytest.raises(FileNotFoundError):
        EntityTable.open(tmp_path / "absent.parquet")


def test_merge_adds_sums_and_counts(tmp_path, sums):
    write_table(tmp_path / "a.parquet", IDS[:3], sums[:3], [1, 2, 3], [10, 20, 30], META)
    write_table(tmp_path / "b.parquet", IDS[1:], sums[1:] * 2, [4, 5, 6, 7], [20, 30, 40, 50], META)
    with pytest.raises(ValueError, match=r"2 entities are in more than one table \('Paris', 'Zürich'\).*sum_overlap"):
        merge_tables([tmp_path / "a.parquet", tmp_path / "b.parquet"], tmp_path / "refused.parquet")
    assert not (tmp_path / "refused.parquet").exists()
    merged = merge_tables(
        [tmp_path / "a.parquet", tmp_path / "b.parquet"], tmp_path / "m" / "table.parquet", sum_overlap=True
    )
    assert list(merged.ids()) == sorted(IDS) and merged.metadata == META
    expected = np.stack([sums[0], sums[1] + 2 * sums[1], sums[2] + 2 * sums[2], 2 * sums[3], 2 * sums[4]])
    np.testing.assert_array_equal(merged.vector_sums(IDS), expected)  # one float32 rounding of an exact sum
    assert merged.counts(IDS)[0].tolist() == [1, 2 + 4, 3 + 5, 6, 7]
    assert merged.counts(IDS)[1].tolist() == [10, 20, 30, 40, 50]  # shards carry the same frequency: max
    summed = EntityTable.open(tmp_path / "a.parquet").merge(
        tmp_path / "b.parquet", out_path=tmp_path / "s.parquet", frequency="sum", sum_overlap=True
    )
    assert summed.counts(["Paris", "Warsaw"])[1].tolist() == [40, 10]
    other = dict(META, max_seq_len=64)
    write_table(tmp_path / "c.parquet", ["x"], sums[:1], [1], [1], other)
    with pytest.raises(ValueError, match="max_seq_len differs"):
        merge_tables([tmp_path / "a.parquet", tmp_path / "c.parquet"], tmp_path / "bad.parquet")


def test_a_merged_table_records_its_corpus_and_language(tmp_path, sums):
    """The workflow's merge names the corpus and its language (read from the corpus jobs' counts),
    which a multilingual model's tables need to tell apart."""
    for language, name in (("de", "a"), ("de", "b"), ("ja", "c")):
        (tmp_path / f"{name}.json").write_text(
            json.dumps({"stage": "corpus", "details": {"site": {"language": language, "source": "xml:lang"}}})
        )
    language = corpus_language([tmp_path / "a.json", tmp_path / "b.json"])
    write_table(tmp_path / "a.parquet", IDS[:3], sums[:3], [1, 2, 3], [10, 20, 30], META)
    corpus = {"corpus": "dewiki", "language": language}
    merged = merge_tables([tmp_path / "a.parquet"], tmp_path / "m.parquet", corpus=corpus)
    assert merged.metadata == {**META, "corpus": "dewiki", "language": "de"}
    with pytest.raises(ValueError, match=r"one language, found de: .*a.json.*; ja: .*c.json"):
        corpus_language([tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"])
    (tmp_path / "old.json").write_text(json.dumps({"stage": "corpus", "counts": {}}))
    with pytest.raises(ValueError, match="old.json: records no corpus language"):
        corpus_language([tmp_path / "old.json"])


def test_check_model(tiny_model_dirs, tmp_path, monkeypatch):  # noqa: F811
    model, _ = load_masked_lm(str(tiny_model_dirs["roberta"]))
    h = model.config.hidden_size
    meta = dict(META, model=str(tiny_model_dirs["roberta"]), hidden_size=h)
    write_table(tmp_path / "ok.parquet", ["a"], np.ones((1, h)), [1], [1], meta)
    EntityTable.open(tmp_path / "ok.parquet").check_model(model)
    monkeypatch.chdir(tiny_model_dirs["roberta"].parent)
    write_table(tmp_path / "rel.parquet", ["a"], np.ones((1, h)), [1], [1], dict(meta, model="./roberta"))
    EntityTable.open(tmp_path / "rel.parquet").check_model(model)  # same directory, spelled differently
    write_table(tmp_path / "name.parquet", ["a"], np.ones((1, h)), [1], [1], dict(meta, model="roberta-base"))
    with pytest.raises(ValueError, match="built for model 'roberta-base'"):
        EntityTable.open(tmp_path / "name.parquet").check_model(model)
    write_table(tmp_path / "h.parquet", ["a"], np.ones((1, H)), [1], [1], dict(meta, hidden_size=H))
    with pytest.raises(ValueError, match=f"H={H} vectors .* hidden size {h}"):
        EntityTable.open(tmp_path / "h.parquet").check_model(model)


QIDS = ["Q270", "Q90", None, "Q18", "Q7259"]  # per IDS; Zürich's unknown
ALIASES = [["Warszawa", "Paris"], ["Paris, France", "Ville Lumière"], ["Zurich"], [], ["Ada Lovelace", "Ada"]]


@pytest.fixture
def ids_table(tmp_path, sums) -> EntityTable:
    # "Paris" is also an alias of Warsaw (frequency 10): the title of Paris (frequency 20) still wins by id
    write_table(
        tmp_path / "ids.parquet", IDS, sums, [1, 2, 3, 4, 5], [10, 20, 30, 40, 50], META, qids=QIDS, aliases=ALIASES
    )
    return EntityTable.open(tmp_path / "ids.parquet")


def test_ids_columns_follow_the_contract(ids_table, table_path):
    table = pq.read_table(ids_table.path)
    assert table.schema.names == ["entity_id", "n_sentences", "frequency", "vector_sum", "qid", "aliases"]
    assert table.schema.field("aliases").type == pa.list_(pa.string())
    rows = {r["entity_id"]: (r["qid"], r["aliases"]) for r in table.to_pylist()}
    assert rows == {e: (q, a) for e, q, a in zip(IDS, QIDS, ALIASES)}  # sorted by id, still each its own
    assert ids_table.qids(["Zürich", "Warsaw"]) == [None, "Q270"]
    assert ids_table.aliases(["Star Trek: Voyager", "Ada_Lovelace"]) == [[], ["Ada Lovelace", "Ada"]]
    assert list(ids_table.id_rows())[0] == ("Ada_Lovelace", "Q7259", ["Ada Lovelace", "Ada"])
    plain = EntityTable.open(table_path)  # a table written without ids has neither column
    assert not plain.has_ids and plain.qids(["Paris"]) == [None] and "qid" not in pq.read_schema(table_path).names
    assert plain.find(["Paris", "Q90"]) == ["Paris", None]  # by default, what the table has: its ids
    with pytest.raises(ValueError, match="has no qid/aliases columns"):
        plain.find(["Q90"], by=["qid"])
    assert plain.find(["Paris", "paris"], by=["id"], ignore_case=True) == ["Paris", "Paris"]


def test_find_by_title_qid_or_alias_and_ignoring_case(ids_table):
    names = ["Paris", "Q270", "Warszawa", "Ada", "zurich", "Q1", "paris, france"]
    assert ids_table.find(names) == ["Paris", "Warsaw", "Warsaw", "Ada_Lovelace", None, None, None]
    assert ids_table.find(names, ignore_case=True) == [
        "Paris",
        "Warsaw",
        "Warsaw",
        "Ada_Lovelace",
        "Zürich",
        None,
        "Paris",
    ]
    assert ids_table.find(["Paris"], by=["alias"]) == ["Warsaw"]  # only Warsaw has the alias "Paris"
    assert ids_table.find(["Q90", "Paris"], by=["qid"]) == ["Paris", None]
    assert ids_table.find(["ada lovelace"], by=["alias", "id"], ignore_case=True) == ["Ada_Lovelace"]
    with pytest.raises(ValueError, match="expected id, qid or alias"):
        ids_table.find(["Paris"], by=["title"])


def test_an_alias_of_several_entities_names_the_most_frequent(tmp_path, sums):
    write_table(tmp_path / "t.parquet", IDS[:3], sums[:3], [1, 1, 1], [5, 50, 50], META, aliases=[["X"], ["X"], ["X"]])
    table = EntityTable.open(tmp_path / "t.parquet")
    assert table.find(["X", "x"], ignore_case=True) == ["Paris", "Paris"]  # 50 mentions; tie with Zürich: first id


def test_merge_keeps_the_ids_or_takes_them_from_an_ids_file(tmp_path, sums, ids_table, table_path):
    shard = tmp_path / "shard.parquet"
    write_table(shard, ["Berlin"], sums[:1], [1], [3], META)
    merged = merge_tables([shard, ids_table], tmp_path / "merged.parquet")
    assert merged.has_ids and merged.qids(["Berlin", "Paris"]) == [None, "Q90"]
    assert merged.find(["Ville Lumière"]) == ["Paris"]
    ids_file = tmp_path / "ids.parquet.d"
    ids_file.mkdir()  # a folder of part files, as Spark writes the linking stage's ids
    pq.write_table(
        pa.table({"entity_id": ["Paris", "Rome"], "qid": ["Q90", "Q220"], "aliases": [["Lutetia"], []]}),
        ids_file / "part-0.parquet",
    )
    merged = merge_tables([table_path], tmp_path / "with_ids.parquet", ids=ids_file)
    assert merged.qids(["Paris", "Warsaw"]) == ["Q90", None] and merged.find(["Lutetia", "Rome"]) == ["Paris", None]
    np.testing.assert_array_equal(merged.vector_sums(["Paris"]), EntityTable.open(table_path).vector_sums(["Paris"]))


def test_finding_and_looking_up_read_only_the_rows_asked_for(ids_table, monkeypatch):
    """Memory of a lookup is O(ids), never O(rows x H): finding by QID or alias builds its index from the
    id columns and the frequency column, and reads no vector; a lookup reads the rows it returns."""
    gathered: list[int] = []
    real = pelt.table.lookup._FileRows.gather
    monkeypatch.setattr(
        pelt.table.lookup._FileRows,
        "gather",
        lambda self, at, rows, c: gathered.append(len(rows)) or real(self, at, rows, c),
    )
    found = ids_table.find(["Q90", "Ville Lumière", "nobody"], by=["qid", "alias"], ignore_case=True)
    assert found[:2] == ["Paris", "Paris"] and gathered == []
    ids_table.lookup(["Paris", "Warsaw"])
    assert gathered == [2]
