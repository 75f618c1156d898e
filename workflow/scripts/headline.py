"""Snakemake job: the report's landing page, the headline numbers of every model without and with the table."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt import registry
from pelt.report.headline import write_headline

registry.import_kinds(snakemake.config.get("task_kinds", []))  # a kind from outside pelt, as the Snakefile
write_headline(snakemake.input.lead, snakemake.input.sweeps, snakemake.input.finetuning, snakemake.output[0])
