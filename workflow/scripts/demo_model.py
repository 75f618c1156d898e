"""Snakemake job: the small demo RoBERTa (tokenizer + masked LM): the shipped one where it was
trained on these documents and settings, else trained on the demo's pretraining text."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.encoding.demo_model import DemoModelSettings, demo_model

demo_model(
    snakemake.input.documents,
    snakemake.output[0],
    DemoModelSettings(**snakemake.params.settings),
    shipped=snakemake.input.shipped or None,
)
