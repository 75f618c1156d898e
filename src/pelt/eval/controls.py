"""Control tables: what a gain from the table is measured against.

A table that raises P@1 could do so through something other than each entity's own vector: the
extra ``( E )`` tokens, the norm L, the mere presence of a vector of a plausible kind. Two controls,
evaluated exactly like the table (same slots, same L, same counts, so the same frequency buckets),
take each of those explanations away:

- ``permuted``: the same vectors, moved among the entities by a seeded derangement (no entity keeps
  its own), so the set of vectors and their statistics are unchanged;
- ``random``: a random direction per entity, with the norm of its real sum (L rescales it anyway).

Both must stay near the baseline where the table gains: only then does the gain come from each
entity's own vector.
"""

from __future__ import annotations

import logging
import os
from typing import Literal

import numpy as np

from pelt.table import EntityTable, write_table

logger = logging.getLogger(__name__)

Control = Literal["permuted", "random"]
CONTROLS: tuple[Control, ...] = ("permuted", "random")


def derangement(n: int, rng: np.random.Generator) -> np.ndarray:
    """A permutation of ``range(n)`` without fixed points (n >= 2): a random cycle through all."""
    if n < 2:
        raise ValueError(f"a derangement needs at least 2 items, not {n}")
    order = rng.permutation(n)
    out = np.empty(n, dtype=np.int64)
    out[order] = np.roll(order, -1)  # each item takes the vector of the next one in a random cycle
    return out


def control_vectors(sums: np.ndarray, kind: Control, seed: int) -> np.ndarray:
    """The control's vector sums for the real ``sums`` [N, H] (see the module docstring)."""
    rng = np.random.default_rng(seed)
    if kind == "permuted":
        return sums[derangement(len(sums), rng)]
    if kind == "random":
        directions = rng.standard_normal(sums.shape).astype(np.float32)
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        return directions * np.linalg.norm(sums, axis=1, keepdims=True)
    raise ValueError(f"unknown control {kind!r}; the controls are {CONTROLS}")


def write_control_table(
    table_path: str | os.PathLike[str], out_path: str | os.PathLike[str], kind: Control, *, seed: int = 0
) -> None:
    """Write the ``kind`` control of a table: its ids, counts and metadata, the control's vectors."""
    table = EntityTable.open(table_path)
    ids = list(table.ids())
    sums = table.vector_sums(ids)
    n_sentences, frequency = table.counts(ids)
    metadata = dict(table.metadata, control=kind, control_seed=seed)
    write_table(out_path, ids, control_vectors(sums, kind, seed), n_sentences, frequency, metadata)
    logger.info("control %s of %s (%d entities, seed %d) written to %s", kind, table_path, len(sums), seed, out_path)
