"""Snakemake job: at most N mentions per wanted entity, by a seeded hash rank, and the sampling counts."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.linking.task_entities import resolved_entity_ids
from pelt.logs import write_counts
from pelt.sampling.sample import SamplingSettings, SentencePool, sample_mentions
from pelt.spark import get_spark

write_counts(
    snakemake.output.counts,
    sample_mentions(
        get_spark(threads=snakemake.threads, **snakemake.params.spark),
        snakemake.input.mentions,
        snakemake.output.samples,
        snakemake.output.frequencies,
        SamplingSettings(
            max_per_entity=snakemake.params.max_per_entity,
            seed=snakemake.params.seed,
            min_frequency=snakemake.params.min_frequency,
            pool=(
                SentencePool(pool["tokenizer"], pool["min"], pool["max"]) if (pool := snakemake.params.pool) else None
            ),
        ),
        wanted=(resolved_entity_ids(snakemake.input.task_entities) if snakemake.params.on_demand else None),
    ),
    stage=snakemake.rule,
    domain=snakemake.wildcards.domain,
)
