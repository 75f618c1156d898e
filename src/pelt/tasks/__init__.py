"""The evaluation tasks, one package per kind (``pelt.tasks.<kind>``: its data reader, pure Python,
and its runner, which loads torch), and here the entities the configured tasks need, read from
their data files by each kind's reader (pure Python, so Spark and torch jobs share it).

The paper builds table rows only for the entities its tasks mention (``sampling.entities:
on_demand``), so the workflow needs the task entities *before* sampling.  This module reads them
straight from the official files, in each dataset's own layout:

- LAMA: the **subject** of each fact (:mod:`pelt.tasks.lama.data`);
- FewRel (``h``/``t`` = ``[name, id, positions]``) and Wiki80 (``h``/``t`` = ``{name, id, ...}``):
  both the head and the tail of each instance (:mod:`pelt.tasks.fewrel.data`,
  :mod:`pelt.tasks.wiki80.data`; the instance they share is :mod:`pelt.tasks.relation.data`);
- an entity list (the ``entities`` kind, a table with no evaluation): one entity a line, or a CSV
  column, each a Wikipedia title, a Wikidata QID or a name (:mod:`pelt.tasks.entities.data`).

The ``tasks:`` config mapping names the files (globs), keyed per task kind (:data:`pelt.registry.KINDS`);
a task's kind is its ``kind`` field, else its key (so ``fewrel2: {kind: fewrel, ...}`` works).
A key may also map names to files (Wiki80's ``train: {"1%": ..., "100%": ...}``, one file per
training setting): its values are read.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from pelt.registry import expand_globs, kind_of, resolve
from pelt.tasks.jsonl import EntityRef

logger = logging.getLogger(__name__)

# Keys of the files a task trains and validates on (served by its ``train_domain``, see domain_of).
TRAINING_KEYS = ("train", "val")


def domain_of(task: Mapping, key: str) -> str:
    """The domain whose table serves the files of ``key``: a FewRel task's training and validation
    files use its ``train_domain`` when it names one (FewRel 2.0 trains on Wikipedia instances)."""
    if key in TRAINING_KEYS and task.get("train_domain"):
        return task["train_domain"]
    return task.get("domain")


def task_entities(tasks: Mapping[str, Mapping], domain: str) -> list[EntityRef]:
    """The deduplicated, sorted ``(name, qid)`` pairs that the tasks using ``domain``'s table mention.

    ``qid`` is ``None`` where the dataset gives none.  Records without an entity name are skipped,
    counted and logged; an unknown task kind or a glob matching nothing raises.
    """
    found: set[EntityRef] = set()
    for name, task in tasks.items():
        kind = kind_of(name, task)
        read = resolve(kind.entity_reader)
        options = {key: task[key] for key in kind.reader_keys if task.get(key) is not None}
        for key in kind.data_keys:
            if key not in task or domain_of(task, key) != domain:
                continue
            for path in expand_globs(task[key], f"tasks.{name}.{key}"):
                skipped, before = 0, len(found)
                for entity in read(path, **options):
                    if entity is None:
                        skipped += 1
                    else:
                        found.add(entity)
                if skipped:
                    logger.warning("%s: skipped %d records without an entity name", path, skipped)
                logger.info("%s: %d new task entities", path, len(found) - before)
    logger.info("domain %s: %d task entities", domain, len(found))
    return sorted(found, key=lambda e: (e[0], e[1] or ""))
