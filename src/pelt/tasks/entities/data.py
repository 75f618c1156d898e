"""An entity list's file (the ``entities`` kind, a table with no evaluation; pure Python): one entity
a line, or a CSV column, each a Wikipedia title, a Wikidata QID or a name.

Lists are read as people save them: UTF-8 with or without a byte-order mark (Notepad, Excel's "CSV
UTF-8"), UTF-16 with one (Notepad's and Excel's "Unicode"), any line ends, spaces around entries and
header names, and a CSV separated by commas, semicolons (Excel where the decimal mark is a comma) or
tabs; anything else is one line saying what to save instead, never names that silently match nothing.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pelt.tasks.jsonl import EntityRef

QID = re.compile(r"Q[1-9][0-9]*")
DELIMITERS = ",;\t"  # tried in this order: the first whose header has the columns asked for


def _listed(value: str, qid: str | None = None) -> EntityRef | None:
    """An entity list's entry: a QID stands for itself (it resolves by QID; as a name it matches
    nothing), anything else is a title or name."""
    value, qid = value.strip(), (qid or "").strip() or None
    if not value:
        return (qid, qid) if qid else None
    return (value, qid or (value if QID.fullmatch(value) else None))


def _text(path: str) -> str:
    """The file's text, its byte-order mark dropped: a mark kept would stick to the first name (or header
    column), which then matches nothing. ValueError when it is not text in UTF-8 or marked UTF-16."""
    data = Path(path).read_bytes()
    utf16 = data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
    if not utf16 and b"\0" in data:  # UTF-16 without a byte-order mark: a NUL byte every other character
        raise ValueError(f"{path}: holds NUL bytes (UTF-16 without a byte-order mark?); save the list as UTF-8")
    try:
        return data.decode("utf-16" if utf16 else "utf-8-sig")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        encoding = "UTF-16" if utf16 else "UTF-8"
        raise ValueError(f"{path}:{line}: not {encoding} text ({err.reason}); save the list as UTF-8") from None


def _csv_rows(path: str, text: str, column: str, qid_column: str | None) -> Iterator[tuple[str, str | None]]:
    """``(name, qid)`` of each row of a CSV list, its separator the first of :data:`DELIMITERS` whose
    header (names stripped of spaces) has the columns asked for."""
    wanted = [c for c in (column, qid_column) if c is not None]
    for delimiter in DELIMITERS:
        reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
        reader.fieldnames = [name.strip() for name in reader.fieldnames or []]
        if all(c in reader.fieldnames for c in wanted):
            return ((row[column] or "", row[qid_column] if qid_column else None) for row in reader)
    header = [name.strip() for name in next(csv.reader(io.StringIO(text, newline="")), [])]
    missing = next(c for c in wanted if c not in header)
    raise ValueError(f"{path}: no column {missing!r}; the header has {header}")


def listed_entities(path: str, column: str | None = None, qid_column: str | None = None) -> Iterator[EntityRef | None]:
    """The entities of an entity list: one a line, or with ``column`` the named column of a CSV file
    with a header (``qid_column``, when set, gives each row's QID too: a name to match in a corpus
    without pages, an id that resolves on one with them); None for a blank entry.

    A file that names no entity at all is an error: a table of nothing is never what was meant.
    """
    if column is None and qid_column is not None:
        raise ValueError(f"{path}: qid_column {qid_column!r} needs column (the CSV column of the names)")
    text = _text(path)
    rows: Iterable[tuple[str, str | None]]
    if column is None:
        rows = ((line, None) for line in io.StringIO(text, newline=""))
    else:
        rows = _csv_rows(path, text, column, qid_column)
    named = 0
    for value, qid in rows:
        entity = _listed(value, qid)
        named += entity is not None
        yield entity
    if not named:
        raise ValueError(f"{path}: names no entity (expected one title, QID or name a line, or a CSV column)")


def found_lines(
    name: str, task: Mapping[str, Any], files: Sequence[str], not_found: Mapping[str, Sequence[str]]
) -> list[str]:
    """What the terminal says of a list when a run ends: how many of its entries were found, and each
    one that was not with the closest names the corpus has (the task-entity stage's ``not_found``),
    so that a miss is seen where the run is watched, not only in a job's log."""
    entries = [
        ref
        for path in files
        for ref in listed_entities(path, task.get("column"), task.get("qid_column"))
        if ref is not None
    ]
    missing = list(dict.fromkeys(value for value, _ in entries if value in not_found))
    lines = [f"tasks.{name}: {len(entries) - len(missing)} of {len(entries)} entities found"]
    for value in missing:
        closest = ", ".join(repr(c) for c in not_found[value][:3]) or "none close"
        lines.append(f"  not found: {value!r} (closest: {closest})")
    return lines
