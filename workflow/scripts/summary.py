"""Snakemake job: a summary table (CSV, Markdown, HTML) of its task kind's results, written by the
function the kind names for it (pelt.registry.summary_writer: the summary's name, its CSV's)."""

import os

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt import registry

registry.import_kinds(snakemake.config.get("task_kinds", []))  # a kind from outside pelt, as the Snakefile
name = os.path.basename(snakemake.output.csv).removesuffix(".csv")
write = registry.resolve(registry.summary_writer(name))
write(list(snakemake.input), snakemake.output.csv, snakemake.output.md, snakemake.output.html)
