"""Snakemake job: LAMA P@1 of a model's table for each norm L, and the chosen L."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.eval.settings import TableInputs, parse
from pelt.tasks.lama.run import LamaFiles, sweep_norm
from pelt.tasks.lama.settings import LamaSettings

sweep_norm(
    snakemake.params.model,
    LamaFiles.of_job(snakemake.input),
    snakemake.output[0],
    tables=TableInputs("pelt", snakemake.input.table, snakemake.input.task_entities),
    norms=snakemake.params.norms,
    settings=parse(LamaSettings, snakemake.params.options),
)
