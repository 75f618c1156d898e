"""Relation-classification inputs: readers, Wiki80 -> FewRel, marked texts, and the marker encoder
against a plain one-sentence-at-a-time reference (baseline and with injected table vectors)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
import torch.nn.functional as F
from conftest import REPO
from transformers import AutoModelForMaskedLM, AutoTokenizer

from pelt.encoding.models import attention_for_training, default_norm, family, load_masked_lm, resolve_autocast
from pelt.eval.settings import MARKERS, EncoderSettings, Markers, TableInputs
from pelt.eval.variants import resolve_norm
from pelt.table import EntityTable, write_table
from pelt.tasks.fewrel.data import read_fewrel, read_instances
from pelt.tasks.relation.data import Entity, Instance
from pelt.tasks.relation.encoder import (
    RelationEncoder,
    _slots_after,
    accuracy_by_relation,
    drop_overlapping,
    entity_counts,
    holdout_relations,
    load_encoder,
    marked_text,
    resolve_instances,
)
from pelt.tasks.wiki80.data import read_wiki80

DEMO = REPO / "resources" / "demo"


def _inst(
    tokens: str,
    head: tuple[int, int],
    tail: tuple[int, int],
    relation: str = "r",
    qids: tuple[str | None, str | None] = (None, None),
) -> Instance:
    words = tuple(tokens.split())
    h = Entity(" ".join(words[head[0] : head[1]]), qids[0], *head)
    t = Entity(" ".join(words[tail[0] : tail[1]]), qids[1], *tail)
    return Instance(words, h, t, relation)


def test_demo_files_read_with_correct_spans():
    fewrel = read_fewrel(DEMO / "fewrel" / "val_wiki.json")
    wiki80 = read_wiki80(DEMO / "wiki80" / "train.jsonl")
    assert len(fewrel) == 10 * 40 and len({i.relation for i in fewrel}) == 10  # resources/demo/world.py
    assert len(wiki80) == 797 and {i.relation for i in wiki80} == set(
        json.loads((DEMO / "wiki80" / "label2id.json").read_text())
    )
    for inst in fewrel + wiki80:  # names in FewRel / Wiki80 are the lowercased mention
        for e in (inst.head, inst.tail):
            assert " ".join(inst.tokens[e.start : e.end]).lower() == e.name
            assert e.qid.startswith("Q99")
    assert all(e.end - e.start == 1 for inst in fewrel + wiki80 for e in (inst.head, inst.tail))  # one-word names


def test_real_wiki80_holds_fewrel_val(shared_data: Path):
    """Wiki80 = FewRel train + val: exactly the 16 val relations of dev.jsonl share instances with val_wiki."""
    val_wiki = read_fewrel(shared_data / "fewrel" / "val_wiki.json")
    dev = read_wiki80(shared_data / "wiki80" / "dev.jsonl")
    assert len(val_wiki) == 11200 and len(dev) == 5600
    kept, dropped = drop_overlapping(dev, val_wiki)
    assert len(dropped) == 16 and len(kept) == 64 * 70
    assert not {i.key for i in kept} & {i.key for i in val_wiki}
    pubmed = read_fewrel(shared_data / "fewrel" / "val_pubmed.json")
    assert len(pubmed) == 1000 and pubmed[0].head.qid == "C4049595" and pubmed[0].head.name == "mhc"


def test_bad_records_are_skipped_and_counted(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    good = {
        "token": ["A", "b", "C", "."],
        "h": {"name": "a", "id": "Q1", "pos": [0, 1]},
        "t": {"name": "c", "id": None, "pos": [2, 3]},
        "relation": "r",
    }
    bad = [
        {**good, "h": {"name": "a", "pos": [0, 9]}},  # span out of range
        {**good, "t": {"name": "ab", "pos": [0, 2]}},  # overlaps the head
        {**good, "token": ["A", " ", "C", "."], "t": {"name": " ", "pos": [1, 2]}},  # blank mention
        {key: value for key, value in good.items() if key != "relation"},
        {**good, "token": []},
    ]
    path = tmp_path / "w.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [good, *bad]) + "\n")
    with caplog.at_level(logging.WARNING):
        instances = read_wiki80(path)
    assert len(instances) == 1 and instances[0].tail.qid is None
    assert "skipped 5 of 6 records" in caplog.text


def _to_fewrel(instances) -> dict[str, list[dict]]:
    """The FewRel layout of instances, written here to read it back."""
    out: dict[str, list[dict]] = {}
    for inst in instances:
        sides = [[e.name, e.qid, [list(range(e.start, e.end))]] for e in (inst.head, inst.tail)]
        out.setdefault(inst.relation, []).append({"tokens": list(inst.tokens), "h": sides[0], "t": sides[1]})
    return out


def test_wiki80_and_fewrel_readers_agree_and_overlaps_drop_whole_relations(tmp_path: Path):
    wiki80 = read_wiki80(DEMO / "wiki80" / "train.jsonl")
    (tmp_path / "f.json").write_text(json.dumps(_to_fewrel(wiki80)))
    assert sorted(read_fewrel(tmp_path / "f.json"), key=lambda i: i.key) == sorted(wiki80, key=lambda i: i.key)
    # The demo's Wiki80 holds its FewRel val relations: excluding val leaves the 21 others ...
    everything = read_instances([DEMO / "wiki80" / "train.jsonl", DEMO / "wiki80" / "dev.jsonl"])
    kept, dropped = drop_overlapping(everything, read_instances([DEMO / "fewrel" / "val_wiki.json"]))
    assert (len({i.relation for i in kept}), len(kept), len(dropped)) == (21, len(everything) - 400, 10)
    # ... and excluding the biomedical file keeps all, deduplicated across files
    kept, dropped = drop_overlapping(
        read_instances([DEMO / "wiki80" / "train.jsonl", DEMO / "wiki80" / "train.jsonl"]),
        read_instances([DEMO / "fewrel" / "val_pubmed.json"]),
    )
    assert (len({i.relation for i in kept}), len(kept), len(dropped)) == (31, 797, 0)


def test_marked_text_positions():
    inst = _inst("In 1990 Warsaw hosted Marie Curie .", head=(4, 6), tail=(2, 3))
    text, spans, markers = marked_text(inst)
    assert text == "In 1990 # Warsaw # hosted @ Marie Curie @ ."
    assert [text[s:e] for s, e in spans] == ["Marie Curie", "Warsaw"]
    assert [text[c] for c in markers] == ["@", "#"] and markers[0] == text.index("@")
    adjacent = _inst("Ada Lovelace Paris", head=(0, 2), tail=(2, 3))
    text, spans, markers = marked_text(adjacent, Markers(("<h>", "</h>"), ("<t>", "</t>")))
    assert text == "<h> Ada Lovelace </h> <t> Paris </t>"
    assert [text[s:e] for s, e in spans] == ["Ada Lovelace", "Paris"] and markers == [0, text.index("<t>")]


def test_an_entity_is_read_at_its_own_slot():
    assert _slots_after([2, 10], [5, 13]) == [5, 13]
    assert _slots_after([2, 10], [13]) == [2, 13]  # the slot after the tail's marker is the tail's
    assert _slots_after([10, 2], [5]) == [10, 5]  # the tail first
    assert _slots_after([2, 10], []) == [2, 10]


def test_accuracy_by_relation_names_where_errors_go():
    got = accuracy_by_relation(["born", "born", "born", "born", "died"], ["born", "died", "died", "lives", "died"])
    assert got == {
        "born": {"n": 4, "accuracy": 0.25, "errors": {"died": 0.5, "lives": 0.25}},
        "died": {"n": 1, "accuracy": 1.0, "errors": {}},
    }
    assert list(got["born"]["errors"]) == ["died", "lives"]  # most first


def test_holdout_is_a_stable_hash_split():
    relations = [f"P{i}" for i in range(40)]
    held = holdout_relations(relations, 10)
    assert len(held) == 10 and held == sorted(held) and set(held) <= set(relations)
    assert holdout_relations(reversed(relations), 10) == held  # order of the input does not matter
    assert set(holdout_relations(relations, 12)) > set(held)  # a larger holdout extends the smaller one


def _entities_file(path: Path, rows: list[tuple[str, str | None, str | None]]) -> str:
    pq.write_table(
        pa.table(
            {
                "name": [r[0] for r in rows],
                "qid": [r[1] for r in rows],
                "entity_id": [r[2] for r in rows],
                "how": ["x"] * len(rows),
            }
        ),
        path,
    )
    return str(path)


def test_resolve_and_count(tmp_path: Path):
    entities = _entities_file(
        tmp_path / "e.parquet",
        [
            ("marie curie", "Q7186", "Marie_Curie"),
            ("warsaw", None, "Warsaw"),
            ("paris", "Q90", None),
        ],
    )
    instances = [
        _inst("marie curie was born in warsaw", (0, 2), (5, 6), qids=("Q7186", None)),
        _inst(
            "marie curie was born in paris", (0, 2), (5, 6), qids=("Q_other", "Q90")
        ),  # a QID is never matched by name
    ]
    ids = resolve_instances(instances, entities)
    assert ids == [("Marie_Curie", "Warsaw"), (None, None)]
    assert resolve_instances(instances, None) == [(None, None), (None, None)]
    model_dir = tmp_path / "m"
    table_path = tmp_path / "t.parquet"
    write_table(
        table_path,
        ["Marie_Curie"],
        np.ones((1, 4)),
        [1],
        [1],
        {
            "model": str(model_dir),
            "revision": "local",
            "hidden_size": 4,
            "representation": "t",
            "max_seq_len": 8,
            "norm": 7.0,
        },
    )
    counts = entity_counts(ids, EntityTable.open(table_path), resolved=True)
    assert counts == {"mentions": 4, "unresolved": 2, "not_in_table": 1, "in_table": 1}
    assert entity_counts(ids, None, resolved=False) == {
        "mentions": 4,
        "unresolved": None,
        "not_in_table": None,
        "in_table": None,
    }


# Sentences of the tiny models' corpus; the second holds the head marker inside the sentence too.
SENTENCES = [
    ("Marie Curie was born in Warsaw .", (0, 2), (5, 6)),
    ("Mail {m} home : Niels Bohr was born in Copenhagen .", (4, 6), (9, 10)),
    ("Paris is the capital of France .", (0, 1), (5, 6)),
]
# BERT's tiny WordPiece vocabulary has no "@" or "#": words of its corpus serve as markers there.
FAMILY_MARKERS = {
    "roberta": MARKERS["punct"],
    "bart": MARKERS["punct"],
    "bert": Markers(("cat", "cat"), ("dog", "dog")),
}


def _reference(model_dir: Path, texts: list[str], marker_chars: list[tuple[int, int]]) -> torch.Tensor:
    """[state at head marker; state at tail marker] of each plain text, one text at a time."""
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForMaskedLM.from_pretrained(model_dir).eval()
    out = []
    for text, chars in zip(texts, marker_chars):
        enc = tokenizer(text, return_tensors="pt", return_offsets_mapping=True)
        offsets = enc.pop("offset_mapping")[0].tolist()
        with torch.no_grad():
            output = model(**enc, output_hidden_states=True)
        hidden = (output.decoder_hidden_states if model.config.is_encoder_decoder else output.hidden_states)[-1][0]
        positions = [next(i for i, (s, e) in enumerate(offsets) if s <= c < e) for c in chars]
        out.append(torch.cat([hidden[p] for p in positions]))
    return torch.stack(out)


@pytest.mark.parametrize("family", ["roberta", "bert", "bart"])
def test_encoder_matches_plain_reference(family, tiny_model_dirs, tmp_path):  # noqa: F811
    model_dir = tiny_model_dirs[family]
    markers = FAMILY_MARKERS[family]
    instances = [
        _inst(s.format(m=markers.head[0]), h, t, qids=(f"QH{i}", f"QT{i}")) for i, (s, h, t) in enumerate(SENTENCES)
    ]
    model, tokenizer = load_masked_lm(str(model_dir))
    word = " paris" if family == "bert" else " Paris"
    (w,) = tokenizer(word, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        emb = model.get_input_embeddings()(torch.tensor([w]))[0].double().numpy()
    table_path = tmp_path / "table.parquet"  # E(e) = emb(word): the slot then reads as the word itself
    write_table(
        table_path,
        ["E0", "E2"],
        np.stack([2.0 * emb, 3.0 * emb]),
        [1, 1],
        [1, 1],
        {
            "model": str(model_dir),
            "revision": "local",
            "hidden_size": emb.shape[0],
            "representation": "t",
            "max_seq_len": 64,
            "norm": 1.0,
        },
    )
    table = EntityTable.open(table_path)
    # head of sentence 0 and tail of sentence 2 are in the table; sentence 1 has no entity resolved
    entity_ids = [("E0", "not_in_table"), (None, None), ("not_in_table", "E2")]
    norm = float(np.linalg.norm(emb))

    plain = RelationEncoder(model, tokenizer, None, norm=None, settings=EncoderSettings(markers=markers))
    pelt = RelationEncoder(model, tokenizer, table, norm=norm, settings=EncoderSettings(markers=markers))
    texts = [marked_text(inst, markers) for inst in instances]
    with torch.no_grad():
        got_plain = plain(plain.mark(instances, entity_ids))
        got_pelt = pelt(pelt.mark(instances, entity_ids))
    expected_plain = _reference(model_dir, [t for t, _, _ in texts], [tuple(m) for _, _, m in texts])

    slot = f" ({word} )"
    with_words, chars, slot_chars = [], [], []
    for (text, spans, markers_at), (head_id, tail_id) in zip(texts, entity_ids):
        inserts = sorted([(spans[0][1], head_id == "E0", 0), (spans[1][1], tail_id == "E2", 1)], reverse=True)
        shifted, read = list(markers_at), list(markers_at)  # read: at the slot where there is one
        for end, injected, side in inserts:
            if injected:
                text = text[:end] + slot + text[end:]
                shifted = [c + len(slot) if c >= end else c for c in shifted]
                read = [c + len(slot) if c >= end else c for c in read]
                read[side] = end + len(" (") + (word[0] == " ")
        with_words.append(text)
        chars.append(tuple(shifted))
        slot_chars.append(tuple(read))
    expected_pelt = _reference(model_dir, with_words, chars)
    at_slots = RelationEncoder(
        model, tokenizer, table, norm=norm, settings=EncoderSettings(markers=markers, read_at="slots")
    )
    with torch.no_grad():
        got_slots = at_slots(at_slots.mark(instances, entity_ids))
    torch.testing.assert_close(got_slots, _reference(model_dir, with_words, slot_chars), atol=1e-5, rtol=1e-4)
    assert not torch.allclose(got_slots[0], got_pelt[0])
    torch.testing.assert_close(got_slots[1], got_pelt[1])  # nothing injected: read at the markers
    at_both = RelationEncoder(
        model, tokenizer, table, norm=norm, settings=EncoderSettings(markers=markers, read_at="both")
    )
    with torch.no_grad():
        got_both = at_both(at_both.mark(instances, entity_ids))
    assert got_both.shape == (3, at_both.out_features) == (3, 4 * model.config.hidden_size)
    torch.testing.assert_close(got_both, torch.cat([got_pelt, got_slots], dim=1))  # the markers', then the slots'
    assert got_plain.shape == (3, 2 * model.config.hidden_size)
    torch.testing.assert_close(got_plain, expected_plain, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(got_pelt, expected_pelt, atol=1e-5, rtol=1e-4)
    assert not torch.allclose(got_pelt[0], got_plain[0])  # the table changed the injected sentences ...
    torch.testing.assert_close(got_pelt[1], got_plain[1])  # ... and nothing else
    assert pelt.pop_stats() == {"texts_encoded": 3, "injected": 2, "missing_from_table": 2, "markers_cut": 0}
    assert pelt.stats == {}


def test_markers_must_be_real_tokens(tiny_model_dirs):  # noqa: F811
    model, tokenizer = load_masked_lm(str(tiny_model_dirs["bert"]))
    encoder = RelationEncoder(model, tokenizer, None, norm=None)  # "@" is [UNK] for the tiny WordPiece vocabulary
    with pytest.raises(ValueError, match="unknown or a bracket token"):
        encoder.mark([_inst("marie curie was born in warsaw", (0, 2), (5, 6))], [(None, None)])
    with pytest.raises(ValueError, match="different start markers"):
        Markers(("@", "@"), ("@", "#"))
    with pytest.raises(ValueError, match="four non-blank words"):
        Markers(("@", "a b"), ("#", "#"))


@pytest.mark.parametrize("family", ["roberta", "bert"])
def test_new_marker_tokens_read_as_the_papers_code(family, tiny_model_dirs):  # noqa: F811
    """``markers: tokens`` encodes as the paper's code: each word tokenized on its own (after a
    space, but the first), the four new ids inserted around the head and the tail, the states at
    the two start ids; the vocabulary grows by four tokens and nothing else changes."""
    model, tokenizer = load_masked_lm(str(tiny_model_dirs[family]))
    rows = model.get_input_embeddings().num_embeddings
    old = model.get_input_embeddings().weight.detach().clone()
    encoder = RelationEncoder(model, tokenizer, None, norm=None, settings=EncoderSettings(markers="tokens"))
    assert len(tokenizer) == rows + 4 and model.get_input_embeddings().num_embeddings == rows + 4
    torch.testing.assert_close(model.get_input_embeddings().weight[:rows], old)
    new_ids = tokenizer.convert_tokens_to_ids(["[unused0]", "[unused1]", "[unused2]", "[unused3]"])
    assert new_ids == list(range(rows, rows + 4))
    # neither entity first: the paper's code tokenizes the first word without a space, ours as any
    sentences = [
        (SENTENCES[1][0].format(m="the"), (4, 6), (9, 10)),
        ("In 1990 Warsaw hosted Marie Curie .", (4, 6), (2, 3)),
    ]
    instances = [_inst(s.lower() if family == "bert" else s, h, t) for s, h, t in sentences]
    with torch.no_grad():
        got = encoder(encoder.mark(instances, [(None, None)] * len(instances)))

    expected = []
    for inst in instances:
        pieces = [tokenizer.tokenize(w if i == 0 or family == "bert" else " " + w) for i, w in enumerate(inst.tokens)]
        ids = []
        for i, piece in enumerate(pieces):
            ids += [new_ids[0]] * (i == inst.head.start) + [new_ids[2]] * (i == inst.tail.start)
            ids += tokenizer.convert_tokens_to_ids(piece)
            ids += [new_ids[1]] * (i == inst.head.end - 1) + [new_ids[3]] * (i == inst.tail.end - 1)
        ids = [tokenizer.cls_token_id, *ids, tokenizer.sep_token_id]
        with torch.no_grad():
            hidden = model.base_model(input_ids=torch.tensor([ids])).last_hidden_state[0]
        expected.append(torch.cat([hidden[ids.index(new_ids[0])], hidden[ids.index(new_ids[2])]]))
    torch.testing.assert_close(got, torch.stack(expected), atol=1e-5, rtol=1e-4)


def test_cut_markers_fall_back_and_are_counted(tiny_model_dirs):  # noqa: F811
    model, tokenizer = load_masked_lm(str(tiny_model_dirs["roberta"]))
    encoder = RelationEncoder(model, tokenizer, None, norm=None, settings=EncoderSettings(max_length=12))
    long = _inst("Marie Curie was born in the city of Warsaw on the Vistula river in Poland .", (0, 2), (8, 9))
    with torch.no_grad():
        vectors = encoder(encoder.mark([long], [(None, None)]))
    assert encoder.pop_stats()["markers_cut"] == 1  # the tail marker lies beyond 12 tokens
    hidden = model.config.hidden_size
    text, _, _ = marked_text(long)
    ids = tokenizer(text)["input_ids"]
    truncated = torch.tensor([ids[:11] + ids[-1:]])  # what injection keeps: 11 body tokens, then </s>
    with torch.no_grad():
        first = model.base_model(input_ids=truncated).last_hidden_state[0, 0]
    torch.testing.assert_close(vectors[0, hidden:], first, atol=1e-5, rtol=1e-4)


def test_resolve_norm_prefers_the_config_then_the_sweep_then_the_family(tmp_path: Path):
    sweep = tmp_path / "norm_sweep.json"
    sweep.write_text(json.dumps({"task": "lama_norm_sweep", "chosen_norm": 4.0, "norms": []}))
    assert resolve_norm(None, sweep, 7.0) == 4.0
    assert resolve_norm(9, sweep, 7.0) == 9.0  # the configured norm wins
    assert resolve_norm(9, tmp_path / "absent.json", 7.0) == 9.0  # and the sweep is then not read
    assert resolve_norm(None, None, 10.0) == 10.0  # neither: the model family's L
    sweep.write_text(json.dumps({"task": "lama", "macro_p_at_1": 0.5}))
    with pytest.raises(ValueError, match="not a norm sweep"):
        resolve_norm(None, sweep, 7.0)


def test_the_family_not_the_model_type_decides_the_default_norm(tiny_model_dirs):  # noqa: F811
    # the paper's L per LM-head layout: a BERT-structured model under another name is BERT's 10
    for name, norm in (("roberta", 7.0), ("bert", 10.0), ("bart", 3.0)):
        model, _ = load_masked_lm(str(tiny_model_dirs[name]))
        assert default_norm(model) == norm and family(model).name == name
        model.config.model_type = "a-relative"
        assert default_norm(model) == norm


def test_training_precision_follows_the_hardware_unless_set(monkeypatch, tiny_model_dirs, tmp_path):  # noqa: F811
    """``auto`` autocasts to bf16 only where bf16 is native; with it a CPU model attends in fp32, and the
    encodings are bf16's: close to fp32's, not equal."""
    cpu = torch.device("cpu")
    for native in (False, True):
        # raising=False: torch before 2.5 has neither check (native_bf16 then says False)
        monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda native=native: native, raising=False)
        monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False, raising=False)
        assert resolve_autocast("auto", cpu) is native
    assert resolve_autocast("bf16", cpu) and not resolve_autocast("fp32", cpu)
    with pytest.raises(ValueError, match="unknown training precision 'fp16'"):
        resolve_autocast("fp16", cpu)

    model = str(tiny_model_dirs["roberta"])
    settings = {p: EncoderSettings(max_length=64, precision=p, device="cpu") for p in ("fp32", "bf16")}
    encoders = {p: load_encoder(model, TableInputs("baseline"), s, "test") for p, s in settings.items()}
    assert encoders["fp32"].precision == "fp32" and encoders["bf16"].precision == "bf16 autocast"
    assert encoders["fp32"].model.config._attn_implementation == "sdpa"
    assert encoders["bf16"].model.config._attn_implementation == "sdpa_fp32"
    instances = [_inst(s.format(m="@"), h, t) for s, h, t in SENTENCES]
    with torch.no_grad():
        got = {p: e(e.mark(instances, [(None, None)] * len(instances))) for p, e in encoders.items()}
    assert got["bf16"].dtype == torch.float32
    torch.testing.assert_close(got["bf16"], got["fp32"], atol=1e-3, rtol=1e-3)
    assert not torch.allclose(got["bf16"], got["fp32"], atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("family", ["roberta", "bert", "bart"])
def test_fp32_attention_masks_padding_as_sdpa(family, tiny_model_dirs):  # noqa: F811
    """The attention bf16 training switches to sees the padding mask: in a padded batch each text
    encodes as it does alone (without autocast, so that only the attention differs)."""
    model, tokenizer = load_masked_lm(str(tiny_model_dirs[family]))
    attention_for_training(model, autocast=True)
    assert model.config._attn_implementation == "sdpa_fp32"
    markers = FAMILY_MARKERS[family]
    encoder = RelationEncoder(model, tokenizer, None, norm=None, settings=EncoderSettings(markers=markers))
    instances = [_inst(s.format(m=markers.head[0]), h, t) for s, h, t in SENTENCES]
    marked = encoder.mark(instances, [(None, None)] * len(instances))
    with torch.no_grad():
        batch = encoder(marked)
        alone = torch.cat([encoder([m]) for m in marked])
    torch.testing.assert_close(batch, alone, atol=1e-5, rtol=1e-4)


def test_fp32_attention_under_autocast_is_sdpa_in_fp32():
    """What bf16 autocast on a CPU attends with: SDPA on the fp32 inputs, not bf16-rounded scores."""
    from pelt.encoding.models import _sdpa_in_fp32

    torch.manual_seed(0)
    query, key, value = (torch.randn(2, 2, 16, 8) for _ in range(3))
    mask = torch.rand(2, 1, 16, 16) > 0.3
    mask |= torch.eye(16, dtype=torch.bool)
    module = torch.nn.Module()
    module.is_causal = False
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got, _ = _sdpa_in_fp32(module, query.bfloat16(), key.bfloat16(), value.bfloat16(), mask, scaling=0.5)
    expected = F.scaled_dot_product_attention(
        query.bfloat16().float(), key.bfloat16().float(), value.bfloat16().float(), attn_mask=mask, scale=0.5
    ).transpose(1, 2)
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=1e-5)
