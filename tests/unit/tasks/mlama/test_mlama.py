"""mLAMA (issue 30 item 4): the release's per-language folders and templates, the subjects the table
needs, and run_mlama against a plain per-candidate reference (each candidate object scored on its
own prompt of as many masks as it has tokens), without and with a table, in English, German and a
language written without spaces."""

from __future__ import annotations

import csv
import json
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
from pelt.registry import data_files, kind_of, run_files
from pelt.table import EntityTable, write_table
from pelt.tasks import task_entities
from pelt.tasks.lama.data import lama_entities
from pelt.tasks.mlama.data import fact_files, language_folder, load_templates
from pelt.tasks.mlama.figures import plot_mlama
from pelt.tasks.mlama.run import MlamaFiles, object_ids, run_mlama
from pelt.tasks.mlama.settings import MlamaSettings
from pelt.tasks.mlama.summary import write_mlama_summary

# language -> relation -> template; the Japanese one has no space around [Y].
TEMPLATES = {
    "en": {"P19": "[X] was born in [Y] .", "P36": "The capital of [X] is [Y] .", "P20": "[X] died [Y]"},
    "de": {"P19": "[X] wurde in [Y] geboren.", "P36": "Die Hauptstadt von [X] ist [Y].", "P20": "[X] starb in."},
    "ja": {"P19": "[X]は[Y]で生まれた。"},
}
# (relation, subject, subject QID, object): objects of one and of several tokens.
FACTS = {
    "en": [
        ("P19", "Marie Curie", "Q7186", "Warsaw"),
        ("P19", "Albert Einstein", "Q937", "Ulm"),
        ("P19", "Niels Bohr", "Q7085", "Copenhagen"),
        ("P19", "Ada Lovelace", "Q7259", "Analytical Engine"),
        ("P36", "France", "Q142", "Paris"),
        ("P36", "Germany", "Q183", "Berlin"),
        ("P36", "Denmark", "Q35", "Copenhagen"),
        ("P36", "Poland", "Q36", "Warsaw"),
    ],
    "de": [
        ("P19", "Marie Curie", "Q7186", "Warschau"),
        ("P19", "Albert Einstein", "Q937", "Zürich"),
        ("P36", "Frankreich", "Q142", "Paris"),
        ("P36", "Polen", "Q36", "Warschau"),
        ("P20", "Marie Curie", "Q7186", "Passy"),  # "[X] starb in." has no [Y]: not probed, counted
    ],
    "ja": [
        ("P19", "マリ・キュリー", "Q7186", "ワルシャワ"),
        ("P19", "居里夫人", None, "東京"),
        ("P19", "大阪", None, "パリ"),
    ],
}


