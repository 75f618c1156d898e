"""The demo model trains on a text file of documents, reloads through load_masked_lm, and is reproducible."""

from __future__ import annotations

import json
from dataclasses import asdict, replace

import pytest
import torch
import yaml
from conftest import REPO
from safetensors.torch import load_file
from tiny_models import CORPUS
from transformers import RobertaConfig, RobertaModel

from pelt.encoding.demo_model import DemoModelSettings, demo_model, pack_blocks, train_demo_model, training_inputs
from pelt.encoding.models import load_masked_lm

PRECISIONS = ("fp32", "bf16")
SMALL = DemoModelSettings(vocab_size=300, hidden_size=32, num_layers=1, num_heads=2, max_seq_len=32, batch_size=8)


@pytest.fixture
def documents(tmp_path):
    texts = [" ".join(CORPUS[i : i + 4]) for i in range(0, len(CORPUS), 4)] + [""]
    path = tmp_path / "documents.txt"
    path.write_text("".join(t + "\n" for t in texts))
    return path


def test_demo_model_trains_and_reloads(documents, tmp_path, caplog, monkeypatch):
    caplog.set_level("INFO")
    monkeypatch.setenv("PELT_PROGRESS_INTERVAL", "1e-9")  # a progress line at every step
    summary = train_demo_model(str(documents), str(tmp_path / "a"), replace(SMALL, steps=20))
    assert summary["final_loss"] < summary["initial_loss"] < 1.5 * summary["uniform_loss"]
    assert summary["device"] == "cpu"  # the workflow's: every machine trains the same model
    assert "skipped 1 blank lines" in caplog.text
    progress = [r.getMessage() for r in caplog.records if r.name == "pelt.progress"]
    assert len(progress) == 21 and progress[0].startswith("demo model training: 1/20 steps (5%), ")
    assert "ETA" in progress[0] and progress[0].endswith(
        f"; MLM loss {summary['initial_loss']:.3f} (mean of the last 1 steps)"
    )
    assert progress[-1].endswith(f"; MLM loss {summary['final_loss']:.3f} (mean of the last 20 steps)")
    assert json.loads((tmp_path / "a" / "training.json").read_text()) == summary
    model, tokenizer = load_masked_lm(str(tmp_path / "a"))
    assert type(model).__name__ == "RobertaForMaskedLM" and not model.training
    assert (tmp_path / "a" / "model.safetensors").exists()
    assert model.config.hidden_size == 32 and len(tokenizer) == model.config.vocab_size == summary["vocab_size"]
    assert model.get_output_embeddings().weight.data_ptr() == model.get_input_embeddings().weight.data_ptr()
    ids = tokenizer("Marie Curie was born in <mask>.")["input_ids"]
    before_mask = ids[ids.index(tokenizer.mask_token_id) - 1]
    assert ids.count(tokenizer.mask_token_id) == 1 and tokenizer.decode([before_mask]) == " in"  # space absorbed
    with torch.no_grad():
        assert torch.isfinite(model(input_ids=torch.tensor([ids])).logits).all()

    train_demo_model(str(documents), str(tmp_path / "b"), replace(SMALL, steps=20))
    a, b = load_file(tmp_path / "a" / "model.safetensors"), load_file(tmp_path / "b" / "model.safetensors")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_demo_model_needs_text(tmp_path):
    (tmp_path / "empty.txt").write_text("\n  \n")
    with pytest.raises(ValueError, match="no document text"):
        train_demo_model(str(tmp_path / "empty.txt"), str(tmp_path / "m"), replace(SMALL, steps=1))


