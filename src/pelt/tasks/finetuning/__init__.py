"""The job of the fine-tuning template (``workflow/rules/tasks/finetuning.smk``) where a setting's runs
are one job (config ``finetuning_jobs: setting``, the default): every run of one task, model and
setting (each variant, each seed), one after another in one process.

A run of the demo fine-tunes for seconds; importing torch and transformers before it took about as
long again, once a run when each run was a job (issue 57). Here each run is still its kind's job
script (the kind's entry's ``script``, which reads one run's ``snakemake`` object, as a job of one
run does), run in this process with a ``snakemake`` object of that run alone: its inputs, its result
file, its options and wildcards; the job's log, model, norm and threads. The kind's modules are
imported by the first run and found by the next. Each run seeds its own random streams (the runners
do), so a run writes the bytes it writes as a job of its own (``finetuning_jobs: run``).

Registers no task kind (it is no kind's package: the registry imports it as it imports every
package of :mod:`pelt.tasks`, so it imports nothing heavy).
"""

from __future__ import annotations

import logging
import os
import runpy
import sys
import time
from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

logger = logging.getLogger(__name__)


class Named(dict):
    """A run's inputs, params or wildcards, read as a job's are: by attribute (``input.train``),
    by key or with ``get`` (``input.get("select_on")``)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def run_view(job: Any, run: Mapping[str, Any]) -> SimpleNamespace:
    """The ``snakemake`` object a kind's job script gets for one ``run`` of the ``job`` (a mapping of
    its ``variant``, ``seed``, ``input``, ``output`` and ``options``): what a job of that run alone
    has (its inputs by name, its result file, its options, its wildcards), the rest (log, threads,
    resources, config, rule) being the job's."""
    wildcards = Named(task=job.wildcards.task, model=job.wildcards.model, setting=job.wildcards.setting)
    return SimpleNamespace(
        input=Named(run["input"]),
        output=[run["output"]],
        params=Named(model=job.params.model, norm=job.params.norm, options=run["options"]),
        wildcards=Named(wildcards, variant=run["variant"], seed=str(run["seed"])),
        log=job.log,
        threads=job.threads,
        resources=job.resources,
        config=job.config,
        rule=job.rule,
    )


def run_each(job: Any, script: str, runs: Sequence[Mapping[str, Any]]) -> None:
    """Runs the kind's job ``script`` once for each of ``runs`` in turn, in this process, its folder on
    the import path as Snakemake puts a job script's; the log names each run as it starts and ends. A
    run that fails fails the job, whose result files Snakemake then removes, the runs done before it
    too."""
    folder = os.path.dirname(os.path.abspath(script))
    if folder not in sys.path:
        sys.path.append(folder)
    for number, run in enumerate(runs, 1):
        what = f"run {number} of {len(runs)} ({run['variant']}, seed {run['seed']})"
        logger.info("%s: %s", what, run["output"])
        start = time.perf_counter()
        runpy.run_path(script, init_globals={"snakemake": run_view(job, run)})
        logger.info("%s done in %.1f s", what, time.perf_counter() - start)
