"""Snakemake job: S2ORC metadata / full-text JSON -> documents (Parquet)."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.s2orc import build_s2orc_corpus
from pelt.spark import get_spark

build_s2orc_corpus(
    get_spark(threads=snakemake.threads, **snakemake.params.spark),
    list(snakemake.input),
    snakemake.output.documents,
)
