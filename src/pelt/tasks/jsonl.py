"""What every task kind's reader shares (pure Python, so Spark and torch jobs share it): JSON lines
read with the place of a bad line named, and the (name, QID) pair a reader yields per entity."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

EntityRef = tuple[str, str | None]


def read_jsonl(path: str | Path) -> Iterator[tuple[int, dict]]:
    """``(line number, record)`` of each non-empty line; a line that is not JSON is an error naming the place."""
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}:{lineno}: not a JSON line ({err})") from None
