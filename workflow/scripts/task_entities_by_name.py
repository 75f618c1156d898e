"""Snakemake job: the task entities of a corpus without pages, each its own id (QID or name), and their counts."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.linking.task_entities import name_task_entities
from pelt.logs import write_counts
from pelt.tasks import task_entities

write_counts(
    snakemake.output.counts,
    name_task_entities(task_entities(snakemake.params.tasks, snakemake.wildcards.domain), snakemake.output.entities),
    stage=snakemake.rule,
    domain=snakemake.wildcards.domain,
)
