"""Snakemake job: the report's figure of the time each stage took, from the job logs."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.report.figures import plot_stage_times

plot_stage_times(snakemake.params.logs, snakemake.output[0], snakemake.params.metadata)
