"""Snakemake job: one S2ORC metadata / full-text JSON file -> documents (Parquet), and its counts."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.corpus.s2orc import build_s2orc_corpus
from pelt.corpus.wikipedia.site import DEFAULT_LANGUAGE
from pelt.logs import write_counts
from pelt.spark import get_spark

write_counts(
    snakemake.output.counts,
    build_s2orc_corpus(
        get_spark(threads=snakemake.threads, **snakemake.params.spark),
        [snakemake.input[0]],
        snakemake.output.documents,
    ),
    stage=snakemake.rule,
    domain=snakemake.wildcards.domain,
    source=snakemake.input[0],
    details={"site": {"language": snakemake.params.language or DEFAULT_LANGUAGE}},
)
