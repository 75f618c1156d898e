"""Snakemake job: documents + pages -> aliases and sentence-level mentions (Parquet)."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.linking import link_wikipedia
from pelt.spark import get_spark

link_wikipedia(
    get_spark(threads=snakemake.threads, **snakemake.params.spark),
    snakemake.input.documents,
    snakemake.input.pages,
    snakemake.output.aliases,
    snakemake.output.mentions,
    heuristic=snakemake.params.heuristic,
    max_iterations=snakemake.params.max_iterations,
    ner_model=snakemake.params.ner_model,
)
