"""LAMA's data files (pure Python, so Spark and torch jobs share it): the subject of each fact, the
one entity a probe mentions (objects are predicted, never injected), the facts themselves, the
relations' templates and the common vocabulary.

LAMA T-REx names a fact's subject by ``sub_label`` + ``sub_uri``, Google-RE by ``sub_label`` +
``sub_w`` (often null), the ParaRel subset by ``sub_label`` only.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from pelt.tasks.jsonl import EntityRef, read_jsonl

logger = logging.getLogger(__name__)


def lama_subject(record: Mapping) -> EntityRef | None:
    """The subject (label, QID) of a T-REx, Google-RE or ParaRel fact; ``None`` when it has no label.

    T-REx names the subject's Wikidata item ``sub_uri``, Google-RE ``sub_w`` (null for many facts:
    its subjects are Freebase ids), ParaRel not at all. Labels are percent-decoded as LAMA's filter
    does: Google-RE writes 93 of its subjects as URL paths (``Stanis%C5%82aw``).
    """
    label = record.get("sub_label")
    if not isinstance(label, str) or not label.strip():
        return None
    return unquote(label), record.get("sub_uri") or record.get("sub_w") or None


def lama_entities(path: str) -> Iterator[EntityRef | None]:
    """The subject (name, QID) of each LAMA fact (:func:`lama_subject`)."""
    for _, record in read_jsonl(path):
        yield lama_subject(record)


# Google-RE relations are named by their Freebase predicate; LAMA's code holds their templates.
GOOGLE_RE_TEMPLATES = {
    "place_of_birth": "[X] was born in [Y] .",
    "date_of_birth": "[X] (born [Y]).",
    "place_of_death": "[X] died in [Y] .",
}


@dataclass(frozen=True)
class Fact:
    uuid: str
    relation: str
    subject: str
    subject_qid: str | None
    object: str


def relation_of(record: Mapping, path: str | Path) -> str:
    """T-REx names the relation (``predicate_id``), Google-RE its Freebase predicate, ParaRel only the file name."""
    if record.get("predicate_id"):
        return str(record["predicate_id"])
    if record.get("pred"):
        return str(record["pred"]).rstrip("/").rsplit("/", 1)[-1]
    return Path(path).stem.removesuffix("_test")


def load_templates(relations_path: str | os.PathLike[str]) -> dict[str, str]:
    """Relation -> template with one ``[X]`` and one ``[Y]``; Google-RE's templates unless the file overrides them."""
    templates = dict(GOOGLE_RE_TEMPLATES)
    for lineno, record in read_jsonl(relations_path):
        template = record.get("template", "")
        if template.count("[X]") != 1 or template.count("[Y]") != 1:
            raise ValueError(f"{relations_path}:{lineno}: template {template!r} needs exactly one [X] and one [Y]")
        templates[record["relation"]] = template
    return templates


@dataclass(frozen=True)
class FactCounts:
    """What :func:`load_facts` did not keep, by reason."""

    malformed: int  # no subject or object label
    duplicates: int  # a (relation, subject, object) already read: LAMA scores each once


def load_facts(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[Fact], FactCounts]:
    """The distinct facts of T-REx, Google-RE or ParaRel files, in file order, and what was left out.

    As LAMA's own filter: labels are percent-decoded (Google-RE's ``Stanis%C5%82aw``), and a relation's
    (subject, object) pair is scored once however many records state it (the first record's uuid
    and QID stand for it).
    """
    facts: list[Fact] = []
    seen: set[tuple[str, str, str]] = set()
    malformed = duplicates = 0
    for path in paths:
        for lineno, record in read_jsonl(path):
            subject = lama_subject(record)
            obj = record.get("obj_label")
            if subject is None or not isinstance(obj, str) or not obj.strip():
                malformed += 1
                continue
            relation = relation_of(record, path)
            key = (relation, subject[0], unquote(obj))
            if key in seen:
                duplicates += 1
                continue
            seen.add(key)
            facts.append(
                Fact(
                    uuid=str(record.get("uuid") or f"{Path(path).name}:{lineno}"),
                    relation=relation,
                    subject=subject[0],
                    subject_qid=subject[1],
                    object=key[2],
                )
            )
    if malformed:
        logger.warning("LAMA: skipped %d facts without a subject or object label", malformed)
    if duplicates:
        logger.info("LAMA: %d records repeat a fact of their relation and are scored once", duplicates)
    return facts, FactCounts(malformed, duplicates)


def read_vocab(path: str | os.PathLike[str]) -> list[str]:
    """The common vocabulary, one word a line, in file order (blank lines ignored)."""
    with open(path, encoding="utf-8") as fh:
        return [line.strip() for line in fh if line.strip()]
