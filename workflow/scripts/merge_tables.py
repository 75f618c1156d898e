"""Snakemake job: merge the shard tables of a model into its entity table (sums add), with each
entity's QID and aliases."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.table import merge_tables

merge_tables(list(snakemake.input.shards), snakemake.output[0], ids=snakemake.input.ids)
