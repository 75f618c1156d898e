"""Snakemake job: one Wikipedia pages-articles dump file -> documents and pages (Parquet), and its counts."""

from pelt.logs import start_job

start_job(snakemake.log[0], snakemake.threads)

from pelt.corpus.wikipedia.build import build_wikipedia_corpus
from pelt.corpus.wikipedia.dump import dump_site
from pelt.logs import write_counts
from pelt.spark import get_spark

site = dump_site(snakemake.input.dump, snakemake.params.language)  # read once, recorded with the counts
write_counts(
    snakemake.output.counts,
    build_wikipedia_corpus(
        get_spark(threads=snakemake.threads, **snakemake.params.spark),
        [snakemake.input.dump],
        snakemake.output.documents,
        snakemake.output.pages,
        page_props=list(snakemake.input.page_props),
        sites={snakemake.input.dump: site},
    ),
    stage=snakemake.rule,
    domain=snakemake.wildcards.domain,
    source=snakemake.input.dump,
    details={"site": site.describe()},
)
