"""The table's effect on the demo world (the session's finished demo run), and that the guard can fail.

Exactness tests check that a table entry is the sum the method defines; they cannot see vectors on
the wrong entity or a table that stopped mattering. These tests look at what the table is for: on
rare subjects (the paper's first frequency bucket; in the demo world, the entities whose facts the
model never trained on) LAMA P@1 with the table must beat the baseline by a margin and by more than
either control (vectors permuted among entities, random vectors) moves it, plus noise; and the
controls must stay near the baseline. Then the same criterion is applied to a broken run, which
must fail it: the rare entities' vectors swapped among them. (The slot put before the mention was a
second one until the demo model read the vector there as well as after the name: 66.2 against 65.5
points on rare subjects, seed 42, fp32; a model's reading, not a break of the method.) The same
guard watches Wiki80, whose demo relations only the head entity separates: the rare-head gain must
beat the controls, and fails for vectors that cross kinds or a classifier trained without the slot.
"""

from __future__ import annotations

import contextlib
import glob
import json
import re
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml

from pelt.encoding.encode import build_table
from pelt.encoding.models import load_masked_lm
from pelt.eval.controls import derangement
from pelt.eval.settings import TableInputs, parse
from pelt.table import EntityTable, write_table
from pelt.tasks.lama.run import LamaFiles, run_lama
from pelt.tasks.wiki80 import run as wiki80
from pelt.tasks.wiki80.settings import Wiki80Settings

RARE = "[0,10)"  # the paper's first bucket: the demo world's rare entities (resources/demo/README.md)
# About two standard errors of a difference of two P@1 near 0.3 on the demo's 310 rare-subject
# T-REx facts (sqrt(2 * 0.3 * 0.7 / 310) = 0.037): a gain smaller than a control's plus this is noise.
NOISE = 0.08
# The least gain the guard accepts: the demo's target, 20 points (the seed-42 run gains 41.7;
# benchmarks/README.md, "Demo results history").
MARGIN = 0.20
CONTROL_BAND = 0.05  # the most a control may move P@1 on rare subjects


def rare_gain(result: dict, baseline: dict) -> float:
    """P@1 on rare subjects (mean over relations) with the table (or a control) minus without."""
    return result["buckets"][RARE]["macro_p_at_1"] - baseline["buckets"][RARE]["macro_p_at_1"]


def _results(finished: Path) -> dict[str, dict]:
    folder = finished / "results" / "eval" / "lama" / "demo"
    variants = ("baseline", "pelt", "permuted", "random", "swapped")
    return {v: json.loads((folder / f"{v}.json").read_text()) for v in variants}


def test_the_demo_model_learnt_its_frequent_facts(finished):
    training = json.loads((finished / "results" / "models" / "demo" / "training.json").read_text())
    baseline = _results(finished)["baseline"]
    frequent = [b for b in baseline["buckets"] if b != RARE and baseline["buckets"][b]["facts"]]
    correct = sum(baseline["buckets"][b]["correct"] for b in frequent)
    facts = sum(baseline["buckets"][b]["facts"] for b in frequent)
    assert training["final_loss"] < 0.5 * training["initial_loss"]
    assert correct / facts >= 0.8, f"baseline P@1 on frequent subjects {correct / facts:.3f}"
    assert baseline["buckets"][RARE]["macro_p_at_1"] < 0.15  # and knows nothing of the rare ones


def beats_the_controls(results: dict[str, dict], judged: str = "pelt") -> bool:
    """The guard on the run ``judged`` (pelt's, or a broken one in its place): its rare-subject gain
    is at least ``MARGIN`` and exceeds the permuted and random controls' by more than noise, each
    compared only with controls it is not."""
    baseline = results["baseline"]
    gain = rare_gain(results[judged], baseline)
    controls = max(abs(rare_gain(results[c], baseline)) for c in ("permuted", "random") if c != judged)
    return gain >= MARGIN and gain > controls + NOISE


@pytest.mark.parametrize("broken", ["permuted", "swapped"])
def test_the_lama_guard_fails_on_a_control_in_the_tables_place(finished, broken):
    """The permuted control's run (vectors across kinds) and the same-kind swap's (each rare subject
    another one's vector of its kind: the kind without the facts), each judged as pelt's."""
    assert beats_the_controls(_results(finished))
    assert not beats_the_controls(_results(finished), judged=broken)


def test_the_table_adds_knowledge_and_the_controls_do_not(finished):
    results = _results(finished)
    baseline = results["baseline"]
    assert baseline["buckets"][RARE]["facts"] >= 300
    assert beats_the_controls(results), {v: r["buckets"][RARE] for v, r in results.items()}
    for control in ("permuted", "random"):
        assert abs(rare_gain(results[control], baseline)) <= CONTROL_BAND, (control, results[control]["buckets"])
        assert results[control]["counts"]["injected"] == results["pelt"]["counts"]["injected"]
    summary = (finished / "results" / "eval" / "summary" / "lama.md").read_text()
    assert "| permuted |" in summary and "| random |" in summary and "final MLM loss" in summary


