# Corpus stage (Spark): raw dumps -> plain-text documents with anchor spans, one job per corpus
# file (corpus_file_ids), so that a new dump file is parsed alone; the stages after it read the
# union of the files' outputs (corpus_outputs). Each job also writes what it counted and skipped.


rule corpus_wikipedia:
    input:
        dump=corpus_file,
        page_props=corpus_files("page_props"),
    output:
        documents=directory(results("corpus/{domain}/files/{file}/documents")),
        pages=directory(results("corpus/{domain}/files/{file}/pages")),
        counts=results("corpus/{domain}/files/{file}/counts.json"),
    log:
        logs("corpus/{domain}/{file}.log"),
    wildcard_constraints:
        domain=domains_of_kind("wikipedia"),
        file=r"[^/]+",
    conda:
        "../../envs/spark.yaml"
    threads: lookup(dpath="spark/threads", within=config)
    params:
        spark=spark_params(),
        language=corpus_language,
    script:
        "../scripts/corpus_wikipedia.py"


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
    conda:
        "../../envs/spark.yaml"
    threads: lookup(dpath="spark/threads", within=config)
    params:
        spark=spark_params(),
        language=corpus_language,
    script:
        "../scripts/corpus_s2orc.py"
