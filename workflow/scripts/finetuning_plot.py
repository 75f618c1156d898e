"""Snakemake job: the report's figure of FewRel or Wiki80 accuracy per setting, with the std over seeds."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.report.figures import plot_finetuning

plot_finetuning(snakemake.input[0], snakemake.output[0])
