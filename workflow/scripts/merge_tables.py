"""Snakemake job: merge the shard tables of a model into its entity table (sums add), with each
entity's QID and aliases, and the corpus's name, kind (whose licence a Hub card names) and language."""

from pelt.logs import corpus_language, start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.table import merge_tables

merge_tables(
    list(snakemake.input.shards),
    snakemake.output[0],
    ids=snakemake.input.ids,
    corpus={
        "corpus": snakemake.wildcards.domain,
        "corpus_kind": snakemake.params.corpus_kind,
        "language": corpus_language(snakemake.input.corpus_counts),
    },
    sum_overlap=True,  # shards split one sample's sentences: an entity's sentences are in several
)
