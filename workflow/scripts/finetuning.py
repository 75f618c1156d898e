"""Snakemake job (config `finetuning_jobs: setting`): every run of a fine-tuning task's setting and model
(each variant, each seed), one after another in this process, each by its kind's job script
(params.script): torch and transformers are imported once a job, not once a run."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.tasks.finetuning import run_each

run_each(snakemake, snakemake.params.script, snakemake.params.runs)
