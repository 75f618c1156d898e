"""Snakemake job: Wiki80 accuracy of one training setting and seed, without (baseline) or with (pelt) the table.

Seed, variant, setting and the hyper-parameters come in params.options; L is resolved here, since
the LAMA sweep that may choose it only exists once the job runs.
"""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.eval.variants import resolve_norm
from pelt.eval.wiki80 import run_wiki80

run_wiki80(
    snakemake.params.model,
    snakemake.input.train,
    snakemake.input.eval,
    snakemake.input.label2id,
    snakemake.output[0],
    select_on=snakemake.input.get("select_on"),
    table_path=snakemake.input.get("table"),
    task_entities_path=snakemake.input.get("task_entities"),
    norm=resolve_norm(snakemake.params.norm, snakemake.input.get("norm_sweep")),
    **snakemake.params.options,
)
