"""Snakemake job: LAMA P@1 of a model, without (baseline) or with (pelt) its entity table, or a control of it."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.eval.settings import job_tables, parse
from pelt.tasks.lama.run import LamaFiles, run_lama
from pelt.tasks.lama.settings import LamaSettings

run_lama(
    snakemake.params.model,
    LamaFiles.of_job(snakemake.input),
    snakemake.output.result,
    snakemake.output.predictions,
    tables=job_tables(snakemake),
    settings=parse(LamaSettings, snakemake.params.options),
)
