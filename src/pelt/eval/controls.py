"""Control tables: what a gain from the table is measured against.

A table that raises P@1 could do so through something other than each entity's own vector: the
extra ``( E )`` tokens, the norm L, the mere presence of a vector of a plausible kind. Two controls,
evaluated exactly like the table (same slots, same L, same counts, so the same frequency buckets),
take each of those explanations away:

- ``permuted``: the same vectors, moved among the entities by a seeded derangement (no entity keeps
  its own), so the set of vectors and their statistics are unchanged;
- ``random``: a random direction per entity, with the norm of its real sum (L rescales it anyway).

Both must stay near the baseline where the table gains: only then does the gain come from each
entity's own vector. A third control tells *what* of the entity the gain is:

- ``swapped``: the vectors moved by a derangement within each kind of entity (a person receives
  another person's vector, a company another company's), kinds read from a ``qid<TAB>kind`` file,
  the shape of a Wikidata ``instance of`` extraction. What this control keeps of the table's gain
  is the entity's kind; what it loses is the entity's own facts. Entities of no known kind, or
  alone in theirs, are deranged among themselves (counted in the log).
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np

from pelt.table import EntityTable, write_table

logger = logging.getLogger(__name__)

Control = Literal["permuted", "random", "swapped"]
CONTROLS: tuple[Control, ...] = ("permuted", "random", "swapped")
UNKNOWN_KIND = ""  # the group of entities whose kind the kinds file does not give


def derangement(n: int, rng: np.random.Generator) -> np.ndarray:
    """A permutation of ``range(n)`` without fixed points (n >= 2): a random cycle through all."""
    if n < 2:
        raise ValueError(f"a derangement needs at least 2 items, not {n}")
    order = rng.permutation(n)
    out = np.empty(n, dtype=np.int64)
    out[order] = np.roll(order, -1)  # each item takes the vector of the next one in a random cycle
    return out


def within_kinds(kinds: Sequence[str], rng: np.random.Generator) -> np.ndarray:
    """A permutation that moves every item to another item of its kind; items of
    :data:`UNKNOWN_KIND` or alone in their kind are deranged among themselves (with a single such
    item, it joins the largest kind's cycle)."""
    groups: dict[str, list[int]] = {}
    for i, kind in enumerate(kinds):
        groups.setdefault(kind, []).append(i)
    leftovers = groups.pop(UNKNOWN_KIND, []) + [
        i for k in [k for k, g in groups.items() if len(g) < 2] for i in groups.pop(k)
    ]
    if len(leftovers) == 1:
        if not groups:
            raise ValueError("a within-kind swap needs at least 2 entities")
        max(groups.values(), key=len).extend(leftovers)
    elif leftovers:
        groups[UNKNOWN_KIND] = leftovers
    out = np.empty(len(kinds), dtype=np.int64)
    for _, members in sorted(groups.items()):
        members = np.asarray(members)
        out[members] = members[derangement(len(members), rng)]
    return out


def control_vectors(
    sums: np.ndarray, kind: Control, seed: int, entity_kinds: Sequence[str] | None = None
) -> np.ndarray:
    """The control's vector sums for the real ``sums`` [N, H] (see the module docstring);
    ``entity_kinds`` (one per row) is what ``swapped`` swaps within."""
    rng = np.random.default_rng(seed)
    if kind == "permuted":
        return sums[derangement(len(sums), rng)]
    if kind == "random":
        directions = rng.standard_normal(sums.shape).astype(np.float32)
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        return directions * np.linalg.norm(sums, axis=1, keepdims=True)
    if kind == "swapped":
        if entity_kinds is None or len(entity_kinds) != len(sums):
            raise ValueError("the swapped control needs one kind per entity")
        return sums[within_kinds(entity_kinds, rng)]
    raise ValueError(f"unknown control {kind!r}; the controls are {CONTROLS}")


def read_kinds(path: str | os.PathLike[str]) -> dict[str, str]:
    """``qid<TAB>kind`` lines (``#`` comments) as a dict; a malformed line is an error naming it."""
    kinds: dict[str, str] = {}
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 2 or not all(f.strip() for f in fields):
                raise ValueError(f"{path}:{number}: expected 'qid<TAB>kind', got {line.rstrip()!r}")
            kinds[fields[0].strip()] = fields[1].strip()
    return kinds


def entity_kinds(table: EntityTable, ids: Sequence[str], kinds: Mapping[str, str]) -> list[str]:
    """The kind of each id: by its QID in the table, else by the id itself (a corpus without pages,
    whose ids are the tasks' own); :data:`UNKNOWN_KIND` where neither is in ``kinds``."""
    return [kinds.get(qid or "", kinds.get(entity_id, UNKNOWN_KIND)) for entity_id, qid in zip(ids, table.qids(ids))]


def write_control_table(
    table_path: str | os.PathLike[str],
    out_path: str | os.PathLike[str],
    kind: Control,
    *,
    seed: int = 0,
    kinds_path: str | os.PathLike[str] | None = None,
) -> None:
    """Write the ``kind`` control of a table: its ids, counts and metadata, the control's vectors
    (``kinds_path``, a ``qid<TAB>kind`` file, for ``swapped``)."""
    table = EntityTable.open(table_path)
    ids = list(table.ids())
    sums = table.vector_sums(ids)
    n_sentences, frequency = table.counts(ids)
    metadata = dict(table.metadata, control=kind, control_seed=seed)
    by_kind = None
    if kind == "swapped":
        if kinds_path is None:
            raise ValueError("the swapped control needs a kinds file (corpora.<domain>.kinds)")
        by_kind = entity_kinds(table, ids, read_kinds(kinds_path))
        counted = Counter(by_kind)
        logger.info(
            "swapped within kinds: %s; %d entities of no known kind",
            ", ".join(f"{k} {n}" for k, n in sorted(counted.items()) if k != UNKNOWN_KIND),
            counted[UNKNOWN_KIND],
        )
    write_table(out_path, ids, control_vectors(sums, kind, seed, by_kind), n_sentences, frequency, metadata)
    logger.info("control %s of %s (%d entities, seed %d) written to %s", kind, table_path, len(sums), seed, out_path)
