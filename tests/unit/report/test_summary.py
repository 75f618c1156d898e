"""Summaries lay out the per-run JSON numbers in the paper's layout: LAMA one row per (model, variant); FewRel,
Wiki80 aggregated over seeds beside the paper's numbers; the norm sweep one row per model."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from pelt.report.paper import PAPER_NORMS, PAPER_RESULTS, paper_model
from pelt.report.tables import model_label, read_result
from pelt.tasks.fewrel.summary import write_fewrel_summary
from pelt.tasks.lama.summary import write_lama_summary, write_norm_sweep_summary
from pelt.tasks.wiki80.summary import write_wiki80_summary


def _result(
    path: Path,
    model: str,
    variant: str,
    macro: float,
    micro: float,
    buckets: dict | None,
    benchmarks: dict | None = None,
) -> str:
    path.write_text(
        json.dumps(
            {
                "task": "lama",
                "model": model,
                "variant": variant,
                "norm": 7.0 if variant == "pelt" else None,
                "macro_p_at_1": macro,
                "micro_p_at_1": micro,
                "per_relation": {},
                "buckets": buckets,
                "benchmarks": benchmarks,
                "counts": {"facts_evaluated": 80, "injected": 60 if variant == "pelt" else 0},
            }
        )
    )
    return str(path)


def _bucket(correct_by_relation: dict[str, tuple[int, int]]) -> dict:
    """A bucket as run_lama writes it, from (correct, facts) per relation."""
    correct = sum(c for c, _ in correct_by_relation.values())
    facts = sum(n for _, n in correct_by_relation.values())
    macro = [c / n for c, n in correct_by_relation.values()]
    return {
        "facts": facts,
        "correct": correct,
        "p_at_1": correct / facts if facts else None,
        "macro_p_at_1": sum(macro) / len(macro) if macro else None,
        "relations": len(macro),
    }


@pytest.mark.parametrize(
    ("recorded", "shown"),
    [
        ("results/models/demo", "demo"),  # the demo model's folder: the config's id
        ("/data/models/my-roberta/", "my-roberta"),
        ("roberta-base", "roberta-base"),
        ("FacebookAI/roberta-base", "FacebookAI/roberta-base"),  # a hub name keeps its organisation
    ],
)
def test_the_report_names_a_model_by_its_id_not_its_path(tmp_path: Path, recorded: str, shown: str):
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"task": "lama", "model": recorded}))
    assert model_label(recorded) == shown and read_result(path)["model"] == shown


def test_rows_and_markdown(tmp_path: Path):
    # [0,10): one relation with 1 of 4 right, one with 9 of 12: per fact 10/16, macro (1/4 + 9/12) / 2
    rare = {"P19": (1, 4), "P36": (9, 12)}
    buckets = {"[0,10)": _bucket(rare), "[10,50)": _bucket({})}
    per_fact, macro = 10 / 16, (1 / 4 + 9 / 12) / 2
    files = [
        _result(tmp_path / "b.json", "results/models/demo", "pelt", 0.5, 0.45, buckets),  # named by its id
        _result(tmp_path / "a.json", "results/models/demo", "baseline", 0.25, 0.2, buckets),
        _result(tmp_path / "c.json", "bert-base", "baseline", 0.125, 0.1, None),
    ]
    out_csv, out_md = tmp_path / "s.csv", tmp_path / "s.md"
    write_lama_summary(files, out_csv, out_md)
    rows = list(csv.DictReader(out_csv.open()))
    assert [(r["model"], r["variant"]) for r in rows] == [
        ("bert-base", "baseline"),
        ("demo", "baseline"),
        ("demo", "pelt"),
    ]
    assert float(rows[2]["macro_p_at_1"]) == 0.5 and float(rows[2]["micro_p_at_1"]) == 0.45
    assert rows[2]["injected"] == "60" and rows[2]["norm"] == "7.0"
    assert float(rows[1]["per_fact_p_at_1 [0,10)"]) == pytest.approx(per_fact) and rows[1]["facts [0,10)"] == "16"
    assert float(rows[1]["macro_p_at_1 [0,10)"]) == pytest.approx(macro)
    assert rows[1]["paper [0,10)"] == ""  # not a model of the paper
    assert rows[1]["per_fact_p_at_1 [10,50)"] == "" and rows[1]["facts [10,50)"] == "0"  # empty: no P@1
    assert rows[0]["per_fact_p_at_1 [0,10)"] == ""  # no frequencies for that run: left empty, not zero
    md = out_md.read_text()
    # every column names its average: per fact as the paper's Table 5, macro over relations as ours
    assert (
        "| Model | Variant | L | Bucket | Facts | P@1 per fact (as the paper) | P@1 macro over relations (ours) |" in md
    )
    assert f"| `demo` | pelt | 7 | [0,10) | 16 | {100 * per_fact:.1f} | {100 * macro:.1f} |" in md
    assert "| `demo` | pelt | 7 | [10,50) | 0 | – | – |" in md
    assert "| `bert-base` | baseline | – | [0,10)" not in md  # a run without buckets has no bucket rows
    assert (
        "| Model | Variant | L | Facts | Injected | P@1 macro over relations (ours) | P@1 per fact (micro, ours) |"
        in md
    )
    assert "| `demo` | pelt | 7 | 80 | 60 | 50.0 | 45.0 |" in md


def test_bucket_p_at_1_per_fact_beside_the_papers_table_5(tmp_path: Path):
    # roberta-base's pelt: the paper's Table 5 gives 21.9 at [0,10); ours per fact 3/4 (macro 5/8) beside it
    buckets = {"[0,10)": _bucket({"P19": (2, 3), "P36": (1, 1)})}
    per_fact, macro = 3 / 4, (2 / 3 + 1) / 2
    files = [_result(tmp_path / "a.json", "/models/roberta-base", "pelt", 0.25, 0.2, buckets)]
    write_lama_summary(files, tmp_path / "s.csv", tmp_path / "s.md")
    (row,) = csv.DictReader((tmp_path / "s.csv").open())
    assert float(row["per_fact_p_at_1 [0,10)"]) == pytest.approx(per_fact)
    assert float(row["macro_p_at_1 [0,10)"]) == pytest.approx(macro)
    assert float(row["paper [0,10)"]) == pytest.approx(0.219)
    md = (tmp_path / "s.md").read_text()
    assert f"| `roberta-base` | pelt | 7 | [0,10) | 4 | {100 * per_fact:.1f} (21.9) | {100 * macro:.1f} |" in md


def test_lama_table_4_layout_with_the_papers_numbers(tmp_path: Path):
    scores = {"T-REx": {"macro_p_at_1": 0.25}, "UHN T-REx": {"macro_p_at_1": 0.125}}
    files = [
        _result(tmp_path / "a.json", "/models/roberta-base", "pelt", 0.25, 0.2, None, scores),
        _result(tmp_path / "b.json", "demo", "baseline", 0.25, 0.2, None, {"T-REx": {"macro_p_at_1": 0.5}}),
    ]
    write_lama_summary(files, tmp_path / "s.csv", tmp_path / "s.md")
    rows = list(csv.DictReader((tmp_path / "s.csv").open()))
    assert [r["model"] for r in rows] == ["demo", "roberta-base"]  # a local folder by its name
    roberta, demo = rows[1], rows[0]
    assert float(roberta["macro_p_at_1 UHN T-REx"]) == 0.125
    assert float(roberta["paper UHN T-REx"]) == pytest.approx(0.193)
    assert demo["paper T-REx"] == "" and demo["macro_p_at_1 UHN T-REx"] == ""  # no paper number, no UHN run
    assert "macro_p_at_1 G-RE" not in roberta  # no run has Google-RE: no column
    md = (tmp_path / "s.md").read_text()
    macro = "P@1 macro over relations (as the paper)"
    assert f"| Model | Variant | L | T-REx {macro} | UHN T-REx {macro} |" in md
    assert "| `roberta-base` | pelt | 7 | 25.0 (27.5) | 12.5 (19.3) |" in md
    assert "| `demo` | baseline | – | 50.0 | – |" in md


def test_rejects_duplicates_and_non_results(tmp_path: Path):
    a = _result(tmp_path / "a.json", "demo", "pelt", 0.5, 0.5, None)
    b = _result(tmp_path / "b.json", "demo", "pelt", 0.4, 0.4, None)
    with pytest.raises(ValueError, match="two LAMA results"):
        write_lama_summary([a, b], tmp_path / "s.csv", tmp_path / "s.md")
    (tmp_path / "x.json").write_text(json.dumps({"model": "demo"}))
    with pytest.raises(ValueError, match="not a LAMA result"):
        write_lama_summary([str(tmp_path / "x.json")], tmp_path / "s.csv", tmp_path / "s.md")


def _run_json(path: Path, **fields) -> str:
    path.write_text(json.dumps(fields))
    return str(path)


def _fewrel(tmp_path: Path, dataset: str, model: str, variant: str, setting: str, seed: int, accuracy: float) -> str:
    return _run_json(
        tmp_path / f"{dataset}-{os.path.basename(model)}-{variant}-{setting}-{seed}.json",
        task="fewrel",
        dataset=dataset,
        model=model,
        variant=variant,
        setting=setting,
        seed=seed,
        accuracy=accuracy,
        n=1000,
    )


def test_fewrel_summary_aggregates_seeds_beside_the_paper(tmp_path: Path):
    files = [
        _fewrel(tmp_path, "fewrel1", "roberta-base", "pelt", "5-1", seed, acc)
        for seed, acc in [(42, 0.90), (43, 0.92), (44, 0.94)]
    ]
    files += [
        _fewrel(tmp_path, "fewrel1", "roberta-base", "baseline", "5-1", 42, 0.88),
        _fewrel(tmp_path, "fewrel2", "roberta-base", "pelt", "10-5", 42, 0.80),
        _fewrel(tmp_path, "fewrel1", "/models/demo", "pelt", "5-1", 42, 0.5),
        _fewrel(tmp_path, "fewrel1", "roberta-base", "pelt", "10-1", 42, 0.8),
    ]
    out_csv, out_md = tmp_path / "f.csv", tmp_path / "f.md"
    write_fewrel_summary(files, out_csv, out_md)
    rows = {(r["benchmark"], r["model"], r["variant"], r["setting"]): r for r in csv.DictReader(out_csv.open())}
    assert len(rows) == 5
    pelt = rows[("fewrel1", "roberta-base", "pelt", "5-1")]
    assert pelt["n_seeds"] == "3" and pelt["seeds"] == "42 43 44"
    assert float(pelt["accuracy_mean"]) == pytest.approx(0.92) and float(pelt["accuracy_std"]) == pytest.approx(0.02)
    assert float(pelt["paper_mean"]) == pytest.approx(0.927) and float(pelt["paper_std"]) == pytest.approx(0.003)
    assert rows[("fewrel1", "roberta-base", "baseline", "5-1")]["accuracy_std"] == ""  # one seed: no std
    assert float(rows[("fewrel2", "roberta-base", "pelt", "10-5")]["paper_mean"]) == pytest.approx(0.856)
    assert rows[("fewrel1", "demo", "pelt", "5-1")]["paper_mean"] == ""  # not the paper's model
    table = [line for line in out_md.read_text().splitlines() if line.startswith("|")]
    assert table[0] == "| Model | Variant | FewRel 1.0 5-1 | FewRel 1.0 10-1 | FewRel 2.0 10-5 |"
    assert "| `roberta-base` | pelt | 92.0 ± 2.0 | 80.0 | 80.0 |" in table
    assert "| paper (Ye et al. 2022) | pelt | 92.7 ± 0.3 | 87.5 ± 0.3 | 85.6 ± 0.2 |" in table
    assert "| `roberta-base` | baseline | 88.0 | – | – |" in table
    assert "| paper (Ye et al. 2022) | baseline | 90.4 ± 0.3 | – | – |" in table
    assert "| `demo` | pelt | 50.0 | – | – |" in table and len(table) == 2 + 5


@pytest.mark.parametrize("readouts", [["markers"], ["both"], [None], ["markers", "both"]])
def test_fewrel_summary_names_where_entities_were_read(tmp_path: Path, readouts: list):
    """The readout is in every row and above the table (None: a result older than its record,
    read at the markers); runs read at two places are two rows, never one mean."""
    files = []
    for i, read_at in enumerate(readouts):
        path = _fewrel(tmp_path, "fewrel1", "demo", "pelt", "5-1", 42, 0.5 + i / 10)
        if read_at:
            result = json.loads(Path(path).read_text())
            result["hyperparameters"] = {"read_at": read_at}
            Path(path).write_text(json.dumps(result))
        files.append(path)
        os.rename(path, f"{path}.{i}.json")
        files[-1] = f"{path}.{i}.json"
    out_csv, out_md = tmp_path / "f.csv", tmp_path / "f.md"
    write_fewrel_summary(files, out_csv, out_md)
    rows = list(csv.DictReader(out_csv.open()))
    expected = [r or "markers" for r in readouts]
    assert [r["read_at"] for r in rows] == expected and [float(r["accuracy_mean"]) for r in rows] == [
        0.5 + i / 10 for i in range(len(readouts))
    ]
    text = out_md.read_text()
    assert ("the paper's protocol" in text) == ("markers" in expected)
    assert ("this project's option, not the paper's" in text) == ("both" in expected)
    if len(readouts) > 1:
        assert "| `demo` | pelt, read_at markers | 50.0 |" in text and "| `demo` | pelt, read_at both | 60.0 |" in text


def test_fewrel_summary_splits_by_head_and_lists_the_controls(tmp_path: Path):
    """Runs split by the head's frequency get a second table, rare / frequent, mean over seeds; a
    group where one seed lacks the split shows none; the controls come after pelt, with their note."""
    files = []
    for variant, seed, rare, frequent in [
        ("baseline", 42, 0.30, 0.80),
        ("baseline", 43, 0.40, 0.90),
        ("pelt", 42, 0.70, 0.85),
        ("pelt", 43, 0.80, 0.75),
        ("swapped", 42, 0.60, 0.80),
        ("permuted", 42, 0.35, 0.70),
    ]:
        path = _fewrel(tmp_path, "fewrel1", "demo", variant, "5-1", seed, (rare + frequent) / 2)
        result = json.loads(Path(path).read_text())
        result["by_head"] = {"rare": {"n": 50, "accuracy": rare}, "frequent": {"n": 50, "accuracy": frequent}}
        Path(path).write_text(json.dumps(result))
        files.append(path)
    files.append(_fewrel(tmp_path, "fewrel1", "demo", "random", "5-1", 42, 0.5))  # no split: no table read
    out_csv, out_md = tmp_path / "f.csv", tmp_path / "f.md"
    write_fewrel_summary(files, out_csv, out_md)
    rows = {r["variant"]: r for r in csv.DictReader(out_csv.open())}
    assert float(rows["baseline"]["rare_heads_mean"]) == pytest.approx(0.35)
    assert float(rows["pelt"]["frequent_heads_mean"]) == pytest.approx(0.80)
    assert rows["random"]["rare_heads_mean"] == ""
    text = out_md.read_text()
    table = [line for line in text.splitlines() if line.startswith("| `demo`")]
    assert [line.split(" | ")[1] for line in table[:5]] == ["baseline", "pelt", "permuted", "random", "swapped"]
    assert "| `demo` | baseline | 35.0 / 85.0 |" in table and "| `demo` | pelt | 75.0 / 80.0 |" in table
    assert "| `demo` | random | – / – |" in table and "`swapped`" in text and "rare / frequent" in text


def test_fewrel_summary_by_relation_says_where_errors_go(tmp_path: Path):
    """Per relation: accuracy as the mean over seeds, and the relation its errors went to most by
    the mean share over seeds (one seed's errors all to P20, the other's split)."""
    files = []
    for variant, seed, born in [
        ("baseline", 42, {"n": 10, "accuracy": 0.5, "errors": {"P20": 0.5}}),
        ("baseline", 43, {"n": 10, "accuracy": 0.3, "errors": {"P27": 0.4, "P20": 0.3}}),
        ("pelt", 42, {"n": 10, "accuracy": 1.0, "errors": {}}),
    ]:
        path = _fewrel(tmp_path, "fewrel1", "demo", variant, "5-1", seed, 0.5)
        result = json.loads(Path(path).read_text())
        result["by_relation"] = {"P19": born, "P740": {"n": 10, "accuracy": 0.9, "errors": {"P159": 0.1}}}
        Path(path).write_text(json.dumps(result))
        files.append(path)
    out_md = tmp_path / "f.md"
    write_fewrel_summary(files, tmp_path / "f.csv", out_md)
    lines = out_md.read_text().splitlines()
    start = lines.index("| Benchmark | Setting | Relation | `demo` baseline | `demo` pelt |")
    assert lines[start + 2 : start + 4] == [
        "| FewRel 1.0 | 5-1 | P19 | 40.0 (→ P20 40.0) | 100.0 |",
        "| FewRel 1.0 | 5-1 | P740 | 90.0 (→ P159 10.0) | 90.0 (→ P159 10.0) |",
    ]


def test_fewrel_summary_rejects_repeated_seeds_and_other_tasks(tmp_path: Path):
    a = _fewrel(tmp_path, "fewrel1", "roberta-base", "pelt", "5-1", 42, 0.9)
    b = _run_json(
        tmp_path / "b.json",
        task="fewrel",
        dataset="fewrel1",
        model="roberta-base",
        variant="pelt",
        setting="5-1",
        seed=42,
        accuracy=0.8,
        n=1000,
    )
    with pytest.raises(ValueError, match="same seed"):
        write_fewrel_summary([a, b], tmp_path / "s.csv", tmp_path / "s.md")
    wiki = _run_json(
        tmp_path / "w.json",
        task="wiki80",
        model="m",
        variant="pelt",
        setting="1%",
        seed=1,
        accuracy=0.5,
        n=10,
        eval_file="dev.jsonl",
    )
    with pytest.raises(ValueError, match="not a fewrel result"):
        write_fewrel_summary([wiki], tmp_path / "s.csv", tmp_path / "s.md")


def test_wiki80_summary(tmp_path: Path):
    files = [
        _run_json(
            tmp_path / f"{v}{s}{seed}.json",
            task="wiki80",
            model="FacebookAI/roberta-base",
            variant=v,
            setting=s,
            seed=seed,
            accuracy=acc,
            n=5600,
            eval_file="/data/wiki80/dev.jsonl",
        )
        for v, s, seed, acc in [
            ("baseline", "100%", 42, 0.9),
            ("baseline", "100%", 43, 0.92),
            ("pelt", "1%", 42, 0.6),
            ("pelt", "10%", 42, 0.85),
        ]
    ]
    out_csv, out_md = tmp_path / "w.csv", tmp_path / "w.md"
    write_wiki80_summary(files, out_csv, out_md)
    rows = list(csv.DictReader(out_csv.open()))
    assert [(r["variant"], r["setting"]) for r in rows] == [("baseline", "100%"), ("pelt", "1%"), ("pelt", "10%")]
    assert float(rows[0]["paper_mean"]) == pytest.approx(0.917) and float(rows[1]["paper_mean"]) == pytest.approx(0.656)
    text = out_md.read_text()
    assert "evaluated on dev.jsonl (the paper: test.jsonl)" in text
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert table[0] == "| Model | Variant | Wiki80 1% | Wiki80 10% | Wiki80 100% |"
    assert "| `FacebookAI/roberta-base` | baseline | – | – | 91.0 ± 1.4 |" in table
    assert "| paper (Ye et al. 2022) | pelt | 65.6 ± 1.0 | 88.3 ± 0.3 | – |" in table


def _sweep(path: Path, model: str, scores: dict[float, float], chosen: float, rare: dict | None = None) -> str:
    """A sweep result; ``rare``: L -> P@1 on rare subjects (frequent ones lose 0.1 per L), baseline 0.05 / 0.9."""

    def buckets(rare_p: float, frequent_p: float) -> dict:
        return {"[0,10)": rare_p, "[10,50)": frequent_p, "[50,100)": None, "[100,+)": None}

    baseline = {"macro_p_at_1": 0.2, "micro_p_at_1": 0.25, "facts_evaluated": 80}
    norms = [
        {"norm": n, "macro_p_at_1": p, "micro_p_at_1": p, "facts_evaluated": 80, "injected": 60}
        for n, p in scores.items()
    ]
    if rare:
        baseline["buckets"] = buckets(0.05, 0.9)
        for row in norms:
            row["buckets"] = buckets(rare[row["norm"]], 0.9 - 0.1 * row["norm"])
    return _run_json(path, task="lama_norm_sweep", model=model, chosen_norm=chosen, baseline=baseline, norms=norms)


def test_norm_sweep_summary(tmp_path: Path):
    files = [
        _sweep(tmp_path / "a.json", "bert-base-uncased", {1.0: 0.3, 2.0: 0.35, 3.0: 0.35}, 2.0),
        _sweep(tmp_path / "b.json", "demo", {1.0: 0.1, 2.0: 0.05}, 1.0, rare={1.0: 0.4, 2.0: 0.6}),
    ]
    out_csv, out_md = tmp_path / "n.csv", tmp_path / "n.md"
    write_norm_sweep_summary(files, out_csv, out_md)
    rows = list(csv.DictReader(out_csv.open()))
    assert len(rows) == 4 + 3  # a baseline row per model, then one row per L
    bert = [r for r in rows if r["model"] == "bert-base-uncased"]
    assert bert[0]["norm"] == "" and bert[0]["macro_p_at_1"] == "0.2"
    assert [r["chosen"] for r in bert[1:]] == ["False", "True", "False"] and bert[1]["paper_norm"] == "10.0"
    table = [line for line in out_md.read_text().splitlines() if line.startswith("|")]
    assert table[0] == "| Model | Baseline | L=1 | L=2 | L=3 | Chosen L | Paper's L |"
    assert "| `bert-base-uncased` | 20.0 | 30.0 | 35.0 | 35.0 | 2 | 10 |" in table
    assert "| `demo` | 20.0 | 10.0 | 5.0 | – | 1 | – |" in table
    # what each L gives rare subjects and costs frequent ones, per fact, for the sweeps that bucketed
    assert "| Model | Subjects | Baseline | L=1 | L=2 | L=3 |" in table
    assert (
        "| `demo` | [0,10) | 5.0 | 40.0 | 60.0 | – |" in table
        and "| `demo` | [10,50) | 90.0 | 80.0 | 70.0 | – |" in table
    )
    assert "| `bert-base-uncased` | [0,10) | – | – | – | – |" in table
    demo = [r for r in rows if r["model"] == "demo"]
    assert [r["p_at_1_[0,10)"] for r in demo] == ["0.05", "0.4", "0.6"] and "p_at_1_[50,100)" not in demo[0]
    with pytest.raises(ValueError, match="two norm sweeps"):
        write_norm_sweep_summary([files[0], files[0]], out_csv, out_md)


@pytest.mark.parametrize(
    "model,expected",
    [
        ("roberta-base", "roberta-base"),
        ("FacebookAI/roberta-base", "roberta-base"),
        ("/models/bart-base/", "bart-base"),
        ("roberta-large", None),
    ],
)
def test_paper_model(model, expected):
    assert paper_model(model) == expected


def test_paper_results_hold_the_papers_own_rows():
    assert set(PAPER_RESULTS) == {"fewrel1", "fewrel2", "wiki80", "lama", "lama_frequency"}
    for benchmark, rows in PAPER_RESULTS.items():
        assert {variant for _, variant in rows} == {"baseline", "pelt"}
        for (model, _), settings in rows.items():
            assert model in PAPER_NORMS and all(0 < mean < 100 for mean, _ in settings.values())
    # PELT beats the vanilla model in every FewRel and Wiki80 setting of the paper
    for benchmark in ("fewrel1", "fewrel2", "wiki80"):
        base = PAPER_RESULTS[benchmark][("roberta-base", "baseline")]
        pelt = PAPER_RESULTS[benchmark][("roberta-base", "pelt")]
        assert set(base) == set(pelt) and all(pelt[s][0] > base[s][0] for s in base)
