"""Exploring and sharing a table from Python: the batched id search, most_similar, exports and the
dataset repository, each checked against a computation from its definition."""

from __future__ import annotations

import re
import shlex
import sys

import numpy as np
import pyarrow as pa
import pytest
import yaml
from conftest import REPO
from safetensors.numpy import load_file

import pelt.table.format
import pelt.table.keys
import pelt.table.similar
from pelt.cli import main
from pelt.table import EntityTable, write_table
from pelt.table.export import export_table, ids_path
from pelt.table.hub import dataset_card, upload_dataset, write_dataset_folder
from pelt.table.keys import as_strings, hash_one, key_hashes

H = 6
META = {
    "model": "some/model",
    "revision": "abc123",
    "model_digest": "d1g35t",
    "model_type": "roberta",
    "hidden_size": H,
    "representation": "r",
    "max_seq_len": 128,
    "norm": 7.0,
}


@pytest.fixture
def small_batches(monkeypatch) -> None:
    """Several record batches, which the readers of every row must join correctly."""
    monkeypatch.setattr(pelt.table.format, "CHUNK_ROWS", 16)


@pytest.fixture(params=["buckets", "binary search"])
def search(request, monkeypatch) -> None:
    """Either way to a hash among the sorted ones: scanning its bucket (always, however long), or
    ``np.searchsorted`` (always), which a bucket longer than ``_SCAN``, crafted, falls back to."""
    monkeypatch.setattr(pelt.table.keys, "_SCAN", 10**9 if request.param == "buckets" else -1)


@pytest.fixture
def table(tmp_path, small_batches) -> tuple[EntityTable, list[str], np.ndarray]:
    """100 entities (ids with spaces, one a zero sum) in 7 batches; the ids and sums in input order."""
    rng = np.random.default_rng(1)
    ids = [f"Entity {i}" for i in rng.permutation(100)]
    sums = rng.normal(size=(100, H)).astype(np.float32)
    sums[7] = 0
    write_table(tmp_path / "t" / "table.parquet", ids, sums, np.arange(100) + 1, 2 * np.arange(100) + 3, META)
    return EntityTable.open(tmp_path / "t" / "table.parquet"), ids, sums


def test_rows_find_every_id_and_nothing_else(tmp_path, small_batches, search):
    shared_key = [f"List of things {i}" for i in range(40)]  # ids of one 8-byte key: the binary search settles them
    ids = [
        "",
        "a",
        "ab",
        "abc",
        "abd",
        "b",
        "Zürich",
        "Zurich",
        "z",
        "\U0001f600",
        *shared_key,
        *(f"Q{i}" for i in range(60)),
    ]
    write_table(tmp_path / "t.parquet", ids, np.ones((len(ids), H)), [1] * len(ids), [1] * len(ids), META)
    table = EntityTable.open(tmp_path / "t.parquet")
    order = sorted(ids, key=str.encode)  # the byte order the table is sorted in
    assert table.rows(ids).tolist() == [order.index(i) for i in ids]
    absent = [
        "aa",
        "abcd",
        "0",
        "Q",
        "Q600",
        "\U0001f601",
        "zz",
        " ",
        "A",
        "List of",
        "List of things 5 ",
        "List of things",
    ]
    assert table.rows(absent, missing="zero").tolist() == [-1] * len(absent)  # few: one search each
    assert table.rows(absent * 2 + ids, missing="zero").tolist() == [-1] * 2 * len(absent) + table.rows(ids).tolist()
    assert table.rows([]).tolist() == []
    assert not any(name in table for name in absent) and all(name in table for name in ids)
    # the index's hash, by its definition, in numpy and in Python alike
    expected = [sum((b + 1) * 0x100000001B3**i for i, b in enumerate(k.encode())) % 2**64 for k in order]
    assert key_hashes(pa.array(order, pa.large_string())).tolist() == expected == [hash_one(k) for k in order]


def test_keys_of_one_hash_are_told_apart_by_their_strings(tmp_path, small_batches, monkeypatch, search):
    """A 64-bit polynomial hash has collisions that can be crafted: they cost time, never a wrong row."""
    monkeypatch.setattr(pelt.table.keys, "key_hashes", lambda strings: np.zeros(len(strings), np.uint64))
    monkeypatch.setattr(pelt.table.keys, "hash_one", lambda key: 0)
    ids = [f"E{i}" for i in range(40)]
    aliases = [[f"a{i % 7}", f"b{i}"] for i in range(40)]
    write_table(tmp_path / "t.parquet", ids, np.ones((40, H)), [1] * 40, np.arange(40) % 5, META, aliases=aliases)
    table = EntityTable.open(tmp_path / "t.parquet")
    order = sorted(ids)
    assert table.rows(ids).tolist() == [order.index(i) for i in ids]
    assert "E39" in table and "E40" not in table
    assert table.find(["a3", "b17", "B17", "nobody", "E5"]) == [
        "E24",
        "E17",
        None,
        None,
        "E5",
    ]  # a3: E3, E10, ..., E38; E24 most frequent
    assert table.find(["B17", "A3"], ignore_case=True) == ["E17", "E24"]


