"""Snakemake job: merge the shard tables of a model into its entity table (sums add)."""

from pelt.logs import redirect_to_log

redirect_to_log(snakemake.log[0])

from pelt.table import merge_tables

merge_tables(list(snakemake.input), snakemake.output[0])
