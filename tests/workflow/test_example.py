"""examples/use_a_table.py end to end: a table built by pelt, plugged into each model family. (The README's
and docs' commands of it, on the demo run: tests/workflow/test_docs_examples.py.)"""

from __future__ import annotations

import json
import re
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import REPO
from tiny_models import FAMILIES

from pelt.encoding.encode import build_table
from pelt.encoding.models import default_norm, forward_mlm, load_masked_lm, representation
from pelt.table import EntityTable, write_table

EXAMPLE = REPO / "examples" / "use_a_table.py"
MENTIONS = [  # entity, sentence, span: sentences of the tiny models' corpus
    ("Marie Curie", "Marie Curie was born in Warsaw and worked in Paris.", (0, 11)),
    ("Marie Curie", "In Paris, Marie Curie worked on radium.", (10, 21)),
    ("Warsaw", "The city of Warsaw lies on the Vistula river in Poland.", (12, 18)),
    ("Paris", "Paris is the capital of France, a country in Europe.", (0, 5)),
]
TEXT = "Marie Curie was born in [MASK]."
NORM = 0.1  # near the tiny models' position-embedding norm: embedding layer norm then does not hide L
TOP_K = 3


def _build(model_dir: Path, out: Path) -> Path:
    """A table of MENTIONS built with pelt's encoder, with the metadata encode_samples writes."""
    model, tokenizer = load_masked_lm(str(model_dir))
    ids, sums, counts = build_table(model, tokenizer, *map(list, zip(*MENTIONS)), max_seq_len=64)
    metadata = {
        "model": str(model_dir),
        "revision": "local",
        "model_type": model.config.model_type,
        "hidden_size": model.config.hidden_size,
        "representation": representation(model),
        "max_seq_len": 64,
        "norm": default_norm(model),
    }
    write_table(out, ids, sums, counts, counts, metadata)
    return out


