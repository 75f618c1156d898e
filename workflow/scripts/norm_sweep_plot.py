"""Snakemake job: the report's figure of LAMA P@1 against the norm L, with the chosen L."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.report.figures import plot_norm_sweep

plot_norm_sweep(list(snakemake.input), snakemake.output[0])
