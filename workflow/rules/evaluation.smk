# Evaluation: LAMA P@1 for each model, without (baseline) and with (pelt) the table; the norm sweep;
# FewRel 1.0 / 2.0 and Wiki80 fine-tuning, one job per task, model, variant, setting and seed; their
# summary tables (CSV, Markdown, and HTML for the report). The report's figures: report.smk.
# The many small jobs (one LAMA variant, one fine-tuning seed) take one thread each: on the demo's
# two cores two of them run side by side, 1.6 times the throughput of one job on two threads (the
# 24 FewRel runs: 216 s instead of 349 s, the same accuracies); profiles/slurm sets cluster threads.


rule lama:
    input:
        unpack(lama_inputs),
        uhn="results/eval/lama/uhn.json",
    output:
        result="results/eval/lama/{model}/{variant}.json",
        predictions="results/eval/lama/{model}/{variant}.predictions.jsonl",
    log:
        "logs/eval/lama/{model}/{variant}.log",
    wildcard_constraints:
        variant="|".join(VARIANTS + CONTROLS),
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        gpu=1,
    params:
        model=model_name_or_path,
        norm=model_norm,
        options=lama_options,
    script:
        "../scripts/lama.py"


rule control_table:
    input:
        unpack(control_inputs),
    output:
        "results/tables/{domain}/{model}/controls/{control}.parquet",
    log:
        "logs/tables/{domain}/{model}/controls/{control}.log",
    wildcard_constraints:
        control="|".join(CONTROLS),
    conda:
        "../../envs/torch.yaml"
    script:
        "../scripts/control_table.py"


rule lama_uhn:
    input:
        facts=lambda wildcards: task_run_files("lama")["facts"],
        model=uhn_model_input,
    output:
        "results/eval/lama/uhn.json",
    log:
        "logs/eval/lama/uhn.log",
    conda:
        "../../envs/torch.yaml"
    threads: 2
    resources:
        gpu=1,
    params:
        person_model=uhn_person_model(),
        uhn=canonical(lookup(dpath="tasks/lama/uhn", within=config, default={})),
    script:
        "../scripts/lama_uhn.py"


rule lama_summary:
    input:
        expand(
            "results/eval/lama/{model}/{variant}.json",
            model=MODELS,
            variant=task_variants("lama"),
        ),
    output:
        csv="results/eval/summary/lama.csv",
        md="results/eval/summary/lama.md",
        html=report(
            "results/eval/summary/lama.html",
            caption="../report/lama.rst",
            category="LAMA",
            labels={"page": "LAMA", "kind": "table"},
        ),
    log:
        "logs/eval/summary/lama.log",
    localrule: True
    conda:
        "../../envs/torch.yaml"
    script:
        "../scripts/lama_summary.py"


rule lama_norm_sweep:
    input:
        unpack(lama_inputs),
    output:
        "results/eval/lama/{model}/norm_sweep.json",
    log:
        "logs/eval/lama/{model}/norm_sweep.log",
    conda:
        "../../envs/torch.yaml"
    threads: 2
    resources:
        gpu=1,
    params:
        model=model_name_or_path,
        norms=lookup(dpath="tasks/lama/norms", within=config, default=[]),
        options=lama_options,
    script:
        "../scripts/lama_norm_sweep.py"


rule norm_sweep_summary:
    input:
        expand("results/eval/lama/{model}/norm_sweep.json", model=MODELS),
    output:
        csv="results/eval/summary/norm_sweep.csv",
        md="results/eval/summary/norm_sweep.md",
        html=report(
            "results/eval/summary/norm_sweep.html",
            caption="../report/norm_sweep.rst",
            category="LAMA",
            labels={"page": "LAMA norm sweep", "kind": "table"},
        ),
    log:
        "logs/eval/summary/norm_sweep.log",
    localrule: True
    conda:
        "../../envs/torch.yaml"
    script:
        "../scripts/norm_sweep_summary.py"


rule fewrel:
    input:
        unpack(finetuning_inputs),
    output:
        "results/eval/{task}/{model}/{variant}/{setting}/seed{seed}.json",
    log:
        "logs/eval/{task}/{model}/{variant}/{setting}/seed{seed}.log",
    wildcard_constraints:
        task=kind_tasks("fewrel"),
        variant="|".join(VARIANTS + CONTROLS),
        setting=kind_settings("fewrel"),
        seed=r"[0-9]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        gpu=1,
    params:
        model=model_name_or_path,
        norm=model_norm,
        options=finetuning_options,
    script:
        "../scripts/fewrel.py"


rule wiki80:
    input:
        unpack(finetuning_inputs),
    output:
        "results/eval/{task}/{model}/{variant}/{setting}/seed{seed}.json",
    log:
        "logs/eval/{task}/{model}/{variant}/{setting}/seed{seed}.log",
    wildcard_constraints:
        task=kind_tasks("wiki80"),
        variant="|".join(VARIANTS + CONTROLS),
        setting=kind_settings("wiki80"),
        seed=r"[0-9]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        gpu=1,
    params:
        model=model_name_or_path,
        norm=model_norm,
        options=finetuning_options,
    script:
        "../scripts/wiki80.py"


rule finetuning_summary:
    input:
        lambda wildcards: finetuning_results(
            registry.finetuned_tasks(config["tasks"], wildcards.summary)
        ),
    output:
        csv="results/eval/summary/{summary}.csv",
        md="results/eval/summary/{summary}.md",
        html=report(
            "results/eval/summary/{summary}.html",
            caption="../report/finetuning.rst",
            category="Fine-tuning",
            labels={"page": "{summary}", "kind": "table"},
        ),
    log:
        "logs/eval/summary/{summary}.log",
    wildcard_constraints:
        summary="|".join(registry.finetuning_summaries()),
    localrule: True
    conda:
        "../../envs/torch.yaml"
    script:
        "../scripts/finetuning_summary.py"