def _lama_again(finished: Path, tmp_path: Path, table: Path, name: str) -> dict:
    """LAMA with the table as the finished run scored it (same facts, model, L), into tmp_path."""
    task = yaml.safe_load((finished / "config" / "config.yaml").read_text())["tasks"]["lama"]
    facts = [path for pattern in task["facts"] for path in sorted(glob.glob(pattern))]  # absolute in the run
    with contextlib.chdir(finished):  # the table names its model as the run did: results/models/demo
        return run_lama(
            "results/models/demo",
            LamaFiles(facts, task["relations"], task["common_vocab"]),
            str(tmp_path / f"{name}.json"),
            str(tmp_path / f"{name}.predictions.jsonl"),
            tables=TableInputs(
                "pelt",
                str(table),
                "results/task_entities/wikipedia/task_entities.parquet",
                _results(finished)["pelt"]["norm"],
            ),
        )


def test_the_guard_fails_when_rare_entities_swap_vectors(finished, tmp_path):
    """The rare entities' vectors given to one another (each to another rare entity)."""
    path = finished / "results" / "tables" / "wikipedia" / "demo" / "table.parquet"
    table = EntityTable.open(path)
    ids = list(table.ids())
    n_sentences, frequency = table.counts(ids)
    sums = table.vector_sums(ids)
    rare = np.flatnonzero(frequency < 10)
    assert len(rare) >= 300
    sums[rare] = sums[rare][derangement(len(rare), np.random.default_rng(0))]
    write_table(tmp_path / "swapped.parquet", ids, sums, n_sentences, frequency, table.metadata)
    swapped = _lama_again(finished, tmp_path, tmp_path / "swapped.parquet", "swapped")
    assert not beats_the_controls(dict(_results(finished), pelt=swapped))


@pytest.mark.parametrize("gain", [0.1, -0.1])
def test_rare_gain_reads_the_rare_bucket(gain):
    base = {"buckets": {RARE: {"macro_p_at_1": 0.2, "p_at_1": 0.5}, "[10,50)": {"macro_p_at_1": 0.9}}}
    other = {"buckets": {RARE: {"macro_p_at_1": 0.2 + gain, "p_at_1": 0.5}, "[10,50)": {"macro_p_at_1": 0.1}}}
    assert rare_gain(other, base) == pytest.approx(gain)


def _in_probe_wording(sentence: str, start: int, end: int, templates: list[str]) -> bool:
    """Whether the sentence is a LAMA template with its mention as [X] and one word as [Y]."""
    mention = re.escape(sentence[start:end])
    for template in templates:
        body = re.escape(template.removesuffix(" .")).replace(r"\[X\]", mention).replace(r"\[Y\]", r"\w+")
        if re.fullmatch(body + r"\s*\.", sentence.strip()):
            return True
    return False


def test_the_gain_does_not_need_the_probe_sentence(finished, tmp_path):
    """A rare entity's article states its fact in every wording, LAMA's own among them
    (resources/demo/world.py). Rebuilt from its other sentences only, its vector keeps the gain: the
    table carries the fact, not a copy of the probe (measured on the seed-42 run: 47.3 against 46.7)."""
    task = yaml.safe_load((finished / "config" / "config.yaml").read_text())["tasks"]["lama"]
    templates = [json.loads(line)["template"] for line in Path(task["relations"]).read_text().splitlines()]
    path = finished / "results" / "tables" / "wikipedia" / "demo" / "table.parquet"
    table = EntityTable.open(path)
    ids = list(table.ids())
    n_sentences, frequency = table.counts(ids)
    rare = {ids[i] for i in np.flatnonzero(frequency < 10)}
    samples = [
        row
        for row in pq.read_table(finished / "results" / "samples" / "wikipedia" / "sentences").to_pylist()
        if row["entity_id"] in rare
    ]
    kept = [r for r in samples if not _in_probe_wording(r["sentence"], r["start"], r["end"], templates)]
    dropped = {r["entity_id"] for r in samples} - {r["entity_id"] for r in kept}
    assert len(samples) - len(kept) >= 300 and not dropped  # about one sentence of each rare entity
    with contextlib.chdir(finished):
        model, tokenizer = load_masked_lm("results/models/demo", device="cpu")
    rebuilt_ids, rebuilt, counts = build_table(
        model,
        tokenizer,
        [r["entity_id"] for r in kept],
        [r["sentence"] for r in kept],
        [(r["start"], r["end"]) for r in kept],
    )
    sums = table.vector_sums(ids)
    row = {entity_id: i for i, entity_id in enumerate(ids)}
    for entity_id, vector, count in zip(rebuilt_ids, rebuilt, counts):
        sums[row[entity_id]], n_sentences[row[entity_id]] = vector, count
    write_table(tmp_path / "no_probe.parquet", ids, sums, n_sentences, frequency, table.metadata)
    results = _results(finished)
    without = _lama_again(finished, tmp_path, tmp_path / "no_probe.parquet", "no_probe")
    assert beats_the_controls(dict(results, pelt=without))
    assert rare_gain(without, results["baseline"]) >= rare_gain(results["pelt"], results["baseline"]) - NOISE


