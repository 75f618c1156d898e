"""Start of every workflow job: its output goes to its Snakemake log, its threads to its share; the
progress of long loops as lines a log file can hold; and the counts a stage writes beside its data
for the report."""

from __future__ import annotations

import json
import logging
import os
import sys
import textwrap
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TextIO, TypeVar

T = TypeVar("T")

PROGRESS_INTERVAL_VARIABLE = "PELT_PROGRESS_INTERVAL"
DEFAULT_PROGRESS_INTERVAL = 30.0
_BAR_DETAIL_INTERVAL = 1.0  # seconds between updates of a terminal bar's detail
MAX_LINE = 300
"""No line of a job's log is longer: a log is read in an editor or with ``tail``, not scrolled sideways."""
_MAX_PROGRESS = MAX_LINE - 60  # room for the time, level and logger name that a job's log puts first
PROGRESS_LOGGER = logging.getLogger("pelt.progress")

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
QUIET_VARIABLES = ("TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS")
"""Off in a job: other libraries' progress bars (transformers loading weights) redraw one line with
carriage returns, which a log file keeps as one ever-growing line. pelt's :class:`Progress` logs lines."""


def start_job(log_path: str | os.PathLike[str], threads: int | None = None) -> logging.Logger:
    """Send this process's stdout and stderr to ``log_path``; cap math threads at ``threads``.

    ``os.dup2`` rather than reassigning ``sys.stdout`` so that output of child processes (the JVM
    behind Spark, tokenizer threads) lands in the same log instead of the terminal. Without a cap,
    every PyTorch job starts one thread per core of the machine, however many jobs Snakemake runs
    side by side; on a busy machine that oversubscription made training several times slower.
    Call it before importing torch or transformers: the variables are read when they load.
    """
    if threads:
        for name in THREAD_VARIABLES:
            os.environ[name] = str(threads)
    for name in QUIET_VARIABLES:
        os.environ.setdefault(name, "1")
    fh = open(log_path, "a", buffering=1)
    sys.stdout.flush()
    sys.stderr.flush()
    terminal = os.dup(2) if os.isatty(2) else None
    os.dup2(fh.fileno(), 1)
    os.dup2(fh.fileno(), 2)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(ShortLines("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)
    logging.captureWarnings(True)  # Python's warnings (a library's FutureWarning) as records: wrapped too
    if terminal is not None:
        echo_progress(os.fdopen(terminal, "w", buffering=1), job_name(log_path))
    return logging.getLogger("pelt")


def job_name(log_path: str | os.PathLike[str]) -> str:
    """``logs/encoding/wikipedia/demo/0.log`` -> ``encoding/wikipedia/demo/0``: the job, as its log names it."""
    parts = Path(log_path).with_suffix("").parts
    below = len(parts) - parts[::-1].index("logs") if "logs" in parts[:-1] else 0
    return Path(*parts[below:]).as_posix()


def echo_progress(stream: TextIO, job: str) -> None:
    """Progress lines also on the terminal the workflow runs in, named by their job.

    A job's output goes to its log, so a person watching ``make demo`` saw Snakemake's job list
    and then nothing for minutes.  Only progress lines are echoed, at their interval (one line in
    30 seconds per long loop), so the terminal shows what runs and how far without the logs' detail.
    """
    handler = logging.StreamHandler(stream)
    handler.setFormatter(ShortLines(f"%(asctime)s [{job}] %(message)s", datefmt="%H:%M:%S"))
    PROGRESS_LOGGER.addHandler(handler)


class ShortLines(logging.Formatter):
    """Lines longer than :data:`MAX_LINE` wrapped, at spaces where there are some, onto indented lines.

    A record may hold a stage's twenty counts or a long path; cut, it would lose them, and one very
    long line is what a reader of the log scrolls past.
    """

    def format(self, record: logging.LogRecord) -> str:
        lines = []
        for line in super().format(record).split("\n"):
            if len(line) <= MAX_LINE:
                lines.append(line)
            else:
                lines += textwrap.wrap(
                    line, MAX_LINE, subsequent_indent="    ", break_on_hyphens=False, replace_whitespace=False
                )
        return "\n".join(lines)


def write_counts(
    path: str | os.PathLike[str],
    counts: Mapping[str, int],
    *,
    stage: str,
    domain: str,
    source: str | None = None,
    details: Mapping[str, object] | None = None,
) -> None:
    """Write what a stage counted (read, kept, skipped) as JSON beside its data.

    The logs hold the same numbers, but nobody reads a hundred job logs: the report's input
    quality table (:func:`pelt.report.stages.write_input_quality`) gathers these files, so a bad
    dump file shows up where the results are read. ``source`` is the input file when the stage
    runs per file (the corpus). Written to a temporary name and renamed, so that a killed job
    leaves nothing that a rerun takes as done. ``details`` names what a count counts where a
    reader needs the names (the task entities not found, with suggestions).
    """
    record = {"stage": stage, "domain": domain, "source": source, "counts": dict(counts)}
    if details:
        record["details"] = dict(details)
    partial = f"{os.fspath(path)}.partial"
    with open(partial, "w", encoding="utf-8") as fh:
        json.dump(record, fh, indent=1)
        fh.write("\n")
    os.replace(partial, path)


def corpus_language(counts_jsons: Iterable[str | os.PathLike[str]]) -> str:
    """The language of a corpus, as its files' corpus jobs recorded it (``details.site``): one
    language per corpus, so files that disagree (a German dump among English ones) are an error
    naming them rather than a table that says one of them."""
    languages: dict[str, list[str]] = {}
    for path in counts_jsons:
        with open(path, encoding="utf-8") as fh:
            record = json.load(fh)
        language = record.get("details", {}).get("site", {}).get("language")
        if not language:
            raise ValueError(f"{path}: records no corpus language (details.site.language); rerun its corpus job")
        languages.setdefault(language, []).append(os.fspath(path))
    if len(languages) != 1:
        found = "; ".join(f"{lang}: {', '.join(paths)}" for lang, paths in sorted(languages.items()))
        raise ValueError(f"a corpus's files must share one language, found {found or 'no file'}")
    return next(iter(languages))


def table_corpus(domain: str, kind: str | None, counts_jsons: Iterable[str | os.PathLike[str]]) -> dict[str, object]:
    """What a domain's table records of the text it was built from (``corpus`` of
    :func:`pelt.table.merge_tables`): its name, kind and language (its corpus jobs' counts files), or
    for a merged domain (the counts file of its merged sample, which records its corpora's
    ``languages``: :func:`pelt.sampling.merge.merge_samples`) ``multilingual``, each corpus's
    language and what each gave (``coverage``: entities and sentences, and those without a QID)."""
    paths = list(counts_jsons)
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            details = json.load(fh).get("details", {})
        if "languages" in details:
            return {
                "corpus": domain,
                "corpus_kind": kind,
                "language": "multilingual",
                "languages": list(dict.fromkeys(details["languages"])),
                "coverage": details["coverage"],
            }
    return {"corpus": domain, "corpus_kind": kind, "language": corpus_language(paths)}


def progress_interval() -> float:
    """Seconds between two progress lines: ``$PELT_PROGRESS_INTERVAL``, else 30.

    An environment variable rather than a config key: progress is for whoever watches a run (a
    cluster admin may want one line in ten minutes), and it applies to the library outside the
    workflow as well.
    """
    raw = os.environ.get(PROGRESS_INTERVAL_VARIABLE)
    if raw is None:
        return DEFAULT_PROGRESS_INTERVAL
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ValueError(f"{PROGRESS_INTERVAL_VARIABLE}={raw!r}: expected a number of seconds > 0")
    return value


def format_duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``2h07m``: short enough for a progress line, exact enough for an ETA."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m"


def _format_rate(rate: float) -> str:
    return f"{rate:,.0f}" if rate >= 100 else f"{rate:.3g}"


class Progress:
    """Progress of a long loop as one log line per interval: done/total, rate, elapsed time and ETA.

    tqdm redraws its bar with carriage returns, which a log file keeps as one ever-growing line (a
    multi-hour encoding would write megabytes of it). Here a line is logged only when ``interval``
    seconds have passed since the last one, and a closing line only if the loop lasted long enough
    to log at all, so short loops (an evaluation batch run every few steps) stay silent. On a
    terminal (stderr a tty) a tqdm bar is drawn instead, as a person watching expects.

    ``detail`` is called only when a line is written (a running loss, say), so it may cost more
    than the loop's step. ``start`` is what was already done before this run (a resumed job): it
    counts towards done/total, not towards the rate. ``clock`` is for tests. Lines go to the
    ``pelt.progress`` logger, so that progress alone can be silenced or sent elsewhere.
    """

    def __init__(
        self,
        what: str,
        total: int | None = None,
        unit: str = "items",
        *,
        interval: float | None = None,
        detail: Callable[[], str] | None = None,
        start: int = 0,
        clock: Callable[[], float] = time.monotonic,
        terminal: bool | None = None,
    ):
        self.what = what
        self.total = total
        self.unit = unit
        self.interval = progress_interval() if interval is None else interval
        self.detail = detail
        self.done = self._start = start
        self.clock = clock
        self.lines = 0
        self._began = self._last = clock()
        self._bar = None
        if sys.stderr.isatty() if terminal is None else terminal:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, initial=start, desc=what, unit=f" {unit}", smoothing=0.1)

    def update(self, n: int = 1) -> None:
        """Count ``n`` more done; log a line if the interval has passed."""
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
        now = self.clock()
        if now - self._last < (_BAR_DETAIL_INTERVAL if self._bar is not None else self.interval):
            return
        self._last = now
        if self._bar is None:
            self.lines += 1
            PROGRESS_LOGGER.info("%s", self.line(now))
        elif self.detail is not None:
            self._bar.set_postfix_str(self.detail())

    def line(self, now: float, final: bool = False) -> str:
        """``what: done/total unit (pct), rate unit/s, elapsed, ETA; detail``, cut to fit MAX_LINE in a job's log.

        The rate is the mean since the start: steadier than tqdm's recent one, and what an ETA
        over hours should rest on.
        """
        elapsed = now - self._began
        rate = (self.done - self._start) / elapsed if elapsed > 0 else 0.0
        if final:
            parts = [f"{self.what}: done, {self.done:,} {self.unit} in {format_duration(elapsed)}"]
        elif self.total:
            parts = [f"{self.what}: {self.done:,}/{self.total:,} {self.unit} ({100 * self.done / self.total:.0f}%)"]
        else:
            parts = [f"{self.what}: {self.done:,} {self.unit}"]
        parts.append(f"{_format_rate(rate)} {self.unit}/s")
        if not final:
            parts.append(f"elapsed {format_duration(elapsed)}")
            if self.total and rate > 0:
                parts.append(f"ETA {format_duration(max(0, self.total - self.done) / rate)}")
        text = ", ".join(parts)
        if self.detail is not None:
            text += f"; {self.detail()}"
        return text if len(text) <= _MAX_PROGRESS else text[: _MAX_PROGRESS - 3] + "..."

    def close(self) -> None:
        """End the loop: a last line (totals, mean rate) if any line was logged before."""
        if self._bar is not None:
            self._bar.close()
        elif self.lines:
            PROGRESS_LOGGER.info("%s", self.line(self.clock(), final=True))

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress(items: Iterable[T], what: str, total: int | None = None, unit: str = "items", **kwargs) -> Iterator[T]:
    """Yield ``items``, logging :class:`Progress` lines; ``total`` defaults to ``len(items)``."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    with Progress(what, total, unit, **kwargs) as bar:
        for item in items:
            yield item
            bar.update()
