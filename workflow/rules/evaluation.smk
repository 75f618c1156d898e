# Evaluation, what every task kind shares: the table's controls, and the summary tables (CSV,
# Markdown, and HTML for the report) of the kinds fine-tuned per setting and seed, each written by its
# kind's writer (pelt.registry.summary_writer). The kinds' own runs: their rules files
# (workflow/rules/tasks/); the report's figures: report.smk.
# The many small jobs (one LAMA variant, one fine-tuning seed) take one thread each: on the demo's
# two cores two of them run side by side, 1.6 times the throughput of one job on two threads (the
# 24 FewRel runs: 216 s instead of 349 s, the same accuracies); profiles/slurm sets cluster threads.


rule control_table:
    input:
        unpack(control_inputs),
    output:
        results("tables/{domain}/{model}/controls/{control}.parquet"),
    log:
        logs("tables/{domain}/{model}/controls/{control}.log"),
    wildcard_constraints:
        control="|".join(CONTROLS),
    conda:
        "../../envs/torch.yaml"
    script:
        "../scripts/control_table.py"


rule finetuning_summary:
    input:
        lambda wildcards: finetuning_results(
            registry.finetuned_tasks(config["tasks"], wildcards.summary)
        ),
    output:
        csv=results("eval/summary/{summary}.csv"),
        md=results("eval/summary/{summary}.md"),
        html=report(
            results("eval/summary/{summary}.html"),
            caption="../report/finetuning.rst",
            category="Fine-tuning",
            labels={"page": "{summary}", "kind": "table"},
        ),
    log:
        logs("eval/summary/{summary}.log"),
    wildcard_constraints:
        summary="|".join(registry.finetuning_summaries()),
    localrule: True
    conda:
        "../../envs/torch.yaml"
    script:
        "../scripts/summary.py"
