"""Snakemake job: the task entities of a corpus without pages, each its own id (QID or name)."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.entities import name_task_entities
from pelt.tasks import task_entities

name_task_entities(
    task_entities(snakemake.params.tasks, snakemake.wildcards.domain), snakemake.output[0]
)
