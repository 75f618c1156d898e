# Models that do not come from a hub: the demo model, trained on the demo corpus.


rule demo_model:
    input:
        documents=lambda wildcards: corpus_outputs(
            config["demo_model"]["corpus"], "documents"
        ),
    output:
        directory("results/models/demo"),
    log:
        "logs/models/demo.log",
    conda:
        "../../envs/torch.yaml"
    threads: 2
    params:
        settings={k: v for k, v in config["demo_model"].items() if k != "corpus"},
    script:
        "../scripts/demo_model.py"
