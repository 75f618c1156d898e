# Linking stage (Spark): sentences, anchors resolved through redirects, the paper's heuristic.


rule link_wikipedia:
    input:
        documents="results/corpus/{domain}/documents",
        pages="results/corpus/{domain}/pages",
    output:
        aliases=directory("results/linking/{domain}/aliases"),
        mentions=directory("results/linking/{domain}/mentions"),
    log:
        "logs/linking/{domain}.log",
    wildcard_constraints:
        domain=domains_of_kind("wikipedia"),
    conda:
        "../../envs/spark.yaml"
    threads: config["spark"]["threads"]
    params:
        spark=spark_params(),
        heuristic=config["linking"]["heuristic"],
        max_iterations=config["linking"]["max_iterations"],
        ner_model=config["linking"].get("ner_model"),
    script:
        "../scripts/link_wikipedia.py"


rule link_strings:
    input:
        documents="results/corpus/{domain}/documents",
        task_entities="results/samples/{domain}/task_entities.parquet",
    output:
        mentions=directory("results/linking/{domain}/mentions"),
    log:
        "logs/linking/{domain}.log",
    wildcard_constraints:
        domain=domains_of_kind("s2orc"),
    conda:
        "../../envs/spark.yaml"
    threads: config["spark"]["threads"]
    params:
        spark=spark_params(),
        ner_model=config["linking"].get("ner_model"),
    script:
        "../scripts/link_strings.py"
