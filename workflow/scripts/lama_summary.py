"""Snakemake job: the LAMA results of every model and variant in one CSV and Markdown table."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.report.lama_summary import write_lama_summary

write_lama_summary(list(snakemake.input), snakemake.output.csv, snakemake.output.md, snakemake.output.html)
