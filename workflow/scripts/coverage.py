"""Snakemake job: how the task entities were linked to each corpus, and how many got a vector."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.report.stages import write_coverage

write_coverage(
    dict(zip(snakemake.params.domains, snakemake.input.task_entities)),
    dict(zip(map(tuple, snakemake.params.tables), snakemake.input.tables)),
    snakemake.output.csv,
    snakemake.output.html,
)
