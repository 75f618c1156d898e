"""A merged domain's sample (pelt.sampling.merge): per QID, the mentions of smallest rank key over its
corpora's samples, which is exactly the sample of all their mentions at once; frequencies summed;
entities without a QID left out and counted; task entities resolved to QIDs; the table's corpus record."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pelt.linking.task_entities import TASK_ENTITIES_SCHEMA
from pelt.logs import table_corpus, write_counts
from pelt.sampling.merge import MergedCorpus, merge_samples, merge_task_entities, merged_corpora
from pelt.sampling.sample import KEY_SEPARATOR, SamplingSettings, sample_mentions

MENTIONS_DDL = "doc_id string, sent_idx int, sentence string, start int, end int, entity_id string, method string"
CAP = 3
SEED = 42
CORPORA = ("wiki_de", "wiki_fr")
# corpus -> entity id -> (QID or None, mentions). Berlin has one title in both languages, so that the
# two corpora hold mentions with equal rank keys (same doc_id, sent_idx, offsets and entity id): the
# corpus's place in `of` breaks their tie. Paris is hot in both; "Sans QID" has no Wikidata item.
ENTITIES = {
    "wiki_de": {"Berlin": ("Q64", 7), "Deutschland": ("Q183", 4), "Paris": ("Q90", 40), "Zwei": ("Q5", 2)},
    "wiki_fr": {
        "Berlin": ("Q64", 5),
        "Allemagne": ("Q183", 6),
        "Paris": ("Q90", 50),
        "Seine": ("Q1471", 2),
        "Sans QID": (None, 2),
        "Deux": ("Q5", 2),
    },
}


def mention_rows(corpus: str) -> list[tuple]:
    rows = []
    for entity, (_, n) in ENTITIES[corpus].items():
        for i in range(n):
            sentence = f"{entity} {i} {corpus[-2:]}." if entity != "Berlin" else f"{entity} ist {i}."
            rows.append((f"d{i % 5}", i, sentence, 0, len(entity), entity, "anchor"))
    return rows


def union_sample(cap: int, wanted: set[str] | None = None, min_frequency: int = 1) -> set[tuple]:
    """The documented rule, over all the corpora's mentions at once: each keyed as its corpus's
    sampling keys it (its own entity id), each QID's `cap` smallest (key, doc_id, sent_idx, start,
    end, place in `of`). With a minimum frequency, a corpus's entity below it brings no mention."""
    by_qid: dict[str, list] = {}
    for place, corpus in enumerate(CORPORA):
        for doc_id, sent_idx, sentence, start, end, entity, _ in mention_rows(corpus):
            qid, n = ENTITIES[corpus][entity]
            if qid is None or (wanted is not None and qid not in wanted) or n < min_frequency:
                continue
            parts = (SEED, doc_id, sent_idx, start, end, entity)
            key = hashlib.sha256(KEY_SEPARATOR.join(map(str, parts)).encode()).hexdigest()
            by_qid.setdefault(qid, []).append((key, doc_id, sent_idx, start, end, place, sentence, corpus))
    return {
        (qid, sentence, start, end, doc_id, sent_idx, corpus)
        for qid, ranked in by_qid.items()
        for _, doc_id, sent_idx, start, end, _, sentence, corpus in sorted(ranked)[:cap]
    }


@pytest.fixture(scope="module")
def corpora(spark, tmp_path_factory) -> list[MergedCorpus]:
    """Each corpus sampled as its own domain (cap 3), with its entity ids and a corpus counts file."""
    tmp = tmp_path_factory.mktemp("merge")
    out = []
    for corpus in CORPORA:
        folder = tmp / corpus
        spark.createDataFrame(mention_rows(corpus), MENTIONS_DDL).repartition(3).write.parquet(str(folder / "m"))
        settings = SamplingSettings(max_per_entity=CAP, seed=SEED)
        sample_mentions(spark, str(folder / "m"), str(folder / "s"), str(folder / "f"), settings, wanted=None)
        ids = [(e, qid, [f"{e} alias"]) for e, (qid, _) in ENTITIES[corpus].items()]
        pq.write_table(pa.Table.from_pylist([dict(zip(("entity_id", "qid", "aliases"), r)) for r in ids]), folder / "i")
        write_counts(
            folder / "counts.json", {}, stage="corpus", domain=corpus, details={"site": {"language": corpus[-2:]}}
        )
        out.append(folder)
    return merged_corpora(
        CORPORA, *([str(f / name) for f in out] for name in ("s", "f", "i")), [f / "counts.json" for f in out]
    )


