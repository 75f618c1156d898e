"""Snakemake job: mentions of the task entities' names in a corpus without hyperlinks."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.entities import names_by_entity
from pelt.linking import link_by_string
from pelt.spark import get_spark

link_by_string(
    get_spark(threads=snakemake.threads, **snakemake.params.spark),
    snakemake.input.documents,
    names_by_entity(snakemake.input.task_entities),
    snakemake.output.mentions,
    ner_model=snakemake.params.ner_model,
)
