"""The README's table of the demo's results ("What the demo shows"), rendered from a run's summary
CSVs (``results/eval/summary/{lama,fewrel,wiki80}.csv``), so that every number in it comes from an
output file. ``python -m pelt.report.demo_table SUMMARY_DIR`` prints it (``make demo-table``);
``benchmarks/demo-results/`` keeps the CSVs of the run the README quotes, and
``tests/workflow/test_docs_examples.py`` checks that the README's table is this rendering of them.
"""

from __future__ import annotations

import csv
import os
import sys
from pathlib import Path

VARIANTS = ("baseline", "pelt", "permuted", "random", "swapped")
CONTROLS = ("permuted", "random")
# A pelt cell is bold where it is more than this many points above the baseline and both controls.
BOLD_MARGIN = 1.0
HEADER = "| measured (%) | " + " | ".join(VARIANTS) + " |"
# (row label, summary file, how to find the row's cells in it)
LAMA_ROWS = (
    ("LAMA T-REx, rare subjects `[0,10)`, P@1 per fact (Table 5)", "per_fact_p_at_1 [0,10)"),
    ("LAMA T-REx, frequent subjects `[10,50)`, P@1 per fact (Table 5)", "per_fact_p_at_1 [10,50)"),
)
FINETUNING_ROWS = (  # label, file, benchmark, setting, column ("accuracy": mean ± std over seeds)
    ("FewRel 1.0 5-1 (Table 2)", "fewrel", "fewrel1", "5-1", "accuracy"),
    ("FewRel 1.0 10-1 (Table 2)", "fewrel", "fewrel1", "10-1", "accuracy"),
    ("FewRel 2.0 5-1 (Table 2)", "fewrel", "fewrel2", "5-1", "accuracy"),
    ("Wiki80 1 % (Table 3)", "wiki80", "wiki80", "1%", "accuracy"),
    ("Wiki80 10 % (Table 3)", "wiki80", "wiki80", "10%", "accuracy"),
    ("Wiki80 100 % (Table 3)", "wiki80", "wiki80", "100%", "accuracy"),
    ("Wiki80 100 %, rare heads", "wiki80", "wiki80", "100%", "rare_heads_mean"),
)


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
    """The README's demo-results table (Markdown) from ``summary_dir``'s ``lama.csv``, ``fewrel.csv`` and
    ``wiki80.csv``: per variant, P@1 per fact on rare and frequent T-REx subjects, FewRel and Wiki80
    accuracy (mean ± std over seeds where there are several) and Wiki80 100 %'s rare heads. A missing
    result is ``–``; **bold**: pelt more than a point above the baseline and the permuted and random
    controls."""
    folder = Path(summary_dir)
    lama = {r["variant"]: r for r in _read(folder / "lama.csv") if r["model"] == model}
    lines = [HEADER, "|" + "---|" * (len(VARIANTS) + 1)]
    for label, column in LAMA_ROWS:
        lines.append(_row(label, {v: _cell(lama.get(v, {}).get(column)) for v in VARIANTS}))
    finetuning = {name: _read(folder / f"{name}.csv") for name in ("fewrel", "wiki80")}
    for label, name, benchmark, setting, column in FINETUNING_ROWS:
        rows = {
            r["variant"]: r
            for r in finetuning[name]
            if (r["model"], r["benchmark"], r["setting"]) == (model, benchmark, setting)
        }
        cells = {}
        for variant in VARIANTS:
            row = rows.get(variant, {})
            if column == "accuracy":
                cells[variant] = _cell(row.get("accuracy_mean"), row.get("accuracy_std"))
            else:
                cells[variant] = _cell(row.get(column))
        lines.append(_row(label, cells))
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
