"""Snakemake job: the report's figure of mLAMA P@1 per language, without and with the table."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.report.figures import plot_mlama

plot_mlama(snakemake.input[0], snakemake.output[0])