def _run(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    """Run the example as a script (``__main__``), in this process: exit code, stdout, stderr."""
    monkeypatch.setattr(sys, "argv", [str(EXAMPLE), *args])
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(str(EXAMPLE), run_name="__main__")
    out, err = capsys.readouterr()
    return exit_.value.code, out, err


def _top(logits: torch.Tensor, tokenizer) -> list[tuple[str, float]]:
    probs = logits.float().softmax(-1).topk(TOP_K)
    return [(tokenizer.decode([int(i)]).strip(), p) for i, p in zip(probs.indices, probs.values.tolist())]


def _expected(model, tokenizer, table: EntityTable) -> tuple[list, list]:
    """Top words at the mask computed without pelt.encoding.injection: plain text, and text with E in a
    ``( w )`` slot."""
    mask = tokenizer.mask_token
    slot = tokenizer(" cat", add_special_tokens=False)["input_ids"]  # " cat" is one token in every tiny vocabulary
    assert len(slot) == 1
    with torch.no_grad():
        outputs = []
        for text in (f"Marie Curie was born in {mask}.", f"Marie Curie ( cat ) was born in {mask}."):
            enc = tokenizer(text, return_tensors="pt")
            embeds = model.get_input_embeddings()(enc["input_ids"])
            embeds[enc["input_ids"] == slot[0]] = torch.from_numpy(table.lookup(["Marie Curie"], norm=NORM))
            logits = forward_mlm(model, embeds, enc["attention_mask"])
            outputs.append(_top(logits[enc["input_ids"] == tokenizer.mask_token_id][0], tokenizer))
    return outputs[0], outputs[1]


@pytest.mark.parametrize("family", FAMILIES)
def test_example_predicts_with_and_without_the_table(family, tiny_model_dirs, tmp_path, monkeypatch, capsys):
    model_dir = tiny_model_dirs[family]
    path = _build(model_dir, tmp_path / "table.parquet")
    args = ["--model", str(model_dir), "--table", str(path), "--text", TEXT, "--device", "cpu"]
    code, out, err = _run(
        monkeypatch, capsys, *args, "--entity", "Marie Curie", "--norm", str(NORM), "--top-k", str(TOP_K), "--json"
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["table"]["entities"] == 3
    assert result["entity"] == {
        "id": "Marie Curie",
        "n_sentences": 2,
        "frequency": 2,
        "vector_norm": pytest.approx(NORM),
    }
    assert result["without_table"]["n_injected"] == 0 and result["with_table"]["n_injected"] == 1

    model, tokenizer = load_masked_lm(str(model_dir))
    plain, injected = _expected(model, tokenizer, EntityTable.open(path))
    for got, want in ((result["without_table"]["top"], plain), (result["with_table"]["top"], injected)):
        assert [w for w, _ in got] == [w for w, _ in want]
        np.testing.assert_allclose([p for _, p in got], [p for _, p in want], rtol=1e-4)
    assert result["with_table"]["top"] != result["without_table"]["top"]


def test_example_prints_a_readable_report_and_rejects_unknown_entities(tiny_model_dirs, tmp_path, monkeypatch, capsys):
    model_dir = tiny_model_dirs["roberta"]
    path = _build(model_dir, tmp_path / "table.parquet")
    args = ["--model", str(model_dir), "--table", str(path), "--text", TEXT, "--device", "cpu"]
    code, out, _ = _run(monkeypatch, capsys, *args, "--entity", "Marie Curie")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("EntityTable(") and "default L = 7" in lines[0]
    assert lines[1] == "Marie Curie: 2 sentences encoded, 2 mentions in the corpus, ||E|| = 7"
    assert "without table:" in lines[3] and "with table (1 entity slot):" in lines[4]
    assert len(re.findall(r"'[^']*' \d\.\d{3}", lines[3])) == 5  # --top-k default: 5 words with probabilities
    code, _, err = _run(monkeypatch, capsys, *args, "--entity", "Ada Lovelace")
    assert code == 1 and "'Ada Lovelace' found no entity" in err


BUILD_EXAMPLE = EXAMPLE.with_name("build_a_table.py")


def test_your_sentences_become_a_table_that_opens_and_plugs_in(tiny_model_dirs, tmp_path, monkeypatch, capsys):
    """The Python route: sentences -> build_table -> write_table (metadata from the model) -> EntityTable.open,
    then the table found by QID or alias and used by examples/use_a_table.py."""
    model_dir = tiny_model_dirs["roberta"]
    lines = [
        {"entity": e, "sentence": s, "start": a, "end": b, "qid": "Q7186" if e == "Marie Curie" else None}
        for e, s, (a, b) in MENTIONS
    ]
    lines[0]["aliases"] = ["Maria Skłodowska"]
    lines.append({"entity": "Warsaw", "sentence": "She left Warsaw in 1891.", "mention": "Warsaw"})  # no span
    sentences = tmp_path / "mine.jsonl"
    sentences.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    out = tmp_path / "mine" / "table.parquet"
    monkeypatch.setattr(sys, "argv", [str(BUILD_EXAMPLE), "--model", str(model_dir), "--sentences", str(sentences)])
    monkeypatch.setattr(sys, "argv", [*sys.argv, "--out", str(out), "--max-seq-len", "64", "--device", "cpu"])
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(str(BUILD_EXAMPLE), run_name="__main__")
    assert exit_.value.code == 0
    report = capsys.readouterr().out.splitlines()
    assert "Marie Curie\tQ7186\tMaria Skłodowska" in report and "Paris\t-\t" in report

    table = EntityTable.open(out)
    model, tokenizer = load_masked_lm(str(model_dir))
    table.check_model(model)  # the metadata came from the model: its name, type and hidden size
    assert table.metadata["representation"] == representation(model) and table.norm == default_norm(model)
    assert table.find(["Q7186", "Maria Skłodowska", "warsaw"], ignore_case=True) == [
        "Marie Curie",
        "Marie Curie",
        "Warsaw",
    ]
    entities, texts = [ln["entity"] for ln in lines], [ln["sentence"] for ln in lines]
    spans = [(ln["start"], ln["end"]) for ln in lines[:-1]] + [(9, 15)]  # "She left |Warsaw|"
    ids, sums, counts = build_table(model, tokenizer, entities, texts, spans, max_seq_len=64)
    np.testing.assert_allclose(table.vector_sums(ids), sums, rtol=1e-6)
    assert table.counts(["Warsaw"])[0].tolist() == [2]

    code, out_text, err = _run(
        monkeypatch,
        capsys,
        "--model",
        str(model_dir),
        "--table",
        str(out),
        "--text",
        TEXT,
        "--device",
        "cpu",
        "--entity",
        "Q7186",  # the id you have
        "--mention",
        "Marie Curie",
        "--json",
    )
    assert code == 0, err
    result = json.loads(out_text)
    assert result["entity"]["id"] == "Marie Curie" and result["with_table"]["n_injected"] == 1
