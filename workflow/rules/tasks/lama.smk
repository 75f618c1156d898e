# The LAMA probe's rules (its registry entry's `rules`, pelt.tasks.lama; included by the Snakefile): P@1 of
# each model without (baseline) and with (pelt) the table, its controls, LAMA-UHN, the norm sweep
# that chooses L, their summaries and figures. Its helpers: lama_functions.smk.


include: "lama_functions.smk"


rule lama:
    input:
        unpack(lama_inputs),
        uhn=results("eval/lama/uhn.json"),
    output:
        result=results("eval/lama/{model}/{variant}.json"),
        predictions=results("eval/lama/{model}/{variant}.predictions.jsonl"),
    log:
        logs("eval/lama/{model}/{variant}.log"),
    wildcard_constraints:
        variant="|".join(VARIANTS + CONTROLS),
    conda:
        "../../../envs/torch.yaml"
    threads: 1
    resources:
        gpu=1,
    params:
        model=model_name_or_path,
        norm=model_norm,
        options=lama_options,
    script:
        "../../scripts/lama.py"


rule lama_uhn:
    input:
        facts=lambda wildcards: task_run_files("lama")["facts"],
        model=uhn_model_input,
    output:
        results("eval/lama/uhn.json"),
    log:
        logs("eval/lama/uhn.log"),
    conda:
        "../../../envs/torch.yaml"
    threads: 2
    resources:
        gpu=1,
    params:
        person_model=uhn_person_model(),
        uhn=canonical(lookup(dpath="tasks/lama/uhn", within=config, default={})),
    script:
        "../../scripts/lama_uhn.py"


rule lama_summary:
    input:
        expand(
            results("eval/lama/{model}/{variant}.json"),
            model=MODELS,
            variant=task_variants("lama"),
        ),
    output:
        csv=results("eval/summary/lama.csv"),
        md=results("eval/summary/lama.md"),
        html=report(
            results("eval/summary/lama.html"),
            caption="../../report/lama.rst",
            category="LAMA",
            labels={"page": "LAMA", "kind": "table"},
        ),
    log:
        logs("eval/summary/lama.log"),
    localrule: True
    conda:
        "../../../envs/torch.yaml"
    script:
        "../../scripts/summary.py"


rule lama_norm_sweep:
    input:
        unpack(lama_inputs),
    output:
        results("eval/lama/{model}/norm_sweep.json"),
    log:
        logs("eval/lama/{model}/norm_sweep.log"),
    conda:
        "../../../envs/torch.yaml"
    threads: 2
    resources:
        gpu=1,
    params:
        model=model_name_or_path,
        norms=lookup(dpath="tasks/lama/norms", within=config, default=[]),
        options=lama_options,
    script:
        "../../scripts/lama_norm_sweep.py"


rule norm_sweep_summary:
    input:
        expand(results("eval/lama/{model}/norm_sweep.json"), model=MODELS),
    output:
        csv=results("eval/summary/norm_sweep.csv"),
        md=results("eval/summary/norm_sweep.md"),
        html=report(
            results("eval/summary/norm_sweep.html"),
            caption="../../report/norm_sweep.rst",
            category="LAMA",
            labels={"page": "LAMA norm sweep", "kind": "table"},
        ),
    log:
        logs("eval/summary/norm_sweep.log"),
    localrule: True
    conda:
        "../../../envs/torch.yaml"
    script:
        "../../scripts/summary.py"


rule lama_bucket_plot:
    input:
        result_jsons=expand(
            results("eval/lama/{model}/{variant}.json"),
            model=MODELS,
            variant=task_variants("lama"),
        ),
    output:
        report(
            results("eval/report/lama_buckets.svg"),
            caption="../../report/lama_buckets.rst",
            category="LAMA",
            labels={"page": "LAMA by subject frequency", "kind": "figure"},
        ),
    log:
        logs("eval/report/lama_buckets.log"),
    localrule: True
    conda:
        "../../../envs/torch.yaml"
    script:
        "../../scripts/figure.py"


rule norm_sweep_plot:
    input:
        sweep_jsons=expand(results("eval/lama/{model}/norm_sweep.json"), model=MODELS),
    output:
        report(
            results("eval/report/norm_sweep.svg"),
            caption="../../report/norm_sweep.rst",
            category="LAMA",
            labels={"page": "LAMA norm sweep", "kind": "figure"},
        ),
    log:
        logs("eval/report/norm_sweep.log"),
    localrule: True
    conda:
        "../../../envs/torch.yaml"
    script:
        "../../scripts/figure.py"
