"""Start of every workflow job: its output goes to its Snakemake log, its threads to its share; and
the counts a stage writes beside its data for the report."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Mapping

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def start_job(log_path: str | os.PathLike[str], threads: int | None = None) -> logging.Logger:
    """Send this process's stdout and stderr to ``log_path``; cap math threads at ``threads``.

    ``os.dup2`` rather than reassigning ``sys.stdout`` so that output of child processes (the JVM
    behind Spark, tokenizer threads) lands in the same log instead of the terminal. Without a cap,
    every PyTorch job starts one thread per core of the machine, however many jobs Snakemake runs
    side by side; on a busy machine that oversubscription made training several times slower.
    Call it before importing torch: the thread variables are read when it loads.
    """
    if threads:
        for name in THREAD_VARIABLES:
            os.environ[name] = str(threads)
    fh = open(log_path, "a", buffering=1)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fh.fileno(), 1)
    os.dup2(fh.fileno(), 2)
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
        force=True,
    )
    return logging.getLogger("pelt")


def write_counts(
    path: str | os.PathLike[str],
    counts: Mapping[str, int],
    *,
    stage: str,
    domain: str,
    source: str | None = None,
) -> None:
    """Write what a stage counted (read, kept, skipped) as JSON beside its data.

    The logs hold the same numbers, but nobody reads a hundred job logs: the report's input
    quality table (:func:`pelt.eval.report.write_input_quality`) gathers these files, so a bad
    dump file shows up where the results are read. ``source`` is the input file when the stage
    runs per file (the corpus). Written to a temporary name and renamed, so that a killed job
    leaves nothing that a rerun takes as done.
    """
    record = {"stage": stage, "domain": domain, "source": source, "counts": dict(counts)}
    partial = f"{os.fspath(path)}.partial"
    with open(partial, "w", encoding="utf-8") as fh:
        json.dump(record, fh, indent=1)
        fh.write("\n")
    os.replace(partial, path)
