"""map_rows streams its outputs per slice of an Arrow batch: the same rows as the whole batch at
once, never more than one slice's outputs held. map_rows itself runs in every linking test. And
the session's JVM runs with the options the config gives it."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any

import pyarrow as pa
from conftest import demo_java_options

from pelt.spark import map_slices

SCHEMA = pa.schema([("doc", pa.int64()), ("piece", pa.string())])


def pieces(row: dict[str, Any]) -> list[dict[str, Any]]:
    """0, 1 or 2 output rows per input row, so that slices give batches of different sizes."""
    return [{"doc": row["doc"], "piece": f"{row['text']}-{i}"} for i in range(row["doc"] % 3)]


def batches() -> list[pa.RecordBatch]:
    return [
        pa.RecordBatch.from_pylist([{"doc": d, "text": f"t{d}"} for d in range(start, stop)])
        for start, stop in ((0, 10), (10, 11), (11, 11), (11, 40))
    ]


def whole() -> list[dict[str, Any]]:
    """The unstreamed result: every batch's outputs at once."""
    return [out for batch in batches() for row in batch.to_pylist() for out in pieces(row)]


def test_streamed_output_equals_the_whole_batch_output():
    for slice_rows in (1, 3, 7, 1000):
        out = list(map_slices(batches(), pieces, SCHEMA, slice_rows=slice_rows))
        assert [row for batch in out for row in batch.to_pylist()] == whole()
        assert all(batch.schema == SCHEMA for batch in out)
    assert max(b.num_rows for b in map_slices(batches(), pieces, SCHEMA, slice_rows=3)) <= 2 * 3


def test_each_slice_runs_in_its_scope():
    entered: list[int] = []

    @contextmanager
    def scope():
        entered.append(len(entered))
        yield

    list(map_slices(batches(), pieces, SCHEMA, scope=scope, slice_rows=4))
    assert len(entered) == 3 + 1 + 0 + 8  # ceil(rows / 4) per batch


def test_java_options_reach_the_jvm_beside_the_log_profile(spark) -> None:
    """``spark.java_options`` (the demo's: the client compiler only) are options of the running JVM,
    and they do not replace the log4j profile that keeps the JVM's start-up chatter out of logs."""
    runtime = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
    arguments = list(runtime.getInputArguments())
    options = demo_java_options().split()
    assert options and "-XX:TieredStopAtLevel=1" in options
    assert set(options) <= set(arguments), arguments
    assert any(a.startswith("-Dlog4j2.configurationFile=") for a in arguments), arguments
