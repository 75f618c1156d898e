# The S2ORC corpus kind's rules (pelt.registry.CORPUS_KINDS['s2orc'].rules, included by the
# Snakefile): its corpus job (Spark), metadata / full-text JSON lines -> plain-text documents, one
# job per corpus file (corpus_file_ids). It has no pages: the shared string linker (linking.smk)
# links it.


rule corpus_s2orc:
    input:
        corpus_file,
    output:
        documents=directory(results("corpus/{domain}/files/{file}/documents")),
        counts=results("corpus/{domain}/files/{file}/counts.json"),
    log:
        logs("corpus/{domain}/{file}.log"),
    wildcard_constraints:
        domain=domains_of_kind("s2orc"),
        file=r"[^/]+",
    priority: TABLE_PRIORITY
    conda:
        "../../../envs/spark.yaml"
    threads: lookup(dpath="spark/threads", within=config)
    params:
        spark=spark_params(),
        language=corpus_language,
    script:
        "../../scripts/corpus_s2orc.py"
