"""The model-size benchmark (benchmarks/demo_model_trend.py) reads a LAMA norm sweep at the L it
chose, and the trend that benchmarks/README.md shows is the table of its recorded rows."""

from __future__ import annotations

import json
import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import demo_model_trend  # noqa: E402

ROWS = REPO / "benchmarks" / "demo-results" / "model-trend-h200.jsonl"


def _sweep(chosen: float) -> dict:
    norms = [
        {"norm": 1.0, "buckets": {"[0,10)": 0.30, "[10,50)": 0.80}},
        {"norm": 2.0, "buckets": {"[0,10)": 0.50, "[10,50)": 0.70}},
    ]
    return {"baseline": {"buckets": {"[0,10)": 0.05, "[10,50)": 0.90}}, "norms": norms, "chosen_norm": chosen}


def test_a_sweep_is_read_at_the_chosen_norm() -> None:
    row = demo_model_trend.sweep_row(_sweep(2.0))
    assert row["chosen_norm"] == 2.0
    assert round(row["frequent_delta"], 6) == -20.0 and round(row["rare_delta"], 6) == 45.0
    assert round(row["frequent_baseline"], 6) == 90.0 and round(row["rare_pelt"], 6) == 50.0
    assert round(demo_model_trend.sweep_row(_sweep(1.0))["frequent_delta"], 6) == -10.0


def test_the_bar_is_within_three_points_and_a_gain_of_twenty() -> None:
    rows = [
        {"frequent_delta": -3.0, "rare_delta": 20.0, "frequent_baseline": 90.0},
        {"frequent_delta": -3.2, "rare_delta": 41.3, "frequent_baseline": 90.0},
        {"frequent_delta": 1.0, "rare_delta": 19.9, "frequent_baseline": 90.0},
    ]
    summary = demo_model_trend.shape_summary(rows)
    assert summary["meet_bar"] == 1 and summary["models"] == 3
    assert round(summary["frequent_delta"], 6) == round((-3.0 - 3.2 + 1.0) / 3, 6)


def test_the_readme_shows_the_recorded_rows() -> None:
    rows = [json.loads(line) for line in ROWS.read_text().splitlines()]
    assert len(rows) == 16 and {r["device"] for r in rows} == {"NVIDIA H200"}
    # Each row's numbers are its own sweep read at its chosen L.
    for row in rows:
        chosen = next(n for n in row["sweep"] if n["norm"] == row["chosen_norm"])
        assert abs(row["frequent_pelt"] - 100 * chosen["buckets"]["[10,50)"]) < 1e-9, row["seed"]
    assert demo_model_trend.table(rows) in (REPO / "benchmarks" / "README.md").read_text()
