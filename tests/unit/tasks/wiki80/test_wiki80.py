"""Wiki80: settings, labels, the classifier learning, model selection, and run_wiki80 with and without a table."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
from conftest import REPO
from relation_data import records, write_wiki80

from pelt.encoding.models import load_masked_lm
from pelt.eval.settings import TableInputs, parse
from pelt.table import write_table
from pelt.tasks.relation.encoder import RelationEncoder, resolve_instances
from pelt.tasks.wiki80.data import read_wiki80
from pelt.tasks.wiki80.run import (
    MarkerClassifier,
    Wiki80Files,
    accuracy,
    read_labels,
    run_wiki80,
    setting_of,
)
from pelt.tasks.wiki80.settings import Wiki80Settings

DEMO = REPO / "resources" / "demo" / "wiki80"
NO_TABLE = TableInputs("baseline")
RELATIONS = ["P19", "P36", "P108", "P206", "P30"]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """5 relations, 6 training and 2 dev sentences each, in Wiki80's layout."""
    root = tmp_path_factory.mktemp("wiki80")
    (root / "label2id.json").write_text(json.dumps({r: i for i, r in enumerate(RELATIONS)}))
    return {
        "train": write_wiki80(root / "train.jsonl", [(r, records(r, 6)) for r in RELATIONS]),
        "dev": write_wiki80(root / "dev.jsonl", [(r, records(r, 2, offset=60)) for r in RELATIONS]),
        "labels": str(root / "label2id.json"),
    }


@pytest.mark.parametrize(
    "name,setting",
    [("train_0.01.jsonl", "1%"), ("data/train_0.1.jsonl", "10%"), ("train.jsonl", "100%"), ("other.jsonl", "other")],
)
def test_setting_of(name, setting):
    assert setting_of(name) == setting


def test_read_labels_checks_indices(tmp_path: Path):
    (tmp_path / "good.json").write_text(json.dumps({"a": 1, "b": 0}))
    assert read_labels(str(tmp_path / "good.json")) == {"a": 1, "b": 0}
    (tmp_path / "bad.json").write_text(json.dumps({"a": 0, "b": 2}))
    with pytest.raises(ValueError, match="relation -> 0..1"):
        read_labels(str(tmp_path / "bad.json"))


def _run(
    model_dir: Path,
    files: dict[str, str],
    out: Path,
    tables: TableInputs = NO_TABLE,
    select_on: str | None = None,
    **settings,
) -> dict:
    run_files = Wiki80Files(files["train"], files["dev"], files["labels"], select_on)
    options = dict(tables=tables, settings=parse(Wiki80Settings, {"epochs": 2, "batch_size": 8, **settings}), seed=42)
    return run_wiki80(str(model_dir), run_files, str(out), **options)


def test_run_wiki80_result_and_determinism(tiny_model_dirs, files, tmp_path):  # noqa: F811
    first = _run(tiny_model_dirs["roberta"], files, tmp_path / "a.json")
    assert first == _run(tiny_model_dirs["roberta"], files, tmp_path / "b.json")
    assert first == json.loads((tmp_path / "a.json").read_text())
    assert first["setting"] == "100%" and first["n"] == 10 and first["train_instances"] == 30
    assert first["classes"] == len(RELATIONS)  # the chance level of the report's flags is 1 / classes
    assert first["accuracy"] * 10 == round(first["accuracy"] * 10) and first["selection"] is None
    assert first["hyperparameters"]["lr"] == 3e-5 and first["hyperparameters"]["epochs"] == 2
    assert (first["hyperparameters"]["markers"], first["hyperparameters"]["read_at"]) == ("punct", "markers")
    assert first["entities"]["eval"]["texts_encoded"] == 10 and first["entities"]["eval"]["markers_cut"] == 0


def test_every_epochs_loss_is_kept_and_ten_are_logged(tiny_model_dirs, files, tmp_path, caplog):  # noqa: F811
    caplog.set_level("INFO", logger="pelt.tasks.wiki80.run")
    result = _run(tiny_model_dirs["roberta"], files, tmp_path / "r.json", epochs=25, batch_size=32)
    logged = [int(m.group(1)) for r in caplog.records if (m := re.match(r"Wiki80 epoch (\d+):", r.getMessage()))]
    assert len(result["train_loss"]) == 25 and all(loss > 0 for loss in result["train_loss"])
    assert logged == [3, 6, 9, 12, 15, 18, 21, 24, 25]  # ten lines at most, the last epoch always


def test_classifier_learns_the_training_set(tiny_model_dirs, files, tmp_path):  # noqa: F811
    """Evaluated on its own training data, a working training loop fits the 5 relations (chance: 0.2)."""
    result = run_wiki80(
        str(tiny_model_dirs["bart"]),
        Wiki80Files(files["train"], files["train"], files["labels"]),
        str(tmp_path / "r.json"),
        tables=NO_TABLE,
        settings=parse(Wiki80Settings, {"epochs": 15, "batch_size": 8, "lr": 3e-3, "dropout": 0.0}),
        seed=1,
    )
    assert result["accuracy"] >= 0.9


def test_model_selection_on_a_separate_file(tiny_model_dirs, files, tmp_path):  # noqa: F811
    result = _run(tiny_model_dirs["roberta"], files, tmp_path / "s.json", epochs=3, lr=1e-3, select_on=files["train"])
    history = result["selection"]["history"]
    assert [h["epoch"] for h in history] == [1, 2, 3]
    accuracies = [h["accuracy"] for h in history]
    assert result["selection"]["best_epoch"] == 1 + accuracies.index(max(accuracies))
    with pytest.raises(ValueError, match="select_on is the evaluation file"):
        _run(tiny_model_dirs["roberta"], files, tmp_path / "x.json", select_on=files["dev"])


