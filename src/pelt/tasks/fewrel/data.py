"""FewRel's data files (pure Python, so Spark and torch jobs share it): JSON mapping each relation to
its instances, whose ``h`` and ``t`` are ``[name, id, positions]``; the entities are both the head
and the tail of each instance. FewRel trains on Wiki80 files too (Wiki80 is FewRel's train + val),
so its readers take both."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator

from pelt.tasks.jsonl import EntityRef
from pelt.tasks.relation.data import Entity, Instance, make_entity, make_instance, report_skipped, tokens_of
from pelt.tasks.wiki80.data import read_wiki80, wiki80_entities

logger = logging.getLogger(__name__)


def fewrel_entities(path: str) -> Iterator[EntityRef | None]:
    """The head and tail (name, QID) of each FewRel instance; None where a side has no name."""
    if str(path).endswith(".jsonl"):  # FewRel trains on Wiki80 files too (run_fewrel reads both)
        yield from wiki80_entities(path)
        return
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a FewRel file maps relation -> instances, got {type(data).__name__}")
    for instances in data.values():
        for inst in instances:
            for side in ("h", "t"):
                value = inst.get(side)
                ok = isinstance(value, list) and len(value) >= 2 and isinstance(value[0], str)
                yield (value[0], value[1] or None) if ok else None


def _fewrel_entity(value: object, n_tokens: int) -> Entity | None:
    if not (isinstance(value, list) and len(value) >= 3 and isinstance(value[2], list) and value[2]):
        return None
    positions = value[2][0]
    if not (isinstance(positions, list) and positions and all(isinstance(p, int) for p in positions)):
        return None
    return make_entity(value[0], value[1], min(positions), max(positions) + 1, n_tokens)


def read_fewrel(path: str | os.PathLike[str]) -> list[Instance]:
    """Instances of a FewRel JSON file, in file order; unusable records are skipped, counted and logged."""
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a FewRel file maps relation -> instances, got {type(data).__name__}")
    out: list[Instance] = []
    total = 0
    for relation, records in data.items():
        for record in records:
            total += 1
            tokens = tokens_of(record, "tokens") if isinstance(record, dict) else None
            if tokens is None:
                continue
            n = len(tokens)
            head, tail = _fewrel_entity(record.get("h"), n), _fewrel_entity(record.get("t"), n)
            inst = make_instance(tokens, head, tail, relation)
            if inst is not None:
                out.append(inst)
    report_skipped(path, total - len(out), total)
    return out


def read_instances(paths: Iterable[str | os.PathLike[str]]) -> list[Instance]:
    """Instances of several files, Wiki80 (``.jsonl``) or FewRel (any other suffix), without duplicates.

    Wiki80's files are disjoint, but a user may list a file twice or mix a FewRel file with the
    Wiki80 file holding the same sentences; a duplicate would be both a support and a query.
    """
    seen: set[tuple] = set()
    out: list[Instance] = []
    duplicates = 0
    for path in paths:
        for inst in read_wiki80(path) if str(path).endswith(".jsonl") else read_fewrel(path):
            if inst.key in seen:
                duplicates += 1
                continue
            seen.add(inst.key)
            out.append(inst)
    if duplicates:
        logger.warning("dropped %d duplicate instances (same sentence and entity spans)", duplicates)
    return out
