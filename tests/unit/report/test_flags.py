"""Degenerate results are flagged (all P@1 zero, a tied norm L, few facts injected, accuracy at chance),
real ones are not; the flags and the tables reach the summaries' HTML pages."""

from __future__ import annotations

import json
from pathlib import Path

from html_pages import html_rows

from pelt.report.flags import chance_flags, chance_level
from pelt.report.html import markdown_html
from pelt.tasks.fewrel.summary import write_fewrel_summary
from pelt.tasks.lama.summary import lama_flags, norm_sweep_flags, write_norm_sweep_summary


def _lama(variant: str, macro: float, facts: int = 500, injected: int = 400) -> dict:
    return {
        "model": "demo",  # as the report reads it (pelt.report.tables.model_label)
        "variant": variant,
        "macro_p_at_1": macro,
        "benchmarks": {"T-REx": {"macro_p_at_1": macro}, "G-RE": {"macro_p_at_1": None}},
        "counts": {"facts_evaluated": facts, "injected": 0 if variant == "baseline" else injected},
    }


def test_lama_flags_all_zero_and_few_injected_only():
    assert lama_flags([_lama("baseline", 0.3), _lama("pelt", 0.4)]) == []
    (zero,) = lama_flags([_lama("pelt", 0.0)])
    assert zero.startswith("LAMA `demo` pelt: every P@1 is 0 over 500 facts")
    (few,) = lama_flags([_lama("pelt", 0.4, facts=5000, injected=400)])  # 8 % of the facts
    assert "only 400 of 5000 facts" in few
    assert len(lama_flags([_lama("random", 0.2, facts=120, injected=99)])) == 1  # under 100 facts
    assert lama_flags([_lama("baseline", 0.2, facts=120)]) == []  # the baseline injects nothing by design


def _sweep(scores: list[float], chosen: float) -> dict:
    return {
        "model": "m",
        "chosen_norm": chosen,
        "norms": [
            {"norm": float(n), "macro_p_at_1": p, "micro_p_at_1": p, "facts_evaluated": 9, "injected": 9}
            for n, p in enumerate(scores, 1)
        ],
    }


def test_norm_sweep_flags_ties_edges_and_all_zero():
    assert norm_sweep_flags([_sweep([0.1, 0.3, 0.2], 2.0)]) == []
    (tie,) = norm_sweep_flags([_sweep([0.1, 0.3, 0.3, 0.3, 0.1], 2.0)])
    assert "chosen L = 2 ties with L = 3, 4 (P@1 30.0 %)" in tie
    (low,) = norm_sweep_flags([_sweep([0.4, 0.3, 0.2], 1.0)])
    assert "chosen L = 1 is the smallest L swept" in low
    (high,) = norm_sweep_flags([_sweep([0.1, 0.3, 0.4], 3.0)])
    assert "chosen L = 3 is the largest L swept" in high
    assert norm_sweep_flags([_sweep([0.4, 0.3], 1.0)]) == []  # two L values have no interior
    (zero,) = norm_sweep_flags([_sweep([0.0] * 10, 1.0)])
    assert "P@1 is 0 at every L" in zero


def test_chance_flags_use_the_ways_or_classes_and_the_standard_error():
    assert chance_level("fewrel1", "10-5", None) == 0.1 and chance_level("wiki80", "1%", 80) == 1 / 80
    row = {"benchmark": "fewrel2", "setting": "5-1", "model": "m", "variant": "pelt", "n": 400}
    # chance 20 %, standard error 2 points on 400 episodes: 23.9 % is at chance, 24.1 % is not
    (flag,) = chance_flags([{**row, "accuracy_mean": 0.239}])
    assert flag == "FewRel 2.0 5-1 `m` pelt: accuracy 23.9 % is at chance (20.0 % for 5 classes, n = 400)."
    assert chance_flags([{**row, "accuracy_mean": 0.241}]) == []
    wiki = {**row, "benchmark": "wiki80", "setting": "100%", "accuracy_mean": 0.5}
    assert chance_flags([{**wiki, "classes": 10}]) == []
    assert "at chance" in chance_flags([{**wiki, "classes": 2}])[0]
    assert "chance level unknown" in chance_flags([{**wiki, "classes": None}])[0]


def test_markdown_html_tables_paper_rows_and_flag_boxes():
    html = markdown_html(
        "Intro with `code` & **bold**.\n\n| A | B |\n|---|---|\n| `x` | 1.5 |\n| y | – (0) |\n"
        "| paper (Ye et al. 2022) | 2.0 |\n\n"
        "> Flag: something < wrong\n> No flag raised (checked: x).\n"
    )
    assert "<p>Intro with <code>code</code> &amp; <b>bold</b>.</p>" in html
    assert "<tr><th>A</th><th>B</th></tr>" in html
    assert '<tr><td><code>x</code></td><td class="n">1.5</td></tr>' in html  # numbers right-aligned
    assert '<tr><td>y</td><td class="n">– (0)</td></tr>' in html
    assert '<tr class="paper"><td>paper (Ye et al. 2022)</td><td class="n">2.0</td></tr>' in html
    assert '<p class="flag">Flag: something &lt; wrong</p>' in html and '<p class="ok">No flag raised' in html


def test_summaries_write_their_flags_in_markdown_and_html(tmp_path: Path):
    sweep = tmp_path / "sweep.json"
    sweep.write_text(
        json.dumps(
            {
                "task": "lama_norm_sweep",
                "baseline": {"macro_p_at_1": 0.0, "micro_p_at_1": 0.0, "facts_evaluated": 9},
                **_sweep([0.0, 0.0], 1.0),
            }
        )
    )
    write_norm_sweep_summary([sweep], tmp_path / "n.csv", tmp_path / "n.md", tmp_path / "n.html")
    assert "> Flag: norm sweep `m`: P@1 is 0 at every L" in (tmp_path / "n.md").read_text()
    html = (tmp_path / "n.html").read_text()
    assert '<p class="flag">Flag: norm sweep <code>m</code>: P@1 is 0 at every L' in html
    assert ["m", "0.0", "0.0", "0.0", "1", "–"] in html_rows(html)

    runs = []
    for seed, accuracy in ((1, 0.21), (2, 0.19)):
        path = tmp_path / f"f{seed}.json"
        path.write_text(
            json.dumps(
                {
                    "task": "fewrel",
                    "dataset": "fewrel1",
                    "model": "roberta-base",
                    "variant": "pelt",
                    "seed": seed,
                    "setting": "5-1",
                    "accuracy": accuracy,
                    "n": 1000,
                }
            )
        )
        runs.append(path)
    write_fewrel_summary(runs, tmp_path / "f.csv", tmp_path / "f.md", tmp_path / "f.html")
    html = (tmp_path / "f.html").read_text()
    assert html_rows(html)[1:] == [
        ["roberta-base", "pelt", "20.0 ± 1.4"],
        ["paper (Ye et al. 2022)", "pelt", "92.7 ± 0.3"],  # the paper's Table 2 beside ours
    ]
    assert '<tr class="paper">' in html
    assert "accuracy 20.0 % is at chance (20.0 % for 5 classes, n = 1000)" in html
