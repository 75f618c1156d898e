"""Logging for workflow scripts: everything a job prints ends up in its Snakemake log."""

from __future__ import annotations

import logging
import os
import sys


def redirect_to_log(path: str | os.PathLike[str]) -> logging.Logger:
    """Send this process's stdout and stderr, at the file-descriptor level, to ``path``.

    ``os.dup2`` rather than reassigning ``sys.stdout`` so that output of child processes (the JVM
    behind Spark, tokenizer threads) lands in the same log instead of the terminal.
    """
    fh = open(path, "a", buffering=1)
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
