"""Injection: ``mention ( E )`` must be exactly ``mention ( w )`` when E is the input embedding of w."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from tiny_models import FAMILIES

from pelt.encoding.injection import MISSING, assemble, inject, prepare
from pelt.encoding.models import forward_mlm, load_masked_lm
from pelt.table import EntityTable, write_table


def _table(path, model, ids, sums, norm=7.0) -> EntityTable:
    metadata = {
        "model": model.name_or_path,
        "revision": "local",
        "model_type": model.config.model_type,
        "hidden_size": model.config.hidden_size,
        "representation": "test",
        "max_seq_len": 64,
        "norm": norm,
    }
    write_table(path, ids, np.asarray(sums), [1] * len(ids), [1] * len(ids), metadata)
    return EntityTable.open(path)


def _word(tokenizer, word: str) -> int:
    ids = tokenizer(word, add_special_tokens=False)["input_ids"]
    assert len(ids) == 1, f"{word!r} is not one token"
    return ids[0]


@pytest.mark.parametrize("family", FAMILIES)
def test_injected_vector_acts_as_a_word(family, tiny_model_dirs, tmp_path):  # noqa: F811
    model, tokenizer = load_masked_lm(str(tiny_model_dirs[family]))
    w = _word(tokenizer, " cat")
    with torch.no_grad():
        emb = model.get_input_embeddings()(torch.tensor([w]))[0].double().numpy()
    # sum proportional to emb(w) and L = ||emb(w)||, so E(e) = emb(w)
    table = _table(tmp_path / "t.parquet", model, ["Q_curie", "Q_other"], [2.5 * emb, -emb])
    mask = tokenizer.mask_token
    texts = [
        f"Marie Curie was born in {mask}.",
        "Paris is the capital of France.",
        f"Ada Lovelace and Marie Curie {mask}.",
    ]
    mentions = [[(0, 11, "Q_curie")], [(0, 5, "Q_unknown")], [(0, 12, "Q_curie"), (17, 28, "Q_curie")]]
    with torch.no_grad():
        batch = inject(model, tokenizer, texts, mentions, table, norm=float(np.linalg.norm(emb)))
        logits = forward_mlm(model, batch.inputs_embeds, batch.attention_mask, batch.input_ids)
        plain = tokenizer(
            [
                f"Marie Curie ( cat ) was born in {mask}.",
                "Paris is the capital of France.",
                f"Ada Lovelace ( cat ) and Marie Curie ( cat ) {mask}.",
            ],
            padding=True,
            return_tensors="pt",
        )
        expected = model(input_ids=plain["input_ids"], attention_mask=plain["attention_mask"]).logits
    assert (batch.n_injected, batch.n_missing) == (3, 1)
    assert torch.equal(batch.attention_mask, plain["attention_mask"])
    slots = plain["input_ids"] == w
    assert [row.nonzero().flatten().tolist() for row in slots] == batch.entity_positions
    assert torch.equal(batch.input_ids[~slots], plain["input_ids"][~slots])
    assert (batch.input_ids[slots] == tokenizer.unk_token_id).all()
    assert ((batch.input_ids == tokenizer.mask_token_id).sum(1) == torch.tensor([1, 0, 1])).all()
    real = plain["attention_mask"].bool()
    torch.testing.assert_close(logits[real], expected[real], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("family", FAMILIES)
def test_without_tables_is_plain_tokenization(family, tiny_model_dirs):  # noqa: F811
    model, tokenizer = load_masked_lm(str(tiny_model_dirs[family]))
    texts = [f"Paris is the capital of {tokenizer.mask_token}.", "Warsaw."]
    batch = inject(model, tokenizer, texts, [[(0, 5, "Paris")], []], None)
    plain = tokenizer(texts, padding=True, return_tensors="pt")
    assert torch.equal(batch.input_ids, plain["input_ids"])
    assert torch.equal(batch.attention_mask, plain["attention_mask"])
    assert (batch.n_injected, batch.n_missing, batch.entity_positions) == (0, 0, [[], []])
    with torch.no_grad():
        torch.testing.assert_close(
            forward_mlm(model, batch.inputs_embeds, batch.attention_mask),
            forward_mlm(model, None, plain["attention_mask"], plain["input_ids"]),
        )


def test_several_domains_and_norms(tiny_model_dirs, tmp_path):  # noqa: F811
    model, tokenizer = load_masked_lm(str(tiny_model_dirs["roberta"]))
    h = model.config.hidden_size
    wiki = _table(
        tmp_path / "wiki.parquet", model, ["Paris", "Star Trek: Voyager"], [np.eye(h)[0], np.eye(h)[1]], norm=7.0
    )
    bio = _table(tmp_path / "bio.parquet", model, ["Paris", "Aspirin"], [np.eye(h)[2], np.eye(h)[3]], norm=3.0)
    tables = {"wiki": wiki, "bio": bio}
    text = "Paris Star Trek: Voyager Aspirin Paris Paris"
    mentions = [
        [
            (0, 5, "Paris"),
            (6, 24, "Star Trek: Voyager"),
            (25, 32, "Aspirin"),
            (33, 38, "bio:Paris"),
            (39, 44, "bio:Nothing"),
        ]
    ]
    batch = inject(model, tokenizer, [text], mentions, tables)
    assert (batch.n_injected, batch.n_missing) == (4, 1)
    slots = batch.inputs_embeds[0, batch.entity_positions[0]].detach()
    expected = torch.zeros(4, h)
    expected[0, 0], expected[1, 1], expected[2, 3], expected[3, 2] = 7.0, 7.0, 3.0, 3.0  # first domain wins; own L
    torch.testing.assert_close(slots, expected)
    override = inject(model, tokenizer, [text], mentions, tables, norm=2.0)
    assert override.inputs_embeds[0, override.entity_positions[0]].norm(dim=1).detach().tolist() == pytest.approx(
        [2.0] * 4
    )


def test_bad_spans_and_wrong_tables_are_errors(tiny_model_dirs, tmp_path):  # noqa: F811
    model, tokenizer = load_masked_lm(str(tiny_model_dirs["roberta"]))
    table = _table(tmp_path / "t.parquet", model, ["Paris"], [np.ones(model.config.hidden_size)])
    for span in [(3, 3), (0, 99)]:
        with pytest.raises(ValueError, match="empty or outside"):
            inject(model, tokenizer, ["Paris is nice."], [[(*span, "Paris")]], table)
    with pytest.raises(ValueError, match="covers no token"):
        inject(model, tokenizer, ["Paris  is nice."], [[(5, 6, "Paris")]], table)
    with pytest.raises(ValueError, match="2 texts but 1 mention lists"):
        inject(model, tokenizer, ["a", "b"], [[]], table)
    other, _ = load_masked_lm(str(tiny_model_dirs["bert"]))
    with pytest.raises(ValueError, match="built for a roberta model, not bert"):
        inject(other, tokenizer, ["Paris is nice."], [[(0, 5, "Paris")]], table)


def test_long_texts_are_cut_keeping_the_closing_token(tiny_model_dirs, tmp_path, caplog):  # noqa: F811
    model, tokenizer = load_masked_lm(str(tiny_model_dirs["roberta"]))
    table = _table(tmp_path / "t.parquet", model, ["Paris"], [np.ones(model.config.hidden_size)])
    text = "Paris is nice. " * 3 + "Paris"
    batch = inject(
        model, tokenizer, [text], [[(0, 5, "Paris"), (len(text) - 5, len(text), "Paris")]], table, max_length=12
    )
    assert batch.input_ids.shape == (1, 12)
    assert batch.input_ids[0, -1].item() == tokenizer.eos_token_id
    assert batch.n_injected == 1 and len(batch.entity_positions[0]) == 1  # the second slot fell beyond the cut
    assert "1 texts cut to 12 tokens, dropping 1 entity slots" in caplog.text


def test_mentions_without_a_vector_plain_mask_or_hidden(tiny_model_dirs, tmp_path):  # noqa: F811
    # The authors' code gives a resolved entity that lacks a vector " ( <mask> )": visible in their
    # FewRel loader (mask), hidden from attention in their LAMA connector (hidden); ours leaves it plain.
    model, tokenizer = load_masked_lm(str(tiny_model_dirs["roberta"]))
    h = model.config.hidden_size
    table = _table(tmp_path / "t.parquet", model, ["Paris"], [np.eye(h)[0]])
    text = "Paris and Berlin"
    mentions = [[(0, 5, "Paris"), (10, 16, "Berlin")]]
    plain = inject(model, tokenizer, [text], mentions, table)
    vector_only = inject(model, tokenizer, [text], [mentions[0][:1]], table)
    assert torch.equal(plain.input_ids, vector_only.input_ids) and plain.n_missing == 1
    bracket = (
        len(
            tokenizer(" (", add_special_tokens=False)["input_ids"]
            + tokenizer(" )", add_special_tokens=False)["input_ids"]
        )
        + 1
    )
    mask_embedding = model.get_input_embeddings().weight[tokenizer.mask_token_id].detach()
    for missing in ("mask", "hidden"):
        batch = inject(model, tokenizer, [text], mentions, table, missing=missing)
        assert batch.input_ids.shape[1] == plain.input_ids.shape[1] + bracket and batch.n_missing == 1
        assert batch.entity_positions == plain.entity_positions and batch.n_injected == 1
        # the Berlin slot holds the unknown id (a lookup of mask ids finds the prompt's mask only) and
        # the mask token's embedding
        unk = (batch.input_ids[0] == tokenizer.unk_token_id).nonzero()[:, 0].tolist()
        (slot,) = [p for p in unk if p not in batch.entity_positions[0]]
        assert slot > batch.entity_positions[0][0] and not (batch.input_ids == tokenizer.mask_token_id).any()
        torch.testing.assert_close(batch.inputs_embeds[0, slot].detach(), mask_embedding)
        hidden = (batch.attention_mask[0] == 0).nonzero()[:, 0].tolist()
        assert hidden == ([slot] if missing == "hidden" else [])
    baseline = inject(model, tokenizer, [text], mentions, None, missing="hidden")  # no table: nothing inserted
    assert baseline.input_ids.shape[1] == len(tokenizer(text)["input_ids"])
    with pytest.raises(ValueError, match="missing must be one of"):
        inject(model, tokenizer, [text], mentions, table, missing="drop")


@pytest.mark.parametrize("missing", MISSING)
def test_texts_prepared_once_batch_as_each_injected_alone(missing, tiny_model_dirs, tmp_path):  # noqa: F811
    # A fine-tuning run prepares each text once and batches subsets of them at every step: each row
    # of such a batch must be its text injected alone (ids, embeddings with their own vectors, mask),
    # then padded.
    model, tokenizer = load_masked_lm(str(tiny_model_dirs["roberta"]))
    h = model.config.hidden_size
    table = _table(tmp_path / "t.parquet", model, ["Paris", "Rome"], [np.eye(h)[0], np.eye(h)[1] + np.eye(h)[2]])
    texts = ["Paris and Berlin", "Rome is old", "nothing here at all, a longer text than the others", "Rome and Paris"]
    mentions = [[(0, 5, "Paris"), (10, 16, "Berlin")], [(0, 4, "Rome")], [], [(0, 4, "Rome"), (9, 14, "Paris")]]
    prepared = prepare(model, tokenizer, texts, mentions, table, norm=3.0, missing=missing)
    alone = [inject(model, tokenizer, [t], [m], table, norm=3.0, missing=missing) for t, m in zip(texts, mentions)]
    for subset in ([3, 0], [2], [1, 2, 3], [0, 1, 2, 3]):
        got = assemble(model, tokenizer, [prepared[i] for i in subset], missing=missing)
        for row, i in enumerate(subset):
            n = alone[i].input_ids.shape[1]
            assert torch.equal(got.input_ids[row, :n], alone[i].input_ids[0])
            assert torch.equal(got.inputs_embeds[row, :n], alone[i].inputs_embeds[0])
            assert torch.equal(got.attention_mask[row, :n], alone[i].attention_mask[0])
            assert not got.attention_mask[row, n:].any()
            assert got.entity_positions[row] == alone[i].entity_positions[0]
        assert (got.n_injected, got.n_missing) == (
            sum(alone[i].n_injected for i in subset),
            sum(alone[i].n_missing for i in subset),
        )
