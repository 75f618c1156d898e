"""Snakemake job: at most N mentions per wanted entity, by a seeded hash rank."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.entities import resolved_entity_ids
from pelt.sampling import sample_mentions
from pelt.spark import get_spark

sample_mentions(
    get_spark(threads=snakemake.threads, **snakemake.params.spark),
    snakemake.input.mentions,
    snakemake.output.samples,
    snakemake.output.frequencies,
    wanted=(
        resolved_entity_ids(snakemake.input.task_entities)
        if snakemake.params.on_demand
        else None
    ),
    max_per_entity=snakemake.params.max_per_entity,
    seed=snakemake.params.seed,
)
