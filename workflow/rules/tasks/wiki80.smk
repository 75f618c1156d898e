# Wiki80's rule (pelt.registry.KINDS['wiki80'].rules, included by the Snakefile): one fine-tuning
# run per model, variant, training setting and seed; its summary and figure are the fine-tuning
# kinds' (evaluation.smk, report.smk).


rule wiki80:
    input:
        unpack(finetuning_inputs),
    output:
        results("eval/{task}/{model}/{variant}/{setting}/seed{seed}.json"),
    log:
        logs("eval/{task}/{model}/{variant}/{setting}/seed{seed}.log"),
    wildcard_constraints:
        task=kind_tasks("wiki80"),
        variant="|".join(VARIANTS + CONTROLS),
        setting=kind_settings("wiki80"),
        seed=r"[0-9]+",
    conda:
        "../../../envs/torch.yaml"
    threads: 1
    resources:
        gpu=1,
    params:
        model=model_name_or_path,
        norm=model_norm,
        options=finetuning_options,
    script:
        "../../scripts/wiki80.py"
