"""Snakemake job: mLAMA P@1 of a model on one language, without (baseline) or with (pelt) the table of
that language's corpus, or a control of it."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.eval.settings import job_tables, parse
from pelt.tasks.mlama.run import MlamaFiles, run_mlama
from pelt.tasks.mlama.settings import MlamaSettings

run_mlama(
    snakemake.params.model,
    MlamaFiles(snakemake.params.language, list(snakemake.input.facts), snakemake.input.templates),
    snakemake.output.result,
    snakemake.output.predictions,
    tables=job_tables(snakemake),
    settings=parse(MlamaSettings, snakemake.params.options),
)