def test_a_packed_batch_computes_what_each_block_computes_alone():
    """Packing is a speed-up only: every block's hidden states are those of the block run by itself."""
    torch.manual_seed(0)
    config = RobertaConfig(
        vocab_size=50,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=12 + 2,
        pad_token_id=1,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    model = RobertaModel(config).eval()
    blocks = [torch.randint(3, 50, (n,)).tolist() for n in (5, 12, 3, 7, 4, 2, 9)]
    ids, positions, attention = pack_blocks(blocks, 12, pad_id=1)
    assert ids.shape == (4, 12) and attention.shape == (4, 1, 12, 12)  # 42 tokens in 4 rows instead of 7
    with torch.no_grad():
        packed = model(input_ids=ids, position_ids=positions, attention_mask=attention).last_hidden_state
        seen = 0
        for block in blocks:
            alone = model(input_ids=torch.tensor([block])).last_hidden_state[0]
            row, start = next(
                (r, s)
                for r in range(ids.shape[0])
                for s in range(12 - len(block) + 1)
                if ids[r, s : s + len(block)].tolist() == block and positions[r, s] == 2
            )
            torch.testing.assert_close(packed[row, start : start + len(block)], alone, atol=1e-5, rtol=1e-5)
            seen += 1
    assert seen == len(blocks) and torch.isfinite(packed).all()
    with pytest.raises(ValueError, match="does not fit"):
        pack_blocks([[5] * 13], 12, pad_id=1)


def test_demo_model_precision_is_recorded_and_changes_the_weights(documents, tmp_path):
    """bf16 autocast is really used (the weights differ from fp32's) and still learns; training.json says which ran."""
    runs = {
        p: train_demo_model(str(documents), str(tmp_path / p), replace(SMALL, steps=20, precision=p))
        for p in ("fp32", "bf16")
    }
    assert runs["fp32"]["precision"] == "fp32" and runs["bf16"]["precision"] == "bf16 autocast"
    assert runs["fp32"]["attention"] == "sdpa" and runs["bf16"]["attention"] == "sdpa_fp32"
    assert runs["bf16"]["final_loss"] < runs["bf16"]["initial_loss"]
    assert abs(runs["bf16"]["initial_loss"] - runs["fp32"]["initial_loss"]) < 0.05  # same batch, same start
    a, b = (load_file(tmp_path / p / "model.safetensors") for p in ("fp32", "bf16"))
    assert all(a[k].dtype == torch.float16 == b[k].dtype for k in a)  # stored in fp16 either way
    assert not all(torch.equal(a[k], b[k]) for k in a)
    # fp32 attention is for training only: the saved model loads with the default
    assert load_masked_lm(str(tmp_path / "bf16"))[0].config._attn_implementation == "sdpa"


def test_the_settings_defaults_are_the_schemas():
    # defaults live in one place: a library user training the demo model gets what the workflow trains
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    properties = schema["properties"]["demo_model"]["properties"]
    where = ("documents", "shipped")  # what the model is trained on or taken from, not how
    assert asdict(DemoModelSettings()) == {k: v["default"] for k, v in properties.items() if k not in where}


def test_the_shipped_demo_model_is_the_one_the_demo_config_trains():
    """The model `make demo` and the suite take instead of training was trained on today's demo
    documents with today's settings: a changed world or setting must ship a model trained anew
    (`demo_model.shipped` unset, then copy results/models/demo over it), or the demo trains its own."""
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["demo_model"]
    settings = DemoModelSettings(**{k: v for k, v in config.items() if k not in ("documents", "shipped")})
    shipped = REPO / config["shipped"]
    summary = json.loads((shipped / "training.json").read_text())
    assert summary["inputs"] == training_inputs(REPO / config["documents"], settings), (
        f"{shipped} was trained on other documents or settings than config/config.yaml's demo_model"
    )
    assert (summary["steps"], summary["precision"]) == (settings.steps, settings.precision)
    model, tokenizer = load_masked_lm(str(shipped))
    shape = (model.config.hidden_size, model.config.num_hidden_layers, model.config.max_position_embeddings)
    assert shape == (settings.hidden_size, settings.num_layers, settings.max_seq_len + tokenizer.pad_token_id + 1)


def test_a_shipped_model_is_taken_only_for_the_inputs_it_was_trained_on(documents, tmp_path, caplog):
    caplog.set_level("INFO", logger="pelt.encoding.demo_model")
    settings = replace(SMALL, steps=5)
    trained = train_demo_model(str(documents), str(tmp_path / "shipped"), settings)
    caplog.clear()
    taken = demo_model(str(documents), str(tmp_path / "taken"), settings, shipped=tmp_path / "shipped")
    assert taken == trained and "the shipped one" in caplog.text and "training" not in caplog.text
    weights = load_file(tmp_path / "shipped" / "model.safetensors")
    assert all(torch.equal(t, load_file(tmp_path / "taken" / "model.safetensors")[k]) for k, t in weights.items())
    caplog.clear()
    other = replace(settings, seed=43)
    retrained = demo_model(str(documents), str(tmp_path / "other"), other, shipped=tmp_path / "shipped")
    assert "was trained on other documents or settings" in caplog.text
    assert retrained["inputs"] == training_inputs(documents, other) != trained["inputs"]
    changed = tmp_path / "changed.txt"
    changed.write_text(documents.read_text() + "One more document .\n")
    caplog.clear()
    demo_model(str(changed), str(tmp_path / "changed"), settings, shipped=tmp_path / "shipped")
    assert "was trained on other documents or settings" in caplog.text
