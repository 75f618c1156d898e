"""Entity-table open and lookup on a synthetic N x H table (default 1M x 768: 3 GB of float32 sums),
each figure beside its floor, measured in the same run, ratios first.

The ids are shaped like Wikipedia's titles (most share their first 8 bytes with another), with random
QIDs and an alias each (:func:`realistic_ids`). The floors: ``np.load(mmap_mode="r")`` of the same
sums as .npy for opening; for 1,024 names by id, QID or alias, a dict (name -> row) plus one fancy
index of the very bytes the table reads, its sidecar memory-mapped by numpy (:func:`sidecar_rows`),
so that both read one page cache (and 5M x 768 needs the sidecar's 16 GB of it, not 31); one BLAS
matrix-vector product over the .npy for ``most_similar``.

Writes the table (Parquet + its Arrow sidecar) to a temp dir, deleted afterwards, then reports the
open time, the latency of :meth:`EntityTable.lookup` on batches of random ids (p50 / p95 over
``--repeats`` batches) and the process's resident memory (``/proc/self/status``: VmRSS, split into
RssAnon, memory the process owns, and RssFile, pages of mapped files, i.e. the page cache of the
sidecar that lookups touched, which the kernel can drop at any time) before opening, after opening
and after the lookups of each batch size, against the size of the files on disk.  Opening maps the
sidecar and reads its footer only, so VmRSS must grow by megabytes, not by the table's size; lookups
then map the pages they touch (the kernel maps 64 KiB around a page fault, 2 MiB where the page cache
holds the file in 2 MiB folios), so RssFile
grows with the rows read, up to the sidecar's size, while RssAnon stays flat.  ``--parquet-read`` also
times reading the Parquet file whole (what a plain ``pyarrow.parquet.read_table`` user would do) and
the memory that takes. ``--similar N`` times :meth:`EntityTable.most_similar` (k=10) for N random
entities, the first call apart (it maps the sidecar's pages; later calls find them in the page cache).
Before any timing the sidecar is put in the page cache (:func:`page_in`), and the .npy before its
``most_similar`` floor: taking turns with ours where both files fit in the memory available, else
in two phases, each file paged in (the other dropped) before its queries. The sums are generated into
the .npy chunk by chunk, and the ids in the table's order, so that 5M x 768 (whose sums do not fit in
this VM's memory) is written as 1M is: ``--entities 5000000``.

    nice -n 10 python benchmarks/table_lookup.py --repeats 200 --batches 1 1024 --similar 9 --out table.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pyarrow as pa
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


def write_synthetic(path: Path, ids: list[str], qids: list[str], aliases: list[list[str]], sums: np.ndarray) -> float:
    """Write a table of ``sums`` for ``ids``, with their QIDs and aliases; returns seconds."""
    began = time.perf_counter()
    hidden = sums.shape[1]
    meta = {
        "model": "synthetic",
        "revision": "none",
        "hidden_size": hidden,
        "representation": "random",
        "max_seq_len": 128,
        "norm": 7.0,
    }
    write_table(path, ids, sums, np.ones(len(ids)), np.ones(len(ids)), meta, qids=qids, aliases=aliases)
    return time.perf_counter() - began


WORDS = ("List", "History", "Battle", "John", "Saint", "University", "National", "River", "Church", "Station")


def realistic_ids(n: int, rng: np.random.Generator) -> tuple[list[str], list[str], list[list[str]]]:
    """Titles shaped like Wikipedia's (most share their first 8 bytes with another: ``List of ...``,
    ``John ...``), distinct random QIDs up to Q130000000, and one alias each (the title lower-cased);
    in the table's order (by title), so that writing reads the sums in order."""
    heads = rng.integers(0, len(WORDS), n)
    numbers = rng.permutation(n)
    titles = sorted(f"{WORDS[h]} of Place {i} (disambiguation {i % 97})" for h, i in zip(heads, numbers))
    qids = [f"Q{q}" for q in rng.choice(130_000_000, n, replace=False)]
    return titles, qids, [[t.lower()] for t in titles]


