"""FewRel's summary (its registry entry's ``summaries``): accuracy over seeds per benchmark (FewRel 1.0
and 2.0) and N-K setting, the paper's Table 2, in the layout every fine-tuning kind shares
(:mod:`pelt.report.finetuning_summary`); and its rows of the README's table of the demo's results."""

from __future__ import annotations

import os
from collections.abc import Sequence

from pelt.report.demo_table import DemoRow
from pelt.report.finetuning_summary import write_seed_summary
from pelt.report.tables import load_results

# Mean ± std over seeds of the settings the demo runs, as the paper's Table 2 reports them.
DEMO_ROWS = tuple(
    DemoRow(
        f"{label} {setting} (Table 2)",
        "fewrel",
        {"benchmark": benchmark, "setting": setting},
        "accuracy_mean",
        "accuracy_std",
    )
    for label, benchmark, setting in (
        ("FewRel 1.0", "fewrel1", "5-1"),
        ("FewRel 1.0", "fewrel1", "10-1"),
        ("FewRel 2.0", "fewrel2", "5-1"),
    )
)


def write_fewrel_summary(
    result_jsons: Sequence[str | os.PathLike[str]],
    out_csv: str | os.PathLike[str],
    out_md: str | os.PathLike[str],
    out_html: str | os.PathLike[str] | None = None,
) -> None:
    """FewRel accuracy, mean ± std over seeds, per benchmark and N-K setting (the paper's Table 2)."""
    results = load_results(result_jsons, "fewrel", {"dataset", "model", "variant", "seed", "setting", "accuracy", "n"})
    title = "FewRel accuracy (%), Proto, mean ± std over seeds; N-K = N-way K-shot."
    write_seed_summary(results, lambda r: r["dataset"], title, out_csv, out_md, out_html)
