"""Snakemake job: the norm sweeps of every model in one CSV and Markdown table."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.report.lama_summary import write_norm_sweep_summary

write_norm_sweep_summary(list(snakemake.input), snakemake.output.csv, snakemake.output.md, snakemake.output.html)
