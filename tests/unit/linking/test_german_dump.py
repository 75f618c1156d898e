"""A German dump, written here in MediaWiki's export XML with a German ``<siteinfo>``, run through the
library's stages to an entity table (issue 30 item 5): corpus (the dump's site: ``Datei:``,
``Kategorie:``, ``#WEITERLEITUNG``, ``{{Begriffsklärung}}``, umlaut link trails), linking in German,
sampling, encoding with a tiny multilingual model, and the merged table, whose rows are their
definition and whose metadata says ``language: de``."""

from __future__ import annotations

import bz2
from collections.abc import Iterator
from pathlib import Path
from xml.sax.saxutils import escape

import numpy as np
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from pelt.corpus.wikipedia.build import build_wikipedia_corpus
from pelt.corpus.wikipedia.dump import dump_site
from pelt.encoding.encode import EncodingSettings, build_table, encode_samples
from pelt.encoding.models import load_masked_lm
from pelt.linking.link import LinkSettings, link_wikipedia
from pelt.logs import corpus_language, write_counts
from pelt.sampling.sample import SamplingSettings, sample_mentions
from pelt.table import EntityTable, merge_tables

SITEINFO = """<siteinfo><sitename>Wikipedia</sitename><dbname>dewiki</dbname><case>first-letter</case>
<namespaces><namespace key="0" case="first-letter" /><namespace key="6" case="first-letter">Datei</namespace>
<namespace key="10" case="first-letter">Vorlage</namespace>
<namespace key="14" case="first-letter">Kategorie</namespace></namespaces></siteinfo>"""
PAGES = {
    "Berlin": "'''Berlin''' ist die Hauptstadt von [[Deutschland]]. Die [[Spree]] fließt durch Berlin.\n"
    "[[Datei:Berlin.jpg|mini|Das [[Brandenburger Tor]] in Berlin]]\n"
    "Am 10. Dezember 1815 wurde in Berlin ein Theater eröffnet, z. B. am [[Gendarmenmarkt]]s Rand.\n"
    "[[Kategorie:Hauptstadt in Europa]]",
    "Deutschland": "'''Deutschland''' ist ein Staat in Europa. Seine Hauptstadt ist [[Berlin]], die größte "
    "Stadt an der Spree. Durch [[Hamburg]] fließt die [[Elbe]].\n[[Kategorie:Staat in Europa]]",
    "Hamburg": "'''Hamburg''' liegt an der [[Elbe]] im Norden von [[Deutschland]]. Hamburg und Berlin "
    "sind Stadtstaaten.",
    "Spree": "Die '''Spree''' ist ein Fluss in [[Deutschland]]. Sie fließt durch [[Berlin]].",
    "Elbe": "Die '''Elbe''' ist ein Fluss. Sie fließt durch [[Hansestadt Hamburg|Hamburg]] in die Nordsee.",
    "Gendarmenmarkt": "Der '''Gendarmenmarkt''' ist ein Platz in [[Berlin]].",
    "Hansestadt Hamburg": "#WEITERLEITUNG [[Hamburg]]",
    "Spree (Begriffsklärung)": "'''Spree''' steht für:\n* [[Spree]], ein Fluss\n{{Begriffsklärung}}",
}
ENTITIES = {"Berlin", "Deutschland", "Hamburg", "Spree", "Elbe", "Gendarmenmarkt"}
# Spark settings for eight pages, where each Spark job costs more than the pages: one shuffle
# partition; no adaptive execution, whose extra jobs per shuffle made the linking 64 jobs (18 s
# with Spark warm) where 35 do (12 s); no whole-stage code generation, which compiles each new
# query plan (-5 s of a run alone).
SMALL_INPUT = {
    "spark.sql.shuffle.partitions": "1",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.codegen.wholeStage": "false",
}


