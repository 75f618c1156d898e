"""One FewRel run: accuracy of one N-K setting and seed, without (baseline) or with (pelt) the table.

A Snakemake job of its own (`finetuning_jobs: run`), or one run of its setting's job, which runs this
script with that run's `snakemake` object (pelt.tasks.finetuning). Seed, variant, N, K and the
hyper-parameters come in params.options; L is resolved by the runner, since the LAMA sweep that may
choose it only exists once the job runs.
"""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.eval.settings import job_tables, parse
from pelt.tasks.fewrel.run import FewRelFiles, run_fewrel
from pelt.tasks.fewrel.settings import FewRelSettings

options = dict(snakemake.params.options)
seed, variant, dataset = options.pop("seed"), options.pop("variant"), options.pop("dataset")
run_fewrel(
    snakemake.params.model,
    FewRelFiles(
        list(snakemake.input.train),
        list(snakemake.input.val),
        list(snakemake.input.test),
        list(snakemake.input.exclude),
    ),
    snakemake.output[0],
    tables=job_tables(snakemake, variant),
    settings=parse(FewRelSettings, options),
    seed=seed,
    dataset=dataset,
)
