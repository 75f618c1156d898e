"""Wiki80's summary (its registry entry's ``summaries``): accuracy over seeds per training setting,
the paper's Table 3, in the layout every fine-tuning kind shares
(:mod:`pelt.report.finetuning_summary`); and its rows of the README's table of the demo's results."""

from __future__ import annotations

import os
from collections.abc import Sequence

from pelt.report.demo_table import DemoRow
from pelt.report.finetuning_summary import write_seed_summary
from pelt.report.tables import load_results

# Mean ± std over seeds per training setting, as the paper's Table 3; then 100 %'s rare heads.
DEMO_ROWS = (
    *(
        DemoRow(
            f"Wiki80 {share} % (Table 3)",
            "wiki80",
            {"benchmark": "wiki80", "setting": f"{share}%"},
            "accuracy_mean",
            "accuracy_std",
        )
        for share in (1, 10, 100)
    ),
    DemoRow("Wiki80 100 %, rare heads", "wiki80", {"benchmark": "wiki80", "setting": "100%"}, "rare_heads_mean"),
)


def write_wiki80_summary(
    result_jsons: Sequence[str | os.PathLike[str]],
    out_csv: str | os.PathLike[str],
    out_md: str | os.PathLike[str],
    out_html: str | os.PathLike[str] | None = None,
) -> None:
    """Wiki80 accuracy, mean ± std over seeds, per training setting 1% / 10% / 100% (the paper's Table 3).

    The paper reports the test set; where the runs evaluated on dev (the test set being absent) the
    note above the table says so, since the numbers are then not the same measurement.
    """
    results = load_results(
        result_jsons, "wiki80", {"model", "variant", "seed", "setting", "accuracy", "n", "eval_file"}
    )
    evaluated = sorted({os.path.basename(r["eval_file"]) for r in results})
    title = f"Wiki80 accuracy (%), mean ± std over seeds, evaluated on {', '.join(evaluated)} (the paper: test.jsonl)."
    write_seed_summary(results, lambda r: "wiki80", title, out_csv, out_md, out_html)
