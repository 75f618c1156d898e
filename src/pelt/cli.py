"""The ``pelt`` command: inspect, query, explore and share entity tables from the shell.

``pelt table info PATH``, ``pelt table lookup PATH ENTITY... [--norm L] [--json]``,
``pelt table ids PATH [NAME...]`` (every entity's ids, or the entity each name stands for),
``pelt table merge OUT TABLE... [--sum-overlap]`` (tables of disjoint shards: sums and counts add; an
entity in several tables only with ``--sum-overlap``), ``pelt table similar PATH ENTITY|--vector FILE.npy|
--word WORD --model M [-k K]`` (nearest neighbours), ``pelt table export PATH --format word2vec|npy|safetensors
OUT`` and ``pelt table push PATH REPO_ID [--local FOLDER]`` (a Hub dataset repository, or its files in a
folder). A table path is a ``table.parquet``, the folder holding one or a Hub dataset repo id. Every
command that takes an entity takes its id, QID or alias (``--by``, ``--ignore-case``) through one resolver
(:mod:`pelt.table.resolve`), and names the closest entities of one it does not find. ``pelt config check
FILE...`` names the line and column of a config file that does not parse, which Snakemake's own message for
a ``--configfile`` does not. Errors are one line saying what to do (``--debug`` shows the traceback).
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
from typing import NamedTuple

import numpy as np

from pelt.config import check_files, starter_config, yaml_problem
from pelt.info import format_report, preflight, report
from pelt.table import EntityTable, merge_tables
from pelt.table.export import FORMATS, export_table
from pelt.table.hub import TABLE_FILE
from pelt.table.resolve import not_found, resolve
from pelt.table.similar import nearest

# Errors of wrong input, whose messages say what to do (pelt's own raise them so); OSError: a file
# that cannot be read, a model that cannot be loaded.
EXPECTED_ERRORS = (OSError, ValueError, KeyError, ImportError)
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
    """The table at ``path`` (a file or a folder holding one), else the Hub dataset that names (EntityTable.load)."""
    if Path(path).exists():
        table_path = _table_path(path)
        if not table_path.exists():
            raise FileNotFoundError(f"entity table {table_path} does not exist: give a table.parquet or its folder")
        return EntityTable.open(table_path)
    return EntityTable.load(path)


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


def _resolve(table: EntityTable, args: argparse.Namespace, names: Sequence[str]) -> list[str]:
    """The entity ids of ``names`` as ``--by`` and ``--ignore-case`` say (pelt.table.resolve.resolve)."""
    return resolve(table, names, by=args.by, ignore_case=args.ignore_case)


def _lookup(args: argparse.Namespace) -> int:
    table = _open(args.path)
    entities = _resolve(table, args, args.entities)
    vectors = table.lookup(entities, norm=args.norm)
    n_sentences, frequency = table.counts(entities)
    if args.json:
        rows = [
            {"name": name, "entity_id": e, "n_sentences": int(n), "frequency": int(f), "vector": v.tolist()}
            for name, e, n, f, v in zip(args.entities, entities, n_sentences, frequency, vectors)
        ]
        print(json.dumps({"norm": table.norm if args.norm is None else args.norm, "entities": rows}))
    else:
        for e, n, f, v in zip(entities, n_sentences, frequency, vectors):
            print(f"{e}\tn_sentences={n}\tfrequency={f}\t" + " ".join(f"{x:.6g}" for x in v))
    return 0


def _ids(args: argparse.Namespace) -> int:
    table = _open(args.path)
    if not args.names:
        print("entity_id\tqid\taliases")
        for entity_id, qid, aliases in table.id_rows():
            print(f"{entity_id}\t{qid or ''}\t{' | '.join(aliases)}")
        return 0
    found = table.find(args.names, by=args.by, ignore_case=args.ignore_case)
    qids = table.qids([e for e in found if e is not None])
    print("name\tentity_id\tqid")
    for name, entity_id in zip(args.names, found):
        if entity_id is not None:
            print(f"{name}\t{entity_id}\t{qids.pop(0) or ''}")
    unknown = [name for name, entity_id in zip(args.names, found) if entity_id is None]
    if unknown:  # the names found are printed first: a list of names is answered as far as it can be
        print(f"error: {not_found(table, unknown, by=args.by)}", file=sys.stderr)
        return 1
    return 0


def _merge(args: argparse.Namespace) -> int:
    tables = [_open(t) for t in args.tables]
    merged = merge_tables(tables, _table_path(args.out), frequency=args.frequency, sum_overlap=args.sum_overlap)
    print(f"{merged.path}: {len(merged)} entities")
    return 0


def _similar(args: argparse.Namespace) -> int:
    table = _open(args.path)
    if args.vector is not None:
        neighbours = nearest(table, _vector_file(args.vector, table.hidden_size), args.k)
    elif args.word is not None:
        neighbours = nearest(table, _word_embedding(table, args.model, args.word), args.k)
    else:
        (entity,) = _resolve(table, args, [args.entity])
        neighbours = table.most_similar(entity, k=args.k)
    for entity_id, cosine in neighbours:
        print(f"{entity_id}\t{cosine:.6f}")
    return 0


def _vector_file(path: str, hidden_size: int) -> np.ndarray:
    """The query vector of a ``.npy`` file: H finite numbers (shape [H] or [1, H])."""
    try:
        vector = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as err:
        raise ValueError(f"--vector {path}: not a readable .npy file ({err})") from err
    if vector.size != hidden_size or vector.ndim > 2 or not np.issubdtype(vector.dtype, np.number):
        raise ValueError(f"--vector {path}: {vector.dtype} of shape {vector.shape}, not {hidden_size} numbers (H)")
    return vector.reshape(-1)


def _word_embedding(table: EntityTable, model_name: str, word: str) -> np.ndarray:
    """The input embedding of ``word``, one token of the table's model: the space the table's vectors are
    injected into, where words and entities compare (as Wikipedia2Vec's ``most_similar`` of a word)."""
    from transformers.utils.logging import disable_progress_bar

    from pelt.encoding.models import load_masked_lm  # torch and transformers: only this query needs them

    disable_progress_bar()  # a bar of weights loaded would share the line of the output or the error
    model, tokenizer = load_masked_lm(model_name, device="cpu")
    table.check_model(model)
    tokens = tokenizer(" " + word, add_special_tokens=False)["input_ids"]  # the word as it follows a space
    if len(tokens) != 1:
        pieces = tokenizer.convert_ids_to_tokens(tokens)
        raise ValueError(f"--word {word!r} is {len(tokens)} tokens of {model_name} ({pieces}), not a word it knows")
    return model.get_input_embeddings().weight[tokens[0]].detach().float().numpy()


def _check_similar(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """One query: an entity, a vector or a word, and a word only with its model (argparse's one-line error)."""
    queries = {"ENTITY": args.entity, "--vector": args.vector, "--word": args.word}
    given = [name for name, value in queries.items() if value]
    if len(given) != 1:
        parser.error(f"table similar: give one of ENTITY, --vector or --word, not {' and '.join(given) or 'none'}")
    if args.word and not args.model:
        parser.error("table similar: --word needs --model, the model the table was built for")


def _export(args: argparse.Namespace) -> int:
    for path in export_table(_open(args.path), args.out, args.format, norm=args.norm, raw=args.raw):
        print(path)
    return 0


def _push(args: argparse.Namespace) -> int:
    table = _open(args.path)
    card = {"corpus": args.corpus, "language": args.language, "license": args.license}
    print(table.push_to_hub(args.repo_id, private=args.private, local_dir=args.local, **card))
    return 0


TABLE_HELP = "table.parquet, the folder holding it, or a Hugging Face Hub dataset repo id (user/name)"


def positive_number(text: str) -> float:
    """L as a command line gives it: a positive, finite number (argparse says so in one line)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"L must be a positive number, not {text}")
    return value


def positive_int(text: str) -> int:
    """A count as a command line gives it (-k, --top-k): 1 or more (argparse says so in one line)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {text}")
    return value


def by_kinds(text: str) -> list[str]:
    """--by as a command line gives it: id, qid and alias, comma-separated, in the order to try them."""
    kinds = text.split(",")
    if not kinds or set(kinds) - {"id", "qid", "alias"}:
        raise argparse.ArgumentTypeError(f"expected id, qid or alias, comma-separated, not {text!r}")
    return kinds


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


def _init_entities(args: argparse.Namespace) -> int:
    import yaml

    root = _workflow_root()
    if root is None:
        raise FileNotFoundError("no workflow here (no Snakefile and schema): run `pelt init` in the workflow's folder")
    if not Path(args.list).is_file():
        raise FileNotFoundError(f"no entity list at {args.list}")
    out = Path(args.out or f"{Path(args.list).stem}.yaml")
    if out.exists() and not args.force:
        raise FileExistsError(f"{out} exists: choose another --out, or --force")
    header = (
        f"# A table for the entities of {args.list} (`pelt init entities`), on the demo's corpus and shipped model.\n"
        f"# Run: snakemake --cores all --configfile {out}   (its outputs under runs/{out.stem}/)\n"
        "# Your corpus: a dump in corpora (docs/own-entities.md); a real model: models: - name: roberta-base\n"
    )
    out.write_text(header + yaml.safe_dump(starter_config(args.list, root), sort_keys=False))
    print(f"{out} written: snakemake --cores all --configfile {out}")
    return 0


def _add_config_commands(commands: argparse._SubParsersAction) -> None:
    init = commands.add_parser("init", help="write a starter config").add_subparsers(dest="what", required=True)
    entities = init.add_parser(
        "entities",
        help="a config that builds a table for a list of entities (titles, QIDs or names), nothing evaluated",
        description="The demo's corpus and its shipped model by default, taken as `make demo` takes it, so the "
        "table is built in minutes; edit the corpus and model for your own (docs/own-entities.md).",
    )
    entities.add_argument("list", metavar="LIST", help="the entities, one a line, or a CSV")
    entities.add_argument("--out", help="the config file to write (default: LIST's stem + .yaml)")
    entities.add_argument("--force", action="store_true", help="overwrite --out")
    entities.set_defaults(run=_init_entities)
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


class _TableArguments(NamedTuple):
    """The argument groups the ``pelt table`` commands share, as argparse parents, so that every
    command reads a table path and an entity's name with one grammar."""

    on_table: argparse.ArgumentParser  # the first argument of every command but merge
    by_name: argparse.ArgumentParser  # every command that takes an entity


def _table_arguments() -> _TableArguments:
    on_table = argparse.ArgumentParser(add_help=False)
    on_table.add_argument("path", help=TABLE_HELP)
    by_name = argparse.ArgumentParser(add_help=False)
    by_name.add_argument("--by", type=by_kinds, help="what a name may be, in order (default: id,qid,alias)")
    by_name.add_argument("--ignore-case", action="store_true", help="compare case-folded")
    return _TableArguments(on_table, by_name)


def _add_table_info(actions: argparse._SubParsersAction, shared: _TableArguments) -> None:
    info = actions.add_parser("info", parents=[shared.on_table], help="size, hidden size and metadata of a table")
    info.set_defaults(run=_info)


def _add_table_lookup(actions: argparse._SubParsersAction, shared: _TableArguments) -> None:
    lookup = actions.add_parser(
        "lookup", parents=[shared.on_table, shared.by_name], help="print E(e) = L * sum / ||sum|| of entities"
    )
    lookup.add_argument("entities", nargs="+", metavar="ENTITY", help="entity ids, QIDs or aliases")
    lookup.add_argument("--norm", type=positive_number, help="L (default: the table's)")
    lookup.add_argument("--json", action="store_true", help="print one JSON object")
    lookup.set_defaults(run=_lookup)


def _add_table_ids(actions: argparse._SubParsersAction, shared: _TableArguments) -> None:
    ids = actions.add_parser(
        "ids",
        parents=[shared.on_table, shared.by_name],
        help="list every entity's ids, or find the entity of titles, QIDs or aliases",
    )
    ids.add_argument("names", nargs="*", metavar="NAME", help="titles, QIDs, redirects or link texts (none: list all)")
    ids.set_defaults(run=_ids)


def _add_table_merge(actions: argparse._SubParsersAction, shared: _TableArguments) -> None:
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


def _add_table_similar(actions: argparse._SubParsersAction, shared: _TableArguments) -> None:
    similar = actions.add_parser(
        "similar",
        parents=[shared.on_table, shared.by_name],
        help="the entities nearest an entity, a vector or a word, by cosine similarity",
        description="The entities nearest ENTITY (its id, QID or alias; itself left out), the vector of a .npy "
        "file (--vector), or a word's input embedding in the table's model (--word, with --model).",
    )
    similar.add_argument("entity", metavar="ENTITY", nargs="?", help="an entity id, QID or alias")
    similar.add_argument("--vector", metavar="FILE.npy", help="a query vector of H numbers, saved by numpy.save")
    similar.add_argument("--word", help="a word of the model's vocabulary (needs --model)")
    similar.add_argument("--model", help="the table's model (a folder or Hub name), for --word")
    similar.add_argument("-k", type=positive_int, default=10, help="how many (default: 10)")
    similar.set_defaults(run=_similar, check=_check_similar)


def _add_table_export(actions: argparse._SubParsersAction, shared: _TableArguments) -> None:
    export = actions.add_parser(
        "export",
        parents=[shared.on_table],
        help="write the vectors for other tools",
        description="Write every entity's vector: E = L * sum / ||sum|| as `lookup` gives it, at the table's "
        "default L unless --norm, or the stored sums with --raw. word2vec: a text file, header `n dim`, then "
        "`id v1 ... vd` a line (spaces in ids become _); npy and safetensors: OUT and the ids, one a line, in "
        "OUT with the suffix .ids.txt.",
    )
    export.add_argument("out", metavar="OUT", help="the file to write")
    export.add_argument("--format", choices=FORMATS, required=True)
    export.add_argument("--norm", type=positive_number, help="L (default: the table's)")
    export.add_argument("--raw", action="store_true", help="the stored sums, not normalised")
    export.set_defaults(run=_export)


def _add_table_push(actions: argparse._SubParsersAction, shared: _TableArguments) -> None:
    push = actions.add_parser(
        "push",
        parents=[shared.on_table],
        help="publish as a Hugging Face Hub dataset repository, with a dataset card",
        description="Upload table.parquet and a generated README.md (model, weights digest, corpus, language, "
        "licence, counts, how to load it from REPO_ID, the citation) to the Hub dataset REPO_ID, or write them to "
        "FOLDER with --local. --corpus, --language and --license default to the table's metadata where recorded; "
        "the licence then to the corpus kind's (Wikipedia: cc-by-sa-4.0, S2ORC: odc-by), else 'unknown'.",
    )
    push.add_argument("repo_id", metavar="REPO_ID", help="the Hub dataset repo id (user/name), which the card names")
    push.add_argument("--local", metavar="FOLDER", help="write the repository's files to FOLDER instead of uploading")
    push.add_argument("--corpus", help="what the sentences came from, e.g. 'English Wikipedia, 2024-06-01 dump'")
    push.add_argument("--language", help="the corpus's language code, e.g. en")
    push.add_argument("--license", help="the corpus's licence, e.g. cc-by-sa-4.0")
    push.add_argument("--private", action="store_true", help="a private Hub repository")
    push.set_defaults(run=_push)


# The ``pelt table`` commands, in the order its help lists them.
_TABLE_COMMANDS = (
    _add_table_info,
    _add_table_lookup,
    _add_table_ids,
    _add_table_merge,
    _add_table_similar,
    _add_table_export,
    _add_table_push,
)


def _add_table_commands(commands: argparse._SubParsersAction) -> None:
    table = commands.add_parser("table", help="inspect, query, explore, merge, export and share entity tables")
    actions = table.add_subparsers(dest="action", required=True)
    shared = _table_arguments()
    for add in _TABLE_COMMANDS:
        add(actions, shared)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pelt`` console script; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if "check" in args:
        args.check(parser, args)
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
        print(error_line(err), file=sys.stderr)
        return 1


def error_line(err: Exception) -> str:
    """What a user sees of an error: one line, its message (a KeyError's unquoted), or for what is no
    wrong input (a bug, whose message says no fix) its type and where to see the traceback."""
    message = " ".join(str(err.args[0] if isinstance(err, KeyError) and err.args else err).split())
    if not isinstance(err, EXPECTED_ERRORS):
        message = f"{type(err).__name__}: {message} (--debug shows the traceback)"
    return f"error: {message}"


if __name__ == "__main__":
    sys.exit(main())
