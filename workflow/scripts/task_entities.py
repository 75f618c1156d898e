"""Snakemake job: the entities the configured tasks need, resolved to the domain's entity ids."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.entities import resolve_task_entities
from pelt.spark import get_spark
from pelt.tasks import task_entities

resolve_task_entities(
    get_spark(threads=snakemake.threads, **snakemake.params.spark),
    task_entities(snakemake.params.tasks, snakemake.wildcards.domain),
    snakemake.input.aliases,
    snakemake.input.pages,
    snakemake.output[0],
)
