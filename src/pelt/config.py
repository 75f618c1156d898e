"""Config mistakes said in a few lines: the key, the problem and, for a misspelt key, the key meant.

Snakemake's own validation message dumps the whole schema and config (hundreds of lines for one
wrong letter); the Snakefile asks here first and stops with this short form.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping

import yaml
from jsonschema import Draft202012Validator

_LONGEST = 200  # characters of a problem's description


def config_problems(config: Mapping, schema_path: str | os.PathLike[str]) -> list[str]:
    """One line per problem of ``config`` against the schema, in the order of the keys."""
    with open(schema_path, encoding="utf-8") as fh:
        schema = yaml.safe_load(fh)
    validator = Draft202012Validator(schema)
    problems = []
    for error in sorted(validator.iter_errors(config), key=lambda e: [str(p) for p in e.absolute_path]):
        where = ".".join(str(p) for p in error.absolute_path)
        if error.validator == "additionalProperties" and isinstance(error.instance, Mapping):
            allowed = list(error.schema.get("properties", {}))
            patterns = list(error.schema.get("patternProperties", {}))
            for key in error.instance:
                if key in allowed or any(re.search(p, key) for p in patterns):
                    continue
                meant = difflib.get_close_matches(key, allowed, n=1)
                hint = f"did you mean {meant[0]!r}?" if meant else f"known keys: {', '.join(allowed)}"
                problems.append(f"{'.'.join(filter(None, [where, key]))}: unknown key; {hint}")
            continue
        message = error.message if len(error.message) <= _LONGEST else error.message[: _LONGEST - 3] + "..."
        problems.append(f"{where or 'config'}: {message}")
    return problems
