"""Entity-table open and lookup on a synthetic N x H table (default 1M x 768: 3 GB of float32 sums).

Writes the table (Parquet + its Arrow sidecar) to a temp dir, deleted afterwards, then reports the
open time, the latency of :meth:`EntityTable.lookup` on batches of random ids (p50 / p95 over
``--repeats`` batches) and the process's resident memory (``/proc/self/status``: VmRSS, split into
RssAnon, memory the process owns, and RssFile, pages of mapped files, i.e. the page cache of the
sidecar that lookups touched, which the kernel can drop at any time) before opening, after opening
and after the lookups of each batch size, against the size of the files on disk.  Opening maps the
sidecar and reads its footer only, so VmRSS must grow by megabytes, not by the table's size; lookups
then map the pages they touch (the kernel maps up to 64 KiB around each page fault), so RssFile
grows with the rows read, up to the sidecar's size, while RssAnon stays flat.  ``--parquet-read`` also
times reading the Parquet file whole (what a plain ``pyarrow.parquet.read_table`` user would do) and
the memory that takes. ``--similar N`` times :meth:`EntityTable.most_similar` (k=10) for N random
entities, the first call apart (it maps the sidecar's pages; later calls find them in the page cache).

    python benchmarks/table_lookup.py --entities 1000000 --parquet-read --similar 10 --out results/benchmarks/table.json
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from pelt.table import EntityTable, write_table
from pelt.table.format import sidecar_path

RSS_FIELDS = ("VmRSS", "RssAnon", "RssFile")


def rss_mb() -> dict[str, float]:
    """VmRSS, RssAnon and RssFile of this process in MiB (Linux; psutil is not a dependency)."""
    values = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in RSS_FIELDS:
            values[key] = int(rest.split()[0]) / 1024  # reported in kB
    missing = [k for k in RSS_FIELDS if k not in values]
    if missing:
        raise RuntimeError(f"/proc/self/status lacks {missing}")
    return values


def write_synthetic(path: Path, ids: list[str], hidden: int, rng: np.random.Generator) -> float:
    """Write a table of random sums for ``ids``; returns seconds (generation included)."""
    began = time.perf_counter()
    sums = rng.standard_normal((len(ids), hidden), dtype=np.float32)
    meta = {
        "model": "synthetic",
        "revision": "none",
        "hidden_size": hidden,
        "representation": "random",
        "max_seq_len": 128,
        "norm": 7.0,
    }
    write_table(path, ids, sums, np.ones(len(ids)), np.ones(len(ids)), meta)
    return time.perf_counter() - began


def latencies_ms(table: EntityTable, ids: list[str], batch: int, repeats: int, rng: np.random.Generator) -> dict:
    """p50 / p95 / mean of ``lookup`` on ``repeats`` batches of ``batch`` random ids (one warm-up batch first),
    wall time; the p50 of its process CPU time (what a shared machine's load does not inflate), and of
    the wall time of finding the rows alone (``EntityTable.rows``: the id search)."""
    queries = [[ids[i] for i in rng.integers(0, len(ids), batch)] for _ in range(repeats + 1)]
    table.lookup(queries[0])
    times, cpu, rows = [], [], []
    for query in queries[1:]:
        began, began_cpu = time.perf_counter(), time.process_time()
        table.lookup(query)
        times.append(1000 * (time.perf_counter() - began))
        cpu.append(1000 * (time.process_time() - began_cpu))
        began = time.perf_counter()
        table.rows(query)
        rows.append(1000 * (time.perf_counter() - began))
    p50, p95 = np.percentile(times, [50, 95])
    return {
        "p50": float(p50),
        "p95": float(p95),
        "mean": float(np.mean(times)),
        "cpu_p50": float(np.median(cpu)),
        "finding_rows_p50": float(np.median(rows)),
        "repeats": repeats,
    }


def similar_ms(table: EntityTable, ids: list[str], n: int, rng: np.random.Generator) -> dict:
    """Milliseconds of ``most_similar`` (k=10), wall and process CPU time: the first call, then p50 / max
    over ``n`` more random entities (CPU time too, as the wall time of a shared machine varies)."""
    queries = [ids[i] for i in rng.integers(0, len(ids), n + 1)]
    wall, cpu = [], []
    for query in queries:
        began, began_cpu = time.perf_counter(), time.process_time()
        table.most_similar(query, k=10)
        wall.append(1000 * (time.perf_counter() - began))
        cpu.append(1000 * (time.process_time() - began_cpu))
    return {
        "first": {"wall": wall[0], "cpu": cpu[0]},
        "p50": {"wall": float(np.median(wall[1:])), "cpu": float(np.median(cpu[1:]))},
        "max": {"wall": max(wall[1:]), "cpu": max(cpu[1:])},
        "repeats": n,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entities", type=int, default=1_000_000)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 32, 1024])
    parser.add_argument("--repeats", type=int, default=200, help="timed batches per batch size")
    parser.add_argument("--parquet-read", action="store_true", help="also read the Parquet file whole")
    parser.add_argument("--similar", type=int, default=0, metavar="N", help="also time most_similar N times")
    parser.add_argument("--dir", type=Path, help="where the temp dir goes (default: the system's)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    ids = [f"Q{i}" for i in rng.permutation(args.entities)]
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        path = Path(tmp) / "table.parquet"
        write_seconds = write_synthetic(path, ids, args.hidden, rng)
        rss = {"before_open": rss_mb()}
        began = time.perf_counter()
        table = EntityTable.open(path)
        open_seconds = time.perf_counter() - began
        rss["after_open"] = rss_mb()
        lookup = {}
        for n in args.batches:
            lookup[str(n)] = latencies_ms(table, ids, n, args.repeats, rng)
            rss[f"after_lookups_of_{n}"] = rss_mb()
        result = {
            "machine": f"{platform.machine()}, Python {platform.python_version()}",
            "entities": args.entities,
            "hidden": args.hidden,
            "parquet_mb": path.stat().st_size / 2**20,
            "sidecar_mb": sidecar_path(path).stat().st_size / 2**20,
            "write_seconds": write_seconds,
            "open_seconds": open_seconds,
            "lookup_ms": lookup,
            "rss_mb": rss,
            "vmrss_growth_open_mb": rss["after_open"]["VmRSS"] - rss["before_open"]["VmRSS"],
            "rss_anon_growth_open_and_lookups_mb": rss[f"after_lookups_of_{args.batches[-1]}"]["RssAnon"]
            - rss["before_open"]["RssAnon"],
        }
        if args.similar:
            result["most_similar_ms"] = similar_ms(table, ids, args.similar, rng)
            result["rss_mb"]["after_most_similar"] = rss_mb()
        del table
        if args.parquet_read:
            before = rss_mb()["VmRSS"]
            began = time.perf_counter()
            whole = pq.read_table(path)
            result["parquet_read_all"] = {
                "seconds": time.perf_counter() - began,
                "vmrss_growth_mb": rss_mb()["VmRSS"] - before,
            }
            del whole
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