# --- relation classification: Wiki80 on the demo's relations that only the head separates ---------

WIKI80_SETTING = "100%"
# Two standard errors of a difference of two accuracies near 0.6 on the ~280 rare-head dev
# sentences (sqrt(2 * 0.24 / 280) = 0.041), rounded up.
RC_NOISE = 0.10
RC_MARGIN = 0.10  # the least rare-head gain the guard accepts


def _wiki80_results(finished: Path, seed: int = 42) -> dict[str, dict]:
    folder = finished / "results" / "eval" / "wiki80" / "demo"
    return {path.parts[-3]: json.loads(path.read_text()) for path in folder.glob(f"*/{WIKI80_SETTING}/seed{seed}.json")}


def rare_head_gain(result: dict, baseline: dict) -> float:
    """Accuracy on sentences with a rare head, with the table (or a control) minus without."""
    return result["by_head"]["rare"]["accuracy"] - baseline["by_head"]["rare"]["accuracy"]


KNOWLEDGE_FREE = ("permuted", "random")  # controls that carry no entity's kind or facts


def rc_beats_the_controls(results: dict[str, dict], judged: str = "pelt") -> bool:
    """The fine-tuning guard on the run ``judged`` (pelt's, or a broken one standing in for it): its
    rare-head gain is at least ``RC_MARGIN`` and exceeds the knowledge-free controls' by more than
    noise, each compared only with controls it is not. It sees the table's kind, not each entity's
    own facts: on the suite's run (5 epochs) the same-kind swap keeps 63.3 of the table's 70.1 on
    rare heads, within noise, so a same-kind swap would pass it; LAMA's guard is the one that
    separates facts from kind (``test_the_lama_guard_fails_on_a_control_in_the_tables_place``)."""
    baseline, run = results["baseline"], results[judged]
    gain = rare_head_gain(run, baseline)
    controls = max(abs(rare_head_gain(results[c], baseline)) for c in KNOWLEDGE_FREE if c != judged)
    return gain >= RC_MARGIN and gain > controls + RC_NOISE


def test_relation_classification_uses_the_table_and_the_controls_do_not(finished):
    results = _wiki80_results(finished)
    assert set(results) == {"baseline", "pelt", "permuted", "random", "swapped"}
    assert results["baseline"]["by_head"]["rare"]["n"] >= 200
    assert rc_beats_the_controls(results), {v: r["by_head"] for v, r in results.items()}
    for control in ("permuted", "random", "swapped"):
        assert results[control]["entities"]["eval"]["injected"] == results["pelt"]["entities"]["eval"]["injected"]


def test_the_wiki80_guard_fails_when_vectors_cross_kinds(finished):
    """The permuted control's run, whose vectors cross kinds (a company's on a person), judged
    against the controls it is not: random and the same-kind swap."""
    assert not rc_beats_the_controls(_wiki80_results(finished), judged="permuted")


def _wiki80_again(finished: Path, tmp_path: Path, name: str, table: str) -> dict:
    """Wiki80 as the finished run's pelt job ran it (setting, seed, L, every recorded reading choice),
    with ``table`` plugged in, into tmp_path."""
    train = yaml.safe_load((finished / "config" / "config.yaml").read_text())["tasks"]["wiki80"]
    pelt = _wiki80_results(finished)["pelt"]
    recorded = pelt["hyperparameters"]
    keys = ("epochs", "batch_size", "lr", "max_length", "missing", "markers", "read_at")
    settings = parse(Wiki80Settings, {k: recorded[k] for k in keys})
    with contextlib.chdir(finished):
        return wiki80.run_wiki80(
            "results/models/demo",
            wiki80.Wiki80Files(train["train"][WIKI80_SETTING], train["dev"], train["label2id"]),
            str(tmp_path / f"{name}.json"),
            tables=TableInputs("pelt", table, "results/task_entities/wikipedia/task_entities.parquet", pelt["norm"]),
            settings=settings,
            seed=42,
        )


def test_the_wiki80_guard_fails_without_the_slot_in_fine_tuning(finished, tmp_path, monkeypatch):
    """Trained without the slot (the training sentences' mentions resolve to nothing), evaluated with
    it: the classifier never learnt to read the vector, and the guard must see that."""
    resolve = wiki80.resolve_instances
    train_file = yaml.safe_load((finished / "config" / "config.yaml").read_text())["tasks"]["wiki80"]["train"]
    train_file = train_file[WIKI80_SETTING]

    def no_slot_in_training(instances, path):
        if len(instances) == len(wiki80.read_wiki80(train_file)):
            return [(None, None)] * len(instances)
        return resolve(instances, path)

    monkeypatch.setattr(wiki80, "resolve_instances", no_slot_in_training)
    dropped = _wiki80_again(finished, tmp_path, "no_slot", "results/tables/wikipedia/demo/table.parquet")
    pelt = _wiki80_results(finished)["pelt"]
    assert dropped["entities"]["eval"]["injected"] == pelt["entities"]["eval"]["injected"] > 0
    assert dropped["entities"]["train"]["in_table"] == 0
    assert not rc_beats_the_controls(dict(_wiki80_results(finished), pelt=dropped))
