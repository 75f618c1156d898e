"""Snakemake job: the report's figure of LAMA P@1 by subject frequency, with and without the table."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.report.figures import plot_lama_buckets

plot_lama_buckets(list(snakemake.input), snakemake.output[0])
