# pelt: pluggable entity lookup tables for masked language models, from raw corpora.
# Default target: every model's table and the LAMA summary with and without it.


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/download.smk"
include: "workflow/rules/corpus.smk"
include: "workflow/rules/linking.smk"
include: "workflow/rules/task_entities.smk"
include: "workflow/rules/sampling.smk"
include: "workflow/rules/encoding.smk"
include: "workflow/rules/evaluation.smk"


rule all:
    default_target: True
    input:
        all_outputs(),
