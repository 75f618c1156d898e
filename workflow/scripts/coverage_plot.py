"""Snakemake job: the report's figure of how the task entities' names were linked and how many got a vector."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.report.figures import plot_coverage

plot_coverage(snakemake.input[0], snakemake.output[0])
