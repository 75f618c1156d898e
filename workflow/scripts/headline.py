"""Snakemake job: the report's landing page, the headline numbers of every model without and with the table,
then the run's tables and its entity lists' found and not found."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt import registry
from pelt.report.headline import write_headline
from pelt.report.outcome import outcome_lines

registry.import_kinds(snakemake.config.get("task_kinds", []))  # a kind from outside pelt, as the Snakefile
outcome = outcome_lines(snakemake.input.tables, snakemake.params.listed)
write_headline(snakemake.input.lead, snakemake.input.sweeps, snakemake.input.finetuning, snakemake.output[0], outcome)
