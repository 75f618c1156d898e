"""Page titles to entities: redirect chains followed, disambiguation pages and broken redirects named as such."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

# Redirects to redirects are rare (bots fix them) and longer chains are almost always loops.
MAX_REDIRECT_DEPTH = 5


def resolve_titles(pages: DataFrame, max_depth: int = MAX_REDIRECT_DEPTH) -> DataFrame:
    """Every page title with the entity it stands for.

    Columns: ``title``, ``entity_id`` (null when the title names no single entity), ``status``
    (``article`` | ``disambiguation`` | ``redirect`` | ``broken_redirect``) and ``in_dump`` (the
    entity has an article in the dump; false for a redirect to an absent page, which still names
    that page). Chains are followed by repeated joins; one still ending on a redirect after
    ``max_depth`` hops is a cycle or too long and is broken. Duplicate titles keep the lowest page id.
    """
    pages = (
        pages.filter(F.length("title") > 0)
        .groupBy("title")
        .agg(F.min_by(F.struct("is_redirect", "redirect_to", "is_disambiguation"), "page_id").alias("p"))
        .select("title", "p.*")
    )
    redirect_to = F.when(F.length("redirect_to") > 0, F.col("redirect_to"))
    hops = pages.filter("is_redirect").select(F.col("title").alias("via"), redirect_to.alias("to"))
    chains = pages.filter("is_redirect").select("title", redirect_to.alias("dst"))
    for _ in range(max_depth - 1):
        chains = chains.join(hops, F.col("dst") == F.col("via"), "left").select(
            "title", F.coalesce("to", "dst").alias("dst")
        )
    targets = pages.select(
        F.col("title").alias("dst"),
        F.col("is_redirect").alias("dst_redirect"),
        F.col("is_disambiguation").alias("dst_disambiguation"),
    )
    status = (
        F.when(F.col("dst").isNull() | F.coalesce("dst_redirect", F.lit(False)), "broken_redirect")
        .when(F.coalesce("dst_disambiguation", F.lit(False)), "disambiguation")
        .otherwise("redirect")
    )
    redirects = (
        chains.join(targets, "dst", "left")
        .withColumn("status", status)
        .select(
            "title",
            F.when(F.col("status") == "redirect", F.col("dst")).alias("entity_id"),
            "status",
            ((F.col("status") == "redirect") & F.col("dst_redirect").isNotNull()).alias("in_dump"),
        )
    )
    articles = pages.filter(~F.col("is_redirect")).select(
        "title",
        F.when(~F.col("is_disambiguation"), F.col("title")).alias("entity_id"),
        F.when(F.col("is_disambiguation"), "disambiguation").otherwise("article").alias("status"),
        (~F.col("is_disambiguation")).alias("in_dump"),
    )
    return articles.unionByName(redirects)


def resolve_column(df: DataFrame, titles: DataFrame, column: str) -> DataFrame:
    """Add ``entity_id``, ``status``, ``in_dump`` for the title in ``column``; titles absent from
    the dump keep themselves as entity id with status ``absent``."""
    found = titles.withColumnRenamed("title", column)
    return (
        df.join(found, column, "left")
        .withColumn("entity_id", F.when(F.col("status").isNull(), F.col(column)).otherwise(F.col("entity_id")))
        .withColumn("in_dump", F.coalesce("in_dump", F.lit(False)))
        .withColumn("status", F.coalesce("status", F.lit("absent")))
    )
