"""Snakemake job: the ids of the entities of a corpus without pages (the tasks' QIDs and names), for the tables."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.linking.task_entities import write_entity_ids_by_name

write_entity_ids_by_name(snakemake.input[0], snakemake.output[0])
