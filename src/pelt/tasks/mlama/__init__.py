"""mLAMA (Kassner, Dufter and Schütze 2021: LAMA in 53 languages), a task kind: its data files
(:mod:`pelt.tasks.mlama.data`), its runner (:mod:`pelt.tasks.mlama.run`), its summary
(:mod:`pelt.tasks.mlama.summary`) and figure (:mod:`pelt.tasks.mlama.figures`), and here its registry
entry and what the registry asks of an mLAMA task (pure Python: the Snakefile imports it).

One task is one language (``tasks.mlama_<language>``), probed with the table of its own corpus
(``domain``: a ``corpora:`` entry of that language), so that one config runs a model over several
languages' tables (docs/languages.md).
"""

from __future__ import annotations

from collections.abc import Mapping

from pelt.registry import TaskKind, register
from pelt.tasks.mlama.data import fact_files, templates_file

PREFIX = "mlama_"  # a task's key: mlama_<language>


def language_of(name: str, task: Mapping) -> str:
    """The task's language: its ``language``, else its key's suffix (``mlama_de`` -> ``de``)."""
    return task.get("language") or name.removeprefix(PREFIX)


def default_files(name: str, task: Mapping, tasks: Mapping[str, Mapping]) -> dict[str, list[str]]:
    """The facts of the task's language in its ``release`` folder (``relations``: only those)."""
    return {"facts": fact_files(task["release"], language_of(name, task), task.get("relations"))}


def run_files(name: str, task: Mapping, tasks: Mapping[str, Mapping], setting: str | None = None) -> dict:
    """The files an mLAMA run reads: its language's facts and templates."""
    facts = default_files(name, task, tasks)["facts"]
    return {"facts": facts, "templates": templates_file(task["release"], language_of(name, task))}


KIND = register(
    TaskKind(
        "mlama",
        rules="workflow/rules/tasks/mlama.smk",
        schema="workflow/schemas/tasks/mlama.yaml",
        data_keys=("facts",),  # the language's fact files in `release`
        file_keys=("release",),
        hyperparameters=("batch_size", "max_length", "missing"),
        runner="pelt.tasks.mlama.run:run_mlama",
        settings="pelt.tasks.mlama.settings:MlamaSettings",
        entity_reader="pelt.tasks.lama.data:lama_entities",  # LAMA's layout: sub_label, sub_uri
        summaries={"mlama": "pelt.tasks.mlama.summary:write_mlama_summary"},
        figures={"mlama": "pelt.tasks.mlama.figures:plot_mlama"},
        default_files=default_files,
        run_files=run_files,
        prefix=PREFIX,
        archives={"mLAMA/mlama1.1.zip": "mLAMA/release"},
    )
)
