"""Snakemake job: a merged domain's task entities, each resolved to the QID of the entity its first
corpus found, and how each was found (counts)."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.linking.task_entities import read_not_found
from pelt.logs import write_counts
from pelt.sampling.merge import merge_task_entities
from pelt.tasks import task_entities

write_counts(
    snakemake.output.counts,
    merge_task_entities(
        list(zip(snakemake.params.of, snakemake.input.corpus_entities, snakemake.input.ids, strict=True)),
        task_entities(snakemake.params.tasks, snakemake.wildcards.domain),
        snakemake.output.entities,
    ),
    stage=snakemake.rule,
    domain=snakemake.wildcards.domain,
    details={"not_found": read_not_found(snakemake.output.entities)},
)
