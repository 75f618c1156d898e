"""The ``pelt`` command: inspect, query, explore and share entity tables from the shell.

``pelt table info PATH``, ``pelt table lookup PATH ENTITY... [--norm L] [--json]``,
``pelt table ids PATH [NAME...] [--by id,qid,alias] [--ignore-case] [--suggest]`` (every entity's ids, or the
entity each name stands for), ``pelt table merge OUT TABLE... [--sum-overlap]`` (tables of disjoint shards:
sums and counts add; an entity in several tables only with ``--sum-overlap``), ``pelt table similar PATH ENTITY
[-k K]`` (nearest neighbours),
``pelt table export PATH --format word2vec|npy|safetensors OUT`` and ``pelt table push PATH TARGET``
(a Hub dataset repository, or with ``--local`` its folder). A table path is a ``table.parquet`` or
the folder holding one. ``pelt config check FILE...`` names the line and column of a config file
that does not parse, which Snakemake's own message for a ``--configfile`` does not. Errors are one
line saying what to do (``--debug`` shows the traceback).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import logging
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from pelt.config import check_files, yaml_problem
from pelt.info import format_report, preflight, report
from pelt.suggest import closest_entities, describe
from pelt.table import EntityTable, merge_tables
from pelt.table.export import FORMATS, export_table
from pelt.table.hub import TABLE_FILE, upload_dataset, write_dataset_folder

# Errors of wrong input, whose messages say what to do (pelt's own raise them so).
EXPECTED_ERRORS = (FileNotFoundError, ValueError, KeyError, ImportError)
SIGPIPE_STATUS = 141  # 128 + SIGPIPE: what `cmd | head` gives for a command the closed pipe ended


def _version() -> str:
    """The installed distribution's version; a source tree on PYTHONPATH without an install has none."""
    try:
        return importlib.metadata.version("pelt")
    except importlib.metadata.PackageNotFoundError:
        return "(not installed: running from a source tree)"


def _table_path(path: str) -> Path:
    """``path``, or ``path/table.parquet`` for a folder: users hold the folder a table came in."""
    return Path(path) / TABLE_FILE if Path(path).is_dir() else Path(path)


def _open(path: str) -> EntityTable:
    table_path = _table_path(path)
    if not table_path.exists():
        fix = "give a table.parquet or the folder holding one"
        raise FileNotFoundError(f"entity table {table_path} does not exist: {fix}")
    return EntityTable.open(table_path)


def _workflow_root() -> Path | None:
    """The folder holding the workflow's Snakefile and schema: the current one (where the workflow is
    run), else this source checkout's; None for a library installed without the workflow."""
    for root in (Path.cwd(), Path(__file__).resolve().parents[2]):
        if (root / "Snakefile").is_file() and (root / "workflow" / "schemas" / "config.schema.yaml").is_file():
            return root
    return None


def _check_config(args: argparse.Namespace) -> int:
    root = _workflow_root()
    if root is None:
        problems = [problem for path in args.files if (problem := yaml_problem(path))]
        checked = "parse (no workflow here: YAML syntax checked, not the schema; run from the workflow's folder)"
    else:
        problems = check_files(args.files, root)
        checked = "are a config the workflow takes"
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"{len(args.files)} config file(s) {checked}")
    return 1 if problems else 0


def _info(args: argparse.Namespace) -> int:
    table = _open(args.path)
    print(f"path: {table.path}")
    print(f"entities: {len(table)}")
    print(f"hidden_size: {table.hidden_size}")
    for key, value in sorted(table.metadata.items()):
        if key != "hidden_size":
            print(f"{key}: {value}")
    return 0


def _not_in(table: EntityTable, path: str, entities: Sequence[str]) -> int:
    """Exit status 1 with the entities ``table`` lacks and how to find their ids; 0 when it has all."""
    unknown = [e for e in entities if e not in table]
    if unknown:
        hint = f"entity ids are exact; `pelt table ids {path} NAME --ignore-case` finds the id of a name or QID"
        print(f"error: not in {path}: {', '.join(unknown)} ({hint})", file=sys.stderr)
    return 1 if unknown else 0


