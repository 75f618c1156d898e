"""Snakemake job: a Wikipedia pages-articles dump -> documents and pages (Parquet)."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.corpus import build_wikipedia_corpus
from pelt.spark import get_spark

build_wikipedia_corpus(
    get_spark(threads=snakemake.threads, **snakemake.params.spark),
    list(snakemake.input.dumps),
    snakemake.output.documents,
    snakemake.output.pages,
    page_props=list(snakemake.input.page_props),
)
