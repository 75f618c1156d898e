"""What a run made, said both where the run is watched and where it is read: each table written and,
per entity list, how many of its entries were found, each miss with the closest names the corpus
has. The terminal shows these lines when a run ends (the Snakefile's ``onsuccess``) and the landing
page repeats them, so that whoever built a table for their own list meets its misses without
opening a job's log or the coverage page.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pelt import registry


@dataclass(frozen=True)
class ListedTask:
    """A task whose kind speaks at the end of a run (:attr:`pelt.registry.TaskKind.end_of_run`): its
    config, the files listing its entities, and the task-entity stage's counts, whose
    ``details.not_found`` holds each miss with its closest names."""

    name: str
    task: Mapping[str, Any]
    files: Sequence[str]
    counts: str


def outcome_lines(tables: Sequence[str], tasks: Sequence[ListedTask]) -> list[str]:
    """One line per table, then each listed task's own lines; a task whose counts are not written
    (its stage did not run) says nothing rather than guessing."""
    lines = [f"table: {path}" for path in tables]
    for listed in tasks:
        if not os.path.exists(listed.counts):
            continue
        with open(listed.counts, encoding="utf-8") as fh:
            not_found = json.load(fh).get("details", {}).get("not_found", {})
        end_of_run = registry.kind_of(listed.name, listed.task).end_of_run
        if end_of_run:
            lines += registry.resolve(end_of_run)(listed.name, listed.task, listed.files, not_found)
    return lines


def outcome_markdown(lines: Sequence[str]) -> list[str]:
    """The landing page's section of the same lines: the tables, then each list's count and misses."""
    if not lines:
        return []
    return ["", "**This run's tables and entity lists**", "", *(line.strip() for line in lines)]
