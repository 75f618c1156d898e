# The Wikipedia corpus kind's rules (pelt.registry.CORPUS_KINDS['wikipedia'].rules, included by the
# Snakefile): its corpus job (Spark), a pages-articles dump -> plain-text documents with anchor
# spans and the pages (titles, redirects, QIDs from page_props), one job per dump file
# (corpus_file_ids), so that a new file is parsed alone; and its linker (Spark), on the union of a
# domain's files (corpus_outputs): sentences, anchors resolved through redirects, the paper's
# heuristic, in the language the corpus jobs recorded (counts.json).


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
    priority: TABLE_PRIORITY
    conda:
        "../../../envs/spark.yaml"
    threads: lookup(dpath="spark/threads", within=config)
    params:
        spark=spark_params(),
        language=corpus_language,
    script:
        "../../scripts/corpus_wikipedia.py"


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
        domain=domains_of_kind("wikipedia"),
    priority: TABLE_PRIORITY
    conda:
        "../../../envs/spark.yaml"
    threads: lookup(dpath="spark/threads", within=config)
    params:
        spark=spark_params(),
        linking=canonical(lookup(dpath="linking", within=config)),
    script:
        "../../scripts/link_wikipedia.py"
