# Linking stage (Spark): sentences, anchors resolved through redirects, the paper's heuristic; on the
# union of a domain's corpus files (a domain whose files hold no document at all fails here), in the
# language their corpus jobs recorded (counts.json).


rule link_wikipedia:
    input:
        documents=domain_corpus("documents"),
        pages=domain_corpus("pages"),
        corpus_counts=domain_corpus("counts.json"),
    output:
        aliases=directory(results("linking/{domain}/aliases")),
        mentions=directory(results("linking/{domain}/mentions")),
        counts=results("linking/{domain}/counts.json"),
    log:
        logs("linking/{domain}.log"),
    wildcard_constraints:
        domain=domains_with_pages(True),
    conda:
        "../../envs/spark.yaml"
    threads: lookup(dpath="spark/threads", within=config)
    params:
        spark=spark_params(),
        heuristic=lookup(dpath="linking/heuristic", within=config),
        max_iterations=lookup(dpath="linking/max_iterations", within=config),
        ner_model=lookup(dpath="linking/ner_model", within=config, default=None),
        pruning={
            key: lookup(dpath=f"linking/{key}", within=config)
            for key in (
                "min_link_prob",
                "min_prior",
                "max_entities_per_name",
                "drop_stop_word_names",
            )
        },
    script:
        "../scripts/link_wikipedia.py"


rule link_strings:
    input:
        documents=domain_corpus("documents"),
        task_entities=results("task_entities/{domain}/task_entities.parquet"),
        corpus_counts=domain_corpus("counts.json"),
    output:
        mentions=directory(results("linking/{domain}/mentions")),
        counts=results("linking/{domain}/counts.json"),
    log:
        logs("linking/{domain}.log"),
    wildcard_constraints:
        domain=domains_with_pages(False),
    conda:
        "../../envs/spark.yaml"
    threads: lookup(dpath="spark/threads", within=config)
    params:
        spark=spark_params(),
        ner_model=lookup(dpath="linking/ner_model", within=config, default=None),
    script:
        "../scripts/link_strings.py"


# The ids users hold for each entity (QID, redirect titles, link texts), carried by the tables.
rule entity_ids:
    input:
        aliases=results("linking/{domain}/aliases"),
        pages=domain_corpus("pages"),
    output:
        directory(results("linking/{domain}/ids")),
    log:
        logs("entity_ids/{domain}.log"),
    wildcard_constraints:
        domain=domains_with_pages(True),
    conda:
        "../../envs/spark.yaml"
    threads: lookup(dpath="spark/threads", within=config)
    params:
        spark=spark_params(),
    script:
        "../scripts/entity_ids.py"
