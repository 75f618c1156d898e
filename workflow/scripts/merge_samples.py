"""Snakemake job: a merged domain's sample, per QID over its corpora's samples ranked by their own
keys, its frequencies, entity ids and counts (each corpus's language and coverage)."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.linking.task_entities import resolved_entity_ids
from pelt.logs import write_counts
from pelt.sampling.merge import merge_samples, merged_corpora
from pelt.sampling.sample import SamplingSettings
from pelt.spark import get_spark

counts, details = merge_samples(
    get_spark(threads=snakemake.threads, **snakemake.params.spark),
    merged_corpora(
        snakemake.params.of,
        list(snakemake.input.samples),
        list(snakemake.input.frequencies),
        list(snakemake.input.ids),
        list(snakemake.input.corpus_counts),
    ),
    snakemake.output.samples,
    snakemake.output.frequencies,
    snakemake.output.ids,
    SamplingSettings.from_params(snakemake.params),
    wanted=(resolved_entity_ids(snakemake.input.task_entities) if snakemake.params.on_demand else None),
)
write_counts(snakemake.output.counts, counts, stage=snakemake.rule, domain=snakemake.wildcards.domain, details=details)
