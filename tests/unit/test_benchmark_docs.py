"""benchmarks/README.md is a reference of current figures and HISTORY.md the log behind it (issue 53,
item 6): the reference stays short enough to read, and the log reads newest first."""

from __future__ import annotations

import re

from conftest import REPO

BENCHMARKS = REPO / "benchmarks"


def test_the_reference_stays_a_reference():
    lines = (BENCHMARKS / "README.md").read_text().splitlines()
    assert len(lines) <= 800, f"benchmarks/README.md has {len(lines)} lines: move history to HISTORY.md"


def test_the_history_reads_newest_first():
    dates = re.findall(r"^## (\d{4}-\d{2}-\d{2})", (BENCHMARKS / "HISTORY.md").read_text(), re.M)
    assert len(dates) >= 10 and dates == sorted(dates, reverse=True), dates
