"""Snakemake job: documents + pages -> aliases and sentence-level mentions (Parquet)."""

from pelt.logs import redirect_to_log

redirect_to_log(snakemake.log[0])

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
)
