# Models that do not come from a hub: the demo model, trained on the demo world's pretraining text.


rule demo_model:
    input:
        documents=lookup(dpath="demo_model/documents", within=config),
        shipped=lookup(dpath="demo_model/shipped", within=config, default=[]),
    output:
        directory(results("models/demo")),
    log:
        logs("models/demo.log"),
    conda:
        "../../envs/torch.yaml"
    threads: 2
    params:
        settings=canonical(
            {
                k: v
                for k, v in config["demo_model"].items()
                if k not in ("documents", "shipped")
            }
        ),
    script:
        "../scripts/demo_model.py"
