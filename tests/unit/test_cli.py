"""The ``pelt table`` command."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pelt.cli import main
from pelt.table import write_table

META = {
    "model": "m",
    "revision": "local",
    "model_type": "bert",
    "hidden_size": 3,
    "representation": "r",
    "max_seq_len": 128,
    "norm": 10.0,
}


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "table.parquet"
    write_table(path, ["Paris", "Warsaw"], np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 2.0]]), [2, 1], [9, 5], META)
    return path


def test_info(table, capsys):
    assert main(["table", "info", str(table)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "entities: 2" in lines and "hidden_size: 3" in lines and "norm: 10.0" in lines and "model: m" in lines


def test_lookup_text_and_json(table, capsys):
    assert main(["table", "lookup", str(table), "Paris", "--norm", "5"]) == 0
    assert capsys.readouterr().out == "Paris\tn_sentences=2\tfrequency=9\t3 4 0\n"
    assert main(["table", "lookup", str(table), "Warsaw", "Paris", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["norm"] == 10.0 and [e["entity_id"] for e in out["entities"]] == ["Warsaw", "Paris"]
    assert out["entities"][0]["vector"] == [0.0, 0.0, 10.0] and out["entities"][1]["vector"] == pytest.approx([6, 8, 0])


def test_errors_exit_nonzero(table, tmp_path, capsys):
    assert main(["table", "lookup", str(table), "Paris", "Berlin", "Rome"]) == 1
    assert "Berlin, Rome" in capsys.readouterr().err
    assert main(["table", "info", str(tmp_path / "missing.parquet")]) == 1
    assert "does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["table"])


def test_merge(table, tmp_path, capsys):
    assert main(["table", "merge", str(tmp_path / "m.parquet"), str(table), str(table)]) == 0
    assert "2 entities" in capsys.readouterr().out
    assert main(["table", "lookup", str(tmp_path / "m.parquet"), "Paris", "--norm", "5"]) == 0
    assert capsys.readouterr().out == "Paris\tn_sentences=4\tfrequency=9\t3 4 0\n"


def test_ids_lists_every_entity_and_finds_titles_qids_and_aliases(tmp_path, capsys):
    path = tmp_path / "ids.parquet"
    sums = np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 2.0]])
    write_table(path, ["Paris", "Warsaw"], sums, [2, 1], [9, 5], META, qids=["Q90", None], aliases=[["Lutetia"], []])
    assert main(["table", "ids", str(path)]) == 0
    assert capsys.readouterr().out == "entity_id\tqid\taliases\nParis\tQ90\tLutetia\nWarsaw\t\t\n"
    assert main(["table", "ids", str(path), "Q90", "lutetia", "Warsaw", "--ignore-case"]) == 0
    assert capsys.readouterr().out == "name\tentity_id\tqid\nQ90\tParis\tQ90\nlutetia\tParis\tQ90\nWarsaw\tWarsaw\t\n"
    assert main(["table", "ids", str(path), "Lutetia", "Q90", "--by", "id,alias"]) == 1  # a QID only by qid
    captured = capsys.readouterr()
    assert captured.out == "name\tentity_id\tqid\nLutetia\tParis\tQ90\n"
    assert "not found in" in captured.err and "(by id,alias): Q90" in captured.err
