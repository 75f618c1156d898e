"""Synthetic FewRel / Wiki80 data over the tiny models' corpus, for the relation-classification tests.

Sentences are short and use the words the tiny tokenizers were trained on, so that they stay far
below the tiny models' 64 positions (the demo files' words are spelled out byte by byte there).
One template per relation, entity pairs drawn from :data:`NAMES`; QIDs are ``Q<index in NAMES>``.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

TEMPLATES = {
    "P19": "{h} was born in {t} .",
    "P36": "{h} is the capital of {t} .",
    "P108": "{h} worked in {t} .",
    "P206": "{h} lies on the {t} river .",
    "P800": "{h} wrote a program for {t} .",
    "P30": "{h} is a country in {t} .",
    "P47": "{h} is next to {t} .",
    "P17": "{h} is a city of {t} .",
    "P131": "{h} is in the state of {t} .",
    "P150": "{t} contains {h} .",
}
NAMES = [
    "Marie Curie",
    "Albert Einstein",
    "Niels Bohr",
    "Ada Lovelace",
    "Paris",
    "Warsaw",
    "Berlin",
    "Bern",
    "Copenhagen",
    "France",
    "Germany",
    "Poland",
]
_PAIRS = list(itertools.permutations(NAMES, 2))


def qid(name: str) -> str:
    return f"Q{NAMES.index(name)}"


def fewrel_record(relation: str, h: str, t: str) -> dict:
    """A FewRel record: the relation's template filled with h and t (names lowercased, as in FewRel)."""
    tokens, spans = [], {}
    for word in TEMPLATES[relation].split():
        if word in ("{h}", "{t}"):
            name = h if word == "{h}" else t
            spans[word] = list(range(len(tokens), len(tokens) + len(name.split())))
            tokens += name.split()
        else:
            tokens.append(word)
    return {"tokens": tokens, "h": [h.lower(), qid(h), [spans["{h}"]]], "t": [t.lower(), qid(t), [spans["{t}"]]]}


def records(relation: str, n: int, offset: int = 0) -> list[dict]:
    """``n`` FewRel records of ``relation`` with different entity pairs (``offset`` shifts the pairs)."""
    return [fewrel_record(relation, *_PAIRS[(offset + 7 * i) % len(_PAIRS)]) for i in range(n)]


def wiki80_line(record: dict, relation: str) -> str:
    """The FewRel record in Wiki80's JSONL layout, labelled ``relation``."""
    sides = {}
    for side in ("h", "t"):
        name, entity_id, positions = record[side]
        sides[side] = {"name": name, "id": entity_id, "pos": [positions[0][0], positions[0][-1] + 1]}
    return json.dumps({"token": record["tokens"], **sides, "relation": relation})


def write_wiki80(path: Path, labelled: list[tuple[str, list[dict]]]) -> str:
    """Write (relation, records) groups as a Wiki80 JSONL file; returns the path."""
    path.write_text("".join(wiki80_line(r, relation) + "\n" for relation, group in labelled for r in group))
    return str(path)
