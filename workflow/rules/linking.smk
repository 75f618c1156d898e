# Linking stage (Spark), shared by the corpus kinds: a corpus kind with pages brings its own linker
# (its rules file, pelt.registry.CorpusKind), and the corpora without pages are linked here, by the
# task entities' names; on the union of a domain's corpus files (a domain whose files hold no
# document at all fails here), in the language their corpus jobs recorded (counts.json). Then the
# ids of each linked entity.


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
    priority: TABLE_PRIORITY
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
    priority: TABLE_PRIORITY
    conda:
        "../../envs/spark.yaml"
    threads: lookup(dpath="spark/threads", within=config)
    params:
        spark=spark_params(),
    script:
        "../scripts/entity_ids.py"
