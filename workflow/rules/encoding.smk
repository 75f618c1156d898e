# Encoding stage (GPU when there is one): sampled sentences -> the entity table of a model.
# The sentences are encoded in shards, one job each (parallel on a cluster; a killed run redoes
# only the missing shards); the shard tables merge exactly because their sums add.


rule encode_shard:
    input:
        samples=results("samples/{domain}/sentences"),
        frequencies=results("samples/{domain}/frequencies"),
        model=model_input,
    output:
        results("tables/{domain}/{model}/shards/{shard}-of-{n_shards}.parquet"),
    log:
        logs("tables/{domain}/{model}/shard-{shard}-of-{n_shards}.log"),
    wildcard_constraints:
        shard=r"\d+",
        n_shards=r"\d+",
    priority: TABLE_PRIORITY
    conda:
        "../../envs/torch.yaml"
    threads: 2
    resources:
        gpu=1,
    params:
        model=model_name_or_path,
        settings=canonical(
            {
                k: v
                for k, v in config["encoding"].items()
                if k not in ("shards", "host_workers")
            }
        ),
        speed=SpeedOnly(
            host_workers=lookup(
                dpath="encoding/host_workers", within=config, default=0
            )
        ),
        # Sums of earlier runs, reused for entities whose sampled mentions did not change.
        cache_dir=lambda wildcards: results(
            f"tables/{wildcards.domain}/{wildcards.model}/cache"
        ),
    script:
        "../scripts/encode_shard.py"


rule entity_table:
    input:
        unpack(table_inputs),
        shards=expand(
            results("tables/{{domain}}/{{model}}/shards/{shard}-of-{n}.parquet"),
            shard=range(config["encoding"]["shards"]),
            n=config["encoding"]["shards"],
        ),
    output:
        results("tables/{domain}/{model}/table.parquet"),
    log:
        logs("tables/{domain}/{model}/merge.log"),
    priority: TABLE_PRIORITY
    conda:
        "../../envs/torch.yaml"
    params:
        corpus_kind=domain_kind,
    script:
        "../scripts/merge_tables.py"
