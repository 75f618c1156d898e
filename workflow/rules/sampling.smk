# Sampling stage (Spark): the task entities, then at most N mentions per entity.


rule task_entities:
    input:
        aliases="results/linking/{domain}/aliases",
        pages=domain_corpus("pages"),
        tasks=task_files,
    output:
        entities="results/samples/{domain}/task_entities.parquet",
        counts="results/samples/{domain}/task_entities.counts.json",
    log:
        "logs/samples/{domain}/task_entities.log",
    conda:
        "../../envs/spark.yaml"
    threads: config["spark"]["threads"]
    params:
        spark=spark_params(),
        tasks=task_entity_params,
    script:
        "../scripts/task_entities.py"


rule task_entities_by_name:
    input:
        tasks=task_files,
    output:
        entities="results/samples/{domain}/task_entities.parquet",
        counts="results/samples/{domain}/task_entities.counts.json",
    log:
        "logs/samples/{domain}/task_entities.log",
    wildcard_constraints:
        domain=domains_of_kind("s2orc"),
    localrule: True
    conda:
        "../../envs/spark.yaml"
    params:
        tasks=task_entity_params,
    script:
        "../scripts/task_entities_by_name.py"


rule sample_mentions:
    input:
        mentions="results/linking/{domain}/mentions",
        task_entities="results/samples/{domain}/task_entities.parquet",
    output:
        samples=directory("results/samples/{domain}/sentences"),
        frequencies=directory("results/samples/{domain}/frequencies"),
        counts="results/samples/{domain}/counts.json",
    log:
        "logs/samples/{domain}/sample.log",
    conda:
        "../../envs/spark.yaml"
    threads: config["spark"]["threads"]
    params:
        spark=spark_params(),
        on_demand=config["sampling"]["entities"] == "on_demand",
        max_per_entity=config["sampling"]["max_sentences_per_entity"],
        seed=config["sampling"]["seed"],
        pool=config["sampling"].get("sentence_tokens"),
    script:
        "../scripts/sample_mentions.py"
