"""Snakemake job: FewRel accuracy of one N-K setting and seed, without (baseline) or with (pelt) the table.

Seed, variant, N, K and the hyper-parameters come in params.options; L is resolved here, since the
LAMA sweep that may choose it only exists once the job runs.
"""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.eval.fewrel import run_fewrel
from pelt.eval.variants import resolve_norm

run_fewrel(
    snakemake.params.model,
    list(snakemake.input.train),
    list(snakemake.input.val),
    list(snakemake.input.test),
    snakemake.output[0],
    exclude=list(snakemake.input.exclude),
    table_path=snakemake.input.get("table"),
    task_entities_path=snakemake.input.get("task_entities"),
    train_table_path=snakemake.input.get("train_table"),
    train_task_entities_path=snakemake.input.get("train_task_entities"),
    norm=resolve_norm(snakemake.params.norm, snakemake.input.get("norm_sweep")),
    **snakemake.params.options,
)
