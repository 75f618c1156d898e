"""What the summaries (and the landing page) share: how numbers are written, the order of variants,
the note on the controls, reading result files and writing a summary as Markdown and its HTML page.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

from pelt.config import is_hub_name
from pelt.report.html import markdown_html, write_page

# Rows in this order: without the table, with it, then the controls.
VARIANT_ORDER = {"baseline": 0, "pelt": 1, "permuted": 2, "random": 3, "swapped": 4}
CONTROL_VARIANTS = ("permuted", "random", "swapped")
CONTROLS_NOTE = (
    "Controls: `permuted` injects the same table with its vectors moved among the entities (none keeps "
    "its own), `random` a random vector of the same norm per entity, `swapped` (where the domain has a "
    "kinds file) the vectors moved among entities of the same kind; same slots and L as `pelt`. Where "
    "`pelt` gains and `permuted` and `random` do not, the gain comes from each entity's own vector; "
    "what `swapped` keeps of it is the entity's kind, what it loses the entity's own facts."
)


def percent(value: float | None) -> str:
    """A fraction as every table writes it, in percent; ``–`` where a run has no such number, so an
    absent number never reads as a zero."""
    return "–" if value is None else f"{100 * value:.1f}"


def mean_std(mean: float | None, std: float | None) -> str:
    """Mean ± std over seeds, in percent; the mean alone where there is no std (one seed, or the paper
    gives none)."""
    if mean is None:
        return "–"
    return percent(mean) if std is None else f"{percent(mean)} ± {percent(std)}"


def model_label(name: str) -> str:
    """How the report names a model: a hub name as it is (``FacebookAI/roberta-base``), a local
    folder by its last part (``results/models/demo`` -> ``demo``, the config's id for the demo)."""
    name = str(name).rstrip("/")
    return name if is_hub_name(name) else name.rsplit("/", 1)[-1]


def read_result(path: str | os.PathLike[str]) -> dict:
    """One result file, its model named as the report names it (:func:`model_label`)."""
    with open(path, encoding="utf-8") as fh:
        result = json.load(fh)
    if "model" in result:
        result["model"] = model_label(result["model"])
    return result


def load_results(result_jsons: Sequence[str | os.PathLike[str]], task: str, fields: set[str]) -> list[dict]:
    """The result files of one task; a file of another task, or one without ``fields``, is an error
    rather than a row of the wrong numbers."""
    results = []
    for path in result_jsons:
        result = read_result(path)
        missing = fields - set(result)
        if result.get("task") != task or missing:
            raise ValueError(f"{path}: not a {task} result (task {result.get('task')!r}, missing {sorted(missing)})")
        results.append(result)
    return results


def write_summary(
    sections: list[str], out_md: str | os.PathLike[str], out_html: str | os.PathLike[str] | None, title: str
) -> None:
    """The summary as Markdown and, for the report, as an HTML page of the same text."""
    text = "\n".join(sections) + "\n"
    with open(out_md, "w", encoding="utf-8") as fh:
        fh.write(text)
    if out_html is not None:
        write_page(out_html, title, markdown_html(text))
