"""Snakemake job: which LAMA facts LAMA-UHN removes (string filter, person-name filter), for every model's run."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.tasks.lama.uhn import PERSON_NAME_QUERIES, build_uhn

uhn = snakemake.params.uhn
build_uhn(
    list(snakemake.input.facts),
    snakemake.output[0],
    person_model=snakemake.params.person_model,
    queries=uhn.get("person_relations", PERSON_NAME_QUERIES),
    top_k=uhn["top_k"],  # the schema's default where the config sets none
)
