"""Snakemake job: a control of an entity table (its vectors permuted among entities, swapped within
kinds, or random)."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.eval.controls import write_control_table

write_control_table(
    snakemake.input.table,
    snakemake.output[0],
    snakemake.wildcards.control,
    kinds_path=snakemake.input.get("kinds"),
)
