"""Snakemake job: the mLAMA results of every language, model and variant in one CSV and Markdown table."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.report.mlama_summary import write_mlama_summary

write_mlama_summary(list(snakemake.input), snakemake.output.csv, snakemake.output.md, snakemake.output.html)
