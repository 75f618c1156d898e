"""Snakemake job: the FewRel or the Wiki80 results of every model, variant, setting and seed, mean and std
over seeds beside the paper's numbers, in one CSV and Markdown table."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.report.finetuning_summary import write_fewrel_summary, write_wiki80_summary

write = {"fewrel": write_fewrel_summary, "wiki80": write_wiki80_summary}[snakemake.wildcards.summary]
write(list(snakemake.input), snakemake.output.csv, snakemake.output.md, snakemake.output.html)
