"""One place that decides how pelt talks to Spark.

Every Spark stage (corpus, linking, sampling) and the test-suite get their session here, so that
settings that matter for correctness (UTC, the Python that runs UDFs) and for a small machine
(partitions sized to the input, no UI) are the same everywhere.
"""

from __future__ import annotations

import os
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
SPLIT_BYTES = "spark.sql.files.maxPartitionBytes"


def get_spark(
    master: str = "local[*]",
    threads: int | None = None,
    app_name: str = "pelt",
    driver_memory: str = "4g",
    shuffle_partitions: int | None = None,
    split_bytes: int | None = None,
    conf: dict[str, str] | None = None,
) -> SparkSession:
    """Return a SparkSession for ``master`` (``local[N]``, ``spark://``, ``yarn``, ``k8s://``).

    ``{threads}`` in ``master`` becomes ``threads`` (a Snakemake job's thread count), so one config
    value serves laptops and workstations alike.

    UDF workers must run the interpreter that has pelt installed, not whatever ``python3`` is on
    PATH, or they fail with import errors far from the cause.

    ``shuffle_partitions`` and ``split_bytes`` (``spark.sql.files.maxPartitionBytes``) given here
    win; left unset, a value from ``spark-defaults.conf`` (or ``spark-submit --conf``) is kept, and
    otherwise a stage sizes them from its input (:func:`fit_partitions`). They used to be fixed
    here, which silently overrode a cluster's own ``spark-defaults.conf``.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if "{threads}" in master:
        master = master.format(threads=threads or os.cpu_count() or 1)
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.driver.memory", driver_memory)
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.python.worker.reuse", "true")
    )
    if shuffle_partitions is not None:
        builder = builder.config(SHUFFLE_PARTITIONS, str(shuffle_partitions))
    if split_bytes is not None:
        builder = builder.config(SPLIT_BYTES, str(split_bytes))
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    _ship_library(spark)
    fit_partitions(spark, 0)
    return spark


def fit_partitions(spark: SparkSession, input_bytes: int) -> int:
    """Size the shuffles for a stage that reads ``input_bytes``; return its number of splits, the
    fewest partitions its documents should be in before heavy per-document work.

    A setting made explicitly (``get_spark``'s arguments, ``spark-defaults.conf``, ``--conf``: all
    end up in the SparkConf) is kept. Otherwise the shuffle partitions follow the input, one per
    split (``spark.sql.files.maxPartitionBytes``, 128 MB by default) and at least two per core:
    a fixed number is either thousands of empty tasks on a laptop sample or partitions of many GB
    on all of Wikipedia. Adaptive execution still coalesces small shuffle partitions. The documents
    get as many partitions, so that no task segments a whole corpus file (a Parquet file written by
    one task is one split however big it is).
    """
    split = int(spark._jsparkSession.sessionState().conf().filesMaxPartitionBytes())
    splits = -(-input_bytes // split)
    if not spark.sparkContext.getConf().contains(SHUFFLE_PARTITIONS):
        spark.conf.set(SHUFFLE_PARTITIONS, str(max(2 * spark.sparkContext.defaultParallelism, splits)))
    return splits


def input_bytes(paths: str | Iterable[str]) -> int:
    """Bytes of the files under ``paths`` (files or folders, e.g. Parquet datasets) on this machine;
    0 for a path it cannot see (a cluster's file system): then only the minimum applies."""
    total = 0
    for path in [paths] if isinstance(paths, str) else paths:
        root = Path(path)
        files = root.rglob("*") if root.is_dir() else [root] if root.exists() else []
        total += sum(f.stat().st_size for f in files if f.is_file())
    return total


def _ship_library(spark: SparkSession) -> None:
    """Send this pelt to the executors as a zip on their Python path.

    UDFs pickle references to ``pelt.*`` functions; executors of a cluster, or Python workers in a
    conda environment that has pelt's dependencies but not pelt, could not import them otherwise.
    """
    package = Path(__file__).resolve().parent
    archive = Path(tempfile.mkdtemp(prefix="pelt-pyfiles-")) / "pelt.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for source in sorted(package.rglob("*.py")):
            zf.write(source, source.relative_to(package.parent))
    spark.sparkContext.addPyFile(str(archive))


def map_rows(df: DataFrame, fn: Callable[[dict[str, Any]], Iterable[dict[str, Any]]], ddl: str) -> DataFrame:
    """Apply ``fn`` (one input row as a dict -> output rows as dicts) in Arrow batches.

    ``mapInArrow`` keeps nested arrays of structs cheap to move between the JVM and Python, unlike
    row-at-a-time UDFs; ``ddl`` is the Spark schema of the output rows.
    """
    schema = StructType.fromDDL(ddl)
    arrow_schema = to_arrow_schema(schema)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            rows = [out for row in batch.to_pylist() for out in fn(row)]
            yield pa.RecordBatch.from_pylist(rows, schema=arrow_schema)

    return df.mapInArrow(run, schema)
