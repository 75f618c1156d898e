"""LAMA probing: run_lama against a straightforward per-fact reference, candidates, buckets, PELT injection,
and the sweep over the norm L."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
from transformers import AutoModelForMaskedLM, AutoTokenizer

from pelt.encoding.injection import inject
from pelt.encoding.models import forward_mlm
from pelt.eval.settings import TableInputs
from pelt.linking.task_entities import resolve_entities
from pelt.table import EntityTable, write_table
from pelt.tasks.lama.data import lama_subject, load_facts, relation_of
from pelt.tasks.lama.run import (
    LamaFiles,
    candidate_vocabulary,
    choose_norm,
    fill_template,
    frequency_bucket,
    run_lama,
    sweep_norm,
)
from pelt.tasks.lama.settings import LamaSettings
from pelt.tasks.lama.uhn import build_uhn

TEMPLATES = {"P19": "[X] was born in [Y] .", "P36": "The capital of [X] is [Y] .", "P20": "[X] died in [Y] ."}
# Subjects and objects from the tiny models' corpus; some objects are several tokens for some tokenizers.
FACTS = [
    ("P19", "Marie Curie", "Q7186", "Warsaw"),
    ("P19", "Albert Einstein", "Q937", "Ulm"),
    ("P19", "Niels Bohr", "Q7085", "Copenhagen"),
    ("P19", "Ada Lovelace", "Q7259", "London"),
    ("P19", "Marie Curie", None, "Paris"),
    ("P36", "France", "Q142", "Paris"),
    ("P36", "Germany", "Q183", "Berlin"),
    ("P36", "Denmark", "Q35", "Copenhagen"),
    ("P36", "Poland", "Q36", "Warsaw"),
    ("P36", "Europe", "Q46", "city"),
    ("P20", "Marie Curie", "Q7186", "Paris"),
    ("P20", "Albert Einstein", "Q937", "Bern"),
    ("P20", "Niels Bohr", "Q7085", "Europe"),
]
VOCAB = [
    "Paris",
    "Warsaw",
    "Ulm",
    "Copenhagen",
    "Berlin",
    "Bern",
    "London",
    "Europe",
    "city",
    "capital",
    "country",
    "river",
    "cat",
    "dog",
    "the",
    "xyzzyq",
]


@pytest.fixture(scope="module")
def lama_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    root = tmp_path_factory.mktemp("lama")
    (root / "relations.jsonl").write_text(
        "".join(json.dumps({"relation": r, "template": t}) + "\n" for r, t in TEMPLATES.items())
    )
    by_relation = defaultdict(list)
    for i, (rel, sub, qid, obj) in enumerate(FACTS):
        record = {"uuid": f"u{i}", "obj_label": obj, "sub_label": sub, "predicate_id": rel}
        if qid:
            record["sub_uri"] = qid
        by_relation[rel].append(json.dumps(record))
    facts = []
    for rel, lines in by_relation.items():
        (root / f"{rel}.jsonl").write_text("\n".join(lines) + "\n")
        facts.append(str(root / f"{rel}.jsonl"))
    (root / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    return {"root": root, "facts": facts, "relations": str(root / "relations.jsonl"), "vocab": str(root / "vocab.txt")}


def _files(lama_files: dict[str, object], **extra: str) -> LamaFiles:
    return LamaFiles(lama_files["facts"], lama_files["relations"], lama_files["vocab"], **extra)


def _reference(model_dir: Path, table=None, entity_of=None) -> dict[str, list[tuple[str, bool]]]:
    """Per relation, (uuid, correct) of each fact, one fact at a time, the plainest way there is."""
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForMaskedLM.from_pretrained(model_dir).eval()
    candidates = {}
    for word in VOCAB:
        pieces = tokenizer.tokenize(" " + word)
        if len(pieces) == 1 and pieces[0] != tokenizer.unk_token:
            candidates.setdefault(word, tokenizer.convert_tokens_to_ids(pieces[0]))
    ids = sorted(set(candidates.values()))
    out: dict[str, list[tuple[str, bool]]] = defaultdict(list)
    for i, (rel, sub, qid, obj) in enumerate(FACTS):
        if obj not in candidates:
            continue
        text = TEMPLATES[rel].replace("[X]", sub).replace("[Y]", tokenizer.mask_token)
        with torch.no_grad():
            if table is None:
                enc = tokenizer(text, return_tensors="pt")
                logits = model(**enc).logits[0]
                input_ids = enc["input_ids"][0]
            else:
                entity = entity_of(sub, qid)
                start = text.index(sub)
                mentions = [[(start, start + len(sub), entity)]] if entity else [[]]
                batch = inject(model, tokenizer, [text], mentions, table)
                logits = forward_mlm(model, batch.inputs_embeds, batch.attention_mask, batch.input_ids)[0]
                input_ids = batch.input_ids[0]
        pos = int((input_ids == tokenizer.mask_token_id).nonzero())
        best = ids[int(logits[pos, ids].argmax())]
        out[rel].append((f"u{i}", best == candidates[obj]))
    return out


def _check_against_reference(result: dict, predictions: Path, reference: dict) -> None:
    records = [json.loads(line) for line in predictions.open()]
    assert {r["uuid"]: r["correct"] for r in records} == {u: c for facts in reference.values() for u, c in facts}
    per_relation = {rel: sum(c for _, c in facts) / len(facts) for rel, facts in reference.items()}
    for rel, p in per_relation.items():
        assert result["per_relation"][rel]["p_at_1"] == pytest.approx(p, abs=1e-12)
    assert result["macro_p_at_1"] == pytest.approx(sum(per_relation.values()) / len(per_relation), abs=1e-12)
    n = sum(len(f) for f in reference.values())
    assert result["micro_p_at_1"] == pytest.approx(sum(c for f in reference.values() for _, c in f) / n, abs=1e-12)
    assert result["counts"]["facts_evaluated"] == n
    assert result["counts"]["dropped_not_candidate"] == len(FACTS) - n


@pytest.mark.parametrize("family", ["roberta", "bert", "bart"])
def test_baseline_matches_per_fact_reference(family, tiny_model_dirs, lama_files, tmp_path):  # noqa: F811
    out, preds = tmp_path / "r.json", tmp_path / "p.jsonl"
    result = run_lama(
        str(tiny_model_dirs[family]),
        _files(lama_files),
        str(out),
        str(preds),
        settings=LamaSettings(batch_size=4),
    )
    reference = _reference(tiny_model_dirs[family])
    _check_against_reference(result, preds, reference)
    assert json.loads(out.read_text()) == result
    assert result["variant"] == "baseline" and result["buckets"] is None and result["counts"]["injected"] == 0
    correct = [c for facts in reference.values() for _, c in facts]
    assert len(correct) >= 5  # enough facts survive candidate filtering for the comparison to mean something


def test_candidate_rule_per_tokenizer_kind(tiny_model_dirs):  # noqa: F811
    roberta = AutoTokenizer.from_pretrained(tiny_model_dirs["roberta"])
    bert = AutoTokenizer.from_pretrained(tiny_model_dirs["bert"])
    r = candidate_vocabulary(roberta, ["Paris", "paris", "Copenhagen", "xyzzyq"])
    assert r == {"Paris": roberta.convert_tokens_to_ids("ĠParis")}  # byte-level BPE: the " w" form only
    b = candidate_vocabulary(bert, ["Paris", "paris", "Copenhagen", "xyzzyq"])
    assert b["Paris"] == b["paris"] == bert.convert_tokens_to_ids("paris")  # uncased WordPiece folds case
    assert "Copenhagen" in b and "xyzzyq" not in b  # [UNK] is never a candidate


def test_fill_template_spans():
    text, start, end = fill_template("[Y] participated in the [X] .", "World Cup", "<mask>")
    assert text == "<mask> participated in the World Cup ." and text[start:end] == "World Cup"
    text, start, end = fill_template("[X] was born in [Y] .", "Ada", "[MASK]")
    assert (text, start, end) == ("Ada was born in [MASK] .", 0, 3)


@pytest.mark.parametrize(
    "frequency,bucket",
    [
        (0, "[0,10)"),
        (9, "[0,10)"),
        (10, "[10,50)"),
        (49, "[10,50)"),
        (50, "[50,100)"),
        (99, "[50,100)"),
        (100, "[100,+)"),
        (10**7, "[100,+)"),
    ],
)
def test_frequency_buckets(frequency, bucket):
    assert frequency_bucket(frequency) == bucket


def test_frequency_bucket_rejects_negative():
    with pytest.raises(ValueError):
        frequency_bucket(-1)


def _write_table(path: Path, model_dir: Path, entities: dict[str, int], hidden: int) -> None:
    rng = np.random.default_rng(0)
    write_table(
        path,
        list(entities),
        rng.normal(size=(len(entities), hidden)),
        [3] * len(entities),
        list(entities.values()),
        {
            "model": str(model_dir),
            "revision": "local",
            "hidden_size": hidden,
            "representation": "test",
            "max_seq_len": 64,
            "norm": 7.0,
        },
    )


def test_pelt_variant_injects_resolves_and_buckets(tiny_model_dirs, lama_files, tmp_path):  # noqa: F811
    model_dir = tiny_model_dirs["bert"]  # WordPiece keeps every test object a candidate
    frequencies = {"Marie_Curie": 5, "Albert_Einstein": 20, "Niels_Bohr": 150, "France": 60}
    table_path = tmp_path / "table.parquet"
    _write_table(table_path, model_dir, frequencies, hidden=32)
    # Resolution rows: by QID for T-REx facts, by name for the one Marie Curie fact without a QID;
    # Germany resolves to an entity missing from the table, Denmark does not resolve at all.
    rows = [
        ("Marie Curie", "Q7186", "Marie_Curie", "qid"),
        ("Marie Curie", None, "Marie_Curie", "title"),
        ("Albert Einstein", "Q937", "Albert_Einstein", "qid"),
        ("Niels Bohr", "Q7085", "Niels_Bohr", "qid"),
        ("France", "Q142", "France", "qid"),
        ("Germany", "Q183", "Germany", "title"),
        ("Denmark", "Q35", None, "missing"),
    ]
    entities = tmp_path / "task_entities.parquet"
    pq.write_table(
        pa.table({k: [r[i] for r in rows] for i, k in enumerate(["name", "qid", "entity_id", "how"])}), entities
    )
    entity_of = {(n, q): e for n, q, e, _ in rows}
    out, preds = tmp_path / "r.json", tmp_path / "p.jsonl"
    result = run_lama(
        str(model_dir),
        _files(lama_files),
        str(out),
        str(preds),
        tables=TableInputs(table=str(table_path), task_entities=str(entities), norm=7.0),  # the reference's L
        settings=LamaSettings(batch_size=3),
    )
    reference = _reference(model_dir, EntityTable.open(table_path), lambda s, q: entity_of.get((s, q)))
    _check_against_reference(result, preds, reference)
    records = {r["uuid"]: r for r in map(json.loads, preds.open())}
    in_table = {i for i, (_, sub, qid, _) in enumerate(FACTS) if entity_of.get((sub, qid)) in frequencies}
    assert {u for u, r in records.items() if r["injected"]} == {f"u{i}" for i in in_table if f"u{i}" in records}
    assert result["variant"] == "pelt" and result["norm"] == 7.0
    counts = result["counts"]
    assert counts["injected"] == len([u for u in records if records[u]["injected"]]) > 0
    assert counts["subject_not_in_table"] == sum(r["entity_id"] == "Germany" for r in records.values())
    assert counts["subject_unresolved"] == sum(r["entity_id"] is None for r in records.values()) > 0

    def bucket_of(r: dict) -> str:  # unresolved subjects apart, not as frequency 0
        return "unresolved" if r["entity_id"] is None else frequency_bucket(frequencies.get(r["entity_id"], 0))

    expected_buckets = defaultdict(int)
    for r in records.values():
        expected_buckets[bucket_of(r)] += 1
    assert {b: v["facts"] for b, v in result["buckets"].items() if v["facts"]} == dict(expected_buckets)
    assert set(expected_buckets) == {"[0,10)", "[10,50)", "[50,100)", "[100,+)", "unresolved"}
    assert all(r["frequency"] is None for r in records.values() if r["entity_id"] is None)
    for name, bucket in result["buckets"].items():
        by_relation = defaultdict(list)
        for r in records.values():
            if bucket_of(r) == name:
                by_relation[r["relation"]].append(r["correct"])
        assert bucket["relations"] == len(by_relation)
        if by_relation:
            # per fact (the authors' Table 5): every fact of the bucket counts once, whatever its relation
            every_fact = [c for facts in by_relation.values() for c in facts]
            assert bucket["correct"] == sum(every_fact) and bucket["p_at_1"] == pytest.approx(np.mean(every_fact))
            # macro (ours): the mean over the bucket's relations
            assert bucket["macro_p_at_1"] == pytest.approx(np.mean([np.mean(c) for c in by_relation.values()]))


def test_baseline_with_table_only_buckets(tiny_model_dirs, lama_files, tmp_path):  # noqa: F811
    model_dir = tiny_model_dirs["bert"]
    table_path = tmp_path / "table.parquet"
    _write_table(table_path, model_dir, {"Niels_Bohr": 150}, hidden=32)
    entities = tmp_path / "task_entities.parquet"
    pq.write_table(
        pa.table({"name": ["Niels Bohr"], "qid": ["Q7085"], "entity_id": ["Niels_Bohr"], "how": ["qid"]}), entities
    )
    plain = run_lama(
        str(model_dir),
        _files(lama_files),
        str(tmp_path / "a.json"),
        str(tmp_path / "a.jsonl"),
    )
    bucketed = run_lama(
        str(model_dir),
        _files(lama_files),
        str(tmp_path / "b.json"),
        str(tmp_path / "b.jsonl"),
        tables=TableInputs(variant="baseline", table=str(table_path), task_entities=str(entities)),
    )
    assert bucketed["counts"]["injected"] == 0 and bucketed["norm"] is None
    assert bucketed["per_relation"] == plain["per_relation"]
    assert bucketed["buckets"]["[100,+)"]["facts"] == 2  # Niels Bohr's two facts (P19, P20)


def _write_facts(path: Path, facts: list[tuple[str, str, str, str]]) -> str:
    path.write_text(
        "".join(
            json.dumps({"uuid": u, "predicate_id": rel, "sub_label": sub, "obj_label": obj}) + "\n"
            for u, rel, sub, obj in facts
        )
    )
    return str(path)


def test_build_uhn_applies_the_string_and_person_name_filters(tiny_model_dirs, tmp_path):  # noqa: F811
    # A tiny BERT whose every mask prediction is "Paris" first and never "Ulm": the person-name
    # filter's top 3 then holds Paris for any name, and the outcome does not depend on random weights.
    model = AutoModelForMaskedLM.from_pretrained(tiny_model_dirs["bert"])
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dirs["bert"])
    with torch.no_grad():
        bias = model.get_output_embeddings().bias
        (paris,), (ulm,) = (tokenizer(" " + word, add_special_tokens=False)["input_ids"] for word in ("Paris", "Ulm"))
        bias[paris] = 100.0
        bias[ulm] = -100.0
    model.save_pretrained(tmp_path / "filter_model")
    tokenizer.save_pretrained(tmp_path / "filter_model")
    facts = _write_facts(
        tmp_path / "facts.jsonl",
        [
            ("a", "P19", "Marie Curie", "Paris"),  # a person relation, and the name "predicts" Paris
            ("b", "P36", "France", "Paris"),  # the same object, but not a person relation: kept
            ("c", "P19", "Albert Einstein", "Ulm"),  # a person relation whose object the name does not predict
            ("d", "P740", "Brennholm Philharmonic", "brennholm"),  # the object is in the name
        ],
    )
    uhn = build_uhn([facts], str(tmp_path / "uhn.json"), person_model=str(tmp_path / "filter_model"))
    assert uhn["dropped"] == {"a": "person_name", "d": "object_in_subject"}
    assert uhn["counts"] == {"facts": 4, "kept": 2, "dropped_object_in_subject": 1, "dropped_person_name": 1}
    assert json.loads((tmp_path / "uhn.json").read_text()) == uhn
    strings_only = build_uhn([facts], str(tmp_path / "uhn2.json"))
    assert strings_only["dropped"] == {"d": "object_in_subject"} and strings_only["person_model"] is None


def test_run_lama_scores_the_uhn_subset_from_the_same_predictions(tiny_model_dirs, lama_files, tmp_path):  # noqa: F811
    dropped = {"u0": "person_name", "u5": "object_in_subject", "u10": "person_name"}
    (tmp_path / "uhn.json").write_text(json.dumps({"dropped": dropped}))
    preds = tmp_path / "p.jsonl"
    result = run_lama(
        str(tiny_model_dirs["roberta"]),
        _files(lama_files, uhn=str(tmp_path / "uhn.json")),
        str(tmp_path / "r.json"),
        str(preds),
    )
    reference = _reference(tiny_model_dirs["roberta"])
    kept = {rel: [c for u, c in facts if u not in dropped] for rel, facts in reference.items()}
    kept = {rel: c for rel, c in kept.items() if c}
    uhn = result["benchmarks"]["UHN T-REx"]
    assert uhn["facts"] == sum(len(c) for c in kept.values()) < result["benchmarks"]["T-REx"]["facts"]
    assert uhn["macro_p_at_1"] == pytest.approx(sum(sum(c) / len(c) for c in kept.values()) / len(kept))
    assert result["benchmarks"]["T-REx"]["macro_p_at_1"] == pytest.approx(result["macro_p_at_1"])
    assert "G-RE" not in result["benchmarks"]  # no Google-RE relation among the facts
    records = [json.loads(line) for line in preds.open()]
    assert {r["uuid"] for r in records if not r["uhn"]} == set(dropped) & {r["uuid"] for r in records}
    assert result["counts"]["not_in_uhn"] == len(set(dropped) & {r["uuid"] for r in records})


def test_load_facts_reads_google_re_and_pararel(shared_data: Path, tmp_path: Path):
    google = shared_data / "lama" / "Google_RE" / "place_of_birth_test.jsonl"
    pararel = shared_data / "lama" / "TREx_pararel_subset_for_missing" / "P17.jsonl"
    facts, counts = load_facts([google, pararel])
    assert counts.malformed == 0
    n_google = sum(1 for _ in google.open())
    assert {f.relation for f in facts[:n_google]} == {"place_of_birth"}
    assert {f.relation for f in facts[n_google:]} == {"P17"}
    assert facts[0].subject == "Khatchig Mouradian" and facts[0].object == "Lebanon"
    assert relation_of({"pred": "/people/person/date_of_birth"}, "x.jsonl") == "date_of_birth"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps({"sub_label": "A", "predicate_id": "P1"})
        + "\n"
        + json.dumps({"sub_label": "B", "obj_label": "C", "predicate_id": "P1"})
        + "\n"
    )
    facts, counts = load_facts([bad])
    assert counts.malformed == 1 and [f.subject for f in facts] == ["B"]


def test_load_facts_percent_decodes_and_scores_a_pair_once(shared_data: Path, tmp_path: Path):
    # As LAMA's filter: Google-RE writes some subjects as URL paths; a relation's (subject, object)
    # pair stated by two records is one fact (the first record's uuid), but the same pair under
    # another relation is another fact.
    path = tmp_path / "place_of_birth_test.jsonl"
    path.write_text(
        "".join(
            json.dumps(r) + "\n"
            for r in [
                {"pred": "/people/person/place_of_birth", "sub_label": "Stanis%C5%82aw Lem", "obj_label": "Lw%C3%B3w"},
                {
                    "pred": "/people/person/place_of_birth",
                    "sub_label": "Stanisław Lem",
                    "obj_label": "Lwów",
                    "uuid": "x",
                },
                {"pred": "/people/person/place_of_death", "sub_label": "Stanisław Lem", "obj_label": "Lwów"},
                {"pred": "/people/person/place_of_birth", "sub_label": "100% Pure", "obj_label": "Oslo"},
            ]
        )
    )
    facts, counts = load_facts([path])
    assert [(f.relation, f.subject, f.object) for f in facts] == [
        ("place_of_birth", "Stanisław Lem", "Lwów"),
        ("place_of_death", "Stanisław Lem", "Lwów"),
        ("place_of_birth", "100% Pure", "Oslo"),  # not an escape: left as it is
    ]
    assert facts[0].uuid == "place_of_birth_test.jsonl:1" and counts.duplicates == 1
    real = shared_data / "lama" / "Google_RE" / "date_of_birth_test.jsonl"
    decoded = {f.subject for f in load_facts([real])[0]}
    assert "Sébastien Leblanc" in decoded and not any(re.search("%[0-9A-F]{2}", s) for s in decoded)
    assert lama_subject({"sub_label": "S%C3%A9bastien Leblanc"}) == ("Sébastien Leblanc", None)  # linking by name too


def test_buckets_hold_trex_facts_only(tiny_model_dirs, tmp_path):  # noqa: F811
    # the paper's Table 5 is T-REx only: a Google-RE fact of a bucketed subject is scored, not bucketed
    model_dir = tiny_model_dirs["bert"]
    table_path = tmp_path / "table.parquet"
    _write_table(table_path, model_dir, {"Niels_Bohr": 150}, hidden=32)
    entities = tmp_path / "task_entities.parquet"
    pq.write_table(
        pa.table({"name": ["Niels Bohr"], "qid": [None], "entity_id": ["Niels_Bohr"], "how": ["title"]}), entities
    )
    trex = _write_facts(tmp_path / "P20.jsonl", [("t", "P20", "Niels Bohr", "Copenhagen")])
    google = tmp_path / "place_of_birth_test.jsonl"
    google.write_text(
        json.dumps(
            {"pred": "/people/person/place_of_birth", "sub_label": "Niels Bohr", "obj_label": "Copenhagen", "uuid": "g"}
        )
        + "\n"
    )
    relations = tmp_path / "relations.jsonl"
    relations.write_text(json.dumps({"relation": "P20", "template": "[X] died in [Y] ."}) + "\n")
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("Copenhagen\nParis\n")
    result = run_lama(
        str(model_dir),
        LamaFiles([trex, str(google)], str(relations), str(vocab)),
        str(tmp_path / "r.json"),
        str(tmp_path / "r.jsonl"),
        tables=TableInputs(table=str(table_path), task_entities=str(entities)),
    )
    assert result["counts"]["facts_evaluated"] == 2 and result["counts"]["injected"] == 2
    assert {b: v["facts"] for b, v in result["buckets"].items() if v["facts"]} == {"[100,+)": 1}


def test_run_lama_rejects_relations_without_template(tiny_model_dirs, lama_files, tmp_path):  # noqa: F811
    relations = tmp_path / "relations.jsonl"
    relations.write_text(json.dumps({"relation": "P19", "template": "[X] was born in [Y] ."}) + "\n")
    with pytest.raises(ValueError, match="no template"):
        run_lama(
            str(tiny_model_dirs["bert"]),
            LamaFiles(lama_files["facts"], str(relations), lama_files["vocab"]),
            str(tmp_path / "r.json"),
            str(tmp_path / "p.jsonl"),
        )


def test_choose_norm_prefers_best_then_smallest():
    assert choose_norm({1.0: 0.2, 7.0: 0.4, 3.0: 0.3}) == 7.0
    assert choose_norm({5.0: 0.4, 2.0: 0.4, 9.0: 0.1}) == 2.0
    assert choose_norm({1.0: None, 4.0: 0.0}) == 4.0
    with pytest.raises(ValueError, match="no L was scored"):
        choose_norm({1.0: None})


def test_sweep_norm_matches_run_lama_per_norm(tiny_model_dirs, lama_files, tmp_path, monkeypatch):  # noqa: F811
    import pelt.tasks.lama.run as lama

    model_dir = tiny_model_dirs["bert"]
    table_path = tmp_path / "table.parquet"
    _write_table(table_path, model_dir, {"Marie_Curie": 5, "Albert_Einstein": 20, "France": 60}, hidden=32)
    entities = tmp_path / "task_entities.parquet"
    pq.write_table(
        pa.table(
            {
                "name": ["Marie Curie", "Albert Einstein", "France"],
                "qid": ["Q7186", "Q937", "Q142"],
                "entity_id": ["Marie_Curie", "Albert_Einstein", "France"],
                "how": ["qid"] * 3,
            }
        ),
        entities,
    )
    loads, injected_norms = [], []
    load, inject_ = lama.load_masked_lm, lama.inject
    monkeypatch.setattr(lama, "load_masked_lm", lambda *a, **k: loads.append(a) or load(*a, **k))
    # the tiny random model's P@1 hardly moves with L, so check that each pass really injects with its L
    monkeypatch.setattr(
        lama, "inject", lambda *a, **k: injected_norms.append((a[4] is not None, k["norm"])) or inject_(*a, **k)
    )
    out = tmp_path / "sweep.json"
    norms = [1, 4, 16, 64]
    sweep = sweep_norm(
        str(model_dir),
        _files(lama_files),
        str(out),
        tables=TableInputs(table=str(table_path), task_entities=str(entities)),
        norms=norms,
        settings=LamaSettings(batch_size=4),
    )
    assert len(loads) == 1 and json.loads(out.read_text()) == sweep
    n_batches = len(injected_norms) // 5
    assert injected_norms == [(False, None)] * n_batches + [(True, float(n)) for n in norms for _ in range(n_batches)]
    monkeypatch.setattr(lama, "inject", inject_)
    assert [r["norm"] for r in sweep["norms"]] == [1.0, 4.0, 16.0, 64.0] and sweep["table_norm"] == 7.0
    for row in sweep["norms"]:
        single = run_lama(
            str(model_dir),
            _files(lama_files),
            str(tmp_path / "r.json"),
            str(tmp_path / "p.jsonl"),
            tables=TableInputs(table=str(table_path), task_entities=str(entities), norm=row["norm"]),
            settings=LamaSettings(batch_size=4),
        )
        assert row["macro_p_at_1"] == single["macro_p_at_1"] and row["micro_p_at_1"] == single["micro_p_at_1"]
        assert row["buckets"] == {b: scored["p_at_1"] for b, scored in single["buckets"].items()}
        assert row["injected"] == single["counts"]["injected"] > 0
    plain = run_lama(
        str(model_dir),
        _files(lama_files),
        str(tmp_path / "b.json"),
        str(tmp_path / "b.jsonl"),
        settings=LamaSettings(batch_size=4),
    )
    assert sweep["baseline"]["macro_p_at_1"] == plain["macro_p_at_1"]
    bucketed = run_lama(
        str(model_dir),
        _files(lama_files),
        str(tmp_path / "c.json"),
        str(tmp_path / "c.jsonl"),
        tables=TableInputs(variant="baseline", table=str(table_path), task_entities=str(entities)),
        settings=LamaSettings(batch_size=4),
    )
    assert sweep["baseline"]["buckets"] == {b: scored["p_at_1"] for b, scored in bucketed["buckets"].items()}
    assert sweep["chosen_norm"] == choose_norm({r["norm"]: r["macro_p_at_1"] for r in sweep["norms"]})
    assert sweep["counts"]["subject_unresolved"] > 0
    with pytest.raises(ValueError, match="norms must be positive"):
        sweep_norm(
            str(model_dir),
            _files(lama_files),
            str(out),
            tables=TableInputs(table=str(table_path), task_entities=str(entities)),
            norms=[0, 1],
        )


def test_resolve_entities_never_falls_back_from_qid_to_name(tmp_path):
    path = tmp_path / "e.parquet"
    pq.write_table(
        pa.table(
            {
                "name": ["Paris", "Paris"],
                "qid": ["Q90", None],
                "entity_id": ["Paris", "Paris_(Texas)"],
                "how": ["qid", "title"],
            }
        ),
        path,
    )
    assert resolve_entities([("Paris", "Q90"), ("Paris", None), ("Paris", "Q830149"), ("Lyon", None)], path) == [
        "Paris",
        "Paris",
        None,
        None,
    ]


def test_uncased_models_are_probed_lowercased_as_lama(tiny_model_dirs, lama_files, tmp_path):  # noqa: F811
    # the tiny BERT folds case; LAMA's --lowercase then lower-cases objects and the vocabulary, and a
    # relation's facts that differ only by case become one
    bert, roberta = str(tiny_model_dirs["bert"]), str(tiny_model_dirs["roberta"])
    facts = _write_facts(
        tmp_path / "P19.jsonl",
        [
            ("a", "P19", "Marie Curie", "Warsaw"),
            ("b", "P19", "Marie Curie", "warsaw"),
            ("c", "P19", "Niels Bohr", "Paris"),
        ],
    )
    relations = tmp_path / "relations.jsonl"
    relations.write_text(json.dumps({"relation": "P19", "template": TEMPLATES["P19"]}) + "\n")
    out = {}
    for name, model in (("bert", bert), ("roberta", roberta)):
        out[name] = run_lama(
            model,
            LamaFiles([facts], str(relations), lama_files["vocab"]),
            str(tmp_path / f"{name}.json"),
            str(tmp_path / f"{name}.jsonl"),
        )
    records = [json.loads(line) for line in (tmp_path / "bert.jsonl").open()]
    assert out["bert"]["lowercased"] and [(r["uuid"], r["object"]) for r in records] == [
        ("a", "warsaw"),
        ("c", "paris"),
    ]
    assert out["bert"]["counts"]["duplicates"] == 1 and all(r["prediction"].islower() for r in records)
    assert not out["roberta"]["lowercased"] and out["roberta"]["counts"]["duplicates"] == 0
    # a given lower-cased vocabulary is used instead of the derived one: without "paris" that fact is dropped
    lowered = tmp_path / "lower.txt"
    lowered.write_text("warsaw\nberlin\n")
    given = run_lama(
        bert,
        LamaFiles([facts], str(relations), lama_files["vocab"], common_vocab_lowercased=str(lowered)),
        str(tmp_path / "g.json"),
        str(tmp_path / "g.jsonl"),
    )
    assert given["counts"]["dropped_not_candidate"] == 1 and given["counts"]["facts_evaluated"] == 1
