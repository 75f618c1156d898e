"""Entity lookup tables: writing, memory-mapped reading, lookup and merging.

What users import (``from pelt.table import EntityTable``); the modules, lowest first:
:mod:`~pelt.table.format` (the file schema, writing, the sidecar), :mod:`~pelt.table.model_check`
(which model a table belongs to), :mod:`~pelt.table.hub` (tables fetched from and published to the Hugging Face Hub),
:mod:`~pelt.table.merge` (merging shards), :mod:`~pelt.table.keys` (the index of ids, QIDs and
aliases), :mod:`~pelt.table.lookup` (:class:`EntityTable`).
"""

from pelt.table.format import write_table
from pelt.table.lookup import EntityTable, merge_tables

__all__ = ["EntityTable", "merge_tables", "write_table"]
