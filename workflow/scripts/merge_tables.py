"""Snakemake job: merge the shard tables of a model into its entity table (sums add), with each
entity's QID and aliases, and the corpus's name, kind (whose licence a Hub card names) and language;
a merged domain's table names each of its corpora's languages and what each gave."""

from pelt.logs import start_job, table_corpus

start_job(snakemake.log[0], snakemake.threads)

from pelt.table import merge_tables

merge_tables(
    list(snakemake.input.shards),
    snakemake.output[0],
    ids=snakemake.input.ids,
    corpus=table_corpus(
        snakemake.wildcards.domain,
        snakemake.params.corpus_kind,
        list(snakemake.input.corpus_counts),
    ),
    sum_overlap=True,  # shards split one sample's sentences: an entity's sentences are in several
)
