"""The ``pelt`` command: inspect and query entity tables from the shell.

``pelt table info PATH``, ``pelt table lookup PATH ENTITY... [--norm L] [--json]``,
``pelt table ids PATH [NAME...] [--by id,qid,alias] [--ignore-case]`` (every entity's ids, or the
entity each name stands for) and ``pelt table merge OUT TABLE...`` (tables of disjoint shards: sums
and counts add).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence

from pelt.table import EntityTable, merge_tables


def _info(args: argparse.Namespace) -> int:
    table = EntityTable.open(args.path)
    print(f"path: {table.path}")
    print(f"entities: {len(table)}")
    print(f"hidden_size: {table.hidden_size}")
    for key, value in sorted(table.metadata.items()):
        if key != "hidden_size":
            print(f"{key}: {value}")
    return 0


def _lookup(args: argparse.Namespace) -> int:
    table = EntityTable.open(args.path)
    unknown = [e for e in args.entities if e not in table]
    if unknown:
        print(f"error: not in {args.path}: {', '.join(unknown)}", file=sys.stderr)
        return 1
    vectors = table.lookup(args.entities, norm=args.norm)
    n_sentences, frequency = table.counts(args.entities)
    if args.json:
        rows = [
            {"entity_id": e, "n_sentences": int(n), "frequency": int(f), "vector": v.tolist()}
            for e, n, f, v in zip(args.entities, n_sentences, frequency, vectors)
        ]
        print(json.dumps({"norm": table.norm if args.norm is None else args.norm, "entities": rows}))
    else:
        for e, n, f, v in zip(args.entities, n_sentences, frequency, vectors):
            print(f"{e}\tn_sentences={n}\tfrequency={f}\t" + " ".join(f"{x:.6g}" for x in v))
    return 0


def _ids(args: argparse.Namespace) -> int:
    table = EntityTable.open(args.path)
    if not args.names:
        print("entity_id\tqid\taliases")
        for entity_id, qid, aliases in table.id_rows():
            print(f"{entity_id}\t{qid or ''}\t{' | '.join(aliases)}")
        return 0
    found = table.find(args.names, by=args.by.split(",") if args.by else None, ignore_case=args.ignore_case)
    qids = table.qids([e for e in found if e is not None])
    print("name\tentity_id\tqid")
    for name, entity_id in zip(args.names, found):
        if entity_id is not None:
            print(f"{name}\t{entity_id}\t{qids.pop(0) or ''}")
    unknown = [name for name, entity_id in zip(args.names, found) if entity_id is None]
    if unknown:
        by = f" (by {args.by})" if args.by else ""
        print(f"error: not found in {args.path}{by}: {', '.join(unknown)}", file=sys.stderr)
        return 1
    return 0


def _merge(args: argparse.Namespace) -> int:
    merged = merge_tables(args.tables, args.out, frequency=args.frequency)
    print(f"{merged.path}: {len(merged)} entities")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pelt", description="Pluggable entity lookup tables (PELT).")
    commands = parser.add_subparsers(dest="command", required=True)
    table = commands.add_parser("table", help="inspect, query and merge entity tables")
    actions = table.add_subparsers(dest="action", required=True)

    info = actions.add_parser("info", help="size, hidden size and metadata of a table")
    info.add_argument("path", help="table.parquet")
    info.set_defaults(run=_info)

    lookup = actions.add_parser("lookup", help="print E(e) = L * sum / ||sum|| of entities")
    lookup.add_argument("path", help="table.parquet")
    lookup.add_argument("entities", nargs="+", metavar="ENTITY")
    lookup.add_argument("--norm", type=float, help="L (default: the table's)")
    lookup.add_argument("--json", action="store_true", help="print one JSON object")
    lookup.set_defaults(run=_lookup)

    ids = actions.add_parser("ids", help="list every entity's ids, or find the entity of titles, QIDs or aliases")
    ids.add_argument("path", help="table.parquet")
    ids.add_argument("names", nargs="*", metavar="NAME", help="titles, QIDs, redirects or link texts (none: list all)")
    ids.add_argument("--by", help="what a name may be, in order (default: id,qid,alias, those the table has)")
    ids.add_argument("--ignore-case", action="store_true", help="compare case-folded")
    ids.set_defaults(run=_ids)

    merge = actions.add_parser("merge", help="merge tables of disjoint shards (sums and counts add)")
    merge.add_argument("out", help="output table.parquet")
    merge.add_argument("tables", nargs="+", metavar="TABLE")
    merge.add_argument(
        "--frequency",
        choices=("max", "sum"),
        default="max",
        help="max for shards of one sample, sum for disjoint corpora",
    )
    merge.set_defaults(run=_merge)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pelt`` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return args.run(args)
    except (FileNotFoundError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
