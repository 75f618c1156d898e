"""The LAMA probe (Petroni et al. 2019), a task kind: its data files (:mod:`pelt.tasks.lama.data`),
its runner and norm sweep (:mod:`pelt.tasks.lama.run`), LAMA-UHN (:mod:`pelt.tasks.lama.uhn`), its
summaries and its part of the landing page (:mod:`pelt.tasks.lama.summary`), its figures
(:mod:`pelt.tasks.lama.figures`), and here its registry entry and what the registry asks of a LAMA
task (pure Python: the Snakefile imports it)."""

from __future__ import annotations

from collections.abc import Mapping

from pelt.registry import TaskKind, expand_globs, register


def run_files(name: str, task: Mapping, tasks: Mapping[str, Mapping], setting: str | None = None) -> dict:
    """The files a LAMA run reads: the facts (globs expanded) and the optional relations and
    common-vocabulary files."""
    files = {key: task[key] for key in ("relations", "common_vocab", "common_vocab_lowercased") if task.get(key)}
    return {"facts": expand_globs(task["facts"], f"tasks.{name}.facts"), **files}


# The ``task`` value of a norm sweep's file: what its entry declares (``norm_sweep_task``), the sweep
# writes and its summary reads.
NORM_SWEEP_TASK = "lama_norm_sweep"

KIND = register(
    TaskKind(
        "lama",
        rules="workflow/rules/tasks/lama.smk",
        schema="workflow/schemas/tasks/lama.yaml",
        data_keys=("facts",),
        file_keys=("facts", "relations", "common_vocab", "common_vocab_lowercased"),
        hyperparameters=("batch_size", "max_length", "missing"),
        runner="pelt.tasks.lama.run:run_lama",
        settings="pelt.tasks.lama.settings:LamaSettings",
        paper="pelt.tasks.lama.paper:PAPER_RESULTS",
        entity_reader="pelt.tasks.lama.data:lama_entities",
        benchmarks={"lama": "LAMA", "lama_frequency": "LAMA T-REx by subject frequency"},
        summaries={
            "lama": "pelt.tasks.lama.summary:write_lama_summary",
            "norm_sweep": "pelt.tasks.lama.summary:write_norm_sweep_summary",
        },
        figures={
            "norm_sweep": "pelt.tasks.lama.figures:plot_norm_sweep",
            "lama_buckets": "pelt.tasks.lama.figures:plot_lama_buckets",
        },
        run_files=run_files,
        norm_sweep="eval/{task}/{model}/norm_sweep.json",
        norm_sweep_task=NORM_SWEEP_TASK,
        headline="eval/{task}/{model}/{variant}.json",
        headline_part="pelt.tasks.lama.summary:headline_part",
        demo_rows="pelt.tasks.lama.summary:DEMO_ROWS",
        archives={"LAMA/data.zip": "LAMA/release"},
    )
)
