"""The README's table of the demo's results ("What the demo shows"), rendered from a run's summary
CSVs (``results/eval/summary/<name>.csv``), so that every number in it comes from an output file:
each task kind names its rows (its registry entry's ``demo_rows``), the kind that leads the
landing page first. ``python -m pelt.report.demo_table SUMMARY_DIR`` prints it (``make demo-table``);
``benchmarks/demo-results/`` keeps the CSVs of the run the README quotes, and
``tests/workflow/test_docs_examples.py`` checks that the README's table is this rendering of them.
"""

from __future__ import annotations

import csv
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from pelt.registry import KINDS, resolve

VARIANTS = ("baseline", "pelt", "permuted", "random", "swapped")
CONTROLS = ("permuted", "random")
# A pelt cell is bold where it is more than this many points above the baseline and both controls.
BOLD_MARGIN = 1.0
HEADER = "| measured (%) | " + " | ".join(VARIANTS) + " |"


class DemoRow(NamedTuple):
    """A row of the table: its label, the summary it reads (``<summary>.csv``), the values that pick
    its lines there (besides the model; each line a variant), the column shown and the column of its
    std over seeds (None: none)."""

    label: str
    summary: str
    match: Mapping[str, str]
    column: str
    std: str | None = None


def demo_rows() -> list[DemoRow]:
    """Every kind's rows (its ``demo_rows``), the kinds that lead the landing page (``headline``)
    first, then the others in the registry's order."""
    kinds = sorted(KINDS.values(), key=lambda kind: kind.headline is None)
    return [row for kind in kinds if kind.demo_rows for row in resolve(kind.demo_rows)]


def _read(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _cell(value: str | None, std: str | None = None) -> tuple[str, float | None]:
    """The shown text (percent, one decimal; ``± std`` where there is one) and the number behind it."""
    if value in (None, ""):
        return "–", None
    number = 100 * float(value)
    text = f"{number:.1f}"
    if std not in (None, ""):
        text += f" ± {100 * float(std):.1f}"
    return text, number


def _row(label: str, cells: dict[str, tuple[str, float | None]]) -> str:
    pelt = cells["pelt"][1]
    others = [cells[v][1] for v in ("baseline", *CONTROLS)]
    texts = [cells[v][0] for v in VARIANTS]
    if pelt is not None and all(o is not None and pelt - o > BOLD_MARGIN for o in others):
        texts[VARIANTS.index("pelt")] = f"**{texts[VARIANTS.index('pelt')]}**"
    return f"| {label} | " + " | ".join(texts) + " |"


def demo_table(summary_dir: str | os.PathLike[str], model: str = "demo") -> str:
    """The README's demo-results table (Markdown) from the summaries in ``summary_dir``: per variant,
    each kind's rows (:func:`demo_rows`; the demo's: P@1 per fact on rare and frequent T-REx subjects,
    FewRel and Wiki80 accuracy, mean ± std over seeds where there are several, and Wiki80 100 %'s rare
    heads). A missing result is ``–``; **bold**: pelt more than a point above the baseline and the
    permuted and random controls."""
    folder = Path(summary_dir)
    summaries: dict[str, list[dict[str, str]]] = {}
    lines = [HEADER, "|" + "---|" * (len(VARIANTS) + 1)]
    for row in demo_rows():
        found = summaries.setdefault(row.summary, _read(folder / f"{row.summary}.csv"))
        by_variant = {
            r["variant"]: r for r in found if r["model"] == model and all(r[k] == v for k, v in row.match.items())
        }
        cells = {}
        for variant in VARIANTS:
            line = by_variant.get(variant, {})
            cells[variant] = _cell(line.get(row.column), line.get(row.std) if row.std else None)
        lines.append(_row(row.label, cells))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m pelt.report.demo_table SUMMARY_DIR (e.g. results/eval/summary)", file=sys.stderr)
        return 2
    sys.stdout.write(demo_table(args[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
