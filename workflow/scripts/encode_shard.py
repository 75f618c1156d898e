"""Snakemake job: encode one shard of the sampled sentences into a partial entity table."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.encoding.encode import EncodingSettings, encode_samples

encode_samples(
    snakemake.input.samples,
    snakemake.params.model,
    snakemake.output[0],
    settings=EncodingSettings(**snakemake.params.settings, **snakemake.params.speed),
    frequencies_path=snakemake.input.frequencies,
    shard=(int(snakemake.wildcards.shard), int(snakemake.wildcards.n_shards)),
    cache_dir=snakemake.params.cache_dir,
)
