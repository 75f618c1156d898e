"""One place that decides how pelt talks to Spark.

Every Spark stage (corpus, linking, sampling) and the test-suite get their session here, so that
settings that matter for correctness (UTC, the Python that runs UDFs) and for a small machine
(few shuffle partitions, no UI) are the same everywhere.
"""

from __future__ import annotations

import os
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

# Rows per Arrow batch sent to a Python worker (the config's ``spark.arrow_batch_rows``), and rows
# of a batch turned into Python objects at a time by map_rows: a worker's memory is bounded by
# what one slice of documents and its outputs hold, not by the batch.
ARROW_BATCH_ROWS = 1000
SLICE_ROWS = 64


def get_spark(
    master: str = "local[*]",
    threads: int | None = None,
    app_name: str = "pelt",
    driver_memory: str = "4g",
    shuffle_partitions: int | None = None,
    conf: dict[str, str] | None = None,
    arrow_batch_rows: int = ARROW_BATCH_ROWS,
) -> SparkSession:
    """Return a SparkSession for ``master`` (``local[N]``, ``spark://``, ``yarn``, ``k8s://``).

    ``{threads}`` in ``master`` becomes ``threads`` (a Snakemake job's thread count), so one config
    value serves laptops and workstations alike.

    UDF workers must run the interpreter that has pelt installed, not whatever ``python3`` is on
    PATH, or they fail with import errors far from the cause.

    ``arrow_batch_rows`` caps the rows of each Arrow batch sent to a Python worker (Spark's default,
    10,000, is some 130 MB of Wikipedia articles before any output exists).
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if "{threads}" in master:
        master = master.format(threads=threads or os.cpu_count() or 1)
    if shuffle_partitions is None:
        # local[N] -> a few partitions per core; clusters set their own.
        shuffle_partitions = 4 * (os.cpu_count() or 2) if master.startswith("local") else 200
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.driver.memory", driver_memory)
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", str(arrow_batch_rows))
        .config("spark.python.worker.reuse", "true")
    )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    _ship_library(spark)
    return spark


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


def map_rows(
    df: DataFrame,
    fn: Callable[[dict[str, Any]], Iterable[dict[str, Any]]],
    ddl: str,
    scope: Callable[[], AbstractContextManager[Any]] = nullcontext,
) -> DataFrame:
    """Apply ``fn`` (one input row as a dict -> output rows as dicts) in Arrow batches.

    ``mapInArrow`` keeps nested arrays of structs cheap to move between the JVM and Python, unlike
    row-at-a-time UDFs; ``ddl`` is the Spark schema of the output rows. ``scope`` is entered
    around each slice of rows (:func:`map_slices`), e.g. a spaCy memory zone.
    """
    schema = StructType.fromDDL(ddl)
    return df.mapInArrow(partial(map_slices, fn=fn, schema=to_arrow_schema(schema), scope=scope), schema)


def map_slices(
    batches: Iterable[pa.RecordBatch],
    fn: Callable[[dict[str, Any]], Iterable[dict[str, Any]]],
    schema: pa.Schema,
    scope: Callable[[], AbstractContextManager[Any]] = nullcontext,
    slice_rows: int = SLICE_ROWS,
) -> Iterator[pa.RecordBatch]:
    """``fn``'s output rows, one Arrow batch per ``slice_rows`` input rows.

    Only one slice of a batch exists as Python objects at a time, and its outputs leave as soon as
    the slice is done: a whole batch's outputs held at once were about 13.5 MB per million
    characters of text (issue 14), whatever the batch size.
    """
    for batch in batches:
        for offset in range(0, batch.num_rows, slice_rows):
            with scope():
                rows = [out for row in batch.slice(offset, slice_rows).to_pylist() for out in fn(row)]
            if rows:
                yield pa.RecordBatch.from_pylist(rows, schema=schema)
