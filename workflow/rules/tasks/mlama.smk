# mLAMA's rules (its registry entry's `rules`, pelt.tasks.mlama; included by the Snakefile): P@1 of each model on
# each configured language (tasks.mlama_<language>), without (baseline) and with (pelt) the table of
# that language's corpus, and its controls; the summary of every language. Its helpers:
# mlama_functions.smk.


include: "mlama_functions.smk"


rule mlama:
    input:
        unpack(mlama_inputs),
    output:
        result=results("eval/{task}/{model}/{variant}.json"),
        predictions=results("eval/{task}/{model}/{variant}.predictions.jsonl"),
    log:
        logs("eval/{task}/{model}/{variant}.log"),
    wildcard_constraints:
        task=kind_tasks("mlama"),
        model="[^/]+",
        variant="|".join(VARIANTS + CONTROLS),
    conda:
        "../../../envs/torch.yaml"
    threads: 1
    resources:
        gpu=1,
    params:
        model=model_name_or_path,
        norm=model_norm,
        language=lambda wildcards: mlama_language(wildcards.task),
        options=mlama_options,
    script:
        "../../scripts/mlama.py"


rule mlama_summary:
    input:
        [
            path
            for name in registry.tasks_of_kind(config["tasks"], "mlama")
            for path in expand(
                results("eval/{task}/{model}/{variant}.json"),
                task=name,
                model=MODELS,
                variant=task_variants(name),
            )
        ],
    output:
        csv=results("eval/summary/mlama.csv"),
        md=results("eval/summary/mlama.md"),
        html=report(
            results("eval/summary/mlama.html"),
            caption="../../report/mlama.rst",
            category="mLAMA",
            labels={"page": "mLAMA", "kind": "table"},
        ),
    log:
        logs("eval/summary/mlama.log"),
    localrule: True
    conda:
        "../../../envs/torch.yaml"
    script:
        "../../scripts/summary.py"


rule mlama_plot:
    input:
        summary_csv=results("eval/summary/mlama.csv"),
    output:
        report(
            results("eval/report/mlama.svg"),
            caption="../../report/mlama.rst",
            category="mLAMA",
            labels={"page": "mLAMA", "kind": "figure"},
        ),
    log:
        logs("eval/report/mlama.log"),
    localrule: True
    conda:
        "../../../envs/torch.yaml"
    script:
        "../../scripts/figure.py"
