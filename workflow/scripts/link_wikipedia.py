"""Snakemake job: the documents + pages of a domain's corpus files -> aliases and sentence-level
mentions (Parquet), and the linking counts."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.linking.link import LinkSettings, link_wikipedia
from pelt.logs import corpus_language, write_counts
from pelt.spark import get_spark

write_counts(
    snakemake.output.counts,
    link_wikipedia(
        get_spark(threads=snakemake.threads, **snakemake.params.spark),
        list(snakemake.input.documents),
        list(snakemake.input.pages),
        snakemake.output.aliases,
        snakemake.output.mentions,
        LinkSettings.from_config(snakemake.params.linking, corpus_language(snakemake.input.corpus_counts)),
    ),
    stage=snakemake.rule,
    domain=snakemake.wildcards.domain,
)
