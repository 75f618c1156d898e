"""Snakemake job: train the small demo RoBERTa (tokenizer + masked LM) on the demo's pretraining text."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.demo_model import DemoModelSettings, train_demo_model

train_demo_model(snakemake.input.documents, snakemake.output[0], DemoModelSettings(**snakemake.params.settings))
