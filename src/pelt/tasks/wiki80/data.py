"""Wiki80's data files (pure Python, so Spark and torch jobs share it): JSON lines whose ``h`` and
``t`` are ``{name, id, pos}``; the entities are both the head and the tail of each instance."""

from __future__ import annotations

import os
from collections.abc import Iterator

from pelt.tasks.jsonl import EntityRef, read_jsonl
from pelt.tasks.relation.data import Entity, Instance, make_entity, make_instance, report_skipped, tokens_of


def wiki80_entities(path: str) -> Iterator[EntityRef | None]:
    """The head and tail (name, QID) of each Wiki80 record; None where a side has no name."""
    for _, record in read_jsonl(path):
        for side in ("h", "t"):
            value = record.get(side)
            ok = isinstance(value, dict) and isinstance(value.get("name"), str)
            yield (value["name"], value.get("id") or None) if ok else None


def _wiki80_entity(value: object, n_tokens: int) -> Entity | None:
    if not (isinstance(value, dict) and isinstance(value.get("pos"), list) and len(value["pos"]) == 2):
        return None
    return make_entity(value.get("name"), value.get("id"), *value["pos"], n_tokens)


def read_wiki80(path: str | os.PathLike[str]) -> list[Instance]:
    """Instances of a Wiki80 JSONL file, in file order; unusable records are skipped, counted and logged."""
    out: list[Instance] = []
    total = 0
    for _, record in read_jsonl(path):
        total += 1
        tokens = tokens_of(record, "token")
        relation = record.get("relation")
        if tokens is None or not isinstance(relation, str):
            continue
        n = len(tokens)
        inst = make_instance(tokens, _wiki80_entity(record.get("h"), n), _wiki80_entity(record.get("t"), n), relation)
        if inst is not None:
            out.append(inst)
    report_skipped(path, total - len(out), total)
    return out
