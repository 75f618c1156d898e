"""Task entities: every (name, QID) the configured tasks mention, read from the real file layouts."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from conftest import REPO

from pelt.tasks import task_entities

DEMO = REPO / "resources" / "demo"


def _demo_tasks() -> dict:
    return {
        "lama": {
            "domain": "wikipedia",
            "relations": str(DEMO / "lama/relations.jsonl"),
            "common_vocab": str(DEMO / "lama/common_vocab_cased.txt"),
            "facts": [str(DEMO / "lama/TREx/*.jsonl")],
        },
        "fewrel": {"domain": "wikipedia", "val": str(DEMO / "fewrel/val_wiki.json")},
        "wiki80": {
            "domain": "wikipedia",
            "train": str(DEMO / "wiki80/train.jsonl"),
            "dev": str(DEMO / "wiki80/dev.jsonl"),
        },
        "fewrel2": {"kind": "fewrel", "domain": "biomed", "val": str(DEMO / "fewrel/val_pubmed.json")},
    }


def test_demo_lama_subjects_only():
    tasks = {"lama": _demo_tasks()["lama"]}
    entities = task_entities(tasks, "wikipedia")
    # The knowledge world's subjects: 450 people, 60 companies, 60 bands, 15 countries; objects are
    # never task entities.
    assert len(entities) == 585
    assert ("Popak", "Q990100093") in entities  # the first P19 fact's subject
    assert not any(name == "Sinerkven" for name, _ in entities)  # its object, a city
    assert entities == sorted(entities)


def test_demo_all_tasks_per_domain():
    wiki = task_entities(_demo_tasks(), "wikipedia")
    biomed = task_entities(_demo_tasks(), "biomed")
    # FewRel/Wiki80 add lowercased head/tail names (people, but also cities and instruments) to the LAMA subjects.
    assert ("depamin", "Q990100145") in wiki and ("reiduwick", "Q990100053") in wiki
    assert ("Popak", "Q990100093") in wiki
    lama = {
        (r["sub_label"], r["sub_uri"])
        for f in (DEMO / "lama" / "TREx").glob("*.jsonl")
        for r in map(json.loads, f.open())
    }
    relation = {
        (r[side]["name"], r[side]["id"])
        for f in (DEMO / "wiki80").glob("*.jsonl")
        for r in map(json.loads, f.open())
        for side in ("h", "t")
    }
    assert len(wiki) == len(set(wiki)) == len(lama | relation)  # each (name, QID) once
    pubmed = json.loads((DEMO / "fewrel" / "val_pubmed.json").read_text())
    assert set(biomed) == {(i[s][0], i[s][1]) for rel in pubmed.values() for i in rel for s in "ht"}
    assert len(biomed) == len(set(biomed)) >= 200
    assert not set(wiki) & set(biomed)
    assert task_entities(_demo_tasks(), "nowhere") == []


def test_a_mapping_of_files_is_read_by_its_values():
    """Wiki80's config maps each training setting to its file; the entities are those of the files."""
    by_setting = {
        "wiki80": {
            "domain": "w",
            "train": {"100%": str(DEMO / "wiki80/train.jsonl"), "dev as a setting": str(DEMO / "wiki80/dev.jsonl")},
        }
    }
    as_list = {"wiki80": {"domain": "w", "train": [str(DEMO / "wiki80/train.jsonl"), str(DEMO / "wiki80/dev.jsonl")]}}
    assert task_entities(by_setting, "w") == task_entities(as_list, "w") != []
    with pytest.raises(FileNotFoundError, match="tasks.wiki80.train"):
        task_entities({"wiki80": {"domain": "w", "train": {"1%": str(DEMO / "wiki80/absent.jsonl")}}}, "w")


def test_real_lama_formats(shared_data: Path):
    lama = shared_data / "lama"
    trex = task_entities({"lama": {"domain": "w", "facts": [str(lama / "TREx/*.jsonl")]}}, "w")
    assert len(trex) == 21531 and all(qid and qid.startswith("Q") for _, qid in trex)
    google = task_entities({"lama": {"domain": "w", "facts": [str(lama / "Google_RE/*.jsonl")]}}, "w")
    assert len(google) == 5467 and sum(qid is None for _, qid in google) == 3340  # sub_w is often null
    pararel = task_entities(
        {"lama": {"domain": "w", "facts": str(lama / "TREx_pararel_subset_for_missing/*.jsonl")}}, "w"
    )
    assert len(pararel) == 7139 and all(qid is None for _, qid in pararel)
    everything = task_entities(
        {
            "lama": {
                "domain": "w",
                "facts": [str(lama / d / "*.jsonl") for d in ("TREx", "Google_RE", "TREx_pararel_subset_for_missing")],
            }
        },
        "w",
    )
    assert len(everything) == 34102


