"""Snakemake job: LAMA P@1 of a model, without (baseline) or with (pelt) its entity table, or a control of it."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.eval.lama import run_lama
from pelt.eval.variants import resolve_norm

task = snakemake.params.task
run_lama(
    snakemake.params.model,
    list(snakemake.input.facts),
    snakemake.input.relations,
    snakemake.input.common_vocab,
    snakemake.output.result,
    snakemake.output.predictions,
    table_path=snakemake.input.table,
    task_entities_path=snakemake.input.task_entities,
    norm=resolve_norm(snakemake.params.norm, snakemake.input.get("norm_sweep")),
    variant=snakemake.wildcards.variant,
    uhn_path=snakemake.input.uhn,
    batch_size=task["batch_size"],
    common_vocab_lowercased=snakemake.input.get("common_vocab_lowercased"),
    max_length=task["max_length"],
)
