"""Which entities the configured evaluation tasks need, read from the tasks' own data files.

The paper builds table rows only for the entities its tasks mention (``sampling.entities:
on_demand``), so the workflow needs the task entities *before* sampling.  This module reads them
straight from the official files, in each dataset's own layout:

- LAMA T-REx (``sub_label`` + ``sub_uri``), LAMA Google-RE (``sub_label`` + ``sub_w``, which is
  often null) and the ParaRel subset (``sub_label`` only): the **subject** of each fact, the one
  entity a probe mentions (objects are predicted, never injected);
- FewRel (``h``/``t`` = ``[name, id, positions]``) and Wiki80 (``h``/``t`` = ``{name, id, ...}``):
  both the head and the tail of each instance.

The ``tasks:`` config mapping names the files (globs), keyed per task kind (see :data:`DATA_KEYS`);
a task's kind is its ``kind`` field, else its key (so ``fewrel2: {kind: fewrel, ...}`` works).
A key may also map names to files (Wiki80's ``train: {"1%": ..., "100%": ...}``, one file per
training setting): its values are read.
"""

from __future__ import annotations

import glob
import json
import logging
from collections.abc import Iterator, Mapping
from pathlib import Path
from urllib.parse import unquote

logger = logging.getLogger(__name__)

# Config keys that name data files, per task kind; each value is a glob or a list of globs.
DATA_KEYS: dict[str, tuple[str, ...]] = {
    "lama": ("facts",),
    "fewrel": ("train", "val", "test"),
    "wiki80": ("train", "dev", "test"),
}

# Keys of the files a task trains and validates on (served by its ``train_domain``, see domain_of).
TRAINING_KEYS = ("train", "val")

Entity = tuple[str, str | None]


def expand_globs(patterns: str | list[str] | Mapping[str, str], what: str) -> list[str]:
    """Files matched by ``patterns`` (a mapping: its values) in order; a glob that matches nothing is a config
    error, not an empty task."""
    if isinstance(patterns, Mapping):
        patterns = list(patterns.values())
    files: list[str] = []
    for pattern in [patterns] if isinstance(patterns, str) else patterns:
        matched = sorted(glob.glob(pattern))
        if not matched:
            raise FileNotFoundError(f"{what}: no file matches {pattern!r}")
        files.extend(matched)
    return files


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


def lama_subject(record: Mapping) -> Entity | None:
    """The subject (label, QID) of a T-REx, Google-RE or ParaRel fact; ``None`` when it has no label.

    T-REx names the subject's Wikidata item ``sub_uri``, Google-RE ``sub_w`` (null for many facts:
    its subjects are Freebase ids), ParaRel not at all. Labels are percent-decoded as LAMA's filter
    does: Google-RE writes 93 of its subjects as URL paths (``Stanis%C5%82aw``).
    """
    label = record.get("sub_label")
    if not isinstance(label, str) or not label.strip():
        return None
    return unquote(label), record.get("sub_uri") or record.get("sub_w") or None


def _fewrel_entities(path: str) -> Iterator[Entity | None]:
    if str(path).endswith(".jsonl"):  # FewRel trains on Wiki80 files too (run_fewrel reads both)
        yield from _wiki80_entities(path)
        return
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a FewRel file maps relation -> instances, got {type(data).__name__}")
    for instances in data.values():
        for inst in instances:
            for side in ("h", "t"):
                value = inst.get(side)
                ok = isinstance(value, list) and len(value) >= 2 and isinstance(value[0], str)
                yield (value[0], value[1] or None) if ok else None


def _wiki80_entities(path: str) -> Iterator[Entity | None]:
    for _, record in read_jsonl(path):
        for side in ("h", "t"):
            value = record.get(side)
            ok = isinstance(value, dict) and isinstance(value.get("name"), str)
            yield (value["name"], value.get("id") or None) if ok else None


def _lama_entities(path: str) -> Iterator[Entity | None]:
    for _, record in read_jsonl(path):
        yield lama_subject(record)


_READERS = {"lama": _lama_entities, "fewrel": _fewrel_entities, "wiki80": _wiki80_entities}


def domain_of(task: Mapping, key: str) -> str:
    """The domain whose table serves the files of ``key``: a FewRel task's training and validation
    files use its ``train_domain`` when it names one (FewRel 2.0 trains on Wikipedia instances)."""
    if key in TRAINING_KEYS and task.get("train_domain"):
        return task["train_domain"]
    return task.get("domain")


def task_entities(tasks: Mapping[str, Mapping], domain: str) -> list[Entity]:
    """The deduplicated, sorted ``(name, qid)`` pairs that the tasks using ``domain``'s table mention.

    ``qid`` is ``None`` where the dataset gives none.  Records without an entity name are skipped,
    counted and logged; an unknown task kind or a glob matching nothing raises.
    """
    found: set[Entity] = set()
    for name, task in tasks.items():
        kind = task.get("kind", name)
        if kind not in DATA_KEYS:
            raise ValueError(f"tasks.{name}: unknown task kind {kind!r}; expected one of {sorted(DATA_KEYS)}")
        for key in DATA_KEYS[kind]:
            if key not in task or domain_of(task, key) != domain:
                continue
            for path in expand_globs(task[key], f"tasks.{name}.{key}"):
                skipped, before = 0, len(found)
                for entity in _READERS[kind](path):
                    if entity is None:
                        skipped += 1
                    else:
                        found.add(entity)
                if skipped:
                    logger.warning("%s: skipped %d records without an entity name", path, skipped)
                logger.info("%s: %d new task entities", path, len(found) - before)
    logger.info("domain %s: %d task entities", domain, len(found))
    return sorted(found, key=lambda e: (e[0], e[1] or ""))