def page_in(path: Path, *others: Path) -> None:
    """``path`` into the page cache, read in order after its pages were dropped, and ``others`` dropped
    first to make room. How a file came into the cache decides how much of it a page fault maps (ext4
    and xfs cache large folios, mapped 2 MiB at a fault where they are that large): a .npy written in
    one call took a sixth of the faults a row of a sidecar written batch by batch (37 against 218 for
    1,024 rows), when the floor's gathers read the .npy; read back alike, they took the same."""
    for each in (*others, path):
        fd = os.open(each, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # drops the pages no process maps
            while each == path and os.read(fd, 1 << 23):
                pass
        finally:
            os.close(fd)


def fits_in_memory(*paths: Path) -> bool:
    """Whether the files fit in the page cache together: their size within 90 % of MemAvailable."""
    meminfo = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    available = int(meminfo["MemAvailable"].split()[0]) * 1024
    return sum(p.stat().st_size for p in paths) <= 0.9 * available


def sidecar_rows(sidecar: Path, hidden: int) -> tuple[np.ndarray, np.ndarray]:
    """The floor's view of the bytes the table reads: the sidecar memory-mapped by numpy, seen as rows of
    ``hidden`` floats starting at every 4th byte, and the view's row of each table row (its record
    batch's vectors' offset in the file, which Arrow's reader of the same bytes gives, plus its own).
    One fancy index of the view, as of an .npy, gathers rows; no second copy of 16 GB to cache. Every
    page is mapped before it is returned (:func:`map_pages`)."""
    raw = np.memmap(sidecar, np.uint8, mode="r")
    floats = raw[: len(raw) // 4 * 4].view(np.float32)
    view = np.lib.stride_tricks.as_strided(
        floats, shape=(len(floats) - hidden + 1, hidden), strides=(4, 4), writeable=False
    )
    data = pa.py_buffer(raw)
    reader = pa.ipc.open_file(data)
    starts = []
    for i in range(reader.num_record_batches):
        vectors = reader.get_batch(i).column("vector_sum").flatten()
        first = (vectors.buffers()[1].address - data.address) // 4 + vectors.offset
        starts.append(first + hidden * np.arange(len(vectors) // hidden, dtype=np.int64))
    map_pages(raw)
    return view, np.concatenate(starts)


def map_pages(*arrays: np.ndarray) -> None:
    """Every page of each array mapped into this process (a byte read a page), so that no timed call pays
    the faults of the first touch of a page that another call, sharing its mapping, spared it:
    ``vector_sums`` and ``lookup`` share the table's mapping, and whichever of them ran first in a turn
    took the faults of both (at 5M x 768, ``lookup`` then ran in 0.6x the time of ``vector_sums``)."""
    for array in arrays:
        int(array.reshape(-1).view(np.uint8)[::4096].sum())


def synthetic_sums(path: Path, rows: int, hidden: int, rng: np.random.Generator) -> np.ndarray:
    """Random float32 sums [rows, hidden] written chunk by chunk into the .npy ``path`` (the floors'
    array) and returned memory-mapped: 5M x 768 is 15 GB, more than this machine's memory."""
    sums = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(rows, hidden))
    for lo in range(0, rows, 1 << 16):
        sums[lo : lo + (1 << 16)] = rng.standard_normal((min(1 << 16, rows - lo), hidden), dtype=np.float32)
    sums.flush()
    return sums


def open_ms(path: Path, repeats: int = 50) -> tuple[float, float]:
    """p50 ms of :meth:`EntityTable.open` and of its floor, ``np.load(mmap_mode="r")`` of the same sums as
    .npy, taken in turn."""
    ours: list[float] = []
    floor: list[float] = []
    for _ in range(repeats):
        for times, call in ((ours, EntityTable.open), (floor, lambda p: np.load(p.with_suffix(".npy"), mmap_mode="r"))):
            began = time.perf_counter()
            call(path)
            times.append(1000 * (time.perf_counter() - began))
    return float(np.median(ours)), float(np.median(floor))


def similar_floor_ms(path: Path, table: EntityTable, ids: list[str], n: int, rng: np.random.Generator) -> dict:
    """p50 ms of ``most_similar`` (k=10) and of its floor on the same random entities: BLAS over the
    memory-mapped .npy (one matrix-vector product, the row lengths precomputed as the table's are), then
    the same top-k. Both first warmed by one query; each call after 0.5 s at rest: OpenBLAS's threads
    spin for about 0.1 s after a product before they sleep, and ``most_similar`` right after one ran in
    2.2x its time (117 ms against 54 ms rested). Taking turns at going first where the .npy and the
    sidecar fit in the page cache together; else in two phases, each after its file was paged in."""
    npy, sidecar = path.with_suffix(".npy"), sidecar_path(path)
    alternate = fits_in_memory(npy, sidecar)
    page_in(npy) if alternate else page_in(npy, sidecar)
    mapped = {"npy": np.load(npy, mmap_mode="r")}  # unmapped before a second phase: its pages can go
    lengths = np.concatenate(
        [np.linalg.norm(mapped["npy"][lo : lo + 65536], axis=1) for lo in range(0, len(ids), 65536)]
    )
    rows = table.rows(ids)

    def floor(i: int) -> None:
        mm, row = mapped["npy"], rows[i]
        scores = (mm @ (mm[row] / np.linalg.norm(mm[row]))) / lengths
        scores[row] = -np.inf
        np.argpartition(-scores, 10)[:10]

    ours: list[float] = []
    theirs: list[float] = []
    calls = [(theirs, floor), (ours, lambda i: table.most_similar(ids[i], k=10))]
    queries = rng.integers(0, len(ids), n + 1)
    if alternate:
        turns = [calls[t % 2 :] + calls[: t % 2] for t in range(n + 1)]
    else:
        turns = [calls[:1]] * (n + 1) + [calls[1:]] * (n + 1)
    for turn, calls_now in enumerate(turns):
        if not alternate and turn == n + 1:
            mapped.clear()
            page_in(sidecar, npy)
        for times, call in calls_now:
            time.sleep(0.5)
            began = time.perf_counter()
            call(queries[turn % (n + 1)])
            times.append(1000 * (time.perf_counter() - began))
    return {
        "p50": float(np.median(ours[1:])),
        "floor_p50": float(np.median(theirs[1:])),
        "repeats": n,
        "taking_turns": alternate,
    }


def by_kind_ms(
    path: Path, table: EntityTable, keys: dict[str, list[str]], batch: int, repeats: int, rng: np.random.Generator
) -> dict:
    """p50 ms of ``batch`` random entities named by id, QID or alias, side by side with the floor in one
    loop: a dict (key -> row, built beforehand) and one fancy index of the table's own sidecar, mapped
    by numpy (:func:`sidecar_rows`; the offsets of the rows asked for, then the rows). Ours as
    users call it: ``vector_sums`` (the floor's work: rows, unnormalised) and ``lookup`` (normalised),
    by id, or of ``find(names, by=[kind])``. Wall time, and process CPU time (``_cpu``), which a loaded
    machine inflates less (at nice 10 under a load of 10, a call of 2 ms CPU took 6 ms); the three take
    turns at going first, after ``repeats // 5`` untimed rounds, every page of both maps mapped. Each
    kind's index is built by a first call, timed apart with the peak of numpy's memory during it
    (``tracemalloc``, which numpy reports its arrays to: an N x H gather would show as gigabytes;
    Arrow's own pool is not counted)."""
    view, row_at = sidecar_rows(sidecar_path(path), table.hidden_size)
    stored = pa.ipc.open_file(pa.memory_map(str(sidecar_path(path)))).schema.names
    lengths = table.column("sum_length").chunks if "sum_length" in stored else []  # none in a "before" run
    map_pages(*(sums for _, sums in table.batches()), *(chunk.to_numpy() for chunk in lengths))
    result = {}
    for kind, names in keys.items():
        index = {name: i for i, name in enumerate(names)}
        tracemalloc.start()
        began = time.perf_counter()
        table.find(names[:16], by=[kind])
        first = 1000 * (time.perf_counter() - began)
        grown = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()

        def ours(query: list[str], normalise: bool, kind: str = kind) -> None:
            ids = query if kind == "id" else table.find(query, by=[kind])
            table.lookup(ids) if normalise else table.vector_sums(ids)

        calls = {
            "floor": lambda query: view[row_at[np.array([index[q] for q in query])]],
            "vector_sums": lambda query: ours(query, False),
            "lookup": lambda query: ours(query, True),
        }
        times: dict[str, list[float]] = {f"{name}{cpu}": [] for name in calls for cpu in ("", "_cpu")}
        for turn in range(-(repeats // 5), repeats):
            query = [names[i] for i in rng.integers(0, len(names), batch)]
            for name in [*calls][turn % 3 :] + [*calls][: turn % 3]:
                began, began_cpu = time.perf_counter(), time.process_time()
                calls[name](query)
                if turn >= 0:
                    times[name].append(1000 * (time.perf_counter() - began))
                    times[f"{name}_cpu"].append(1000 * (time.process_time() - began_cpu))
        result[kind] = {
            **{k: float(np.median(v)) for k, v in times.items()},
            "first_call": first,
            "numpy_peak_mb": grown,
        }
    return result


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
    ids, qids, aliases = realistic_ids(args.entities, rng)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        path = Path(tmp) / "table.parquet"
        sums = synthetic_sums(path.with_suffix(".npy"), len(ids), args.hidden, rng)
        write_seconds = write_synthetic(path, ids, qids, aliases, sums)
        keys = {"id": ids, "qid": qids, "alias": [a[0] for a in aliases]}
        del sums, aliases  # 5M lists of one alias: 0.3 GB less beside the page cache
        page_in(sidecar_path(path), path.with_suffix(".npy"))  # the .npy's pages dropped: it waits till its floor
        sidecar_fits = fits_in_memory(sidecar_path(path))
        load = os.getloadavg()
        rss = {"before_open": rss_mb()}
        began = time.perf_counter()
        table = EntityTable.open(path)
        open_seconds = time.perf_counter() - began
        rss["after_open"] = rss_mb()
        opens = open_ms(path)
        kinds = by_kind_ms(path, table, keys, 1024, args.repeats, rng)
        ratios = {"open": opens[0] / opens[1]}
        for k, v in kinds.items():
            for call, cpu in itertools.product(("vector_sums", "lookup"), ("", "_cpu")):
                ratios[f"1024 by {k}: {call}{cpu}"] = v[f"{call}{cpu}"] / v[f"floor{cpu}"]
        lookup = {}
        for n in args.batches:
            lookup[str(n)] = latencies_ms(table, ids, n, args.repeats, rng)
            rss[f"after_lookups_of_{n}"] = rss_mb()
        result = {
            "ratios_to_floor": ratios,
            "open_ms": {"p50": opens[0], "floor_p50": opens[1]},
            "find_and_lookup_1024_ms": kinds,
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
            "entities": args.entities,
            "hidden": args.hidden,
            "parquet_mb": path.stat().st_size / 2**20,
            "sidecar_mb": sidecar_path(path).stat().st_size / 2**20,
            "sidecar_fits_in_memory_available": sidecar_fits,
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
            side = similar_floor_ms(path, table, ids, args.similar, rng)
            result["most_similar_against_floor_ms"] = side
            result["ratios_to_floor"]["most_similar"] = side["p50"] / side["floor_p50"]
            result["rss_mb"]["after_most_similar"] = rss_mb()
        result["load_average_1_5_15"] = {"before": load, "after": os.getloadavg()}
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
