"""A job's output, its children's included, lands in its log; its math threads are capped."""

from __future__ import annotations

import subprocess
import sys


def test_start_job_captures_child_output_and_caps_threads(tmp_path):
    log = tmp_path / "job.log"
    code = (
        "import logging, os, subprocess, sys\n"
        "from pelt.logs import start_job\n"
        f"start_job({str(log)!r}, threads=1)\n"
        "print('from python')\n"
        "logging.getLogger('pelt.test').info('from logging')\n"
        "subprocess.run(['sh', '-c', 'echo from a child; echo threads=$OMP_NUM_THREADS'], check=True)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "" and run.stderr == ""
    text = log.read_text()
    for line in ("from python", "INFO pelt.test: from logging", "from a child", "threads=1"):
        assert line in text, text
