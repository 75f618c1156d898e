# Corpus stage (Spark): raw dumps -> plain-text documents with anchor spans.


rule corpus_wikipedia:
    input:
        dumps=corpus_files("path"),
        page_props=corpus_files("page_props"),
    output:
        documents=directory("results/corpus/{domain}/documents"),
        pages=directory("results/corpus/{domain}/pages"),
    log:
        "logs/corpus/{domain}.log",
    wildcard_constraints:
        domain=domains_of_kind("wikipedia"),
    conda:
        "../../envs/spark.yaml"
    threads: config["spark"]["threads"]
    params:
        spark=spark_params(),
    script:
        "../scripts/corpus_wikipedia.py"


rule corpus_s2orc:
    input:
        corpus_files("path"),
    output:
        documents=directory("results/corpus/{domain}/documents"),
    log:
        "logs/corpus/{domain}.log",
    wildcard_constraints:
        domain=domains_of_kind("s2orc"),
    conda:
        "../../envs/spark.yaml"
    threads: config["spark"]["threads"]
    params:
        spark=spark_params(),
    script:
        "../scripts/corpus_s2orc.py"