def _lookup(args: argparse.Namespace) -> int:
    table = _open(args.path)
    if _not_in(table, args.path, args.entities):
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
    table = _open(args.path)
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
        if args.suggest:
            pairs = ((name, e) for e, _, aliases in table.id_rows() for name in (e, *aliases))
            for name, suggestions in closest_entities(unknown, pairs).items():
                print(f"  {describe(name, suggestions)}", file=sys.stderr)
        else:
            print("  (--suggest names the closest entities the table has)", file=sys.stderr)
        return 1
    return 0


def _merge(args: argparse.Namespace) -> int:
    tables = [_open(t) for t in args.tables]
    merged = merge_tables(tables, _table_path(args.out), frequency=args.frequency, sum_overlap=args.sum_overlap)
    print(f"{merged.path}: {len(merged)} entities")
    return 0


def _similar(args: argparse.Namespace) -> int:
    table = _open(args.path)
    if _not_in(table, args.path, [args.entity]):
        return 1
    for entity_id, cosine in table.most_similar(args.entity, k=args.k):
        print(f"{entity_id}\t{cosine:.6f}")
    return 0


def _export(args: argparse.Namespace) -> int:
    for path in export_table(_open(args.path), args.out, args.format, norm=args.norm, raw=args.raw):
        print(path)
    return 0


def _push(args: argparse.Namespace) -> int:
    table = _open(args.path)
    card = {"corpus": args.corpus, "language": args.language, "license": args.license}
    if args.local:
        for path in write_dataset_folder(table, args.target, **card):
            print(path)
    else:
        print(upload_dataset(table, args.target, private=args.private, **card))
    return 0


TABLE_HELP = "table.parquet, or the folder holding it"


