# Evaluation: LAMA P@1 for each model, without (baseline) and with (pelt) the table.


rule lama:
    input:
        unpack(lama_inputs),
    output:
        result="results/eval/lama/{model}/{variant}.json",
        predictions="results/eval/lama/{model}/{variant}.predictions.jsonl",
    log:
        "logs/eval/lama/{model}/{variant}.log",
    wildcard_constraints:
        variant="baseline|pelt",
    conda:
        "../../envs/torch.yaml"
    threads: 2
    resources:
        gpu=1,
    params:
        model=model_name_or_path,
        norm=model_norm,
        task=config["tasks"].get("lama", {}),
    script:
        "../scripts/lama.py"


rule lama_summary:
    input:
        expand(
            "results/eval/lama/{model}/{variant}.json",
            model=MODELS,
            variant=["baseline", "pelt"],
        ),
    output:
        csv="results/eval/summary/lama.csv",
        md="results/eval/summary/lama.md",
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
        task=config["tasks"].get("lama", {}),
    script:
        "../scripts/lama_norm_sweep.py"


rule norm_sweep_summary:
    input:
        expand("results/eval/lama/{model}/norm_sweep.json", model=MODELS),
    output:
        csv="results/eval/summary/norm_sweep.csv",
        md="results/eval/summary/norm_sweep.md",
    log:
        "logs/eval/summary/norm_sweep.log",
    localrule: True
    conda:
        "../../envs/torch.yaml"
    script:
        "../scripts/norm_sweep_summary.py"