def merged(spark, corpora, tmp_path, settings=SamplingSettings(max_per_entity=CAP, seed=SEED), wanted=None):
    out = {name: str(tmp_path / name) for name in ("s", "f", "i")}
    counts, details = merge_samples(spark, corpora, out["s"], out["f"], out["i"], settings, wanted=wanted)
    rows = pq.read_table(out["s"]).to_pylist()
    frequencies = {r["entity_id"]: r["frequency"] for r in pq.read_table(out["f"]).to_pylist()}
    ids = {r["entity_id"]: r for r in pq.read_table(out["i"]).to_pylist()}
    return counts, details, rows, frequencies, ids


def test_the_merged_sample_is_the_sample_of_all_the_corpora_at_once(spark, corpora, tmp_path):
    counts, details, rows, frequencies, ids = merged(spark, corpora, tmp_path)
    chosen = {
        tuple(r[c] for c in ("entity_id", "sentence", "start", "end", "doc_id", "sent_idx", "corpus")) for r in rows
    }
    assert len(rows) == len(chosen) and chosen == union_sample(CAP)
    assert Counter(r["corpus"] for r in rows if r["entity_id"] == "Q90") == {"wiki_de": 1, "wiki_fr": 2}  # both
    berlin = [r for r in rows if r["entity_id"] == "Q64"]  # equal keys in both corpora: de's first
    assert len({(r["doc_id"], r["sent_idx"]) for r in berlin}) < len(berlin) and berlin[0]["corpus"] == "wiki_de"
    assert frequencies == {"Q64": 12, "Q183": 10, "Q90": 90, "Q1471": 2, "Q5": 4}  # summed; no QID: left out
    assert ids["Q183"] == {
        "entity_id": "Q183",
        "qid": "Q183",
        "aliases": ["Deutschland", "Deutschland alias", "Allemagne", "Allemagne alias"],
    }
    assert counts["skipped_no_qid_entities_wiki_fr"] == 1 and counts["skipped_no_qid_samples_wiki_fr"] == 2
    assert counts["skipped_no_qid_entities_wiki_de"] == 0 and counts["samples"] == len(rows)
    assert details["languages"] == ["de", "fr"]
    for corpus in CORPORA:
        mine = [r for r in rows if r["corpus"] == corpus]
        assert details["coverage"][corpus]["sentences"] == counts[f"samples_from_{corpus}"] == len(mine)
        assert details["coverage"][corpus]["entities"] == len({r["entity_id"] for r in mine})


def test_wanted_qids_and_a_minimum_frequency(spark, corpora, tmp_path):
    counts, _, rows, frequencies, ids = merged(spark, corpora, tmp_path / "w", wanted=["Q64", "Q999"])
    assert {r["entity_id"] for r in rows} == {"Q64"} and frequencies == {"Q64": 12, "Q999": 0}
    assert set(ids) == {"Q64", "Q999"} and ids["Q999"]["aliases"] == []
    assert (counts["wanted"], counts["wanted_without_mentions"]) == (2, 1)
    # Each corpus sampled again at min_frequency 3: Zwei and Deux (Q5: 2 + 2) are below it in both
    # corpora, so none of their sentences reach the merge, though Q5's summed frequency passes.
    settings = SamplingSettings(max_per_entity=CAP, seed=SEED, min_frequency=3)
    again = []
    for corpus in corpora:
        folder = tmp_path / corpus.name
        mentions = str(Path(corpus.samples).parent / "m")
        sample_mentions(spark, mentions, str(folder / "s"), str(folder / "f"), settings, wanted=None)
        again.append(MergedCorpus(corpus.name, corpus.language, str(folder / "s"), str(folder / "f"), corpus.ids))
    counts, _, rows, frequencies, _ = merged(spark, again, tmp_path / "min", settings)
    chosen = {
        tuple(r[c] for c in ("entity_id", "sentence", "start", "end", "doc_id", "sent_idx", "corpus")) for r in rows
    }
    assert chosen == union_sample(CAP, min_frequency=3) and "Q5" not in {r["entity_id"] for r in rows}
    assert (
        frequencies["Q5"] == 4 and counts["below_min_frequency_wiki_de"] == counts["below_min_frequency_wiki_fr"] == 1
    )
    assert counts["entities_below_min_frequency"] == 1  # Q1471: 2 in all, below 3 in the sum too


