"""benchmarks/README.md is a reference of current figures and HISTORY.md the log behind it (issue 53,
item 6): the reference stays short enough to read, and the log reads newest first; the top-level
README is a user's guide (issue 55, item 6): short, without dates or commits, which belong to
benchmarks/."""

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


def test_the_readme_is_a_guide_not_a_diary():
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 200, len(text.splitlines())
    assert not re.findall(r"\b20\d\d-\d\d-\d\d\b|\b[0-9a-f]{7,40}\b", text)  # no dates, no commit hashes
