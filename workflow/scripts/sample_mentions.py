"""Snakemake job: at most N mentions per wanted entity, by a seeded hash rank, and the sampling counts."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.linking.task_entities import resolved_entity_ids
from pelt.logs import write_counts
from pelt.sampling.sample import SamplingSettings, sample_mentions
from pelt.spark import get_spark

write_counts(
    snakemake.output.counts,
    sample_mentions(
        get_spark(threads=snakemake.threads, **snakemake.params.spark),
        snakemake.input.mentions,
        snakemake.output.samples,
        snakemake.output.frequencies,
        SamplingSettings.from_params(snakemake.params),
        wanted=(resolved_entity_ids(snakemake.input.task_entities) if snakemake.params.on_demand else None),
    ),
    stage=snakemake.rule,
    domain=snakemake.wildcards.domain,
)
