"""Snakemake job: fetch one file (resumable, checksummed); the dump's checksum list is the input when there is one."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.download import download

download(
    snakemake.params.url,
    snakemake.output[0],
    checksum=snakemake.params.checksum,
    algorithm=snakemake.params.algorithm,
    sums_file=snakemake.input.get("sums"),
)
