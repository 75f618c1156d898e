"""One place that decides how pelt talks to Spark.

Every Spark stage (corpus, linking, sampling) and the test-suite get their session here, so that
settings that matter for correctness (UTC, the Python that runs UDFs) and for a small machine
(partitions sized to the input, no UI) are the same everywhere.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import threading
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

from pelt.logs import Progress, progress_interval

logger = logging.getLogger(__name__)

SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
SPLIT_BYTES = "spark.sql.files.maxPartitionBytes"

# Rows per Arrow batch sent to a Python worker (the config's ``spark.arrow_batch_rows``), and rows
# of a batch turned into Python objects at a time by map_rows: a worker's memory is bounded by
# what one slice of documents and its outputs hold, not by the batch.
ARROW_BATCH_ROWS = 100
SLICE_ROWS = 64

# The JVM's own log: warnings and errors only, one line each, and without the lines that every
# local run prints about a missing native Hadoop library (Spark has a pure-Java fallback).
_LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yyyy-MM-dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.native.name = org.apache.hadoop.util.NativeCodeLoader
logger.native.level = error
"""


def get_spark(
    master: str = "local[*]",
    threads: int | None = None,
    app_name: str = "pelt",
    driver_memory: str = "4g",
    shuffle_partitions: int | None = None,
    split_bytes: int | None = None,
    conf: dict[str, str] | None = None,
    arrow_batch_rows: int = ARROW_BATCH_ROWS,
    java_options: str = "",
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

    ``arrow_batch_rows`` caps the rows of each Arrow batch sent to a Python worker (Spark's default,
    10,000, is some 130 MB of Wikipedia articles before any output exists).

    ``java_options`` are added to the driver JVM's options (in local mode, the whole of Spark). A
    stage on a small corpus is mostly the JVM's start and a hundred small jobs, where the optimising
    compiler and the parallel collector's threads cost more CPU than they return: the demo's config
    runs the client compiler only (``-XX:TieredStopAtLevel=1 -XX:+UseSerialGC``, 40 % less CPU a
    stage), which a long job on a full dump should not.
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
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", str(arrow_batch_rows))
        .config("spark.python.worker.reuse", "true")
    )
    if shuffle_partitions is not None:
        builder = builder.config(SHUFFLE_PARTITIONS, str(shuffle_partitions))
    if split_bytes is not None:
        builder = builder.config(SPLIT_BYTES, str(split_bytes))
    for key, value in {**_quiet_jvm(master, java_options), **(conf or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    _ship_library(spark)
    fit_partitions(spark, 0)
    if getattr(spark.sparkContext, "_pelt_progress", None) is None:  # one watcher per context
        spark.sparkContext._pelt_progress = watch_progress(spark)  # type: ignore[attr-defined]
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


def _quiet_jvm(master: str, java_options: str = "") -> dict[str, str]:
    """Settings that keep the JVM's start-up chatter out of a job's log, with ``java_options`` beside
    them in the driver's options (a ``conf`` entry overrides them).

    Spark's default log4j profile announces itself and logs at INFO until Python lowers the level;
    our own profile (:data:`_LOG4J2`) is in place before the JVM starts. In local mode everything
    runs in one JVM, so binding to loopback is right and silences the warning about a hostname
    that resolves to it.
    """
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    profile = Path(tempfile.mkdtemp(prefix="pelt-log4j-")) / "log4j2.properties"
    profile.write_text(_LOG4J2)
    options = f"-Dlog4j2.configurationFile={profile.as_uri()} {java_options}".strip()
    return {"spark.driver.extraJavaOptions": options}


def watch_progress(spark: SparkSession, interval: float | None = None) -> threading.Event:
    """Log every active Spark stage's progress each ``interval`` seconds, from a daemon thread.

    A Spark action is one call that may last hours on a full dump, and with the console progress bar
    off (it redraws one line) nothing else tells a log's reader that the job moves. Per stage: tasks
    done/total, rate and ETA (:class:`pelt.logs.Progress`), tasks running and failed, and the rows
    read and written by finished tasks (Spark's status store, where this Spark version exposes it).
    The watcher ends when the context stops or when the returned event is set.
    """
    stop = threading.Event()
    every = progress_interval() if interval is None else interval
    threading.Thread(
        target=_watch, args=(spark.sparkContext, every, stop), name="pelt-spark-progress", daemon=True
    ).start()
    return stop


def _watch(context: Any, interval: float, stop: threading.Event) -> None:
    stages: dict[int, Progress] = {}
    while not stop.wait(interval) and context._jsc is not None:
        try:
            _report(context, stages)
        except Exception as err:  # noqa: BLE001 - a context stopping under us, or a store API that moved
            if context._jsc is not None:
                logger.warning("Spark progress: no more progress lines after %s", err)
            return


def _report(context: Any, stages: dict[int, Progress]) -> None:
    """One line per active stage; the stages that ended since the last call get their closing line."""
    tracker = context.statusTracker()
    active = set(tracker.getActiveStageIds())
    rows = _stage_rows(context)
    for stage_id in sorted(active | set(stages)):
        info = tracker.getStageInfo(stage_id)
        if stage_id not in stages:
            if info is None:
                continue
            stages[stage_id] = Progress(
                f"Spark stage {stage_id} ({info.name[:80]})",
                info.numTasks,
                "tasks",
                interval=0,
                start=info.numCompletedTasks,
                terminal=False,
            )
        bar = stages[stage_id]
        if stage_id in active:
            read, written = rows.get(stage_id, (0, 0))
            bar.detail = _detail(info.numActiveTasks, info.numFailedTasks, read, written)
            bar.update(info.numCompletedTasks - bar.done)
        else:  # ended since the last call: its closing line only
            bar.done = info.numCompletedTasks if info is not None else bar.done
            bar.detail = None
            bar.close()
            del stages[stage_id]


def _detail(running: int, failed: int, read: int, written: int) -> Callable[[], str]:
    text = f"{running} running"
    if failed:
        text += f", {failed} failed"
    if read or written:
        text += f", rows read {read:,}, written {written:,}"
    return lambda: text


def _stage_rows(context: Any) -> dict[int, tuple[int, int]]:
    """Rows read and written per active stage (finished tasks), from the JVM's status store."""
    try:
        stages = context._jsc.sc().statusStore().activeStages().iterator()
    except Exception:  # noqa: BLE001 - not public API: without it the lines only lack the row counts
        return {}
    rows = {}
    while stages.hasNext():
        stage = stages.next()
        rows[stage.stageId()] = (
            stage.inputRecords() + stage.shuffleReadRecords(),
            stage.outputRecords() + stage.shuffleWriteRecords(),
        )
    return rows


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
