"""Entity-table open and lookup on a synthetic N x H table (default 1M x 768, 3 GB of vectors).

Reports write time, open time and resident memory after opening (the table must not be read into
RAM), and the time of lookups of random batches of ids, against reading the Parquet file whole
(what a plain ``pq.read_table`` user would do; ``--skip-parquet-read`` when RAM is short).

    python benchmarks/table_lookup.py --entities 1000000 --out results/benchmarks/table.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from pelt.table import EntityTable, write_table


def rss_mb() -> float:
    """Anonymous resident memory of this process (Linux).

    Pages of the memory-mapped sidecar that lookups touch (and the kernel's read-ahead around them)
    count as file-backed RSS: page cache the kernel drops under pressure, not memory the table holds.
    """
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no RssAnon in /proc/self/status")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entities", type=int, default=1_000_000)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 64, 1000, 10_000])
    parser.add_argument("--skip-parquet-read", action="store_true")
    parser.add_argument("--dir", type=Path, help="where to write the table (default: a temp dir)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    ids = [f"Q{i}" for i in rng.permutation(args.entities)]
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        path = Path(tmp) / "table.parquet"
        began = time.perf_counter()
        sums = rng.standard_normal((args.entities, args.hidden), dtype=np.float32)
        meta = {
            "model": "synthetic",
            "revision": "none",
            "hidden_size": args.hidden,
            "representation": "random",
            "max_seq_len": 128,
            "norm": 7.0,
        }
        write_table(path, ids, sums, np.ones(args.entities), np.ones(args.entities), meta)
        write_seconds = time.perf_counter() - began
        del sums

        rss_before = rss_mb()
        began = time.perf_counter()
        table = EntityTable.open(path)
        result = {
            "entities": args.entities,
            "hidden": args.hidden,
            "table_bytes": path.stat().st_size,
            "write_seconds": write_seconds,
            "open_seconds": time.perf_counter() - began,
            "open_anon_rss_increase_mb": rss_mb() - rss_before,
            "lookup_ms": {},
        }
        for n in args.batches:
            query = [ids[i] for i in rng.integers(0, args.entities, n)]
            began = time.perf_counter()
            table.lookup(query)
            result["lookup_ms"][n] = 1000 * (time.perf_counter() - began)
        result["anon_rss_after_lookups_mb"] = rss_mb() - rss_before
        if not args.skip_parquet_read:
            began = time.perf_counter()
            pq.read_table(path)
            result["parquet_read_all_seconds"] = time.perf_counter() - began
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