def _norm(text: str) -> float:
    """L as a command line gives it: a positive, finite number (argparse says so in one line)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"L must be a positive number, not {text}")
    return value


def _machine_info(args: argparse.Namespace) -> int:
    print(format_report(report()))
    problems = preflight(spark=True, gpu=False)
    for problem in problems:
        print(f"missing: {problem}")
    return 1 if problems else 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pelt", description="Pluggable entity lookup tables (PELT).")
    parser.add_argument("--version", action="version", version=f"pelt {_version()}")
    parser.add_argument("--debug", action="store_true", help="on errors, show the traceback")
    commands = parser.add_subparsers(dest="command", required=True)
    info = commands.add_parser(
        "info",
        help="the versions and hardware pelt sees (for a bug report), and what a run would miss",
        description="pelt's version, Python, the platform, CPU cores, memory, Java, the GPU and the key packages; "
        "then one line per thing a run would miss (Java for Spark), exit 1 if any.",
    )
    info.set_defaults(run=_machine_info)
    _add_config_commands(commands)
    _add_table_commands(commands)
    return parser


def _add_config_commands(commands: argparse._SubParsersAction) -> None:
    config = commands.add_parser("config", help="check workflow config files").add_subparsers(
        dest="action", required=True
    )
    check = config.add_parser(
        "check",
        help="check config files as the workflow would: syntax, schema, unknown keys, values, data files",
        description="The files merged in order, as `snakemake --configfile FILE...` merges them; one line per "
        "problem naming the file and the key (a syntax error: its line and column), exit 1 if any. Paths are "
        "relative to the current folder, where the workflow would run.",
    )
    check.add_argument("files", nargs="+", metavar="FILE")
    check.set_defaults(run=_check_config)


def _add_table_commands(commands: argparse._SubParsersAction) -> None:
    table = commands.add_parser("table", help="inspect, query, explore, merge, export and share entity tables")
    actions = table.add_subparsers(dest="action", required=True)
    on_table = argparse.ArgumentParser(add_help=False)  # the first argument of every action but merge
    on_table.add_argument("path", help=TABLE_HELP)

    info = actions.add_parser("info", parents=[on_table], help="size, hidden size and metadata of a table")
    info.set_defaults(run=_info)

    lookup = actions.add_parser("lookup", parents=[on_table], help="print E(e) = L * sum / ||sum|| of entities")
    lookup.add_argument("entities", nargs="+", metavar="ENTITY")
    lookup.add_argument("--norm", type=_norm, help="L (default: the table's)")
    lookup.add_argument("--json", action="store_true", help="print one JSON object")
    lookup.set_defaults(run=_lookup)

    ids = actions.add_parser(
        "ids", parents=[on_table], help="list every entity's ids, or find the entity of titles, QIDs or aliases"
    )
    ids.add_argument("names", nargs="*", metavar="NAME", help="titles, QIDs, redirects or link texts (none: list all)")
    ids.add_argument("--by", help="what a name may be, in order (default: id,qid,alias, those the table has)")
    ids.add_argument("--ignore-case", action="store_true", help="compare case-folded")
    ids.add_argument("--suggest", action="store_true", help="for names not found, the closest ids and aliases")
    ids.set_defaults(run=_ids)

    merge = actions.add_parser("merge", help="merge tables of disjoint shards (sums and counts add)")
    merge.add_argument("out", help="output table.parquet (or an existing folder: table.parquet in it)")
    merge.add_argument("tables", nargs="+", metavar="TABLE", help=TABLE_HELP)
    merge.add_argument(
        "--frequency",
        choices=("max", "sum"),
        default="max",
        help="max for shards of one sample, sum for disjoint corpora",
    )
    merge.add_argument(
        "--sum-overlap",
        action="store_true",
        help="add the sums of entities in several tables (shards of one sample); without it they are an error",
    )
    merge.set_defaults(run=_merge)

    similar = actions.add_parser("similar", parents=[on_table], help="the entities nearest one, by cosine similarity")
    similar.add_argument("entity", metavar="ENTITY")
    similar.add_argument("-k", type=int, default=10, help="how many (default: 10)")
    similar.set_defaults(run=_similar)

    export = actions.add_parser(
        "export",
        parents=[on_table],
        help="write the vectors for other tools",
        description="Write every entity's vector: E = L * sum / ||sum|| as `lookup` gives it, at the table's "
        "default L unless --norm, or the stored sums with --raw. word2vec: a text file, header `n dim`, then "
        "`id v1 ... vd` a line (spaces in ids become _); npy and safetensors: OUT and the ids, one a line, in "
        "OUT with the suffix .ids.txt.",
    )
    export.add_argument("out", metavar="OUT", help="the file to write")
    export.add_argument("--format", choices=FORMATS, required=True)
    export.add_argument("--norm", type=_norm, help="L (default: the table's)")
    export.add_argument("--raw", action="store_true", help="the stored sums, not normalised")
    export.set_defaults(run=_export)

    push = actions.add_parser(
        "push",
        parents=[on_table],
        help="publish as a Hugging Face Hub dataset repository, with a dataset card",
        description="Upload table.parquet and a generated README.md (model, weights digest, corpus, language, "
        "licence, counts, how to load it) to the Hub dataset TARGET, or write them to the folder TARGET with "
        "--local. --corpus, --language and --license default to the table's metadata, where recorded.",
    )
    push.add_argument("target", metavar="TARGET", help="a Hub dataset repo id (user/name), or a folder with --local")
    push.add_argument("--local", action="store_true", help="write the repository's files to the folder TARGET")
    push.add_argument("--corpus", help="what the sentences came from, e.g. 'English Wikipedia, 2024-06-01 dump'")
    push.add_argument("--language", help="the corpus's language code, e.g. en")
    push.add_argument("--license", help="the corpus's licence, e.g. cc-by-sa-4.0")
    push.add_argument("--private", action="store_true", help="a private Hub repository")
    push.set_defaults(run=_push)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pelt`` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        status = args.run(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's flush at exit
        return status
    except BrokenPipeError:  # `pelt ... | head`: the reader has what it wanted
        return SIGPIPE_STATUS
    except Exception as err:
        if args.debug:
            raise
        message = " ".join(str(err.args[0] if isinstance(err, KeyError) and err.args else err).split())
        if not isinstance(err, EXPECTED_ERRORS):  # a bug, not a wrong input: its message says no fix
            message = f"{type(err).__name__}: {message} (--debug shows the traceback)"
        print(f"error: {message}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
