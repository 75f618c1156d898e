"""One Wiki80 run: accuracy of one training setting and seed, without (baseline) or with (pelt) the table.

A Snakemake job of its own (`finetuning_jobs: run`), or one run of its setting's job, which runs this
script with that run's `snakemake` object (pelt.tasks.finetuning). Seed, variant, setting and the
hyper-parameters come in params.options; L is resolved by the runner, since the LAMA sweep that may
choose it only exists once the job runs.
"""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.eval.settings import job_tables, parse
from pelt.tasks.wiki80.run import Wiki80Files, run_wiki80
from pelt.tasks.wiki80.settings import Wiki80Settings

options = dict(snakemake.params.options)
seed, variant, setting = options.pop("seed"), options.pop("variant"), options.pop("setting")
run_wiki80(
    snakemake.params.model,
    Wiki80Files(
        snakemake.input.train,
        snakemake.input.eval,
        snakemake.input.label2id,
        snakemake.input.get("select_on"),
    ),
    snakemake.output[0],
    tables=job_tables(snakemake, variant),
    settings=parse(Wiki80Settings, options),
    seed=seed,
    setting=setting,
)