def test_accuracy_matches_per_instance_predictions(tiny_model_dirs, files):  # noqa: F811
    model, tokenizer = load_masked_lm(str(tiny_model_dirs["roberta"]))
    torch.manual_seed(0)
    classifier = MarkerClassifier(RelationEncoder(model, tokenizer, None, norm=None), 5, dropout=0.5)
    instances = read_wiki80(files["dev"])
    marked = classifier.encoder.mark(instances, resolve_instances(instances, None))
    labels = torch.tensor([i % 5 for i in range(len(marked))])
    classifier.eval()
    with torch.no_grad():
        expected = sum(int(classifier([m]).argmax()) == int(y) for m, y in zip(marked, labels)) / len(marked)
    classifier.train()
    assert accuracy(classifier, marked, labels, batch_size=3) == expected
    assert classifier.training  # training mode restored


def test_pelt_variant_injects_table_entities(tiny_model_dirs, files, tmp_path):  # noqa: F811
    model_dir = tiny_model_dirs["roberta"]
    instances = read_wiki80(files["train"]) + read_wiki80(files["dev"])
    entities = sorted({(e.name, e.qid) for inst in instances for e in (inst.head, inst.tail)})
    in_table = {qid for _, qid in entities[::2]}  # every other entity has a vector
    rng = np.random.default_rng(0)
    write_table(
        tmp_path / "t.parquet",
        sorted(in_table),
        rng.normal(size=(len(in_table), 32)),
        [1] * len(in_table),
        [5 + 10 * (i % 2) for i in range(len(in_table))],  # rare and frequent in turn
        {
            "model": str(model_dir),
            "revision": "local",
            "hidden_size": 32,
            "representation": "t",
            "max_seq_len": 64,
            "norm": 7.0,
        },
    )
    pq.write_table(
        pa.table(
            {
                "name": [n for n, _ in entities],
                "qid": [q for _, q in entities],
                "entity_id": [q for _, q in entities],
                "how": ["qid"] * len(entities),
            }
        ),
        tmp_path / "e.parquet",
    )
    result = _run(
        model_dir,
        files,
        tmp_path / "p.json",
        TableInputs("pelt", str(tmp_path / "t.parquet"), str(tmp_path / "e.parquet"), 3.0),
    )
    expected = sum(e.qid in in_table for inst in read_wiki80(files["dev"]) for e in (inst.head, inst.tail))
    counts = result["entities"]["eval"]
    assert result["variant"] == "pelt" and result["norm"] == 3.0
    assert counts["in_table"] == counts["injected"] == expected > 0 and counts["unresolved"] == 0
    assert counts["missing_from_table"] == counts["not_in_table"] == 20 - expected > 0
    # a control injects its table as pelt does, and names itself in the result
    control = _run(
        model_dir,
        files,
        tmp_path / "c.json",
        TableInputs("swapped", str(tmp_path / "t.parquet"), str(tmp_path / "e.parquet"), 3.0),
    )
    assert control["variant"] == "swapped" and control["entities"]["eval"]["injected"] == expected
    # read at both the markers and the slots, the classifier takes the four states a sentence
    both = _run(
        model_dir,
        files,
        tmp_path / "both.json",
        TableInputs("pelt", str(tmp_path / "t.parquet"), str(tmp_path / "e.parquet"), 3.0),
        read_at="both",
    )
    assert both["hyperparameters"]["read_at"] == "both" and both["entities"]["eval"]["injected"] == expected
    assert both["train_loss"] != result["train_loss"]
    # the baseline reads the table for the heads' frequencies only
    baseline = _run(
        model_dir,
        files,
        tmp_path / "b.json",
        TableInputs("baseline", str(tmp_path / "t.parquet"), str(tmp_path / "e.parquet")),
    )
    assert baseline["entities"]["eval"]["injected"] == 0 and baseline["variant"] == "baseline"
    frequent = {q for i, q in enumerate(sorted(in_table)) if i % 2}
    heads = Counter("frequent" if inst.head.qid in frequent else "rare" for inst in read_wiki80(files["dev"]))
    assert len(heads) == 2
    relations = Counter(inst.relation for inst in read_wiki80(files["dev"]))
    for run in (baseline, result, control):
        assert {g: v["n"] for g, v in run["by_head"].items()} == heads
        assert {r: v["n"] for r, v in run["by_relation"].items()} == relations
        mean = sum(v["accuracy"] * v["n"] for v in run["by_relation"].values()) / run["n"]
        assert mean == pytest.approx(run["accuracy"])
    assert _run(model_dir, files, tmp_path / "n.json")["by_head"] is None  # no table: nothing known
    with pytest.raises(ValueError, match="pelt variant needs a table"):
        _run(model_dir, files, tmp_path / "q.json", TableInputs("pelt"))


def test_unknown_relation_is_an_error(tiny_model_dirs, files, tmp_path):  # noqa: F811
    (tmp_path / "labels.json").write_text(json.dumps({"P19": 0}))
    with pytest.raises(ValueError, match="relations not in label2id"):
        run_wiki80(
            str(tiny_model_dirs["roberta"]),
            Wiki80Files(files["train"], files["dev"], str(tmp_path / "labels.json")),
            str(tmp_path / "r.json"),
            tables=NO_TABLE,
            settings=Wiki80Settings(),
            seed=0,
        )
