"""Snakemake job: LAMA P@1 of a model, without (baseline) or with (pelt) its entity table, or a control of it."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.eval.settings import TableInputs, parse
from pelt.tasks.lama.run import LamaFiles, run_lama
from pelt.tasks.lama.settings import LamaSettings

run_lama(
    snakemake.params.model,
    LamaFiles(
        list(snakemake.input.facts),
        snakemake.input.relations,
        snakemake.input.common_vocab,
        snakemake.input.get("common_vocab_lowercased"),
        snakemake.input.uhn,
    ),
    snakemake.output.result,
    snakemake.output.predictions,
    tables=TableInputs(
        variant=snakemake.wildcards.variant,
        table=snakemake.input.table,
        task_entities=snakemake.input.task_entities,
        norm=snakemake.params.norm,
        norm_sweep=snakemake.input.get("norm_sweep"),
    ),
    settings=parse(LamaSettings, snakemake.params.options),
)
