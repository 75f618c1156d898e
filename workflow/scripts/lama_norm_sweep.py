"""Snakemake job: LAMA P@1 of a model's table for each norm L, and the chosen L."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.eval.lama import sweep_norm

task = snakemake.params.task
sweep_norm(
    snakemake.params.model,
    list(snakemake.input.facts),
    snakemake.input.relations,
    snakemake.input.common_vocab,
    snakemake.output[0],
    table_path=snakemake.input.table,
    task_entities_path=snakemake.input.task_entities,
    norms=task["norms"],
    batch_size=task["batch_size"],
    common_vocab_lowercased=snakemake.input.get("common_vocab_lowercased"),
    max_length=task["max_length"],
)