@pytest.mark.parametrize("colliding", [False, True])
def test_a_key_of_several_rows_names_the_most_frequent_then_the_first(tmp_path, small_batches, monkeypatch, colliding):
    """Ties of a hash are put in order of preference apart (the sort by hash leaves them in any order):
    the most frequent row, then the first, whether the keys are one (an alias of several entities)
    or only share a hash."""
    if colliding:
        monkeypatch.setattr(pelt.table.keys, "key_hashes", lambda strings: np.zeros(len(strings), np.uint64))
        monkeypatch.setattr(pelt.table.keys, "hash_one", lambda key: 0)
    ids = [f"E{i}" for i in range(40)]
    aliases = [[f"a{i % 7}"] for i in range(40)]
    write_table(tmp_path / "t.parquet", ids, np.ones((40, H)), [1] * 40, np.arange(40) % 5, META, aliases=aliases)
    table = EntityTable.open(tmp_path / "t.parquet")
    # a4: E4, E11, ..., E39, of which E4 and E39 are the most frequent (4): E39 is the first row ("E39" < "E4")
    assert table.find(["a4", "a3", "A4"], by=["alias"], ignore_case=True) == ["E39", "E24", "E39"]


def test_names_become_one_arrow_array_as_pa_array_makes_it():
    """The ASCII names' shortcut (one join) gives what ``pa.array`` gives, and anything else goes there."""
    for names in (["Paris", "", "Q90", "a b"], [], ["Zürich", "Paris"], ["Paris", None], ("x", "\U0001f600")):
        assert as_strings(names).equals(pa.array(list(names), pa.large_string())), names
    assert as_strings(["ab", "c"]).to_pylist() == ["ab", "c"] and key_hashes(as_strings(["ab", "c"])).tolist() == [
        hash_one("ab"),
        hash_one("c"),
    ]
    with pytest.raises(pa.ArrowTypeError):
        as_strings(["Paris", 3])


def test_most_similar_is_the_same_on_one_thread_or_several(table, monkeypatch):
    """Record batches spread over threads score as one thread scores them, to the bit."""
    table, ids, _ = table
    query = np.arange(H, dtype=np.float32) / 10
    got = {}
    for cpus in (1, 3):
        monkeypatch.setattr(pelt.table.similar, "_CPUS", cpus)
        pelt.table.similar._LENGTHS.pop(table, None)
        got[cpus] = pelt.table.similar.cosines(table, query / np.linalg.norm(query)), table.most_similar(ids[5], 30)
    assert got[1][0].tobytes() == got[3][0].tobytes() and got[1][1] == got[3][1]


def test_most_similar_is_the_brute_force_cosine(table):
    table, ids, sums = table
    lengths = np.linalg.norm(sums.astype(np.float64), axis=1)
    for query in (0, 42, 99):
        with np.errstate(invalid="ignore"):
            cosine = sums.astype(np.float64) @ sums[query] / (lengths * lengths[query])
        cosine[[query, 7]] = -np.inf  # itself and the zero sum are left out
        expected = np.argsort(-cosine, kind="stable")[:10]
        got = table.most_similar(ids[query], k=10)
        assert [e for e, _ in got] == [ids[i] for i in expected]
        np.testing.assert_allclose([c for _, c in got], cosine[expected], rtol=1e-5)
    assert len(table.most_similar(ids[0], k=500)) == 98  # all but itself and the zero sum
    with pytest.raises(ValueError, match="zero vector sum"):
        table.most_similar(ids[7])
    with pytest.raises(KeyError, match="not in table"):
        table.most_similar("Nobody")
    with pytest.raises(ValueError, match="k must be at least 1"):
        table.most_similar(ids[0], k=0)


def test_most_similar_breaks_ties_by_id_whatever_k(tmp_path, small_batches):
    """Six entities at one cosine from the query: every k lists the smallest ids first, so a
    shorter list is the start of a longer one."""
    ids = ["query", *(f"tie {c}" for c in "fbdaec"), "far"]
    sums = np.zeros((len(ids), H), np.float32)
    sums[:, 0] = 1.0
    sums[1:7, 1] = 1.0  # each tie at cosine 1/sqrt(2) from the query
    sums[7] = -sums[0]
    write_table(tmp_path / "t.parquet", ids, sums, [1] * len(ids), [1] * len(ids), META)
    table = EntityTable.open(tmp_path / "t.parquet")
    ranked = [[entity for entity, _ in table.most_similar("query", k=k)] for k in range(1, 8)]
    ties = sorted(f"tie {c}" for c in "fbdaec")
    for k, got in enumerate(ranked, 1):
        assert got == (ties + ["far"])[:k], (k, got)