def test_real_fewrel_and_wiki80(shared_data: Path):
    tasks = {
        "fewrel": {"domain": "w", "val": str(shared_data / "fewrel/val_wiki.json")},
        "fewrel2": {"kind": "fewrel", "domain": "b", "test": str(shared_data / "fewrel/val_pubmed.json")},
        "wiki80": {"domain": "x", "dev": str(shared_data / "wiki80/dev.jsonl")},
    }
    assert len(task_entities(tasks, "w")) == 16070
    assert len(task_entities(tasks, "b")) == 1377
    wiki80 = task_entities(tasks, "x")
    assert len(wiki80) == 9592 and ("madison", "Q1913353") in wiki80


def test_bad_records_are_skipped_and_counted(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    facts = tmp_path / "P1.jsonl"
    facts.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"sub_label": "A", "sub_uri": "Q1", "obj_label": "x"},
                {"sub_uri": "Q2", "obj_label": "y"},
                {"sub_label": "  ", "obj_label": "z"},
                {"sub_label": "A", "sub_uri": "Q1", "obj_label": "w"},
            ]
        )
        + "\n\n"
    )
    with caplog.at_level(logging.WARNING, logger="pelt.tasks"):
        assert task_entities({"lama": {"domain": "w", "facts": [str(facts)]}}, "w") == [("A", "Q1")]
    assert "skipped 2 records" in caplog.text


def test_config_errors(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="tasks.lama.facts"):
        task_entities({"lama": {"domain": "w", "facts": [str(tmp_path / "none*.jsonl")]}}, "w")
    with pytest.raises(ValueError, match="unknown task kind"):
        task_entities({"squad": {"domain": "w", "files": []}}, "w")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"sub_label": "A"}\n{not json\n')
    with pytest.raises(ValueError, match="broken.jsonl:2"):
        task_entities({"lama": {"domain": "w", "facts": [str(broken)]}}, "w")


def test_fewrel_training_files_in_wiki80_layout_serve_the_training_domain():
    # FewRel 2.0 trains on the Wiki80 files (its default training data) with the Wikipedia table:
    # their entities belong to the training domain, the test file's to the test domain
    tasks = {
        "fewrel2": {
            "kind": "fewrel",
            "domain": "biomed",
            "train_domain": "wikipedia",
            "train": [str(DEMO / "wiki80/train.jsonl")],
            "test": str(DEMO / "fewrel/val_pubmed.json"),
        }
    }
    wiki = set(task_entities(tasks, "wikipedia"))
    bio = set(task_entities(tasks, "biomed"))
    expected = {
        (r[side]["name"], r[side].get("id"))
        for r in map(json.loads, (DEMO / "wiki80/train.jsonl").open())
        for side in ("h", "t")
    }
    assert wiki == expected and bio and not wiki & bio


def test_an_entity_list_names_entities_by_title_qid_or_name(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    lines = tmp_path / "mine.txt"
    lines.write_text("Valdoria\n  Q990000002 \n\nmetformin\nQ0\n", encoding="utf-8")
    table = tmp_path / "drugs.csv"
    table.write_text('name,cui,note\nimatinib,C9900002,x\n"Smith, John",,y\n,Q5,z\n', encoding="utf-8")
    tasks = {
        "entities": {"domain": "wikipedia", "entities": [str(lines)]},
        "entities_drugs": {"domain": "biomed", "entities": str(table), "column": "name", "qid_column": "cui"},
    }
    with caplog.at_level(logging.WARNING):
        assert task_entities(tasks, "wikipedia") == [
            ("Q0", None),  # not a QID (Q0 is no item): a name like any other
            ("Q990000002", "Q990000002"),  # a QID stands for itself, resolved by QID
            ("Valdoria", None),
            ("metformin", None),
        ]
    assert "skipped 1 records" in caplog.text  # the blank line, counted
    assert task_entities(tasks, "biomed") == [("Q5", "Q5"), ("Smith, John", None), ("imatinib", "C9900002")]


def test_an_entity_list_that_names_nothing_or_lacks_its_column_is_an_error(tmp_path: Path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n \n", encoding="utf-8")
    with pytest.raises(ValueError, match="empty.txt: names no entity"):
        task_entities({"entities": {"domain": "w", "entities": str(empty)}}, "w")
    table = tmp_path / "t.csv"
    table.write_text("title\nValdoria\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"t.csv: no column 'name'; the header has \['title'\]"):
        task_entities({"entities": {"domain": "w", "entities": str(table), "column": "name"}}, "w")
    with pytest.raises(ValueError, match="qid_column 'qid' needs column"):
        task_entities({"entities": {"domain": "w", "entities": str(table), "qid_column": "qid"}}, "w")
