"""Two Wikipedias written for the tests (tests/two_wikis.py), German and French, each an export
dump with its own ``<siteinfo>`` and a ``page_props`` SQL dump giving its pages' Wikidata QIDs, run
through the library's stages as the workflow's jobs call them (issue 54 items 3 and 4): corpus,
linking in the dump's language, entity ids, sampling, encoding with a tiny XLM-R, and tables. Each
language's table names its language and keeps the title as id with the QID beside it; the merged
domain's table is keyed by QID, names both languages and what each gave, and each row equals the
method's definition computed here from both languages' mentions: the sum of the model's vectors at
the masked mention over the union's sentences, chosen by the same rank keys."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from test_german_dump import small_input_spark  # noqa: F401 (a fixture)
from two_wikis import WIKIS, write_wiki

from pelt.corpus.wikipedia.build import build_wikipedia_corpus
from pelt.corpus.wikipedia.dump import dump_site
from pelt.encoding.encode import EncodingSettings, build_table, encode_samples
from pelt.encoding.models import load_masked_lm
from pelt.linking.entities import write_entity_ids
from pelt.linking.link import LinkSettings, link_wikipedia
from pelt.logs import corpus_language, table_corpus, write_counts
from pelt.sampling.merge import merge_samples, merged_corpora
from pelt.sampling.sample import KEY_SEPARATOR, SamplingSettings, sample_mentions
from pelt.table import EntityTable, merge_tables

CAP = 2  # sentences per entity: below the mentions of most entities in each language, so the cap chooses
SEED = 42


def run_language(spark, folder: Path, language: str) -> dict[str, str]:
    """Corpus, linking, entity ids and sampling of one language, as their workflow jobs call them."""
    dump, props = folder / f"{language}wiki-pages-articles.xml.bz2", folder / f"{language}wiki-page_props.sql"
    write_wiki(dump, props, language)
    out = {name: str(folder / name) for name in ("documents", "pages", "aliases", "mentions", "ids", "s", "f")}
    site = dump_site(str(dump), None)
    counts = build_wikipedia_corpus(
        spark, [str(dump)], out["documents"], out["pages"], page_props=[str(props)], sites={str(dump): site}
    )
    out["counts"] = str(folder / "counts.json")
    write_counts(
        out["counts"], counts, stage="corpus_wikipedia", domain=f"wiki_{language}", details={"site": site.describe()}
    )
    settings = LinkSettings(language=corpus_language([out["counts"]]))
    link_wikipedia(spark, out["documents"], out["pages"], out["aliases"], out["mentions"], settings)
    write_entity_ids(spark, out["aliases"], out["pages"], out["ids"])
    sampling = SamplingSettings(max_per_entity=CAP, seed=SEED)
    sample_mentions(spark, out["mentions"], out["s"], out["f"], sampling, wanted=None)
    return out


def table_of(samples: str, frequencies: str, ids: str, corpus: dict, model_dir: str, path: Path) -> EntityTable:
    """encode_shard and entity_table: one shard, merged with the domain's ids and corpus record."""
    shard = path.with_suffix(".shard.parquet")
    settings = EncodingSettings(max_seq_len=64, tokens_per_batch=512)
    encode_samples(samples, model_dir, str(shard), settings=settings, frequencies_path=frequencies)
    return merge_tables([shard], path, ids=ids, corpus=corpus, sum_overlap=True)


def union_definition(runs: dict[str, dict[str, str]]) -> dict[str, list[tuple[str, int, int]]]:
    """QID -> its sentences and mention spans by the documented rule, computed from both languages'
    mentions (not their samples): each mention keyed as its language's sampling keys it, each QID's
    CAP smallest (key, doc_id, sent_idx, start, end, language's place)."""
    ranked: dict[str, list] = {}
    for place, (language, out) in enumerate(runs.items()):
        for m in pq.read_table(out["mentions"]).to_pylist():
            qid = WIKIS[language][m["entity_id"]][0]
            if qid is None:
                continue
            parts = (SEED, m["doc_id"], m["sent_idx"], m["start"], m["end"], m["entity_id"])
            key = hashlib.sha256(KEY_SEPARATOR.join(map(str, parts)).encode()).hexdigest()
            order = (key, m["doc_id"], m["sent_idx"], m["start"], m["end"], place)
            ranked.setdefault(qid, []).append((order, (m["sentence"], m["start"], m["end"])))
    return {qid: [mention for _, mention in sorted(rows)[:CAP]] for qid, rows in ranked.items()}


