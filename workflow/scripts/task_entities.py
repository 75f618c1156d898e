"""Snakemake job: the entities the configured tasks need, resolved to the domain's entity ids, and
how each was found (counts)."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.linking.entities import resolve_task_entities
from pelt.linking.task_entities import read_not_found
from pelt.logs import write_counts
from pelt.spark import get_spark
from pelt.tasks import task_entities

write_counts(
    snakemake.output.counts,
    resolve_task_entities(
        get_spark(threads=snakemake.threads, **snakemake.params.spark),
        task_entities(snakemake.params.tasks, snakemake.wildcards.domain),
        snakemake.input.aliases,
        list(snakemake.input.pages),
        snakemake.output.entities,
    ),
    stage=snakemake.rule,
    domain=snakemake.wildcards.domain,
    details={"not_found": read_not_found(snakemake.output.entities)},
)