def write_dump(path: Path) -> Path:
    """The pages as a ``pages-articles`` dump in MediaWiki's export schema 0.11, German header."""
    pages = "".join(
        f"<page><title>{escape(title)}</title><ns>0</ns><id>{i}</id>"
        + (f'<redirect title="{escape(text[17:-2])}" />' if text.startswith("#WEITERLEITUNG") else "")
        + f'<revision><id>{100 + i}</id><text xml:space="preserve">{escape(text)}</text></revision></page>\n'
        for i, (title, text) in enumerate(PAGES.items(), start=1)
    )
    xml = (
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" xml:lang="de">\n'
        f"{SITEINFO}\n{pages}</mediawiki>\n"
    )
    path.write_bytes(bz2.compress(xml.encode()))
    return path


@pytest.fixture
def small_input_spark(spark: SparkSession) -> Iterator[SparkSession]:
    """The session's Spark with SMALL_INPUT's settings for this test, the session's after it."""
    saved = {key: spark.conf.get(key) for key in SMALL_INPUT}
    for key, value in SMALL_INPUT.items():
        spark.conf.set(key, value)
    yield spark
    for key, value in saved.items():
        spark.conf.set(key, value)


def test_a_german_dump_runs_to_a_german_table(small_input_spark, multilingual_model_dirs, tmp_path):
    spark = small_input_spark
    dump = write_dump(tmp_path / "dewiki-pages-articles.xml.bz2")
    site = dump_site(str(dump), None)
    assert (site.language, site.language_from) == ("de", "dump")
    out = {name: str(tmp_path / name) for name in ("documents", "pages", "aliases", "mentions", "samples", "freq")}
    corpus = build_wikipedia_corpus(spark, [str(dump)], out["documents"], out["pages"], sites={str(dump): site})
    write_counts(
        tmp_path / "counts.json", corpus, stage="corpus_wikipedia", domain="dewiki", details={"site": site.describe()}
    )
    assert (corpus["articles"], corpus["redirects"], corpus["disambiguation"]) == (7, 1, 1)
    berlin = spark.read.parquet(out["documents"]).filter("title = 'Berlin'").first()
    assert "Brandenburger Tor" not in berlin["text"] and "Kategorie" not in berlin["text"]
    anchors = {berlin["text"][a["start"] : a["end"]]: a["target"] for a in berlin["links"]}
    assert anchors == {"Deutschland": "Deutschland", "Spree": "Spree", "Gendarmenmarkts": "Gendarmenmarkt"}

    language = corpus_language([tmp_path / "counts.json"])
    link_wikipedia(
        spark, out["documents"], out["pages"], out["aliases"], out["mentions"], LinkSettings(language=language)
    )
    mentions = spark.read.parquet(out["mentions"]).collect()
    assert {row["entity_id"] for row in mentions} == ENTITIES
    # "Am 10. Dezember 1815 ... z. B. am ..." is one German sentence
    assert any(row["sentence"].startswith("Am 10. Dezember 1815") and "z. B." in row["sentence"] for row in mentions)
    sample_mentions(spark, out["mentions"], out["samples"], out["freq"], SamplingSettings(), wanted=None)

    model_dir = str(multilingual_model_dirs["xlm-roberta"])
    shard = tmp_path / "shard.parquet"
    encode_samples(
        out["samples"], model_dir, str(shard), settings=EncodingSettings(max_seq_len=64, tokens_per_batch=512)
    )
    table_path = tmp_path / "table.parquet"
    merge_tables([shard], table_path, corpus={"corpus": "dewiki", "language": language})
    table = EntityTable.open(table_path)
    assert table.metadata["language"] == "de"
    rows = pq.read_table(out["samples"]).to_pylist()
    model, tokenizer = load_masked_lm(model_dir)
    ids, sums, counts = build_table(
        model,
        tokenizer,
        [r["entity_id"] for r in rows],
        [r["sentence"] for r in rows],
        [(r["start"], r["end"]) for r in rows],
    )
    assert set(ids) == ENTITIES
    np.testing.assert_allclose(table.vector_sums(ids), sums, rtol=1e-4, atol=1e-5)
