# FewRel's rule (pelt.registry.KINDS['fewrel'].rules, included by the Snakefile): one fine-tuning
# run per task (FewRel 1.0 and 2.0), model, variant, N-K setting and seed; its summary and figure
# are the fine-tuning kinds' (evaluation.smk, report.smk).


rule fewrel:
    input:
        unpack(finetuning_inputs),
    output:
        results("eval/{task}/{model}/{variant}/{setting}/seed{seed}.json"),
    log:
        logs("eval/{task}/{model}/{variant}/{setting}/seed{seed}.log"),
    wildcard_constraints:
        task=kind_tasks("fewrel"),
        variant="|".join(VARIANTS + CONTROLS),
        setting=kind_settings("fewrel"),
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
        "../../scripts/fewrel.py"