def test_samples_without_their_sentence_index_are_refused(spark, corpora, tmp_path):
    old = tmp_path / "old"
    written_before = pq.read_table(corpora[0].samples).drop_columns(["sent_idx"]).replace_schema_metadata(None)
    pq.write_table(written_before, old)  # without Spark's schema record, which still names the column
    stale = MergedCorpus("wiki_de", "de", str(old), corpora[0].frequencies, corpora[0].ids)
    with pytest.raises(ValueError, match=r"no \['sent_idx'\] column.*rerun its sampling"):
        merged(spark, [stale, corpora[1]], tmp_path)


def _task_entities(path, rows):
    table = pa.Table.from_pylist([dict(zip(TASK_ENTITIES_SCHEMA.names, r)) for r in rows], schema=TASK_ENTITIES_SCHEMA)
    pq.write_table(table, path)
    return str(path)


def test_task_entities_take_the_qid_of_the_first_corpus_that_resolved_them(tmp_path):
    ids = {}
    for corpus, rows in {
        "de": [("Berlin", "Q64"), ("Ohne", None)],
        "fr": [("Allemagne", "Q183"), ("Lyon", "Q456")],
    }.items():
        ids[corpus] = str(tmp_path / f"ids-{corpus}")
        pq.write_table(pa.Table.from_pylist([{"entity_id": e, "qid": q, "aliases": []} for e, q in rows]), ids[corpus])
    wanted = [("Berlin", "Q64"), ("Deutschland", None), ("Ohne", None), ("Nirgends", None), ("Berlin", "Q64")]
    de = _task_entities(
        tmp_path / "de.parquet",
        [
            ("Berlin", "Q64", "Berlin", "qid", None),
            ("Deutschland", None, None, "missing", ["Deutschlandlied"]),
            ("Ohne", None, "Ohne", "title", None),
            ("Nirgends", None, None, "missing", ["Nirgendwo"]),
        ],
    )
    fr = _task_entities(
        tmp_path / "fr.parquet",
        [
            ("Berlin", "Q64", None, "missing", ["Berline"]),
            ("Deutschland", None, "Allemagne", "alias", None),
            ("Ohne", None, None, "missing", []),
            ("Nirgends", None, None, "missing", []),
        ],
    )
    out = tmp_path / "merged.parquet"
    counts = merge_task_entities([("wiki_de", de, ids["de"]), ("wiki_fr", fr, ids["fr"])], wanted, str(out))
    rows = {(r["name"], r["qid"]): r for r in pq.read_table(out).to_pylist()}
    assert rows["Berlin", "Q64"]["entity_id"] == "Q64" and rows["Berlin", "Q64"]["how"] == "qid"
    assert rows["Deutschland", None]["entity_id"] == "Q183" and rows["Deutschland", None]["how"] == "alias"
    assert rows["Ohne", None]["entity_id"] is None and rows["Ohne", None]["how"] == "no_qid"  # found, no QID
    assert rows["Nirgends", None]["how"] == "missing" and rows["Nirgends", None]["suggestions"] == ["Nirgendwo"]
    assert (counts["wanted"], counts["duplicates"], counts["how_no_qid"], counts["how_missing"]) == (5, 1, 1, 1)


def test_a_tables_corpus_record_names_its_language_or_its_corpora(corpora, tmp_path):
    """What entity_table writes into a table's metadata: a corpus's language, or a merged domain's
    corpora's languages and coverage (its merged sample's counts file records them)."""
    de_counts = [Path(corpora[0].samples).parent / "counts.json"]
    assert table_corpus("wiki_de", "wikipedia", de_counts) == {
        "corpus": "wiki_de",
        "corpus_kind": "wikipedia",
        "language": "de",
    }
    coverage = {"wiki_de": {"language": "de", "entities": 2}, "wiki_fr": {"language": "fr", "entities": 3}}
    details = {"languages": ["de", "fr"], "coverage": coverage}
    write_counts(tmp_path / "merged.json", {"samples": 5}, stage="merge_samples", domain="wiki_all", details=details)
    record = table_corpus("wiki_all", "wikipedia", [tmp_path / "merged.json"])
    assert record == {
        "corpus": "wiki_all",
        "corpus_kind": "wikipedia",
        "language": "multilingual",
        "languages": ["de", "fr"],
        "coverage": coverage,
    }
    assert json.loads(json.dumps(record)) == record  # table metadata is JSON
