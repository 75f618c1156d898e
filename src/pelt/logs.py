"""Start of every workflow job: its output goes to its Snakemake log, its threads to its share."""

from __future__ import annotations

import logging
import os
import sys

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
