"""Snakemake job: a control of an entity table (its vectors permuted among entities, or random)."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.eval.controls import write_control_table

write_control_table(snakemake.input[0], snakemake.output[0], snakemake.wildcards.control)
