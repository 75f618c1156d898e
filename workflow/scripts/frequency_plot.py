"""Snakemake job: the report's figure of how many mentions the entities have in each corpus."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.report.figures import plot_frequencies

plot_frequencies(dict(zip(snakemake.params.domains, snakemake.input)), snakemake.output[0])
