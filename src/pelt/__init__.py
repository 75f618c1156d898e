"""pelt: pluggable entity lookup tables (Ye et al., ACL 2022).

The runtime API, what a user of a built table needs::

    from pelt import EntityTable, inject, load_masked_lm, forward_mlm

Building a table is the workflow's business: one package per stage, in data-flow order,
``corpus`` -> ``linking`` -> ``sampling`` -> ``encoding`` -> ``table`` -> ``tasks`` -> ``eval`` -> ``report``;
the loose modules are the cross-cutting ones (``config``, ``registry``, ``logs``, ``spark``,
``download``, ``suggest``, ``cli``).
The names above are imported on first use, so that Spark jobs, which import ``pelt.corpus`` and
``pelt.linking`` in an environment without torch, never load it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_RUNTIME = {
    "EntityTable": "pelt.table",
    "inject": "pelt.encoding.injection",
    "load_masked_lm": "pelt.encoding.models",
    "forward_mlm": "pelt.encoding.models",
}
__all__ = ["EntityTable", "forward_mlm", "inject", "load_masked_lm"]

if TYPE_CHECKING:
    from pelt.encoding.injection import inject
    from pelt.encoding.models import forward_mlm, load_masked_lm
    from pelt.table import EntityTable


def __getattr__(name: str) -> Any:
    if name in _RUNTIME:
        return getattr(importlib.import_module(_RUNTIME[name]), name)
    raise AttributeError(f"module 'pelt' has no attribute {name!r}")
