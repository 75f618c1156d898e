"""Linking quality on the real dump sample: the paper's heuristic against hidden Wikipedia anchors.

A seeded share of each article's anchors is hidden (made plain text), the corpus is linked again,
and the mentions found at the hidden spans are scored against the hidden anchors (definitions in
:mod:`pelt.linking.evaluation`). Four linkers are compared on the same documents and alias table:

* ``heuristic``: Algorithm 1 of the paper (``link_wikipedia``, up to ``--max-iterations``);
* ``heuristic, 1 iteration``: the same, S' = the document's own links and their neighbours only;
* ``heuristic, unpruned``: Algorithm 1 on every alias occurrence and every entity of the name
  (``NO_PRUNING``: no link probability, prior, cap or stop-word rule), as before the pruning;
* ``every alias``: every occurrence of every alias linked to its most frequent entity
  (``link_by_string`` with ``most_frequent_entity`` names: the linker's own name finder, matching
  as written like the heuristic).

Then string linking on the S2ORC sample (no anchors, so no gold): how many FewRel 2.0 entity
names (``val_pubmed``, all lower case) are found, matching as written vs lower-case names in any
casing (``link_by_string``'s default).

    python benchmarks/linking_quality.py --out results/benchmarks/linking_quality.json
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq

from pelt.corpus.s2orc import build_s2orc_corpus
from pelt.corpus.wikipedia.build import build_wikipedia_corpus
from pelt.linking.candidates import NO_PRUNING, Pruning
from pelt.linking.evaluation import (
    Mention,
    alias_coverage,
    hide_anchors_in_documents,
    most_frequent_entity,
    score_mentions,
)
from pelt.linking.link import LinkSettings, link_by_string, link_wikipedia
from pelt.spark import get_spark
from pelt.tasks.fewrel.data import read_fewrel

REPO = Path(__file__).resolve().parents[1]
DUMP = "../shared/data/wikipedia_dump_sample/*.bz2"
S2ORC = "../shared/data/s2orc_sample/sample.jsonl"
FEWREL2 = "../shared/data/fewrel/val_pubmed.json"
COLUMNS = (
    "precision",
    "recall",
    "f1",
    "precision_at_gold_spans",
    "span_recall",
    "tp",
    "wrong_entity",
    "wrong_span",
    "judged",
    "unjudged",
)


def read_mentions(path: str, method: str) -> list[dict]:
    """The mentions of one method from a mentions Parquet directory, as dicts."""
    return [r for r in pq.read_table(path).to_pylist() if r["method"] == method]


def keys(rows: list[dict]) -> list[Mention]:
    return [(r["doc_id"], r["sent_idx"], r["start"], r["end"], r["entity_id"]) for r in rows]


def s2orc_name_coverage(spark, work: Path, s2orc: str, fewrel2: str) -> dict[str, dict[str, int]]:
    """FewRel 2.0 names found in the S2ORC sample by string linking, as written vs any casing."""
    build_s2orc_corpus(spark, [s2orc], str(work / "s2orc_documents"))
    names = sorted({entity.name for instance in read_fewrel(fewrel2) for entity in (instance.head, instance.tail)})
    found = {}
    for label, any_case in (("as written", False), ("lower-case names in any casing", True)):
        out = str(work / f"s2orc_mentions_{any_case}")
        link_by_string(spark, str(work / "s2orc_documents"), {n: [n] for n in names}, out, any_case)
        mentions = read_mentions(out, "string")
        found[label] = {
            "names": len(names),
            "names_found": len({m["entity_id"] for m in mentions}),
            "mentions": len(mentions),
        }
    return found


def markdown(results: dict[str, dict[str, float]], columns: tuple[str, ...]) -> str:
    lines = ["| linker | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for name, scores in results.items():
        cells = [f"{scores[c]:.3f}" if isinstance(scores[c], float) else str(scores[c]) for c in columns]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dump", default=DUMP, help="dump file(s) or glob, relative to the repo root")
    parser.add_argument("--s2orc", default=S2ORC, help="S2ORC file for the string-linking count")
    parser.add_argument("--fewrel2", default=FEWREL2, help="FewRel 2.0 file whose names are counted")
    parser.add_argument("--share", type=float, default=0.3, help="share of each document's anchors hidden")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-iterations", type=int, default=10)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--out", default="results/benchmarks/linking_quality.json")
    parser.add_argument("--work", help="keep the intermediate Parquet here (default: a temporary directory)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    started = time.perf_counter()

    spark = get_spark(args.master, shuffle_partitions=4)
    seconds: dict[str, float] = {}

    def timed(step: str, fn, *a, **kw):
        start = time.perf_counter()
        result = fn(*a, **kw)
        seconds[step] = round(time.perf_counter() - start, 1)
        return result

    with tempfile.TemporaryDirectory(prefix="pelt-linking-quality-") as tmp:
        work = Path(args.work or tmp)
        p = {name: str(work / name) for name in ("documents", "pages", "kept", "hidden", "aliases", "gold")}
        corpus_counts = timed(
            "corpus", build_wikipedia_corpus, spark, [str(REPO / args.dump)], p["documents"], p["pages"]
        )
        hide_counts = timed(
            "hide",
            hide_anchors_in_documents,
            spark,
            p["documents"],
            args.share,
            args.seed,
            p["kept"],
            p["hidden"],
        )
        # Gold: the hidden anchors, resolved and placed in sentences by the linker like any anchor.
        gold_counts = timed(
            "gold",
            link_wikipedia,
            spark,
            p["hidden"],
            p["pages"],
            str(work / "gold_aliases"),
            p["gold"],
            LinkSettings(heuristic=False),
        )
        gold_rows = read_mentions(p["gold"], "anchor")
        gold = keys(gold_rows)

        linker_counts = {}
        predicted: dict[str, list[Mention]] = {}
        heuristics = (
            ("heuristic", args.max_iterations, Pruning()),
            ("heuristic, 1 iteration", 1, Pruning()),
            ("heuristic, unpruned", args.max_iterations, NO_PRUNING),
        )
        for name, iterations, pruning in heuristics:
            out = str(work / f"mentions-{len(predicted)}")
            linker_counts[name] = timed(
                name,
                link_wikipedia,
                spark,
                p["kept"],
                p["pages"],
                p["aliases"],
                out,
                LinkSettings(max_iterations=iterations, pruning=pruning),
            )
            predicted[name] = keys(read_mentions(out, "heuristic"))
        seeds: dict[str, set[str]] = defaultdict(set)  # entities linked in each document, and its own
        for doc_id, _, _, _, entity_id in keys(read_mentions(str(work / "mentions-0"), "anchor")):
            seeds[doc_id].add(entity_id)
        for row in pq.read_table(p["kept"], columns=["doc_id", "title"]).to_pylist():
            seeds[row["doc_id"]].add(row["title"])

        aliases = pq.read_table(p["aliases"]).to_pylist()
        coverage = alias_coverage(
            ((r["sentence"][r["start"] : r["end"]], r["entity_id"]) for r in gold_rows),
            ((r["alias"], r["entity_id"]) for r in aliases),
        )
        names = most_frequent_entity((r["alias"], r["entity_id"], r["count"]) for r in aliases)
        linker_counts["every alias"] = timed(
            "every alias", link_by_string, spark, p["kept"], names, str(work / "baseline"), False
        )
        predicted["every alias"] = keys(read_mentions(str(work / "baseline"), "string"))
        s2orc = timed("s2orc", s2orc_name_coverage, spark, work, str(REPO / args.s2orc), str(REPO / args.fewrel2))
    spark.stop()

    in_seeds = [m for m in gold if m[4] in seeds[m[0]]]
    not_in_seeds = [m for m in gold if m[4] not in seeds[m[0]]]
    results = {}
    for name, mentions in predicted.items():
        scores = score_mentions(mentions, gold)
        scores["recall_entity_linked_in_doc"] = score_mentions(mentions, in_seeds)["recall"]
        scores["recall_entity_not_linked_in_doc"] = score_mentions(mentions, not_in_seeds)["recall"]
        results[name] = scores

    report = {
        "dump": args.dump,
        "share": args.share,
        "seed": args.seed,
        "max_iterations": args.max_iterations,
        "corpus": corpus_counts,
        "hidden": hide_counts,
        "gold": {
            "mentions": len(gold),
            "entity_linked_elsewhere_in_doc": len(in_seeds),
            "entity_not_linked_in_doc": len(not_in_seeds),
            "alias_coverage": coverage,
            "link_counts": gold_counts,
        },
        "linker_counts": linker_counts,
        "scores": results,
        "s2orc_fewrel2_names": s2orc,
        "step_seconds": seconds,
        "seconds": round(time.perf_counter() - started, 1),
    }
    out = REPO / args.out if not Path(args.out).is_absolute() else Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")

    print(
        f"\n{hide_counts['anchors_hidden']} of {hide_counts['anchors_hidden'] + hide_counts['anchors_kept']} "
        f"anchors hidden in {hide_counts['documents']} documents; {len(gold)} gold mentions "
        f"({len(in_seeds)} whose entity is still linked in the document or is its subject); "
        f"text is an alias: {coverage['name_is_alias']:.3f}, an alias of the gold entity: "
        f"{coverage['name_is_alias_of_entity']:.3f} (recall ceiling)\n"
    )
    print(markdown(results, COLUMNS))
    print()
    print(markdown(results, ("recall_entity_linked_in_doc", "recall_entity_not_linked_in_doc")))
    print("\nlinker counts (heuristic run):")
    for key, value in linker_counts["heuristic"].items():
        print(f"  {key} = {value}")
    print("\nFewRel 2.0 names in the S2ORC sample (string linking):")
    for label, counts in s2orc.items():
        print(f"  {label}: {counts['names_found']} of {counts['names']} names, {counts['mentions']} mentions")
    print(f"\nwritten {out} ({report['seconds']} s)")


if __name__ == "__main__":
    main()
