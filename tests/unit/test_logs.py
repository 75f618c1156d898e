"""A job's output, its children's included, lands in its log; its math threads are capped; long loops and
Spark stages log their progress as short lines, one per interval."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest

from pelt.encoding.encode import build_table
from pelt.encoding.models import load_masked_lm
from pelt.logs import (
    MAX_LINE,
    PROGRESS_INTERVAL_VARIABLE,
    Progress,
    format_duration,
    progress,
    progress_interval,
)
from pelt.spark import watch_progress


def test_start_job_captures_child_output_and_caps_threads(tmp_path):
    log = tmp_path / "job.log"
    code = (
        "import logging, os, subprocess, sys\n"
        "from pelt.logs import start_job\n"
        f"start_job({str(log)!r}, threads=1)\n"
        "print('from python')\n"
        "logging.getLogger('pelt.test').info('from logging')\n"
        "logging.getLogger('pelt.test').info('counts: ' + ', '.join(f'count_{i}={i}' for i in range(100)))\n"
        "logging.getLogger('pelt.test').info('path: ' + 'x' * 700)\n"
        "import warnings\n"
        "warnings.warn('a library warns ' + 'w' * 400)\n"
        "subprocess.run(['sh', '-c', 'echo from a child; echo threads=$OMP_NUM_THREADS'], check=True)\n"
        "from tqdm import tqdm\n"
        "assert list(tqdm(range(3), desc='a library bar')) == [0, 1, 2]\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "" and run.stderr == ""
    text = log.read_text()
    for line in ("from python", "INFO pelt.test: from logging", "from a child", "threads=1"):
        assert line in text, text
    assert "a library bar" not in text and "\r" not in text
    assert max(len(line) for line in text.splitlines()) <= MAX_LINE
    assert "WARNING py.warnings: " in text and "a library warns" in text
    counts = re.search(r"INFO pelt.test: (counts: .*?)\n[^ ]", text, re.S).group(1)  # wrapped, nothing lost
    assert counts.split() == ["counts:", *(f"count_{i}={i}," for i in range(99)), "count_99=99"]
    assert re.search(r"path: (x+(?:\n    x+)+)\n", text).group(1).replace("\n    ", "") == "x" * 700


def test_on_a_terminal_a_job_echoes_its_progress_lines_named(tmp_path):
    """Under ``make demo`` a job's stderr is the terminal: its progress lines (and nothing else of
    its log) show there, named by the job; the log keeps everything."""
    import os
    import pty

    log = tmp_path / "logs" / "encoding" / "wikipedia" / "demo" / "0.log"
    log.parent.mkdir(parents=True)
    code = (
        "import logging\n"
        "from pelt.logs import start_job, Progress\n"
        f"start_job({str(log)!r})\n"
        "logging.getLogger('pelt.test').info('detail for the log only')\n"
        "bar = Progress('encoding', 10, 'sentences', interval=1e-9)\n"
        "bar.update(5)\n"
        "bar.close()\n"
    )
    master, slave = pty.openpty()
    run = subprocess.run([sys.executable, "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the pty's other end is closed: all was read
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    assert run.returncode == 0
    terminal = shown.decode().splitlines()
    assert len(terminal) == 2, terminal  # the progress line and the closing one
    named = re.compile(r"\d\d:\d\d:\d\d \[encoding/wikipedia/demo/0\] encoding: .*")
    assert all(named.fullmatch(line) for line in terminal), terminal
    assert "5/10 sentences (50%)" in terminal[0] and "done, 5 sentences" in terminal[1]
    text = log.read_text()
    assert "detail for the log only" in text and "5/10 sentences" in text


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "pelt.progress"]


def test_progress_logs_one_line_per_interval_with_rate_and_eta(caplog):
    caplog.set_level("INFO", logger="pelt.progress")
    clock = FakeClock()
    bar = Progress("encoding", 1000, "sentences", interval=30, clock=clock, terminal=False)
    for now, n in ((10, 100), (30, 100), (45, 100), (59, 0), (60, 300)):
        clock.now = now
        bar.update(n)
    clock.now = 70
    bar.close()
    assert _lines(caplog) == [
        "encoding: 200/1,000 sentences (20%), 6.67 sentences/s, elapsed 30s, ETA 2m00s",
        "encoding: 600/1,000 sentences (60%), 10 sentences/s, elapsed 1m00s, ETA 40s",
        "encoding: done, 600 sentences in 1m10s, 8.57 sentences/s",
    ]


def test_short_loops_stay_silent_and_resumed_work_is_not_rate(caplog):
    caplog.set_level("INFO", logger="pelt.progress")
    clock = FakeClock()
    assert list(progress(range(5), "eval", interval=30, clock=clock, terminal=False)) == list(range(5))
    assert _lines(caplog) == []

    bar = Progress("resumed", 100, start=50, interval=10, clock=clock, terminal=False, detail=lambda: "loss 1.5")
    clock.now = 10
    bar.update(10)
    unknown = Progress("index", interval=10, clock=clock, terminal=False)
    clock.now = 20
    unknown.update(5)
    assert _lines(caplog) == [
        "resumed: 60/100 items (60%), 1 items/s, elapsed 10s, ETA 40s; loss 1.5",
        "index: 5 items, 0.5 items/s, elapsed 10s",
    ]


def test_progress_lines_are_capped():
    clock = FakeClock()
    bar = Progress("x" * 400, 10, interval=1, clock=clock, terminal=False, detail=lambda: "y" * 400)
    clock.now = 5
    for final in (False, True):
        line = bar.line(clock.now, final=final)
        assert len(line) == MAX_LINE - 60 and line.endswith("...")


def test_on_a_terminal_a_bar_is_drawn_instead(caplog, capsys):
    caplog.set_level("INFO", logger="pelt.progress")
    clock = FakeClock()
    with Progress("training", 4, "steps", interval=0, clock=clock, terminal=True, detail=lambda: "loss 2.0") as bar:
        for _ in range(4):
            clock.now += 2
            bar.update()
    assert _lines(caplog) == []
    assert "training" in capsys.readouterr().err


def test_progress_interval_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv(PROGRESS_INTERVAL_VARIABLE, raising=False)
    assert progress_interval() == 30
    monkeypatch.setenv(PROGRESS_INTERVAL_VARIABLE, "2.5")
    assert progress_interval() == 2.5
    for bad in ("0", "-1", "soon", "nan"):
        monkeypatch.setenv(PROGRESS_INTERVAL_VARIABLE, bad)
        with pytest.raises(ValueError, match=f"{PROGRESS_INTERVAL_VARIABLE}='{bad}'"):
            progress_interval()


def test_format_duration():
    assert [format_duration(s) for s in (0, 59.4, 61, 3599, 2 * 3600 + 7 * 60 + 59)] == [
        "0s",
        "59s",
        "1m01s",
        "59m59s",
        "2h07m",
    ]


def test_encoding_logs_progress(tiny_model_dirs, monkeypatch, caplog):
    caplog.set_level("INFO", logger="pelt.progress")
    monkeypatch.setenv(PROGRESS_INTERVAL_VARIABLE, "1e-9")
    model, tokenizer = load_masked_lm(str(tiny_model_dirs["roberta"]))
    sentences = ["Marie Curie was born in Warsaw.", "Paris is in France.", "Ada Lovelace wrote programs."]
    build_table(
        model, tokenizer, ["Q1", "Q2", "Q3"], sentences, [(0, 11), (0, 5), (0, 12)], max_seq_len=16, tokens_per_batch=16
    )
    lines = _lines(caplog)
    assert lines[0].startswith("encoding: ") and "/3 sentences" in lines[0]
    assert lines[-1].startswith("encoding: done, 3 sentences in ")


def test_spark_stages_log_their_progress(spark, caplog):
    caplog.set_level("INFO", logger="pelt.progress")

    def slow(batches):
        for batch in batches:
            time.sleep(0.6)
            yield batch

    def stage_lines() -> list[str]:
        return [line for line in _lines(caplog) if line.startswith("Spark stage")]

    stop = watch_progress(spark, 0.2)
    try:
        # Twice as many partitions as the session's cores: tasks finish in waves, so the watcher
        # sees the stage part done (with 4 tasks they could all end at once).
        df = spark.range(0, 800, numPartitions=8)
        assert df.mapInArrow(slow, df.schema).count() == 800
        deadline = time.monotonic() + 30  # the watcher's next look gives the stage's closing line
        while not any("done, 8 tasks" in line for line in stage_lines()) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        stop.set()
    lines = stage_lines()
    running = r"\): [1-7]/8 tasks \(\d+%\), [\d.]+ tasks/s, elapsed [\dms]+, ETA [\dms]+; \d running, rows read \d00, "
    assert any(re.search(running, line) for line in lines), lines
    assert any(re.search(r"\): done, 8 tasks in [\dms]+, [\d.]+ tasks/s$", line) for line in lines), lines
    assert all(len(line) <= MAX_LINE for line in lines)


def test_job_logs_read_well_in_a_file(finished):
    """Every log of the demo run: no terminal redraws, no line over MAX_LINE, no JVM start-up chatter."""
    logs = sorted((finished / "logs").rglob("*.log"))
    assert len(logs) > 10
    for log in logs:
        text = log.read_bytes().decode(errors="replace")  # read_text would turn a redraw's \r into \n
        longest = max(text.splitlines(), key=len, default="")
        assert len(longest) <= MAX_LINE, f"{log}: {longest[:1000]}"
        for noise in ("\r", "log4j profile", "NativeCodeLoader", "loopback address", "Loading weights"):
            assert noise not in text, f"{log}: {noise!r}"
