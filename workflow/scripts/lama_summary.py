"""Snakemake job: the LAMA results of every model and variant in one CSV and Markdown table."""

from pelt.logs import redirect_to_log

redirect_to_log(snakemake.log[0])

from pelt.eval.summary import write_lama_summary

write_lama_summary(list(snakemake.input), snakemake.output.csv, snakemake.output.md)
