"""A task kind is its package (issue 53): no shared module names one, and a kind like Wiki80 from
outside pelt is its own package and a config line, with its summary, figure and headline rows.

Which string literals name a kind: the kinds' names ``lama``, ``mlama``, ``fewrel`` (and its
benchmarks ``fewrel1``, ``fewrel2``) and ``wiki80``, in any case, wherever no letter is joined to
them: as words ("LAMA/data.zip", "FewRel 1.0") and inside longer names, joined by ``_``, a digit or
a dot ("lama_norm_sweep", "wiki80_train", "tasks.fewrel.run"), but not inside another word
("llama"); ``entities``, also the English word and a column of many tables and counts, where it
can only mean the kind: its config key (``tasks.entities``, ``tasks/entities``); and a kind's key
prefix as a literal (``mlama_``, ``entities_``). Docstrings do not count (they say what a shared
module serves, and may name the kinds it serves), nor do comments; every other string constant does.
Where a kind may be named: its package (``src/pelt/tasks/<kind>/``), its rules
(``workflow/rules/tasks/<kind>.smk``, ``<kind>_functions.smk``) and the tests.

A corpus kind likewise (``wikipedia``, ``s2orc``): its registry entry (:data:`pelt.registry.CORPUS_KINDS`)
and its package (``src/pelt/corpus/<kind>/`` or ``<kind>.py``) name it, and no other module of pelt
holds its name as a value; only the whole value counts, since "Wikipedia" is also the encyclopedia
a message or a help text speaks of.
"""

from __future__ import annotations

import ast
import csv
import io
import re
import sys
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from conftest import REPO
from html_pages import html_rows
from toy_kind import CONFIG_LINE, FILES, KIND, PACKAGE, write_kind, write_task

from pelt import registry
from pelt.config import config_problems, config_schema, fill_defaults
from pelt.report.headline import write_headline

# A kind's name with no letter joined to it: "lama_norm_sweep" and "fewrel1" are LAMA's and FewRel's,
# "llama" is no kind's.
WORDS = re.compile(r"(?<![a-z])(?:lama|mlama|fewrel|wiki80)(?![a-z])", re.I)
ENTITY_KEY = re.compile(r"\btasks[./]entities\b")


def names_a_kind(text: str) -> bool:
    """Whether a string constant names a task kind (the module's docstring says which count)."""
    prefixes = {kind.prefix for kind in registry.KINDS.values() if kind.prefix}
    return bool(WORDS.search(text) or ENTITY_KEY.search(text) or text in prefixes)