def test_two_languages_give_their_tables_and_one_merged_by_qid(small_input_spark, multilingual_model_dirs, tmp_path):  # noqa: F811
    spark = small_input_spark
    runs = {language: run_language(spark, tmp_path / language, language) for language in ("de", "fr")}
    model_dir = str(multilingual_model_dirs["xlm-roberta"])

    # Item 3 and 4a: each language's own table names its language, its ids are titles, its QIDs beside them.
    for language, out in runs.items():
        corpus = table_corpus(f"wiki_{language}", "wikipedia", [out["counts"]])
        table = table_of(out["s"], out["f"], out["ids"], corpus, model_dir, tmp_path / f"{language}.parquet")
        assert (table.metadata["language"], table.metadata["corpus"]) == (language, f"wiki_{language}")
        assert table.find(["Q64", "Q90"], by=["qid"]) == ["Berlin", "Paris"]
        assert table.qids(["Berlin"]) == ["Q64"] and "Q64" not in table

    # Item 4b: the merged domain's sample, table and metadata.
    names = ["wiki_de", "wiki_fr"]
    corpora = merged_corpora(names, *([runs[n[-2:]][k] for n in names] for k in ("s", "f", "ids", "counts")))
    merged = {name: str(tmp_path / "all" / name) for name in ("s", "f", "ids")}
    counts, details = merge_samples(
        spark, corpora, merged["s"], merged["f"], merged["ids"], SamplingSettings(CAP, SEED), wanted=None
    )
    write_counts(tmp_path / "all" / "counts.json", counts, stage="merge_samples", domain="wiki_all", details=details)
    assert counts["skipped_no_qid_entities_wiki_fr"] == 1 and counts["skipped_no_qid_entities_wiki_de"] == 0  # Lutèce
    corpus = table_corpus("wiki_all", "wikipedia", [tmp_path / "all" / "counts.json"])
    table = table_of(merged["s"], merged["f"], merged["ids"], corpus, model_dir, tmp_path / "all.parquet")
    assert (table.metadata["language"], table.metadata["languages"]) == ("multilingual", ["de", "fr"])
    coverage = table.metadata["coverage"]
    rows = pq.read_table(merged["s"]).to_pylist()
    for name in names:
        mine = [r for r in rows if r["corpus"] == name]
        assert coverage[name]["language"] == name[-2:] and coverage[name]["sentences"] == len(mine) > 0
        assert coverage[name]["entities"] == len({r["entity_id"] for r in mine})
    assert coverage["wiki_fr"]["entities_without_qid"] == 1
    assert {r["corpus"] for r in rows if r["entity_id"] == "Q64"} == {"wiki_de", "wiki_fr"}  # both languages chose

    chosen = union_definition(runs)
    qids = sorted(chosen)
    assert list(table.ids()) == qids and table.find(["Berlin", "Allemagne"], by=["alias"]) == ["Q64", "Q183"]
    model, tokenizer = load_masked_lm(model_dir)
    flat = [(qid, *mention) for qid in qids for mention in chosen[qid]]
    ids, sums, n = build_table(model, tokenizer, [f[0] for f in flat], [f[1] for f in flat], [f[2:] for f in flat])
    assert list(ids) == qids
    np.testing.assert_allclose(table.vector_sums(qids), sums, rtol=1e-4, atol=1e-5)
    assert table.counts(qids)[0].tolist() == list(n)
    mentions = {lang: pq.read_table(out["mentions"]).column("entity_id").to_pylist() for lang, out in runs.items()}
    by_qid = [sum(WIKIS[lang][e][0] == qid for lang, es in mentions.items() for e in es) for qid in qids]
    assert table.counts(qids)[1].tolist() == by_qid  # frequencies: mentions in both languages, summed
