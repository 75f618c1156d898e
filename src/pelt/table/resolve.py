"""From what a user holds to a table's entity ids, one way for every command that takes an entity
(``pelt table lookup``, ``similar``, ``ids``, ``examples/use_a_table.py --entity``): an entity id, a
QID, an alias, or any of these case-folded with ``ignore_case``; a name that finds none is one error
line naming the closest names the table has (:mod:`pelt.suggest`), so that a typo costs one more
try, not a search for the right command.

The suggestions are computed only for the names not found, over the table's ids and aliases. A
pass in Python over every name of a million-entity table (with up to 32 aliases each) would take
minutes, so the candidates are first narrowed in Arrow to the names containing one of the blocking
keys of :func:`pelt.suggest.blocking_keys` (a superset of those sharing a key), which
:func:`pelt.suggest.closest_entities` then scores as it scores any candidates.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pelt.suggest import blocking_keys, closest_entities, describe
from pelt.table.lookup import EntityTable, FindBy

# Above this many blocking keys (many names not found at once) one Arrow pass per key costs more
# than scoring every name: the candidates are then not narrowed.
MAX_FILTER_KEYS = 64


def resolve(
    table: EntityTable, names: Sequence[str], *, by: Sequence[FindBy] | None = None, ignore_case: bool = False
) -> list[str]:
    """The entity id of each of ``names`` (see :meth:`EntityTable.find`); a KeyError of one line naming
    every name not found with its closest entities otherwise."""
    found = table.find(names, by=by, ignore_case=ignore_case)
    missing = [name for name, entity_id in zip(names, found) if entity_id is None]
    if missing:
        raise KeyError(not_found(table, missing, by=by))
    return [entity_id for entity_id in found if entity_id is not None]


def not_found(table: EntityTable, names: Sequence[str], *, by: Sequence[FindBy] | None = None) -> str:
    """One line: the table, and each name with the closest entities the table has."""
    suggestions = closest_names(table, names)
    where = f"{table.path}" + (f" (by {','.join(by)})" if by else "")
    return f"not in {where}: " + "; ".join(describe(name, suggestions[name]) for name in suggestions)


def closest_names(table: EntityTable, names: Sequence[str]) -> dict[str, list[str]]:
    """For each name, the ids of the entities whose id or alias is closest (:func:`closest_entities`)."""
    return closest_entities(names, _candidates(table, names))


def _candidates(table: EntityTable, names: Sequence[str]) -> list[tuple[str, str]]:
    """(name, entity id) of every id and alias that may share a blocking key with one of ``names``."""
    keys = set().union(*map(blocking_keys, names))
    if not keys or not len(table):
        return []
    texts = table.column("entity_id").combine_chunks().cast(pa.large_string())
    rows = np.arange(len(table))
    if table.has_ids:
        aliases = table.column("aliases").combine_chunks()
        texts = pa.concat_arrays([texts, pc.list_flatten(aliases).cast(pa.large_string())])
        rows = np.concatenate([rows, pc.list_parent_indices(aliases).to_numpy().astype(np.int64)])
    if len(keys) <= MAX_FILTER_KEYS:
        folded = pc.utf8_lower(texts)
        keep = np.zeros(len(texts), bool)
        for key in keys:
            keep |= pc.fill_null(pc.match_substring(folded, key), False).to_numpy(zero_copy_only=False)
        texts, rows = texts.filter(pa.array(keep)), rows[keep]
    return list(zip(texts.to_pylist(), table.ids_at(rows)))
