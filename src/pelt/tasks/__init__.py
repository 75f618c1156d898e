"""The evaluation tasks, one package per kind (``pelt.tasks.<kind>``: its data reader, pure Python,
and its runner, which loads torch), and what they share: the entities the configured tasks need,
read from their data files by each kind's reader (pure Python, so Spark and torch jobs share it),
and FewRel and Wiki80 instances.

The paper builds table rows only for the entities its tasks mention (``sampling.entities:
on_demand``), so the workflow needs the task entities *before* sampling.  This module reads them
straight from the official files, in each dataset's own layout:

- LAMA: the **subject** of each fact (:mod:`pelt.tasks.lama.data`);
- FewRel (``h``/``t`` = ``[name, id, positions]``) and Wiki80 (``h``/``t`` = ``{name, id, ...}``):
  both the head and the tail of each instance;
- an entity list (the ``entities`` kind, a table with no evaluation): one entity a line, or a CSV
  column, each a Wikipedia title, a Wikidata QID or a name (:func:`listed_entities`).

The ``tasks:`` config mapping names the files (globs), keyed per task kind (:data:`pelt.registry.KINDS`);
a task's kind is its ``kind`` field, else its key (so ``fewrel2: {kind: fewrel, ...}`` works).
A key may also map names to files (Wiki80's ``train: {"1%": ..., "100%": ...}``, one file per
training setting): its values are read.
"""

from __future__ import annotations

import csv
import json
import logging
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from pelt.registry import expand_globs, kind_of, resolve
from pelt.tasks.common import EntityRef, read_jsonl

logger = logging.getLogger(__name__)

# Keys of the files a task trains and validates on (served by its ``train_domain``, see domain_of).
TRAINING_KEYS = ("train", "val")


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


def wiki80_entities(path: str) -> Iterator[EntityRef | None]:
    """The head and tail (name, QID) of each Wiki80 record; None where a side has no name."""
    for _, record in read_jsonl(path):
        for side in ("h", "t"):
            value = record.get(side)
            ok = isinstance(value, dict) and isinstance(value.get("name"), str)
            yield (value["name"], value.get("id") or None) if ok else None


QID = re.compile(r"Q[1-9][0-9]*")


def _listed(value: str, qid: str | None = None) -> EntityRef | None:
    """An entity list's entry: a QID stands for itself (it resolves by QID; as a name it matches
    nothing), anything else is a title or name."""
    value, qid = value.strip(), (qid or "").strip() or None
    if not value:
        return (qid, qid) if qid else None
    return (value, qid or (value if QID.fullmatch(value) else None))


def listed_entities(path: str, column: str | None = None, qid_column: str | None = None) -> Iterator[EntityRef | None]:
    """The entities of an entity list: one a line, or with ``column`` the named column of a CSV file
    with a header (``qid_column``, when set, gives each row's QID too: a name to match in a corpus
    without pages, an id that resolves on one with them); None for a blank entry.

    A file that names no entity at all is an error: a table of nothing is never what was meant.
    """
    named = 0
    with open(path, encoding="utf-8", newline="") as fh:
        if column is None:
            if qid_column is not None:
                raise ValueError(f"{path}: qid_column {qid_column!r} needs column (the CSV column of the names)")
            rows: Iterable[tuple[str, str | None]] = ((line, None) for line in fh)
        else:
            reader = csv.DictReader(fh)
            for wanted in filter(None, (column, qid_column)):
                if wanted not in (reader.fieldnames or []):
                    raise ValueError(f"{path}: no column {wanted!r}; the header has {reader.fieldnames}")
            rows = ((row[column] or "", row[qid_column] if qid_column else None) for row in reader)
        for value, qid in rows:
            entity = _listed(value, qid)
            named += entity is not None
            yield entity
    if not named:
        raise ValueError(f"{path}: names no entity (expected one title, QID or name a line, or a CSV column)")


def domain_of(task: Mapping, key: str) -> str:
    """The domain whose table serves the files of ``key``: a FewRel task's training and validation
    files use its ``train_domain`` when it names one (FewRel 2.0 trains on Wikipedia instances)."""
    if key in TRAINING_KEYS and task.get("train_domain"):
        return task["train_domain"]
    return task.get("domain")


