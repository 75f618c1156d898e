"""Control tables: the permuted one moves every vector to another entity, the random one keeps only
the norms; ids, counts and metadata stay, so a control is scored exactly as the table is."""

from __future__ import annotations

import numpy as np
import pytest

from pelt.eval.controls import control_vectors, derangement, within_kinds, write_control_table
from pelt.table import EntityTable, write_table

H = 8
META = {"model": "m", "revision": "r", "hidden_size": H, "representation": "x", "max_seq_len": 16, "norm": 3.0}
IDS = [f"e{i}" for i in range(40)]


@pytest.mark.parametrize("n", [2, 3, 40, 1001])
def test_derangement_is_a_permutation_without_fixed_points(n):
    for seed in range(5):
        perm = derangement(n, np.random.default_rng(seed))
        assert sorted(perm.tolist()) == list(range(n))
        assert not (perm == np.arange(n)).any()


def test_control_vectors():
    sums = np.random.default_rng(1).normal(size=(len(IDS), H)).astype(np.float32) * np.arange(1, 41)[:, None]
    permuted = control_vectors(sums, "permuted", seed=0)
    # every row is another entity's row: the multiset of vectors is unchanged, no entity keeps its own
    match = (permuted[:, None, :] == sums[None, :, :]).all(axis=2)
    assert (match.sum(axis=1) == 1).all() and not match.diagonal().any()
    assert np.array_equal(control_vectors(sums, "permuted", seed=0), permuted)  # seeded
    random = control_vectors(sums, "random", seed=0)
    np.testing.assert_allclose(np.linalg.norm(random, axis=1), np.linalg.norm(sums, axis=1), rtol=1e-5)
    cosine = (random * sums).sum(1) / np.linalg.norm(random, axis=1) / np.linalg.norm(sums, axis=1)
    assert np.abs(cosine).max() < 0.95  # random directions, unrelated to the real ones
    with pytest.raises(ValueError, match="unknown control"):
        control_vectors(sums, "shuffled", seed=0)


@pytest.mark.parametrize("kind", ["permuted", "random"])
def test_control_table_keeps_ids_counts_and_metadata(tmp_path, kind):
    sums = np.random.default_rng(2).normal(size=(len(IDS), H)).astype(np.float32)
    n, freq = np.arange(1, 41), np.arange(100, 140)
    write_table(tmp_path / "table.parquet", IDS, sums, n, freq, META)
    write_control_table(tmp_path / "table.parquet", tmp_path / f"{kind}.parquet", kind, seed=7)
    real, control = EntityTable.open(tmp_path / "table.parquet"), EntityTable.open(tmp_path / f"{kind}.parquet")
    assert list(control.ids()) == list(real.ids())
    for a, b in zip(control.counts(IDS), real.counts(IDS)):
        assert np.array_equal(a, b)
    assert control.metadata == dict(real.metadata, control=kind, control_seed=7)
    assert control.norm == real.norm
    ids = list(real.ids())  # the control is drawn in the table's (sorted) row order
    np.testing.assert_array_equal(control.vector_sums(ids), control_vectors(real.vector_sums(ids), kind, seed=7))


def test_within_kinds_moves_every_vector_to_another_entity_of_its_kind():
    kinds = ["person"] * 7 + ["company"] * 3 + ["band"] + [""] * 2  # a lone band joins the unknown ones
    for seed in range(10):
        perm = within_kinds(kinds, np.random.default_rng(seed))
        assert sorted(perm.tolist()) == list(range(len(kinds)))
        assert not (perm == np.arange(len(kinds))).any()
        for i, j in enumerate(perm):
            if i < 10:
                assert kinds[j] == kinds[i]
            else:  # the band and the two of no kind are deranged among themselves
                assert j >= 10
    # one entity of no kind and no partner joins the largest kind
    perm = within_kinds(["a", "a", "b", "b", "b", ""], np.random.default_rng(0))
    assert perm[5] in (2, 3, 4) and 5 in perm[[2, 3, 4]]


def test_swapped_control_table_reads_kinds_by_qid_or_id(tmp_path):
    sums = np.random.default_rng(3).normal(size=(6, H)).astype(np.float32)
    ids = ["Ann", "Bob", "Cid", "Acme", "Bolt", "C9"]
    qids = ["Q1", "Q2", "Q3", "Q4", "Q5", None]
    write_table(tmp_path / "table.parquet", ids, sums, [1] * 6, [1] * 6, META, qids=qids)
    kinds = tmp_path / "kinds.tsv"
    kinds.write_text("# qid\tkind\nQ1\tperson\nQ2\tperson\nQ3\tperson\nQ4\tcompany\nQ5\tcompany\nC9\tcompany\n")
    write_control_table(tmp_path / "table.parquet", tmp_path / "swapped.parquet", "swapped", kinds_path=kinds)
    control = EntityTable.open(tmp_path / "swapped.parquet")
    real = dict(zip(ids, sums))
    person = {"Ann", "Bob", "Cid"}
    for entity_id in ids:
        got = control.vector_sums([entity_id])[0]
        donor = [k for k, v in real.items() if np.array_equal(v, got)]
        assert donor and donor[0] != entity_id and (donor[0] in person) == (entity_id in person), (entity_id, donor)
    with pytest.raises(ValueError, match="kinds file"):
        write_control_table(tmp_path / "table.parquet", tmp_path / "x.parquet", "swapped")
    kinds.write_text("Q1 person\n")
    with pytest.raises(ValueError, match=r"kinds.tsv:1: expected"):
        write_control_table(tmp_path / "table.parquet", tmp_path / "x.parquet", "swapped", kinds_path=kinds)