def python_strings(text: str) -> Iterator[tuple[int, str]]:
    """(line, value) of each string constant of a Python module but its docstrings (an f-string's
    literal parts each)."""
    tree = ast.parse(text)
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    constants = [node for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    for node in sorted(constants, key=lambda node: (node.lineno, node.col_offset)):
        if id(node) not in docstrings:
            yield node.lineno, node.value


def snakemake_strings(text: str) -> Iterator[tuple[int, str]]:
    """(line, value) of each string of a Snakemake file but its docstrings (a module's, a function's
    first statement): Snakemake's syntax is Python's tokens, not its grammar, so these are read from
    the tokens."""
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    skipped = (tokenize.INDENT, tokenize.DEDENT, tokenize.NL, tokenize.COMMENT, tokenize.ENCODING)
    expect, header = True, False  # whether a docstring may come next; whether in a def's header line
    for i, token in enumerate(tokens):
        if token.type in skipped:
            continue
        if token.type == tokenize.NEWLINE:
            expect, header = header, False
            continue
        if token.type == tokenize.STRING and expect and tokens[i + 1].type == tokenize.NEWLINE:
            expect = False
            continue
        header = header or (token.type == tokenize.NAME and token.string in ("def", "class"))
        expect = False
        if token.type == tokenize.STRING:
            for node in ast.walk(ast.parse(token.string, mode="eval")):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    yield token.start[0], node.value


def shared_files() -> list[Path]:
    """Every module of pelt but the kinds' packages, the workflow's scripts, the Snakefile and every
    rules file but the kinds' own (the fine-tuning kinds' template is shared)."""
    kinds = set(registry.KINDS)
    own = {REPO / "src" / "pelt" / "tasks" / kind for kind in kinds}
    modules = [p for p in (REPO / "src" / "pelt").rglob("*.py") if not own & set(p.parents)]
    rules = [
        p
        for p in (REPO / "workflow" / "rules").rglob("*.smk")
        if not (p.parent.name == "tasks" and p.stem.removesuffix("_functions") in kinds)
    ]
    return sorted([*modules, *(REPO / "workflow" / "scripts").glob("*.py"), REPO / "Snakefile", *rules])


def kind_literals(text: str, suffix: str) -> list[tuple[int, str]]:
    """(line, value) of each string of a module (``suffix``: .py, else a Snakemake file) that names a kind."""
    strings = python_strings(text) if suffix == ".py" else snakemake_strings(text)
    return [(line, value) for line, value in strings if names_a_kind(value)]


def test_no_shared_module_names_a_task_kind():
    """Naming rules, display labels, chance levels, benchmarks, summaries, figures, release archives
    and README rows are the kinds' registry entries, each written in its package."""
    files = shared_files()
    assert REPO / "src" / "pelt" / "registry.py" in files and REPO / "Snakefile" in files
    assert REPO / "workflow" / "rules" / "tasks" / "finetuning.smk" in files
    assert not any("tasks/lama/" in str(p) or p.name == "lama.smk" for p in files)
    found = [
        f"{path.relative_to(REPO)}:{line}: {value!r}"
        for path in files
        for line, value in kind_literals(path.read_text(encoding="utf-8"), path.suffix)
    ]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize(
    ("source", "named"),
    [
        (
            '"""The LAMA summaries."""\nARCHIVES = {"LAMA/data.zip": "LAMA/release"}\n',
            ["LAMA/data.zip", "LAMA/release"],
        ),
        ('def f():\n    """FewRel\'s."""\n    return f"{x} FewRel 1.0"  # wiki80\n', [" FewRel 1.0"]),
        ('x = name.startswith("mlama_") or "tasks.entities" or "entities_found"\n', ["mlama_", "tasks.entities"]),
        ('rule wiki:\n    script:\n        "wiki80.py"\n', ["wiki80.py"]),
        ('def f():\n    """The lama kind."""\n    return "llama-7b", "%d entities", "Islamabad"\n', []),
        (
            'x = {"task": "lama_norm_sweep", "figure": "LAMA_buckets.svg"}\n'
            'y = f"{z}_fewrel2" or "pelt.tasks.wiki80.run"\n',
            ["lama_norm_sweep", "LAMA_buckets.svg", "_fewrel2", "pelt.tasks.wiki80.run"],
        ),
    ],
)
def test_the_check_finds_a_kind_put_back_and_passes_docstrings(source, named):
    """A kind's name put back in a shared module fails the test above, as Python or as Snakemake,
    alone or inside a longer name (``lama_norm_sweep``); a docstring, a comment, another word holding
    its letters (``llama``) and the English ``entities`` do not."""
    suffixes = [".smk"] if source.startswith("rule") else [".py", ".smk"]
    for suffix in suffixes:
        assert [value for _, value in kind_literals(source, suffix)] == named, suffix


def test_a_kind_that_sweeps_l_declares_its_sweep_files_task():
    """The runners know a norm sweep's file by the task value its kind's entry declares
    (:func:`pelt.registry.norm_sweep_tasks`), which no shared module names."""
    sweeping = [kind for kind in registry.KINDS.values() if kind.norm_sweep is not None]
    assert sweeping and all(kind.norm_sweep_task for kind in sweeping)
    assert registry.norm_sweep_tasks() == {kind.norm_sweep_task for kind in sweeping}


def corpus_kind_literals(path: Path) -> list[tuple[int, str]]:
    """(line, value) of each string constant of a module of pelt that is a corpus kind's name, but in
    the registry, which declares the corpus kinds, and in the kind's own package."""
    source = REPO / "src" / "pelt"
    if path == source / "registry.py":
        return []
    own = {
        name
        for name in registry.CORPUS_KINDS
        if {source / "corpus" / name, source / "corpus" / f"{name}.py"} & {path, *path.parents}
    }
    return [
        (line, value)
        for line, value in python_strings(path.read_text(encoding="utf-8"))
        if value in registry.CORPUS_KINDS and value not in own
    ]


def test_no_module_of_pelt_names_a_corpus_kind():
    """A corpus kind's facts (whether it has pages, its text's licence) are its registry entry's: a
    module that needs one asks the registry for the kind of the corpus at hand."""
    modules = sorted((REPO / "src" / "pelt").rglob("*.py"))
    assert REPO / "src" / "pelt" / "table" / "hub.py" in modules
    found = [
        f"{path.relative_to(REPO)}:{line}: {value!r}" for path in modules for line, value in corpus_kind_literals(path)
    ]
    assert found == [], "\n".join(found)


@pytest.fixture
def toy_kind(tmp_path, monkeypatch) -> Path:
    """The toy kind's package (tests/toy_kind.py) on the path; unregistered and forgotten after."""
    package = write_kind(tmp_path / "kinds")
    monkeypatch.syspath_prepend(str(tmp_path / "kinds"))
    yield package
    registry.KINDS.pop(KIND, None)
    for module in [m for m in sys.modules if m.split(".")[0] == PACKAGE]:
        del sys.modules[module]


def test_a_wiki80_like_kind_is_its_package_and_one_config_line(toy_kind, tmp_path):
    """Issue 53: a kind fine-tuned per setting and seed, like Wiki80, from outside pelt: its package
    (five files) and the config line that names it. The registry, the schema, the rules template,
    the shared summary and figure jobs and the landing page take it as they take pelt's own."""
    assert sorted(p.name for p in toy_kind.iterdir()) == sorted(FILES) and len(FILES) == 5
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config.update(CONFIG_LINE)
    config["tasks"] = {KIND: write_task(tmp_path, "wikipedia")}
    registry.import_kinds(config["task_kinds"])  # as the Snakefile does, before it reads the config
    schema = config_schema(REPO / "workflow" / "schemas" / "config.schema.yaml", REPO)
    assert config_problems(config, schema) == []
    fill_defaults(config, schema)
    task = config["tasks"][KIND]
    kind = registry.kind_of(KIND, task)
    assert task["seeds"] == [1, 2] and registry.settings_of(KIND, task) == ["50%", "100%"]
    assert registry.finetuned_tasks(config["tasks"]) == [KIND] and KIND in registry.finetuning_summaries()
    assert kind in registry.kinds_with_rules(registry.FINETUNING_RULES)  # pelt's template gives it its rule

    # its runs, as its job script makes them (one per setting, seed and variant)
    results = []
    for setting in registry.settings_of(KIND, task):
        for seed in task["seeds"]:
            for variant in ("baseline", "pelt"):
                results.append(tmp_path / f"{setting}-{seed}-{variant}.json")
                options = registry.runner_options(KIND, task, setting, seed, variant)
                files = registry.run_files(KIND, task, config["tasks"], setting)
                registry.resolve(kind.runner)("demo", files["train"], files["test"], results[-1], **options)

    # the shared summary job: the kind's writer, found by the summary's name
    out = tmp_path / "summary"
    registry.resolve(registry.summary_writer(KIND))(results, f"{out}.csv", f"{out}.md", f"{out}.html")
    rows = list(csv.DictReader(open(f"{out}.csv", encoding="utf-8")))
    assert [(r["benchmark"], r["setting"], r["variant"], r["seeds"], r["accuracy_mean"]) for r in rows] == [
        ("toyrel", setting, variant, "1 2", "0.5") for variant in ("baseline", "pelt") for setting in ("50%", "100%")
    ]
    md = Path(f"{out}.md").read_text()
    assert "| Model | Variant | Toy relations 50% | Toy relations 100% |" in md
    assert "Toy relations 50% `demo` baseline: accuracy 50.0 % is at chance (50.0 % for 2 classes" in md
    # the shared figure job: the kind's figure, found by its name, from the rule's named inputs
    registry.resolve(registry.figure_writer(KIND))(summary_csv=f"{out}.csv", out_svg=tmp_path / "toy.svg")
    assert "Toy relations: accuracy by setting and variant" in (tmp_path / "toy.svg").read_text()
    # the landing page: its rows named and explained by its entry, its chance level its own
    flags = write_headline([], [], results, tmp_path / "headline.html")
    html = (tmp_path / "headline.html").read_text()
    assert ["Toy relations 100% accuracy", "50.0 ± 0.0", "50.0 ± 0.0", "+0.0"] in html_rows(html)
    assert "<p>Toy relations: the most frequent training relation, guessed" in html
    assert len(flags) == 4 and all("at chance (50.0 % for 2 classes" in flag for flag in flags)
