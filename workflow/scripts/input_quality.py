"""Snakemake job: what every stage of every domain read and skipped, as the report's input-quality table."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.report.stages import write_input_quality

write_input_quality(list(snakemake.input), snakemake.output.csv, snakemake.output.html)
