"""The closest entities to a name that found none (pelt.suggest)."""

from __future__ import annotations

from pelt.suggest import blocking_keys, closest_entities, describe

CANDIDATES = [
    ("Albert Einstein", "Albert Einstein"),
    ("Einstein", "Albert Einstein"),
    ("Marie Curie", "Marie Curie"),
    ("Pierre Curie", "Pierre Curie"),
    ("Curie", "Marie Curie"),
    ("Warsaw", "Warsaw"),
    ("Paris", "Paris"),
]


def test_a_misspelling_and_a_surname_find_their_entities():
    found = closest_entities(["Enstein", "Curie, Pierre", "Xyzzy"], CANDIDATES)
    assert found["Enstein"] == ["Albert Einstein"]  # one entity, though two of its names match
    assert found["Curie, Pierre"][0] == "Pierre Curie"  # word order does not matter
    assert found["Xyzzy"] == []  # nothing close: no suggestion rather than an unrelated one


def test_at_most_k_best_first_and_ties_by_id():
    found = closest_entities(["curie"], CANDIDATES, k=1)
    assert found == {"curie": ["Marie Curie"]}  # "Curie" itself, an exact match, beats "Pierre Curie"
    both = closest_entities(["Curies"], [("Marie Curie", "B"), ("Marie Curie", "A")], k=2)
    assert both == {"Curies": ["A", "B"]}


def test_blocking_keys_survive_a_typo_inside_a_word():
    assert blocking_keys("Enstein") & blocking_keys("Albert Einstein") == {"ein"}
    assert blocking_keys("Bo") == set()  # too short to block on: no suggestions rather than all names


def test_describe_names_the_suggestions():
    assert describe("Enstein", ["Albert Einstein"]) == "'Enstein' found no entity (closest: 'Albert Einstein')"
    assert describe("Xyzzy", []) == "'Xyzzy' found no entity (closest: none close)"


def test_suggestions_for_at_most_max_names_the_rest_counted(caplog):
    # 1 M names not found once cost 12 h: each scored against up to 200,000 candidates (issue 56 item 6)
    found = closest_entities(["Enstein", "Curie, Pierre", "Warsw", "Enstein"], CANDIDATES, max_names=2)
    assert found == {"Enstein": ["Albert Einstein"], "Curie, Pierre": ["Pierre Curie", "Marie Curie"], "Warsw": []}
    assert "suggestions for the first 2 of 3 names not found; the other 1 get none" in caplog.text
