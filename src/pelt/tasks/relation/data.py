"""What FewRel and Wiki80 share (pure Python, so Spark and torch jobs share it): a relation
instance, its head and tail entities and their token spans, whichever file it came from, and the
checks that make a record an instance (spans inside the sentence, not overlapping, not blank)."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

logger = logging.getLogger(__name__)


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


def make_entity(name: object, qid: object, start: object, end: object, n_tokens: int) -> Entity | None:
    ok = (
        isinstance(name, str)
        and isinstance(start, int)
        and isinstance(end, int)
        and 0 <= start < end <= n_tokens
        and (qid is None or isinstance(qid, str))
    )
    return Entity(name, qid or None, start, end) if ok else None


def make_instance(tokens: object, head: Entity | None, tail: Entity | None, relation: str) -> Instance | None:
    """An instance, or None when the record cannot be marked: bad spans, overlapping or blank mentions."""
    if head is None or tail is None or head.start < tail.end and tail.start < head.end:
        return None
    if any(not "".join(tokens[e.start : e.end]).strip() for e in (head, tail)):
        return None
    return Instance(tuple(tokens), head, tail, relation)


def tokens_of(record: dict, field: str) -> list[str] | None:
    tokens = record.get(field)
    ok = isinstance(tokens, list) and tokens and all(isinstance(t, str) for t in tokens)
    return tokens if ok else None


def report_skipped(path: str | os.PathLike[str], skipped: int, total: int) -> None:
    if skipped:
        logger.warning("%s: skipped %d of %d records (missing fields, bad or overlapping spans)", path, skipped, total)