def _write_release(root: Path) -> Path:
    """The release's layout: mlama1.1/<language>/<relation>.jsonl and templates.jsonl."""
    for language, facts in FACTS.items():
        folder = root / "mlama1.1" / language
        folder.mkdir(parents=True)
        (folder / "templates.jsonl").write_text(
            "".join(json.dumps({"relation": r, "template": t}) + "\n" for r, t in TEMPLATES[language].items())
        )
        by_relation = defaultdict(list)
        for relation, subject, qid, obj in facts:
            record = {"sub_label": subject, "obj_label": obj, "lineid": len(by_relation[relation])}
            if qid:  # Google-RE facts carry no URI
                record.update(sub_uri=qid, obj_uri="Q0")
            by_relation[relation].append(json.dumps(record, ensure_ascii=False))
        for relation, lines in by_relation.items():
            (folder / f"{relation}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write_release(tmp_path_factory.mktemp("mlama"))


def _files(release: Path, language: str) -> MlamaFiles:
    folder = release / "mlama1.1" / language
    return MlamaFiles(language, fact_files(release, language), str(folder / "templates.jsonl"))


def test_the_release_layout_is_read_per_language(release):
    assert language_folder(release, "de") == language_folder(release / "mlama1.1", "de") == release / "mlama1.1" / "de"
    assert [Path(p).name for p in fact_files(release, "de")] == ["P19.jsonl", "P20.jsonl", "P36.jsonl"]
    assert [Path(p).name for p in fact_files(release, "de", ["P36"])] == ["P36.jsonl"]
    with pytest.raises(FileNotFoundError, match=r"has no facts for relations \['P31'\]"):
        fact_files(release, "de", ["P36", "P31"])
    with pytest.raises(FileNotFoundError, match="no folder for language 'xx'"):
        fact_files(release, "xx")
    templates, invalid = load_templates(release / "mlama1.1" / "de" / "templates.jsonl")
    assert templates == {"P19": "[X] wurde in [Y] geboren.", "P36": "Die Hauptstadt von [X] ist [Y]."}
    assert list(invalid) == ["P20"]
    # the subjects the table needs: label and QID, as LAMA's reader reads them
    assert list(lama_entities(fact_files(release, "ja")[0])) == [
        ("マリ・キュリー", "Q7186"),
        ("居里夫人", None),
        ("大阪", None),
    ]


def test_a_language_is_a_task_named_by_its_key(release):
    tasks = {
        "mlama_de": {"domain": "wiki_de", "release": str(release)},
        "mlama_japanese": {"domain": "wiki_ja", "release": str(release), "language": "ja", "relations": ["P19"]},
    }
    assert kind_of("mlama_de", tasks["mlama_de"]).name == "mlama"
    assert data_files("mlama_de", tasks["mlama_de"], tasks) == {"facts": fact_files(release, "de")}
    files = run_files("mlama_japanese", tasks["mlama_japanese"], tasks)
    assert files == {
        "facts": fact_files(release, "ja"),
        "templates": str(release / "mlama1.1" / "ja" / "templates.jsonl"),
    }
    # each language's subjects go to its own corpus's table
    with_defaults = {name: {**task, **data_files(name, task, tasks)} for name, task in tasks.items()}
    assert set(task_entities(with_defaults, "wiki_ja")) == {
        ("大阪", None),
        ("居里夫人", None),
        ("マリ・キュリー", "Q7186"),
    }
    assert ("Frankreich", "Q142") in task_entities(with_defaults, "wiki_de")


def _reference(model_dir: Path, release: Path, language: str, table=None, entity_of=None) -> dict[int, str]:
    """The prediction for each fact, the plainest way: every candidate (the relation's objects)
    scored on its own prompt with one mask per token, mean log-probability of its tokens."""
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForMaskedLM.from_pretrained(model_dir).eval()
    templates = TEMPLATES[language]
    facts = [f for f in FACTS[language] if f[0] in templates and templates[f[0]].count("[Y]") == 1]
    predictions = {}
    for i, (relation, subject, qid, _) in enumerate(facts):
        scores = {}
        for obj in sorted({f[3] for f in facts if f[0] == relation}):
            ids = object_ids(tokenizer, templates[relation], obj)
            text = templates[relation].replace("[X]", subject).replace("[Y]", tokenizer.mask_token * len(ids))
            start = text.index(subject)
            entity = entity_of(subject, qid) if table is not None else None
            batch = inject(model, tokenizer, [text], [[(start, start + len(subject), entity)] if entity else []], table)
            with torch.no_grad():
                logits = forward_mlm(model, batch.inputs_embeds, batch.attention_mask, batch.input_ids)[0]
            positions = (batch.input_ids[0] == tokenizer.mask_token_id).nonzero()[:, 0]
            log_probs = logits[positions].log_softmax(-1)
            scores[obj] = float(sum(log_probs[j, t] for j, t in enumerate(ids)) / len(ids))
        predictions[i] = max(scores, key=lambda o: scores[o])
    return predictions


def _check(result: dict, predictions_path: Path, reference: dict[int, str], language: str) -> None:
    """Predictions as the reference's; P@1 per relation, macro and micro from them by hand."""
    records = [json.loads(line) for line in predictions_path.open(encoding="utf-8")]
    assert [r["prediction"] for r in records] == [reference[i] for i in range(len(records))]
    correct = defaultdict(list)
    for r in records:
        correct[r["relation"]].append(r["prediction"] == r["object"])
    per_relation = {rel: sum(c) / len(c) for rel, c in correct.items()}
    for rel, p in per_relation.items():
        assert result["per_relation"][rel]["p_at_1"] == pytest.approx(p, abs=1e-12)
    assert result["macro_p_at_1"] == pytest.approx(sum(per_relation.values()) / len(per_relation), abs=1e-12)
    flat = [c for cs in correct.values() for c in cs]
    assert result["micro_p_at_1"] == pytest.approx(sum(flat) / len(flat), abs=1e-12)
    assert result["language"] == language and result["counts"]["facts_evaluated"] == len(records)


@pytest.mark.parametrize(
    ("family", "language"), [("roberta", "en"), ("bert", "en"), ("xlm-roberta", "de"), ("xlm-roberta", "ja")]
)
def test_baseline_ranks_the_relations_objects_as_the_reference(
    family, language, release, tiny_model_dirs, multilingual_model_dirs, tmp_path
):
    model_dir = {**tiny_model_dirs, **multilingual_model_dirs}[family]
    out, preds = tmp_path / "r.json", tmp_path / "p.jsonl"
    result = run_mlama(
        str(model_dir), _files(release, language), str(out), str(preds), settings=MlamaSettings(batch_size=3)
    )
    _check(result, preds, _reference(model_dir, release, language), language)
    assert json.loads(out.read_text(encoding="utf-8")) == result
    assert result["variant"] == "baseline" and result["counts"]["injected"] == 0
    if language == "de":  # P20's template lost its [Y] in translation: not probed, counted
        assert result["counts"]["dropped_no_template"] == 1 and "P20" in result["relations_without_template"]
    if family == "roberta":  # objects of several tokens are ranked, not dropped
        assert result["counts"]["multi_token_objects"] > 0


def test_object_tokens_are_those_the_prompt_holds(tiny_model_dirs, multilingual_model_dirs):
    roberta = AutoTokenizer.from_pretrained(tiny_model_dirs["roberta"])
    assert (
        object_ids(roberta, "[X] was born in [Y] .", "Warsaw")
        == roberta(" Warsaw", add_special_tokens=False)["input_ids"]
    )
    assert object_ids(roberta, "[Y] is [X] .", "Warsaw") == roberta("Warsaw", add_special_tokens=False)["input_ids"]
    xlmr = AutoTokenizer.from_pretrained(multilingual_model_dirs["xlm-roberta"])
    ids = object_ids(xlmr, "[X]は[Y]で生まれた。", "ワルシャワ")
    joined = xlmr("Xはワルシャワ", add_special_tokens=False)["input_ids"]
    assert joined[-len(ids) :] == ids and xlmr.convert_ids_to_tokens(ids)[0] != "▁"  # no word start in the middle


def test_pelt_injects_the_languages_table_and_buckets(release, multilingual_model_dirs, tmp_path):
    model_dir = multilingual_model_dirs["xlm-roberta"]
    table_path = tmp_path / "table.parquet"
    frequencies = {"Marie_Curie": 5, "Polen": 60}
    write_table(
        table_path,
        list(frequencies),
        np.random.default_rng(0).normal(size=(len(frequencies), 32)),
        [3] * len(frequencies),
        list(frequencies.values()),
        {
            "model": str(model_dir),
            "revision": "local",
            "hidden_size": 32,
            "representation": "test",
            "max_seq_len": 64,
            "norm": 7.0,
        },
    )
    rows = [("Marie Curie", "Q7186", "Marie_Curie"), ("Polen", "Q36", "Polen"), ("Frankreich", "Q142", None)]
    entities = tmp_path / "task_entities.parquet"
    pq.write_table(
        pa.table(
            {
                "name": [r[0] for r in rows],
                "qid": [r[1] for r in rows],
                "entity_id": [r[2] for r in rows],
                "how": ["qid"] * 3,
            }
        ),
        entities,
    )
    out, preds = tmp_path / "r.json", tmp_path / "p.jsonl"
    tables = TableInputs(table=str(table_path), task_entities=str(entities), norm=7.0)
    result = run_mlama(str(model_dir), _files(release, "de"), str(out), str(preds), tables=tables)
    entity_of = {(n, q): e for n, q, e in rows}
    _check(
        result,
        preds,
        _reference(model_dir, release, "de", EntityTable.open(table_path), lambda s, q: entity_of.get((s, q))),
        "de",
    )
    records = [json.loads(line) for line in preds.open(encoding="utf-8")]
    assert [r["injected"] for r in records] == [r["subject"] in ("Marie Curie", "Polen") for r in records]
    assert result["variant"] == "pelt" and result["norm"] == 7.0
    assert result["counts"]["injected"] == 2 and result["counts"]["subject_unresolved"] == 2  # Einstein, Frankreich
    buckets = {name: b["facts"] for name, b in result["buckets"].items() if b["facts"]}
    assert buckets == {"[0,10)": 1, "[50,100)": 1, "unresolved": 2}


def test_the_summary_sets_the_languages_side_by_side(tmp_path):
    """One row per language, table and model: German probed with the German table and with one
    merged over German and French (issue 54), each table's languages beside the task's."""
    paths = []
    runs = [
        ("de", "wiki_de", ["de"], "baseline", 0.25),
        ("de", "wiki_de", ["de"], "pelt", 0.5),
        ("fr", "wiki_fr", ["fr"], "baseline", 0.1),
        ("de", "wiki_all", ["de", "fr"], "baseline", 0.25),
        ("de", "wiki_all", ["de", "fr"], "pelt", 0.75),
    ]
    for language, table, table_languages, variant, p in runs:
        result = {
            "task": "mlama",
            "language": language,
            "table_corpus": table,
            "table_languages": table_languages,
            "model": "bert-base-multilingual-cased",
            "variant": variant,
            "norm": None if variant == "baseline" else 10.0,
            "relations": 2,
            "macro_p_at_1": p,
            "micro_p_at_1": p,
            "counts": {"facts_evaluated": 8, "injected": 3 if variant == "pelt" else 0},
        }
        paths.append(tmp_path / f"{language}-{table}-{variant}.json")
        paths[-1].write_text(json.dumps(result))
    csv_path, md, html = tmp_path / "s.csv", tmp_path / "s.md", tmp_path / "s.html"
    write_mlama_summary(paths[::-1], csv_path, md, html)
    rows = list(csv.DictReader(csv_path.open()))
    assert [(r["language"], r["table"], r["table_languages"], r["variant"], r["macro_p_at_1"]) for r in rows] == [
        ("de", "wiki_all", "de,fr", "baseline", "0.25"),
        ("de", "wiki_all", "de,fr", "pelt", "0.75"),
        ("de", "wiki_de", "de", "baseline", "0.25"),
        ("de", "wiki_de", "de", "pelt", "0.5"),
        ("fr", "wiki_fr", "fr", "baseline", "0.1"),
    ]
    lines = md.read_text().splitlines()
    assert "| Language | Table | Table languages | Model | Facts | baseline | pelt | pelt - baseline |" in lines
    model = "`bert-base-multilingual-cased`"
    assert f"| de | `wiki_de` | de | {model} | 8 | 25.0 | 50.0 | 25.0 |" in lines  # gain 50.0 - 25.0
    assert f"| de | `wiki_all` | de,fr | {model} | 8 | 25.0 | 75.0 | 50.0 |" in lines
    assert f"| fr | `wiki_fr` | fr | {model} | 8 | 10.0 | – | – |" in lines
    assert "mLAMA" in html.read_text()
    plot_mlama(csv_path, tmp_path / "mlama.svg")  # the report's figure, from the summary
    svg = (tmp_path / "mlama.svg").read_text()
    assert all(label in svg for label in ("25.0", "50.0", "75.0", "10.0", "n=8", "mLAMA: P@1 per language"))
    assert all(label in svg for label in ("wiki_all (de,fr)", "wiki_de (de)", "wiki_fr (fr)"))


def test_a_result_names_its_tables_corpus_and_languages():
    """What the summary shows beside the task's language: a corpus's table's language, a merged one's."""
    from types import SimpleNamespace

    from pelt.tasks.mlama.run import table_text

    merged = SimpleNamespace(metadata={"corpus": "wiki_all", "language": "multilingual", "languages": ["de", "fr"]})
    assert table_text(merged) == {"table_corpus": "wiki_all", "table_languages": ["de", "fr"]}
    german = SimpleNamespace(metadata={"corpus": "wiki_de", "language": "de"})
    assert table_text(german) == {"table_corpus": "wiki_de", "table_languages": ["de"]}
    assert table_text(None) == {"table_corpus": None, "table_languages": []}


def test_a_jobs_table_inputs_are_read_from_its_inputs_and_params():
    """pelt.eval.settings.job_tables, which the LAMA, mLAMA, FewRel and Wiki80 job scripts share."""
    from types import SimpleNamespace

    from snakemake.iocontainers import Namedlist

    from pelt.eval.settings import job_tables

    inputs = Namedlist(fromdict={"table": "t.parquet", "task_entities": "e.parquet"})
    wildcards = Namedlist(fromdict={"variant": "pelt"})
    job = SimpleNamespace(input=inputs, wildcards=wildcards, params=SimpleNamespace(norm=4.0))
    assert job_tables(job) == TableInputs("pelt", "t.parquet", "e.parquet", 4.0)
    assert job_tables(job, "baseline").variant == "baseline"
