"""Sharing a table as the Hub expects (issue 55, item 5): ``EntityTable.push_to_hub`` and ``pelt table push``
(one implementation) against a stand-in Hub on disk, read back by ``EntityTable.load`` and ``pelt table
info``; the card's licence (by the corpus), citation, model (a Hub name, or plainly a local folder) and
a load snippet naming the repository."""

from __future__ import annotations

from pathlib import Path

import huggingface_hub
import numpy as np
import pytest
import yaml

from pelt.cli import main
from pelt.table import EntityTable, write_table
from pelt.table.hub import dataset_card

H = 4
HUB_MODEL = {"model": "roberta-base", "hub_name": "roberta-base", "revision": "e2da8e2", "model_digest": "d1g35t"}
META = {**HUB_MODEL, "model_type": "roberta", "hidden_size": H, "representation": "r", "max_seq_len": 128, "norm": 7}


class StandInHub:
    """The parts of the Hub that pelt calls, on disk: a dataset repository is a folder of ``root``."""

    def __init__(self, root: Path):
        self.root = root
        self.commits: list[tuple[str, str]] = []

    def create_repo(self, repo_id: str, *, repo_type: str, private: bool, exist_ok: bool) -> str:
        assert repo_type == "dataset" and exist_ok
        (self.root / repo_id).mkdir(parents=True, exist_ok=True)
        return f"https://huggingface.co/datasets/{repo_id}"

    def create_commit(self, repo_id: str, operations: list, *, commit_message: str, repo_type: str) -> None:
        for operation in operations:
            source = operation.path_or_fileobj
            data = Path(source).read_bytes() if isinstance(source, str) else source
            (self.root / repo_id / operation.path_in_repo).write_bytes(data)
        self.commits.append((repo_id, commit_message))

    def snapshot_download(self, repo_id: str, **kw) -> str:
        folder = self.root / repo_id
        if not folder.is_dir():
            raise OSError(f"404 Client Error: Repository Not Found for url: https://huggingface.co/{repo_id}")
        return str(folder)


@pytest.fixture
def hub(tmp_path, monkeypatch) -> StandInHub:
    hub = StandInHub(tmp_path / "hub")
    monkeypatch.setattr(huggingface_hub, "HfApi", lambda: hub)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", hub.snapshot_download)
    return hub


def _table(path: Path, **meta: object) -> EntityTable:
    sums = np.arange(3 * H, dtype=np.float32).reshape(3, H) + 1
    write_table(path, ["Ada Lovelace", "Paris", "Warsaw"], sums, [1, 2, 3], [4, 5, 6], {**META, **meta})
    return EntityTable.open(path)


def _front_matter(card: str) -> dict:
    return yaml.safe_load(card.split("---\n")[1])


def test_push_to_hub_and_pelt_table_push_publish_what_load_and_info_read(tmp_path, hub, capsys):
    table = _table(tmp_path / "t" / "table.parquet", corpus="wikipedia", language="en")
    assert table.push_to_hub("you/pelt-t") == "https://huggingface.co/datasets/you/pelt-t"
    assert hub.commits == [("you/pelt-t", f"pelt table {table.build_id}")]
    loaded = EntityTable.load("you/pelt-t")
    assert loaded.build_id == table.build_id
    np.testing.assert_array_equal(loaded.vector_sums(["Paris"]), table.vector_sums(["Paris"]))
    assert main(["table", "info", "you/pelt-t"]) == 0
    assert "entities: 3" in capsys.readouterr().out.splitlines()
    assert main(["table", "push", str(tmp_path / "t"), "you/other", "--license", "cc0-1.0"]) == 0
    assert capsys.readouterr().out == "https://huggingface.co/datasets/you/other\n"
    card = (hub.root / "you" / "other" / "README.md").read_text(encoding="utf-8")
    assert _front_matter(card)["license"] == "cc0-1.0" and 'EntityTable.load("you/other")' in card
    assert main(["table", "info", "you/nothing"]) == 1  # a repository the Hub does not have: one line
    err = capsys.readouterr().err
    assert err.startswith("error: entity table 'you/nothing' is neither a local path nor") and err.count("\n") == 1


def test_the_card_licenses_cites_and_loads_from_the_repository(tmp_path):
    card = dataset_card(_table(tmp_path / "w.parquet", corpus="wikipedia"), "you/w")
    fields = _front_matter(card)
    assert fields["license"] == "cc-by-sa-4.0" and "| licence | `cc-by-sa-4.0`, the corpus's" in card
    assert (fields["model"], fields["model_source"], fields["revision"]) == ("roberta-base", "hub", "e2da8e2")
    assert "[`roberta-base`](https://huggingface.co/roberta-base) at revision `e2da8e2`" in card
    assert 'EntityTable.load("you/w")' in card and 'load_masked_lm("roberta-base")' in card
    citation = card.split("```bibtex\n")[1].split("```")[0]
    assert citation.startswith("@inproceedings{") and "A Simple but Effective Pluggable Entity Lookup Table" in citation
    assert "Ye, Deming and Lin, Yankai and Li, Peng and Sun, Maosong and Liu, Zhiyuan" in citation
    assert 'year = "2022"' in citation and "Association for Computational Linguistics" in citation
    s2orc = _front_matter(dataset_card(_table(tmp_path / "s.parquet", corpus="biomed", corpus_kind="s2orc"), "x"))
    assert s2orc["license"] == "odc-by"
    recorded = _table(tmp_path / "r.parquet", corpus="wikipedia", corpus_license="cc-by-sa-3.0")
    assert _front_matter(dataset_card(recorded, "x"))["license"] == "cc-by-sa-3.0"  # the table's record first
    unknown = dataset_card(_table(tmp_path / "u.parquet", corpus="biomed"), "x")
    assert _front_matter(unknown)["license"] == "unknown" and "| licence | not recorded by the table" in unknown
    # a merged table (pelt.sampling.merge) names its corpora's languages, not "multilingual"
    merged = _table(
        tmp_path / "m.parquet",
        corpus="wiki_all",
        corpus_kind="wikipedia",
        language="multilingual",
        languages=["de", "fr"],
    )
    fields = _front_matter(dataset_card(merged, "x"))
    assert fields["language"] == ["de", "fr"] and fields["license"] == "cc-by-sa-4.0"
    assert _front_matter(dataset_card(_table(tmp_path / "e.parquet", language="en"), "x"))["language"] == ["en"]


def test_a_local_model_is_said_to_be_a_local_folder_not_loaded_from_its_path(tmp_path):
    local = {"model": "results/models/demo", "hub_name": None, "revision": "local"}
    card = dataset_card(_table(tmp_path / "t.parquet", **local), "you/demo")
    fields = _front_matter(card)
    assert fields["model"] == "results/models/demo" and fields["model_source"] == "local folder"
    assert "a local model folder, `results/models/demo`, on the machine that built the table" in card
    assert 'load_masked_lm("results/models/demo")' not in card and 'EntityTable.load("you/demo")' in card


def test_push_local_writes_the_repository_folder_whose_card_names_the_repo(tmp_path, capsys):
    _table(tmp_path / "t" / "table.parquet")
    assert main(["table", "push", str(tmp_path / "t"), "you/t", "--local", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().out == f"{tmp_path / 'out'}\n"
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert 'EntityTable.load("you/t")' in card and str(tmp_path) not in card
    assert EntityTable.load(tmp_path / "out").build_id == EntityTable.open(tmp_path / "t" / "table.parquet").build_id
