"""Tables that travel (issue 16 item 3): a table names its model by a digest of its weights, so the
same model from another folder is accepted and other weights are refused unless allowed; tables
load from a file, a folder or a Hugging Face Hub dataset repository (download faked, no network)."""

from __future__ import annotations

import logging
import shutil

import huggingface_hub
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

import pelt.encoding.models
from pelt.encoding.encode import EncodingSettings, encode_samples
from pelt.encoding.injection import inject
from pelt.encoding.models import load_masked_lm, weights_digest
from pelt.table import EntityTable, merge_tables, write_table

SENTENCE = "Marie Curie was born in Warsaw and worked in Paris."


@pytest.fixture(scope="module")
def built(tiny_model_dirs, tmp_path_factory):  # noqa: F811
    """A table encoded with the tiny RoBERTa from one folder, and a byte copy of that folder elsewhere."""
    root = tmp_path_factory.mktemp("travel")
    samples = root / "samples.parquet"
    pq.write_table(
        pa.table(
            {
                "entity_id": ["Marie_Curie", "Warsaw"],
                "sentence": [SENTENCE, SENTENCE],
                "start": pa.array([0, 24], pa.int32()),
                "end": pa.array([11, 30], pa.int32()),
                "doc_id": ["d1", "d1"],
            }
        ),
        samples,
    )
    table = root / "out" / "table.parquet"
    encode_samples(str(samples), str(tiny_model_dirs["roberta"]), str(table), settings=EncodingSettings(max_seq_len=32))
    copy = shutil.copytree(tiny_model_dirs["roberta"], root / "elsewhere" / "my-model")
    return table, copy


def test_digest_names_the_weights_not_the_folder_or_precision(tiny_model_dirs, built):
    _, copy = built
    model, _ = load_masked_lm(str(tiny_model_dirs["roberta"]))
    digest = weights_digest(model)
    assert weights_digest(load_masked_lm(str(copy))[0]) == digest
    assert weights_digest(load_masked_lm(str(copy), precision="bf16")[0]) == digest
    with torch.no_grad():
        model.lm_head.dense.weight[0, 0] += 0.5  # one weight of a fine-tuned model
    assert weights_digest(model) != digest


def test_table_records_its_model_and_accepts_a_copy(tiny_model_dirs, built, caplog):
    table_path, copy = built
    table = EntityTable.open(table_path)
    model, _ = load_masked_lm(str(copy))
    assert table.metadata["model"] == str(tiny_model_dirs["roberta"])
    assert table.metadata["model_digest"] == weights_digest(model)
    assert table.metadata["revision"] == "local" and "hub_name" not in table.metadata  # a folder: no hub name
    table.check_model(model)  # same weights, another folder (the old check compared path strings)

    model, _ = load_masked_lm(str(copy))
    with torch.no_grad():
        model.lm_head.dense.weight[0, 0] += 0.5
    with pytest.raises(ValueError, match="with weights .* allow_other_weights=True"):
        table.check_model(model)
    with caplog.at_level(logging.WARNING, logger="pelt.table"):
        table.check_model(model, allow_other_weights=True)
        EntityTable.open(table_path, allow_other_weights=True).check_model(model)
    assert sum("used with other weights, as allowed" in r.getMessage() for r in caplog.records) == 2


def test_weights_are_checked_once_per_model_so_fine_tuning_goes_on(built, monkeypatch):
    """inject checks the table for every batch: the digest is computed for the first only, and a
    model being fine-tuned with its table (weights changed after the first step) keeps working."""
    table_path, copy = built
    table = EntityTable.open(table_path)
    model, tokenizer = load_masked_lm(str(copy))
    calls = []
    monkeypatch.setattr(pelt.encoding.models, "weights_digest", lambda m: calls.append(m) or weights_digest(m))
    text = f"Marie Curie was born in {tokenizer.mask_token}."
    for _ in range(3):
        assert inject(model, tokenizer, [text], [[(0, 11, "Marie_Curie")]], table).n_injected == 1
        with torch.no_grad():
            model.lm_head.dense.weight[0, 0] += 0.5  # an optimiser step
    assert len(calls) == 1


def test_merge_follows_the_digest(built, tmp_path):
    table_path, copy = built
    table = EntityTable.open(table_path)
    ids = ["x"]
    sums = np.ones((1, table.hidden_size), np.float32)
    write_table(tmp_path / "moved.parquet", ids, sums, [1], [1], dict(table.metadata, model=str(copy)))
    merged = merge_tables([table_path, tmp_path / "moved.parquet"], tmp_path / "merged.parquet")
    assert len(merged) == len(table) + 1
    write_table(tmp_path / "other.parquet", ids, sums, [1], [1], dict(table.metadata, model_digest="0" * 64))
    with pytest.raises(ValueError, match="model differs"):
        merge_tables([table_path, tmp_path / "other.parquet"], tmp_path / "bad.parquet")


def test_load_from_file_folder_and_hub(built, tmp_path, monkeypatch):
    table_path, _ = built
    repo = tmp_path / "hub-repo"
    repo.mkdir()
    shutil.copy(table_path, repo / "table.parquet")  # what `huggingface-cli upload --repo-type dataset` would hold
    calls = []

    def fake_snapshot_download(repo_id, **kw):
        calls.append((repo_id, kw))
        local = tmp_path / "hub-cache" / repo_id.replace("/", "--")
        shutil.copytree(repo, local, dirs_exist_ok=True)
        return str(local)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    expected = EntityTable.open(table_path)
    for source in (table_path, table_path.parent, "someone/pelt-tables"):
        table = EntityTable.load(source)
        assert table.build_id == expected.build_id and table.metadata == expected.metadata
        np.testing.assert_array_equal(table.vector_sums(["Warsaw"]), expected.vector_sums(["Warsaw"]))
    assert calls == [
        (
            "someone/pelt-tables",
            {"repo_type": "dataset", "revision": None, "allow_patterns": ["table.parquet", "table.arrow"]},
        )
    ]
    with pytest.raises(FileNotFoundError, match="has no wikipedia/roberta.parquet"):
        EntityTable.load("someone/pelt-tables", filename="wikipedia/roberta.parquet", revision="v1")
    assert calls[-1][1]["revision"] == "v1"


def test_parquet_is_plain_for_other_readers(built):
    """What ``datasets.load_dataset("parquet", data_files=...)`` reads: only Arrow types it maps
    (string, int64, fixed-size list of float32 -> a fixed-length sequence), one row per entity, and
    pelt's own metadata under a key of its own (datasets reads only ``huggingface``)."""
    table_path, _ = built
    table = pq.read_table(table_path)
    h = EntityTable.open(table_path).hidden_size
    assert table.schema.remove_metadata() == pa.schema(
        [
            pa.field("entity_id", pa.string(), nullable=False),
            pa.field("n_sentences", pa.int64(), nullable=False),
            pa.field("frequency", pa.int64(), nullable=False),
            pa.field("vector_sum", pa.list_(pa.float32(), h), nullable=False),
        ]
    )
    assert b"huggingface" not in table.schema.metadata
    assert table.column("entity_id").to_pylist() == ["Marie_Curie", "Warsaw"]
