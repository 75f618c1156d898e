# Task entities: the entities the configured tasks name, resolved to the corpus's ids, by whether
# its kind has pages (pelt.registry.CorpusKind): through its pages and linked aliases, or each name
# its own id, for string linking; a merged domain's, to the QIDs of its corpora's resolutions.
# Sampling keeps these entities' mentions.


rule task_entities:
    input:
        aliases=results("linking/{domain}/aliases"),
        pages=domain_corpus("pages"),
        tasks=task_files,
    output:
        entities=results("task_entities/{domain}/task_entities.parquet"),
        counts=results("task_entities/{domain}/counts.json"),
    log:
        logs("task_entities/{domain}.log"),
    wildcard_constraints:
        domain=domains_with_pages(True),
    priority: TABLE_PRIORITY
    conda:
        "../../envs/spark.yaml"
    threads: lookup(dpath="spark/threads", within=config)
    params:
        spark=spark_params(),
        tasks=task_entity_params,
    script:
        "../scripts/task_entities.py"


rule task_entities_by_name:
    input:
        tasks=task_files,
    output:
        entities=results("task_entities/{domain}/task_entities.parquet"),
        counts=results("task_entities/{domain}/counts.json"),
    log:
        logs("task_entities/{domain}.log"),
    wildcard_constraints:
        domain=domains_with_pages(False),
    priority: TABLE_PRIORITY
    localrule: True
    conda:
        "../../envs/spark.yaml"
    params:
        tasks=task_entity_params,
    script:
        "../scripts/task_entities_by_name.py"


rule entity_ids_by_name:
    input:
        results("task_entities/{domain}/task_entities.parquet"),
    output:
        directory(results("linking/{domain}/ids")),
    log:
        logs("entity_ids/{domain}.log"),
    wildcard_constraints:
        domain=domains_with_pages(False),
    priority: TABLE_PRIORITY
    localrule: True
    conda:
        "../../envs/spark.yaml"
    script:
        "../scripts/entity_ids_by_name.py"


rule merged_task_entities:
    input:
        unpack(merged_task_entities_inputs),
        tasks=task_files,
    output:
        entities=results("task_entities/{domain}/task_entities.parquet"),
        counts=results("task_entities/{domain}/counts.json"),
    log:
        logs("task_entities/{domain}.log"),
    wildcard_constraints:
        domain=domains_merged(True),
    priority: TABLE_PRIORITY
    localrule: True
    conda:
        "../../envs/spark.yaml"
    params:
        of=lambda wildcards: MERGED[wildcards.domain]["of"],
        tasks=task_entity_params,
    script:
        "../scripts/merged_task_entities.py"