def task_entities(tasks: Mapping[str, Mapping], domain: str) -> list[EntityRef]:
    """The deduplicated, sorted ``(name, qid)`` pairs that the tasks using ``domain``'s table mention.

    ``qid`` is ``None`` where the dataset gives none.  Records without an entity name are skipped,
    counted and logged; an unknown task kind or a glob matching nothing raises.
    """
    found: set[EntityRef] = set()
    for name, task in tasks.items():
        kind = kind_of(name, task)
        read = resolve(kind.entity_reader)
        options = {key: task[key] for key in kind.reader_keys if task.get(key) is not None}
        for key in kind.data_keys:
            if key not in task or domain_of(task, key) != domain:
                continue
            for path in expand_globs(task[key], f"tasks.{name}.{key}"):
                skipped, before = 0, len(found)
                for entity in read(path, **options):
                    if entity is None:
                        skipped += 1
                    else:
                        found.add(entity)
                if skipped:
                    logger.warning("%s: skipped %d records without an entity name", path, skipped)
                logger.info("%s: %d new task entities", path, len(found) - before)
    logger.info("domain %s: %d task entities", domain, len(found))
    return sorted(found, key=lambda e: (e[0], e[1] or ""))


# --- FewRel and Wiki80 instances --------------------------------------------------------------


@dataclass(frozen=True)
class Entity:
    """One side of a relation instance: its name, Wikidata QID (UMLS CUI in FewRel 2.0) and token span."""

    name: str
    qid: str | None
    start: int
    end: int  # exclusive


@dataclass(frozen=True)
class Instance:
    """A relation instance of FewRel or Wiki80, whichever file it came from."""

    tokens: tuple[str, ...]
    head: Entity
    tail: Entity
    relation: str

    @property
    def key(self) -> tuple:
        """Identity of the sentence and entity spans, independent of the relation's label in a given file."""
        return self.tokens, self.head.start, self.head.end, self.tail.start, self.tail.end


def _entity(name: object, qid: object, start: object, end: object, n_tokens: int) -> Entity | None:
    ok = (
        isinstance(name, str)
        and isinstance(start, int)
        and isinstance(end, int)
        and 0 <= start < end <= n_tokens
        and (qid is None or isinstance(qid, str))
    )
    return Entity(name, qid or None, start, end) if ok else None


def _instance(tokens: object, head: Entity | None, tail: Entity | None, relation: str) -> Instance | None:
    """An instance, or None when the record cannot be marked: bad spans, overlapping or blank mentions."""
    if head is None or tail is None or head.start < tail.end and tail.start < head.end:
        return None
    if any(not "".join(tokens[e.start : e.end]).strip() for e in (head, tail)):
        return None
    return Instance(tuple(tokens), head, tail, relation)


def _tokens(record: dict, field: str) -> list[str] | None:
    tokens = record.get(field)
    ok = isinstance(tokens, list) and tokens and all(isinstance(t, str) for t in tokens)
    return tokens if ok else None


def _fewrel_entity(value: object, n_tokens: int) -> Entity | None:
    if not (isinstance(value, list) and len(value) >= 3 and isinstance(value[2], list) and value[2]):
        return None
    positions = value[2][0]
    if not (isinstance(positions, list) and positions and all(isinstance(p, int) for p in positions)):
        return None
    return _entity(value[0], value[1], min(positions), max(positions) + 1, n_tokens)


def _wiki80_entity(value: object, n_tokens: int) -> Entity | None:
    if not (isinstance(value, dict) and isinstance(value.get("pos"), list) and len(value["pos"]) == 2):
        return None
    return _entity(value.get("name"), value.get("id"), *value["pos"], n_tokens)


def _report_skipped(path: str | os.PathLike[str], skipped: int, total: int) -> None:
    if skipped:
        logger.warning("%s: skipped %d of %d records (missing fields, bad or overlapping spans)", path, skipped, total)


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
            tokens = _tokens(record, "tokens") if isinstance(record, dict) else None
            if tokens is None:
                continue
            n = len(tokens)
            inst = _instance(tokens, _fewrel_entity(record.get("h"), n), _fewrel_entity(record.get("t"), n), relation)
            if inst is not None:
                out.append(inst)
    _report_skipped(path, total - len(out), total)
    return out


def read_wiki80(path: str | os.PathLike[str]) -> list[Instance]:
    """Instances of a Wiki80 JSONL file, in file order; unusable records are skipped, counted and logged."""
    out: list[Instance] = []
    total = 0
    for _, record in read_jsonl(path):
        total += 1
        tokens = _tokens(record, "token")
        relation = record.get("relation")
        if tokens is None or not isinstance(relation, str):
            continue
        n = len(tokens)
        inst = _instance(tokens, _wiki80_entity(record.get("h"), n), _wiki80_entity(record.get("t"), n), relation)
        if inst is not None:
            out.append(inst)
    _report_skipped(path, total - len(out), total)
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
