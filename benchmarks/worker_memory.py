"""Peak memory of a Python worker of the linking stage's heaviest step, as the corpus grows (issue 14 item 4).

A Spark Python worker running ``segment_document`` over a partition is reproduced outside Spark, in
one fresh process per run: Arrow batches of documents in, output batches out. Two ways of running:

* ``whole``: how ``map_rows`` ran before issue 14: Spark's default batch of 10,000 rows, each batch
  turned into Python rows whole and its outputs held until the batch is done, spaCy's vocabulary
  unbounded;
* ``sliced``: ``pelt.spark.map_slices`` as ``map_rows`` runs it now, batches of
  ``ARROW_BATCH_ROWS`` rows, slices of ``SLICE_ROWS`` rows, each slice in
  ``pelt.linking.sentences.bounded_vocabulary`` (a fresh spaCy pipeline once the vocabulary is full).

Input batches are made as the worker asks for them (Spark sends one batch at a time); the sample's
articles themselves are parsed before the measurement starts.

The input is the real dump sample's articles, replicated: replica ``r`` shifts every ASCII letter by
``r`` places (text, titles and link targets alike; lengths and spans stay), so each replica brings
words spaCy has not seen, as new articles of a real dump do. ``--cap`` lowers spaCy's vocabulary cap
so that the sample passes it (the library's 250,000 strings would need some 20 replicas before
the bound shows).

    python benchmarks/worker_memory.py --replicas 1 4 16 --cap 20000 --out results/benchmarks/worker_memory.json
    python benchmarks/worker_memory.py --replicas 1 4 16 --cap 20000 --modes sliced --batch-rows 100

A sliced worker holds one batch (``--batch-rows`` documents; the sample's articles average 27 K
characters, so 1,000 rows are some 27 MB of text) and a vocabulary up to the cap: its peak stops
growing once the input fills a batch, at 10 replicas for 1,000 rows, at 1 for 100.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

import pelt.linking.sentences as sentences
from pelt.corpus.wikipedia.dump import iter_dump_pages
from pelt.corpus.wikipedia.wikitext import wikitext_to_plain
from pelt.linking.segmentation import segment_document
from pelt.spark import ARROW_BATCH_ROWS, map_slices

REPO = Path(__file__).resolve().parents[1]
DUMP = REPO.parent / "shared" / "data" / "wikipedia_dump_sample"
SPARK_DEFAULT_BATCH_ROWS = 10_000
OUTPUT = pa.schema(
    [
        ("doc_id", pa.string()),
        ("title", pa.string()),
        ("sentences", pa.list_(pa.string())),
        (
            "anchors",
            pa.list_(
                pa.struct(
                    [
                        ("sent_idx", pa.int32()),
                        ("start", pa.int32()),
                        ("end", pa.int32()),
                        ("target", pa.string()),
                        ("text", pa.string()),
                    ]
                )
            ),
        ),
        ("candidates", pa.list_(pa.struct([("sent_idx", pa.int32()), ("name", pa.string())]))),
        ("n_invalid", pa.int32()),
        ("n_blank", pa.int32()),
    ]
)


def shift_letters(text: str, by: int) -> str:
    """ASCII letters moved ``by`` places in the alphabet, case kept: the same shape, other words."""
    if by == 0:
        return text
    return text.translate({ord(base) + i: ord(base) + (i + by) % 26 for base in "aA" for i in range(26)})


def sample_articles() -> list[tuple[int, str, str, list[Any]]]:
    """(page id, title, plain text, links) of the real dump sample's articles."""
    (dump,) = DUMP.glob("*.bz2")
    articles = [page for page in iter_dump_pages(dump) if page.ns == 0 and page.redirect_to is None]
    return [(page.page_id, page.title, *wikitext_to_plain(page.text)) for page in articles]


def corpus_batches(articles: list, replicas: int, batch_rows: int) -> Iterator[pa.RecordBatch]:
    """The articles ``replicas`` times, as Arrow batches of ``batch_rows`` documents, made as they
    are needed: a worker receives one batch at a time from Spark, never the partition."""
    rows: list[dict[str, Any]] = []
    for replica in range(replicas):
        for page_id, title, text, links in articles:
            shifted = [{"start": k.start, "end": k.end, "target": shift_letters(k.target, replica)} for k in links]
            rows.append(
                {
                    "doc_id": f"{replica}-{page_id}",
                    "title": shift_letters(title, replica),
                    "text": shift_letters(text, replica),
                    "links": shifted,
                }
            )
            if len(rows) == batch_rows:
                yield pa.RecordBatch.from_pylist(rows)
                rows = []
    if rows:
        yield pa.RecordBatch.from_pylist(rows)


def segment(row: dict[str, Any]) -> list[dict[str, Any]]:
    return segment_document(row)


def rss_mib() -> float:
    """Resident memory now (VmRSS), MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def worker(replicas: int, mode: str, cap: int | None, batch_rows: int) -> dict[str, Any]:
    """One run in this process: the worker's peak memory over the memory after start-up."""
    if cap is not None:
        sentences.VOCABULARY_CAP = cap
    articles = sample_articles()
    segment_document({"doc_id": "0", "title": "x", "text": "Warm up. Twice.", "links": []})
    start_rss = rss_mib()
    start = time.process_time()
    batch_rows = SPARK_DEFAULT_BATCH_ROWS if mode == "whole" else batch_rows
    batches = corpus_batches(articles, replicas, batch_rows)
    rows = 0
    if mode == "whole":  # map_rows before issue 14
        for batch in batches:
            out = [result for row in batch.to_pylist() for result in segment(row)]
            rows += pa.RecordBatch.from_pylist(out, schema=OUTPUT).num_rows
    else:
        for batch in map_slices(batches, segment, OUTPUT, scope=sentences.bounded_vocabulary):
            rows += batch.num_rows
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "mode": mode,
        "replicas": replicas,
        "documents": rows,
        "batch_rows": batch_rows,
        "characters": replicas * sum(len(text) for _, _, text, _ in articles),
        "cpu_s": round(time.process_time() - start, 1),
        "rss_after_start_mib": round(start_rss, 1),
        "peak_rss_mib": round(peak, 1),
        "peak_over_start_mib": round(peak - start_rss, 1),
        "spacy_strings_at_end": len(sentences.nlp().vocab.strings),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--modes", nargs="+", default=["whole", "sliced"], choices=["whole", "sliced"])
    parser.add_argument("--cap", type=int, default=None, help="spaCy vocabulary cap (default: the library's)")
    parser.add_argument("--batch-rows", type=int, default=ARROW_BATCH_ROWS, help="Arrow batch rows of the sliced runs")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--worker", nargs=2, metavar=("REPLICAS", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(int(args.worker[0]), args.worker[1], args.cap, args.batch_rows)))
        return
    results = []
    for replicas in args.replicas:
        for mode in args.modes:
            command = [sys.executable, __file__, "--worker", str(replicas), mode]
            command += ["--cap", str(args.cap)] if args.cap is not None else []
            command += ["--batch-rows", str(args.batch_rows)]
            run = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
            print(json.dumps(run), flush=True)
            results.append(run)
    report = {
        "machine": platform.platform(),
        "cpus": os.cpu_count(),
        "load_before": os.getloadavg(),
        "cap": args.cap or sentences.VOCABULARY_CAP,
        "runs": results,
    }
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
