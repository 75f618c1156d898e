"""Put the replication's summary.md into the README's first results table (between its
``<!-- summary.md -->`` markers), after ``analyse.py`` has rewritten it: the README shows the
analysis's own words (``tests/unit/test_preregistered.py`` checks the two agree). Not part of the
plan's analysis, which it only copies.

    python benchmarks/preregistered/analyse.py --runs ../prereg/runs && python benchmarks/preregistered/readme.py
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
README = HERE.parent.parent / "README.md"
START, END = "<!-- summary.md -->\n", "<!-- end of summary.md -->"


def splice(readme: Path = README, summary: Path = HERE / "summary.md") -> None:
    text = readme.read_text()
    start, end = text.index(START) + len(START), text.index(END)
    readme.write_text(text[:start] + summary.read_text() + text[end:])


if __name__ == "__main__":
    splice()
