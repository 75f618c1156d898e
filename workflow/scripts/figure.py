"""Snakemake job: a report figure of a task kind, drawn by the function the kind names for it
(pelt.registry.figure_writer: the figure's name, its file's) from the job's named inputs."""

import os

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt import registry

registry.import_kinds(snakemake.config.get("task_kinds", []))  # a kind from outside pelt, as the Snakefile
name = os.path.basename(snakemake.output[0]).removesuffix(".svg")
plot = registry.resolve(registry.figure_writer(name))
plot(**dict(snakemake.input.items()), out_svg=snakemake.output[0])
