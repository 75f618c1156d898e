# Sampling stage (Spark): at most N mentions per task entity (or per entity), and frequencies; a
# merged domain's (config `merged`) drawn from its corpora's samples, per QID (pelt.sampling.merge).


rule sample_mentions:
    input:
        mentions=results("linking/{domain}/mentions"),
        task_entities=results("task_entities/{domain}/task_entities.parquet"),
    output:
        samples=directory(results("samples/{domain}/sentences")),
        frequencies=directory(results("samples/{domain}/frequencies")),
        counts=results("samples/{domain}/counts.json"),
    log:
        logs("samples/{domain}/sample.log"),
    wildcard_constraints:
        domain=domains_merged(False),
    priority: TABLE_PRIORITY
    conda:
        "../../envs/spark.yaml"
    threads: lookup(dpath="spark/threads", within=config)
    params:
        spark=spark_params(),
        on_demand=lookup(dpath="sampling/entities", within=config) == "on_demand",
        max_per_entity=lookup(dpath="sampling/max_sentences_per_entity", within=config),
        seed=lookup(dpath="sampling/seed", within=config),
        min_frequency=lookup(dpath="sampling/min_frequency", within=config),
        pool=lookup(dpath="sampling/sentence_tokens", within=config, default=None),
    script:
        "../scripts/sample_mentions.py"


rule merge_samples:
    input:
        unpack(merge_inputs),
    output:
        samples=directory(results("samples/{domain}/sentences")),
        frequencies=directory(results("samples/{domain}/frequencies")),
        ids=directory(results("samples/{domain}/ids")),
        counts=results("samples/{domain}/counts.json"),
    log:
        logs("samples/{domain}/merge.log"),
    wildcard_constraints:
        domain=domains_merged(True),
    priority: TABLE_PRIORITY
    conda:
        "../../envs/spark.yaml"
    threads: lookup(dpath="spark/threads", within=config)
    params:
        spark=spark_params(),
        of=lambda wildcards: MERGED[wildcards.domain]["of"],
        on_demand=lookup(dpath="sampling/entities", within=config) == "on_demand",
        max_per_entity=lookup(dpath="sampling/max_sentences_per_entity", within=config),
        seed=lookup(dpath="sampling/seed", within=config),
        min_frequency=lookup(dpath="sampling/min_frequency", within=config),
    script:
        "../scripts/merge_samples.py"
