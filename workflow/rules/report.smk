# The report (`snakemake --report`): its landing page of headline numbers, one rule per figure
# (matplotlib, SVG) and the tables beyond the summaries (coverage, input quality).


rule headline:
    input:
        unpack(headline_inputs),
    output:
        report(
            results("eval/report/headline.html"),
            caption="../report/headline.rst",
            category="Headline",
            labels={"page": "headline", "kind": "table"},
        ),
    log:
        logs("eval/report/headline.log"),
    localrule: True
    conda:
        "../../envs/torch.yaml"
    params:
        listed=listed_tasks(),
    script:
        "../scripts/headline.py"


rule finetuning_plot:
    input:
        summary_csv=results("eval/summary/{summary}.csv"),
    output:
        report(
            results("eval/report/{summary}.svg"),
            caption="../report/finetuning.rst",
            category="Fine-tuning",
            labels={"page": "{summary}", "kind": "figure"},
        ),
    log:
        logs("eval/report/{summary}.log"),
    wildcard_constraints:
        summary="|".join(registry.finetuning_summaries()),
    localrule: True
    conda:
        "../../envs/torch.yaml"
    script:
        "../scripts/figure.py"


rule coverage:
    input:
        unpack(coverage_inputs),
    output:
        csv=results("eval/report/coverage.csv"),
        html=report(
            results("eval/report/coverage.html"),
            caption="../report/coverage.rst",
            category="Linking",
            labels={"page": "linking coverage", "kind": "table"},
        ),
    log:
        logs("eval/report/coverage.log"),
    localrule: True
    conda:
        "../../envs/torch.yaml"
    params:
        domains=task_domains(),
        tables=COVERAGE_TABLES,
    script:
        "../scripts/coverage.py"


rule coverage_plot:
    input:
        results("eval/report/coverage.csv"),
    output:
        report(
            results("eval/report/coverage.svg"),
            caption="../report/coverage.rst",
            category="Linking",
            labels={"page": "linking coverage", "kind": "figure"},
        ),
    log:
        logs("eval/report/coverage_plot.log"),
    localrule: True
    conda:
        "../../envs/torch.yaml"
    script:
        "../scripts/coverage_plot.py"


rule frequency_plot:
    input:
        expand(results("samples/{domain}/frequencies"), domain=table_domains()),
    output:
        report(
            results("eval/report/frequencies.svg"),
            caption="../report/frequencies.rst",
            category="Linking",
            labels={"page": "entity frequencies", "kind": "figure"},
        ),
    log:
        logs("eval/report/frequencies.log"),
    localrule: True
    conda:
        "../../envs/torch.yaml"
    params:
        domains=table_domains(),
    script:
        "../scripts/frequency_plot.py"


rule input_quality:
    input:
        input_quality_inputs,
    output:
        csv=results("eval/report/input_quality.csv"),
        html=report(
            results("eval/report/input_quality.html"),
            caption="../report/input_quality.rst",
            category="Input quality",
            labels={"page": "input quality", "kind": "table"},
        ),
    log:
        logs("eval/report/input_quality.log"),
    localrule: True
    conda:
        "../../envs/torch.yaml"
    script:
        "../scripts/input_quality.py"


rule stage_times_plot:
    input:
        result_outputs(),
    output:
        report(
            results("eval/report/stage_times.svg"),
            caption="../report/stage_times.rst",
            category="Run",
            labels={"page": "stage times", "kind": "figure"},
        ),
    log:
        logs("eval/report/stage_times.log"),
    localrule: True
    conda:
        "../../envs/torch.yaml"
    params:
        logs=LOGS,
        metadata=".snakemake/metadata",  # Snakemake's record of each job's start and end
    script:
        "../scripts/stage_times_plot.py"
