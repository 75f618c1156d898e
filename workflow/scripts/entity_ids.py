"""Snakemake job: each linked entity's QID, redirect titles and link texts, for the tables' id columns."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.linking.entities import write_entity_ids
from pelt.spark import get_spark

write_entity_ids(
    get_spark(threads=snakemake.threads, **snakemake.params.spark),
    snakemake.input.aliases,
    list(snakemake.input.pages),
    snakemake.output[0],
)
