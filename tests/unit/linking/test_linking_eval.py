"""Linking evaluation: hiding anchors, the most-frequent-entity baseline's names, and the scores."""

from __future__ import annotations

import hashlib

import pytest

from pelt.linking.evaluation import (
    alias_coverage,
    hide_anchors,
    hide_anchors_in_documents,
    most_frequent_entity,
    score_mentions,
)


def test_hide_anchors_hides_the_share_by_seeded_hash_rank():
    links = list("abcdefghij")
    kept, hidden = hide_anchors("doc", links, 0.3, seed=7)
    assert len(hidden) == 3 and sorted(kept + hidden) == links
    assert kept == [x for x in links if x not in hidden]  # order preserved on both sides
    rank = sorted(range(10), key=lambda i: hashlib.sha256(f"7\x1fdoc\x1f{i}".encode()).hexdigest())
    assert hidden == [links[i] for i in sorted(rank[:3])]
    assert hide_anchors("doc", links, 0.3, seed=7) == (kept, hidden)
    assert hide_anchors("doc", links, 0.3, seed=8) != (kept, hidden)
    assert hide_anchors("other", links, 0.3, seed=7) != (kept, hidden)
    assert len(hide_anchors("doc", list("abcde"), 0.3, seed=7)[1]) == 2  # 1.5 rounds half up
    assert hide_anchors("doc", links, 0.0, seed=7) == (links, [])
    assert hide_anchors("doc", links, 1.0, seed=7) == ([], links)
    assert hide_anchors("doc", [], 0.3, seed=7) == ([], [])
    with pytest.raises(ValueError, match="share"):
        hide_anchors("doc", links, 1.5, seed=7)


def test_hide_anchors_in_documents_splits_links_and_keeps_text(spark, tmp_path):
    ddl = "doc_id string, title string, text string, links array<struct<start:int,end:int,target:string>>"
    links = [{"start": i, "end": i + 1, "target": f"T{i}"} for i in range(4)]
    spark.createDataFrame([("d1", "D1", "abcd", links), ("d2", "D2", "xy", None)], ddl).coalesce(1).write.parquet(
        str(tmp_path / "docs")
    )
    counts = hide_anchors_in_documents(
        spark, str(tmp_path / "docs"), 0.5, 3, str(tmp_path / "kept"), str(tmp_path / "hidden")
    )
    assert counts == {"documents": 2, "anchors_kept": 2, "anchors_hidden": 2}
    kept = {r["doc_id"]: r.asDict(recursive=True) for r in spark.read.parquet(str(tmp_path / "kept")).collect()}
    hidden = {r["doc_id"]: r.asDict(recursive=True) for r in spark.read.parquet(str(tmp_path / "hidden")).collect()}
    assert kept["d1"]["text"] == hidden["d1"]["text"] == "abcd"
    expected_kept, expected_hidden = hide_anchors("d1", links, 0.5, 3)
    assert kept["d1"]["links"] == expected_kept and hidden["d1"]["links"] == expected_hidden
    assert kept["d2"]["links"] == hidden["d2"]["links"] == []


def test_most_frequent_entity_groups_aliases_by_matching_key():
    names = most_frequent_entity(
        [
            ("Paris", "Paris", 5),
            ("Paris", "Paris, Texas", 2),
            ("New  York", "New York City", 1),  # same key as "New York"
            ("New York", "New York (state)", 1),
            ("New York", "New York City", 1),
            ("Mercury", "Mercury (planet)", 3),
            ("Mercury", "Mercury (element)", 3),  # tie: smallest id
            ("  ", "Blank", 9),  # no key: skipped
        ]
    )
    assert names == {
        "Paris": ["Paris"],
        "New York City": ["New  York", "New York"],
        "Mercury (element)": ["Mercury"],
    }


def test_score_mentions_counts_each_kind_of_outcome():
    gold = [
        ("d", 0, 0, 5, "A"),  # recovered
        ("d", 0, 10, 15, "B"),  # wrong entity at its span
        ("d", 1, 0, 4, "C"),  # covered by a longer predicted span
        ("d", 2, 3, 8, "D"),  # missed
    ]
    predicted = [
        ("d", 0, 0, 5, "A"),
        ("d", 0, 0, 5, "A"),  # duplicates count once
        ("d", 0, 10, 15, "X"),
        ("d", 1, 0, 9, "C"),
        ("d", 1, 20, 25, "E"),  # on text that was never an anchor: not judged
        ("e", 2, 3, 8, "D"),  # another document
    ]
    scores = score_mentions(predicted, gold)
    assert {k: scores[k] for k in ("gold", "predicted", "judged", "tp", "wrong_entity", "wrong_span", "unjudged")} == {
        "gold": 4,
        "predicted": 5,
        "judged": 3,
        "tp": 1,
        "wrong_entity": 1,
        "wrong_span": 1,
        "unjudged": 2,
    }
    assert scores["precision"] == pytest.approx(1 / 3)
    assert scores["recall"] == pytest.approx(1 / 4)
    assert scores["f1"] == pytest.approx(2 * (1 / 3) * (1 / 4) / (1 / 3 + 1 / 4))
    assert scores["span_recall"] == pytest.approx(2 / 4)
    assert scores["precision_at_gold_spans"] == pytest.approx(1 / 2)
    assert score_mentions([], gold)["f1"] == 0.0 and score_mentions(predicted, [])["recall"] == 0.0
    with pytest.raises(ValueError, match="two entities"):
        score_mentions([], [("d", 0, 0, 5, "A"), ("d", 0, 0, 5, "B")])


def test_alias_coverage_matches_texts_by_key_and_entity():
    aliases = [("New York", "New York City"), ("Paris", "Paris"), ("  ", "Blank")]
    gold = [("New  York", "New York City"), ("Paris", "Paris, Texas"), ("Lyon", "Lyon"), ("", "Blank")]
    assert alias_coverage(gold, aliases) == {"gold": 4, "name_is_alias": 0.5, "name_is_alias_of_entity": 0.25}
    assert alias_coverage([], aliases) == {"gold": 0, "name_is_alias": 0.0, "name_is_alias_of_entity": 0.0}
