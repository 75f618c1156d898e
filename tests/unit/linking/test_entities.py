"""Task entities -> corpus entity ids: qid, title, redirect, alias, missing; a single Parquet file."""

from __future__ import annotations

import pyarrow.parquet as pq

from pelt.linking.entities import resolve_task_entities, write_entity_ids
from pelt.linking.task_entities import (
    name_task_entities,
    names_by_entity,
    resolved_entity_ids,
    write_entity_ids_by_name,
)

PAGES_DDL = "page_id long, title string, is_redirect boolean, redirect_to string, is_disambiguation boolean, qid string"
PAGES = [
    (1, "Paris", False, None, False, "Q90"),
    (2, "Paris, Texas", False, None, False, "Q830149"),
    (3, "City of Light", True, "Paris", False, None),
    (4, "Mercury", False, None, True, "Q1"),
    (5, "Mercury (planet)", False, None, False, "Q308"),
]
ALIASES = [
    ("Mercury", "Mercury (planet)", 5),
    ("Mercury", "Mercury (element)", 3),
    ("the Big Apple", "New York City", 2),
    ("Tie", "B", 2),
    ("Tie", "A", 2),
]
WANTED = [
    ("Something else", "Q90"),  # qid wins over the name
    ("paris, Texas", None),  # title after first-letter normalisation
    ("City of Light", None),  # redirect
    ("Mercury", None),  # the title is a disambiguation page -> most frequent alias target
    ("the Big Apple", "Q60"),  # unknown qid -> alias
    ("Tie", None),  # equal counts -> smaller id
    ("Nowhere", None),
    ("Nowhere", None),  # duplicate, counted once
    ("Mercuri (planet)", None),  # a misspelling: not found, the closest titles and link texts suggested
]


def test_resolution_rules_in_order(spark, tmp_path, caplog):
    spark.createDataFrame(PAGES, PAGES_DDL).write.parquet(str(tmp_path / "pages"))
    spark.createDataFrame(ALIASES, "alias string, entity_id string, count long").write.parquet(
        str(tmp_path / "aliases")
    )
    out = tmp_path / "samples" / "task_entities.parquet"
    counts = resolve_task_entities(spark, WANTED, str(tmp_path / "aliases"), str(tmp_path / "pages"), str(out))
    assert out.is_file()
    table = pq.read_table(out)
    assert [(f.name, str(f.type)) for f in table.schema] == [
        ("name", "string"),
        ("qid", "string"),
        ("entity_id", "string"),
        ("how", "string"),
        ("suggestions", "list<element: string>"),
    ]
    assert [tuple(row.values()) for row in table.to_pylist()] == [
        ("Something else", "Q90", "Paris", "qid", None),
        ("paris, Texas", None, "Paris, Texas", "title", None),
        ("City of Light", None, "Paris", "redirect", None),
        ("Mercury", None, "Mercury (planet)", "alias", None),
        ("the Big Apple", "Q60", "New York City", "alias", None),
        ("Tie", None, "A", "alias", None),
        ("Nowhere", None, None, "missing", []),
        # the article's title and the element's link text; not the disambiguation page Mercury
        ("Mercuri (planet)", None, None, "missing", ["Mercury (planet)", "Mercury (element)"]),
    ]
    assert "'Mercuri (planet)' found no entity (closest: 'Mercury (planet)', 'Mercury (element)')" in caplog.text
    assert "'Nowhere' found no entity (closest: none close)" in caplog.text
    assert resolved_entity_ids(str(out)) == [
        "A",
        "Mercury (planet)",
        "New York City",
        "Paris",
        "Paris, Texas",
    ]
    assert counts == {
        "wanted": 9,
        "duplicates": 1,
        "how_alias": 3,
        "how_missing": 2,
        "how_qid": 1,
        "how_redirect": 1,
        "how_title": 1,
    }


def test_corpus_without_pages_uses_qid_or_name(tmp_path):
    out = tmp_path / "task_entities.parquet"
    wanted = [("aspirin", "Q18216"), ("acetylsalicylic acid", "Q18216"), ("IL-6", None), ("IL-6", None)]
    counts = name_task_entities(wanted, str(out))
    assert pq.read_table(out).to_pylist() == [
        {"name": "aspirin", "qid": "Q18216", "entity_id": "Q18216", "how": "string", "suggestions": None},
        {"name": "acetylsalicylic acid", "qid": "Q18216", "entity_id": "Q18216", "how": "string", "suggestions": None},
        {"name": "IL-6", "qid": None, "entity_id": "IL-6", "how": "string", "suggestions": None},
    ]
    assert counts == {"wanted": 4, "duplicates": 1, "how_string": 3}
    assert names_by_entity(str(out)) == {"IL-6": ["IL-6"], "Q18216": ["acetylsalicylic acid", "aspirin"]}


def test_every_entity_gets_its_qid_and_most_linked_aliases(spark, tmp_path):
    spark.createDataFrame(PAGES, PAGES_DDL).write.parquet(str(tmp_path / "pages"))
    more = [("City of Light", "Paris", 4), ("Lutèce", "Paris", 1), ("la Ville", "Paris", 1), ("Paris", "Paris", 9)]
    spark.createDataFrame(ALIASES + more, "alias string, entity_id string, count long").write.parquet(
        str(tmp_path / "aliases")
    )
    out = tmp_path / "ids"
    counts = write_entity_ids(spark, str(tmp_path / "aliases"), str(tmp_path / "pages"), str(out), max_aliases=2)
    rows = {row["entity_id"]: (row["qid"], row["aliases"]) for row in pq.read_table(out).to_pylist()}
    assert rows == {
        "Paris": ("Q90", ["City of Light", "Lutèce"]),  # most linked first, ties by name, at most 2, not itself
        "Paris, Texas": ("Q830149", []),
        "Mercury (planet)": ("Q308", ["Mercury"]),  # the disambiguation page's Q1 is no entity's
        "Mercury (element)": (None, ["Mercury"]),
        "New York City": (None, ["the Big Apple"]),
        "A": (None, ["Tie"]),
        "B": (None, ["Tie"]),
    }
    assert counts == {"entities": 7, "with_qid": 3, "with_aliases": 6}

    by_name = tmp_path / "ids_by_name"  # a corpus without pages: the tasks' QIDs and names
    name_task_entities([("metformin", "C1"), ("Metformin", "C1"), ("aspirin", None)], str(tmp_path / "te.parquet"))
    assert write_entity_ids_by_name(str(tmp_path / "te.parquet"), str(by_name)) == {"entities": 2, "with_qid": 1}
    assert pq.read_table(by_name).to_pylist() == [
        {"entity_id": "C1", "qid": "C1", "aliases": ["Metformin", "metformin"]},
        {"entity_id": "aspirin", "qid": None, "aliases": []},
    ]