def _read_word2vec(path) -> tuple[list[str], np.ndarray]:
    n, dim = map(int, path.read_text().splitlines()[0].split())
    rows = [line.split(" ") for line in path.read_text(encoding="utf-8").splitlines()[1:]]
    assert len(rows) == n and all(len(r) == dim + 1 for r in rows)
    return [r[0] for r in rows], np.array([r[1:] for r in rows], np.float32)


def test_exports_read_back_as_the_looked_up_vectors(tmp_path, table):
    table, ids, sums = table
    keep = [i for i in range(100) if i != 7]  # a zero sum has no looked-up vector: exports refuse it
    write_table(tmp_path / "ok.parquet", [ids[i] for i in keep], sums[keep], [1] * 99, [1] * 99, META)
    ok = EntityTable.open(tmp_path / "ok.parquet")
    order = list(ok.ids())
    assert export_table(ok, tmp_path / "v.txt", "word2vec") == [tmp_path / "v.txt"]
    keys, vectors = _read_word2vec(tmp_path / "v.txt")
    assert keys == [i.replace(" ", "_") for i in order]
    np.testing.assert_array_equal(vectors, ok.lookup(order))  # 9 digits: float32 exactly
    export_table(ok, tmp_path / "v.npy", "npy", norm=2.0)
    assert ids_path(tmp_path / "v.npy").read_text(encoding="utf-8").splitlines() == order
    np.testing.assert_array_equal(np.load(tmp_path / "v.npy"), ok.lookup(order, norm=2.0))
    export_table(ok, tmp_path / "v.safetensors", "safetensors")
    saved = load_file(tmp_path / "v.safetensors")
    np.testing.assert_array_equal(saved["vectors"], ok.lookup(order))
    assert ids_path(tmp_path / "v.safetensors").read_text(encoding="utf-8").splitlines() == order
    # every export as the user's other files: safetensors' writer alone made its file 0600
    modes = {p.name: p.stat().st_mode & 0o777 for p in tmp_path.glob("v.*")}
    assert len(set(modes.values())) == 1 and modes["v.safetensors"] & 0o044 == 0o044, modes
    export_table(table, tmp_path / "raw.npy", "npy", raw=True)  # raw sums: the zero one too
    np.testing.assert_array_equal(np.load(tmp_path / "raw.npy"), table.vector_sums(list(table.ids())))
    with pytest.raises(ValueError, match="zero vector sum for \\['Entity"):
        export_table(table, tmp_path / "bad.npy", "npy")


def test_exports_refuse_ids_the_format_would_garble(tmp_path):
    write_table(tmp_path / "a.parquet", ["New York", "New_York"], np.ones((2, H)), [1, 1], [1, 1], META)
    with pytest.raises(ValueError, match="differ only in spaces and underscores"):
        export_table(EntityTable.open(tmp_path / "a.parquet"), tmp_path / "a.txt", "word2vec")
    write_table(tmp_path / "b.parquet", ["line\nbreak"], np.ones((1, H)), [1], [1], META)
    with pytest.raises(ValueError, match="line break"):
        export_table(EntityTable.open(tmp_path / "b.parquet"), tmp_path / "b.npy", "npy")
    assert not (tmp_path / "a.txt").exists() and not (tmp_path / "b.npy").exists()


def _front_matter(card: str) -> dict:
    assert card.startswith("---\n")
    return yaml.safe_load(card.split("---\n")[1])


