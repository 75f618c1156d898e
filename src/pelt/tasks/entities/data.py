"""An entity list's file (the ``entities`` kind, a table with no evaluation; pure Python): one entity
a line, or a CSV column, each a Wikipedia title, a Wikidata QID or a name."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator

from pelt.tasks.jsonl import EntityRef

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
