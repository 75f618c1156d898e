"""Snakemake job: unpack a downloaded release archive into its folder."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.download import extract_zip

extract_zip(snakemake.input[0], snakemake.output[0])
