# pelt: pluggable entity lookup tables for masked language models, from raw corpora.
# Default target: every model's table and the LAMA summary with and without it.


include: "workflow/rules/library.smk"


# The demo's config only when none is given: a --configfile (config/paper.yaml) runs its own keys
# and inherits none of the demo's (page_props, shards...); --config alone still edits the demo.
# Checked first, for a syntax error's file, line and column (Snakemake parses a --configfile
# itself, before this file, and names neither).
if not workflow.overwrite_configfiles:
    from pelt.config import yaml_problem

    if problem := yaml_problem("config/config.yaml"):
        raise WorkflowError(problem)

    configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/merged_functions.smk"
include: "workflow/rules/download.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/linking.smk"
include: "workflow/rules/task_entities.smk"
include: "workflow/rules/sampling.smk"
include: "workflow/rules/encoding.smk"
include: "workflow/rules/evaluation.smk"


# Each corpus kind's own rules (pelt.registry.CorpusKind.rules: its corpus job, and with pages its
# linker), then each task kind's (pelt.registry.TaskKind.rules: the built-in kinds' and those of the
# packages the config's `task_kinds` names). No other rules file names a kind.
for rules in kind_rules():

    include: rules


include: "workflow/rules/report.smk"


onstart:
    check_machine()
    check_finetuning_jobs()


onsuccess:
    print("\n".join(end_of_run_lines()))


rule all:
    default_target: True
    input:
        all_outputs(),
