"""The task-entities file, ``task_entities.parquet``: each (name, QID) a task asks about, the corpus
entity it resolved to (or none) and by which rule, and for a name that found none the closest
entities the corpus has (:mod:`pelt.suggest`). Written by the linking stage (Spark) or by name
(:func:`name_task_entities`), read by sampling, string linking and every evaluation; pyarrow only,
so Spark and torch jobs share it.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pelt.suggest import describe

log = logging.getLogger(__name__)

TASK_ENTITIES_SCHEMA = pa.schema(
    [
        ("name", pa.string()),
        ("qid", pa.string()),
        ("entity_id", pa.string()),
        ("how", pa.string()),
        ("suggestions", pa.list_(pa.string())),  # null where the name found its entity
    ]
)
MAX_NAMED = 50  # names not found that the log names one per line; all of them are in the file


def name_task_entities(wanted: list[tuple[str, str | None]], out_path: str) -> dict[str, int]:
    """The task-entities file of a corpus without pages (S2ORC): each entity is its own id (the
    QID when given, else the name, ``how`` = ``string``), and string matching of its names in
    the text (:func:`pelt.linking.link.link_by_string`) finds its mentions."""
    unique = list(dict.fromkeys(wanted))
    rows = [(name, qid, qid or name, "string", None) for name, qid in unique]
    return write_task_entities(rows, len(wanted), out_path, ("string",))


def write_entity_ids_by_name(task_entities_path: str, out_path: str) -> dict[str, int]:
    """The ids file of a corpus without pages (as :func:`pelt.linking.entities.write_entity_ids`
    writes for Wikipedia): each resolved entity's QID as the task gave it and its task names as
    aliases, so that the table finds it by either."""
    qids: dict[str, str | None] = {}
    names: dict[str, set[str]] = {}
    for row in pq.read_table(task_entities_path, columns=["name", "qid", "entity_id"]).to_pylist():
        entity_id = row["entity_id"]
        if entity_id is not None:
            qids[entity_id] = qids.get(entity_id) or row["qid"]
            names.setdefault(entity_id, set()).update({row["name"]} - {entity_id})
    ids = {e: (qids[e], sorted(names[e])) for e in qids}
    table = pa.table(
        {
            "entity_id": pa.array(sorted(ids), pa.string()),
            "qid": pa.array([ids[e][0] for e in sorted(ids)], pa.string()),
            "aliases": pa.array([ids[e][1] for e in sorted(ids)], pa.list_(pa.string())),
        }
    )
    Path(out_path).mkdir(parents=True, exist_ok=True)
    partial_path = Path(out_path) / ".part-0.parquet.partial"  # hidden: readers skip it
    pq.write_table(table, partial_path)
    os.replace(partial_path, Path(out_path) / "part-0.parquet")
    counts = {"entities": len(ids), "with_qid": sum(q is not None for q, _ in ids.values())}
    for key, value in counts.items():
        log.info("entity ids: %s = %d", key, value)
    return counts


def write_task_entities(rows: list[tuple], n_wanted: int, out_path: str, hows: Iterable[str]) -> dict[str, int]:
    """Write the rows atomically; return and log ``wanted``, ``duplicates`` and ``how_<rule>`` for
    each of ``hows``, and name each name that found no entity with its suggestions (a count alone
    leaves a user to guess which of their names was misspelt)."""
    table = pa.Table.from_pylist(
        [dict(zip(TASK_ENTITIES_SCHEMA.names, row, strict=True)) for row in rows], schema=TASK_ENTITIES_SCHEMA
    )
    Path(out_path).parent.mkdir(parents=True, exist_ok=True)
    partial_path = f"{out_path}.partial"
    pq.write_table(table, partial_path)
    os.replace(partial_path, out_path)  # a killed job leaves no file that looks complete
    counts = {"wanted": n_wanted, "duplicates": n_wanted - len(rows)}
    by_how = Counter(row[3] for row in rows)
    counts.update({f"how_{how}": by_how[how] for how in sorted(hows)})
    for key, value in counts.items():
        log.info("task entities: %s = %d", key, value)
    missing = not_found(rows)
    for name, suggestions in list(missing.items())[:MAX_NAMED]:
        log.warning("task entity %s", describe(name, suggestions))
    if len(missing) > MAX_NAMED:
        log.warning("... and %d more names found no entity (all in %s)", len(missing) - MAX_NAMED, out_path)
    return counts


def not_found(rows: Iterable[Sequence]) -> dict[str, list[str]]:
    """Each name that found no entity -> its suggestions, from rows of the file's columns."""
    return {row[0]: list(row[4] or []) for row in rows if row[2] is None}


def read_not_found(path: str | os.PathLike[str]) -> dict[str, list[str]]:
    """:func:`not_found` of a task-entities file (one written before suggestions has none)."""
    table = pq.read_table(path)
    if "suggestions" not in table.column_names:
        table = table.append_column("suggestions", pa.nulls(len(table), pa.list_(pa.string())))
    return not_found(zip(*(table.column(c).to_pylist() for c in TASK_ENTITIES_SCHEMA.names)))


def names_by_entity(path: str) -> dict[str, list[str]]:
    """entity_id -> the task names that resolved to it, for string matching."""
    names: dict[str, list[str]] = {}
    for row in pq.read_table(path, columns=["name", "entity_id"]).to_pylist():
        if row["entity_id"] is not None:
            names.setdefault(row["entity_id"], []).append(row["name"])
    return {entity_id: sorted(set(entity_names)) for entity_id, entity_names in sorted(names.items())}


def resolved_entity_ids(path: str) -> list[str]:
    """The distinct entity ids of a task-entities file, for sampling on demand; entities that
    were not found are left out (their count is in the resolution log)."""
    entity_ids = pq.read_table(path, columns=["entity_id"]).column("entity_id").to_pylist()
    return sorted({entity_id for entity_id in entity_ids if entity_id is not None})


def resolve_entities(
    entities: Sequence[tuple[str, str | None]], task_entities_path: str | os.PathLike[str]
) -> list[str | None]:
    """Entity id of each ``(name, qid)`` through ``task_entities.parquet`` (by QID when given, else by name).

    A pair with a QID is never resolved by its name: another entity of the same name (a namesake
    with another QID) would then lend it the wrong vector.  Used by every task (LAMA subjects,
    FewRel / Wiki80 heads and tails), so that all resolve alike.
    """
    table = pq.read_table(task_entities_path, columns=["name", "qid", "entity_id"]).to_pylist()
    by_qid = {r["qid"]: r["entity_id"] for r in table if r["qid"] and r["entity_id"]}
    by_name: dict[str, str] = {}
    for r in table:
        if r["entity_id"]:
            by_name.setdefault(r["name"], r["entity_id"])
    return [by_qid.get(qid) if qid else by_name.get(name) for name, qid in entities]