def test_the_dataset_folder_loads_and_its_card_says_what_the_table_is(tmp_path, table):
    table, ids, sums = table
    folder = write_dataset_folder(
        table, tmp_path / "repo", "you/t", corpus="Simple English Wikipedia", language="simple"
    )
    assert folder == str(tmp_path / "repo") and sorted(p.name for p in (tmp_path / "repo").iterdir()) == [
        "README.md",
        "table.parquet",
    ]
    loaded = EntityTable.load(tmp_path / "repo")
    assert loaded.build_id == table.build_id
    np.testing.assert_array_equal(loaded.vector_sums(ids[:5]), sums[:5])
    card = (tmp_path / "repo" / "README.md").read_text(encoding="utf-8")
    fields = _front_matter(card)
    assert fields["model"] == "some/model" and fields["model_digest"] == "d1g35t" and fields["revision"] == "abc123"
    assert fields["corpus"] == "Simple English Wikipedia" and fields["language"] == ["simple"]
    assert fields["license"] == "unknown" and "| licence | not recorded by the table" in card
    assert (fields["entities"], fields["hidden_size"], fields["norm"]) == (100, H, 7.0)
    assert fields["sentences"] == sum(range(1, 101)) and fields["mentions"] == sum(2 * i + 3 for i in range(100))
    assert fields["configs"] == [{"config_name": "default", "data_files": "table.parquet"}]
    assert 'EntityTable.load("you/t")' in card and str(tmp_path) not in card  # the repo, not where it was written
    # what the table's metadata records is the default; the arguments override it
    write_table(tmp_path / "m.parquet", ["a"], np.ones((1, H)), [1], [1], dict(META, corpus_license="cc-by-sa-4.0"))
    recorded = _front_matter(dataset_card(EntityTable.open(tmp_path / "m.parquet"), "you/t"))
    assert recorded["license"] == "cc-by-sa-4.0" and "corpus" not in recorded and "language" not in recorded
    card = dataset_card(EntityTable.open(tmp_path / "m.parquet"), "you/t", license="cc0-1.0", language="en")
    assert _front_matter(card)["license"] == "cc0-1.0" and 'EntityTable.load("you/t")' in card


def test_uploading_without_huggingface_hub_says_how_to_get_it(table, monkeypatch):
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # an import of it fails
    with pytest.raises(ImportError, match="pip install huggingface_hub, or write the folder with --local"):
        upload_dataset(table[0], "you/t")


def test_card_values_are_yaml_whatever_the_characters(tmp_path):
    meta = dict(META, model='odd: "name" # with\nYAML syntax')
    write_table(tmp_path / "t.parquet", ["a"], np.ones((1, H)), [1], [1], meta)
    card = dataset_card(EntityTable.open(tmp_path / "t.parquet"), "x", corpus="a: b")
    assert _front_matter(card)["model"] == meta["model"] and _front_matter(card)["corpus"] == "a: b"


def _documented(title: str) -> list[tuple[str, str]]:
    """The (language, code) blocks of a section of docs/using-tables.md, in order."""
    section = (REPO / "docs" / "using-tables.md").read_text(encoding="utf-8").split(f"\n## {title}\n")[1]
    return re.findall(r"```(\w+)\n(.*?)```", section.split("\n## ")[0], re.S)


def test_the_documented_examples_run(tmp_path, monkeypatch, capsys):
    rng = np.random.default_rng(2)
    ids = ["Heireith", "Sinerkven", *(f"Person {i}" for i in range(30))]
    sums = rng.normal(size=(len(ids), H)).astype(np.float32)
    path = tmp_path / "results/tables/wikipedia/demo/table.parquet"
    qids = ["Q990100298", *[None] * 31]
    write_table(path, ids, sums, [1] * 32, [2] * 32, META, qids=qids, aliases=[[] for _ in ids])
    monkeypatch.chdir(tmp_path)
    blocks = _documented("Explore, export and share")
    assert [language for language, _ in blocks] == ["python", "bash", "python"]
    namespace: dict = {}
    for language, code in blocks:
        if language == "python":
            exec(code, namespace)
            continue
        for line in code.splitlines():
            command = shlex.split(line)
            assert command[0] == "pelt" and main(command[1:]) == 0, line
    table = namespace["table"]
    out = capsys.readouterr().out.splitlines()
    assert out[:5] == out[5:10]  # by the id and by the QID
    assert [line.split("\t")[0] for line in out[:5]] == [e for e, _ in table.most_similar("Heireith", k=5)]
    order = list(table.ids())
    assert namespace["ids"] == order
    np.testing.assert_array_equal(namespace["vectors"], table.lookup(order))
    np.testing.assert_array_equal(namespace["sums"], table.vector_sums(order))
    card = (tmp_path / "shared" / "demo" / "README.md").read_text(encoding="utf-8")
    assert _front_matter(card)["corpus"] == "demo world dump" and _front_matter(card)["language"] == ["en"]


def test_most_similar_ranks_alike_by_either_dot_product(table, monkeypatch):
    """BLAS's dot a row (numpy 2's vecdot, the one used) and einsum's loop (numpy 1.26's) rank alike."""
    table, ids, _ = table
    got = {}
    for name, dot in (("vecdot", pelt.table.similar._DOT), ("einsum", pelt.table.similar._einsum_dot)):
        monkeypatch.setattr(pelt.table.similar, "_DOT", dot)
        got[name] = table.most_similar(ids[3], k=20)
    assert [e for e, _ in got["vecdot"]] == [e for e, _ in got["einsum"]]
    np.testing.assert_allclose([c for _, c in got["vecdot"]], [c for _, c in got["einsum"]], rtol=1e-5)
