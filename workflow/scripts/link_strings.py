"""Snakemake job: mentions of the task entities' names in a corpus without hyperlinks (all its
files), and the linking counts."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.linking.link import link_by_string
from pelt.linking.task_entities import names_by_entity
from pelt.logs import corpus_language, write_counts
from pelt.spark import get_spark

write_counts(
    snakemake.output.counts,
    link_by_string(
        get_spark(threads=snakemake.threads, **snakemake.params.spark),
        list(snakemake.input.documents),
        names_by_entity(snakemake.input.task_entities),
        snakemake.output.mentions,
        ner_model=snakemake.params.ner_model,
        language=corpus_language(snakemake.input.corpus_counts),
    ),
    stage=snakemake.rule,
    domain=snakemake.wildcards.domain,
)
