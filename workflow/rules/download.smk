# The paper's data, fetched before a run, resumable and checksummed, one job per file, into data/
# (config key `download`):  snakemake download --cores 4 --configfile config/paper.yaml
# (the target first: --configfile takes several files and would read `download` as one).


rule download:
    input:
        download_targets(),


rule enwiki_checksums:
    output:
        "data/enwiki/enwiki-{date}-sha1sums.txt",
    log:
        "logs/download/enwiki-{date}-sha1sums.log",
    conda:
        "../../envs/torch.yaml"
    params:
        url=enwiki_url,
        checksum=None,
        algorithm="sha1",
    script:
        "../scripts/download.py"


rule enwiki_file:
    input:
        sums="data/enwiki/enwiki-{date}-sha1sums.txt",
    output:
        "data/enwiki/enwiki-{date}-{name}",
    log:
        "logs/download/enwiki-{date}-{name}.log",
    wildcard_constraints:
        name=ENWIKI_FILES,
    conda:
        "../../envs/torch.yaml"
    params:
        url=enwiki_url,
        checksum=None,
        algorithm="sha1",
    script:
        "../scripts/download.py"


rule release_file:
    output:
        "data/{path}",
    log:
        "logs/download/{path}.log",
    wildcard_constraints:
        path=RELEASE_FILES,
    conda:
        "../../envs/torch.yaml"
    params:
        url=lambda wildcards: release(wildcards)["url"],
        checksum=lambda wildcards: release(wildcards)["checksum"],
        algorithm=lambda wildcards: release(wildcards)["algorithm"],
    script:
        "../scripts/download.py"


rule release_archive:
    input:
        archive_of,
    output:
        directory("data/{folder}"),
    log:
        "logs/download/{folder}.log",
    wildcard_constraints:
        folder="|".join(re.escape(folder) for folder in ARCHIVES.values()),
    conda:
        "../../envs/torch.yaml"
    script:
        "../scripts/extract_release.py"
