"""Every example of the README and docs/ is true (issue 28, item 1).

Every fenced block of README.md and docs/*.md is either run here on the suite's demo run, or says
which test covers it, or why nothing runs it (ELSEWHERE); a new block that is neither fails
``test_every_block_is_run_here_or_says_where``. On the pages that show the demo's outputs
(RUN_PAGES), the blocks run in order in one folder whose ``results/`` is the demo run's, the Python
ones in one namespace: a command's printed lines must be the ``text`` block after it, and an
expression of a Python block followed by a comment that is a Python literal (``x in table  # True``,
``table.find([...])  # ['Heireith', ...]``) must have that value. The README's table of the demo's
results must be :func:`pelt.report.demo_table.demo_table` of the run it quotes
(``benchmarks/demo-results/``), and that rendering reads the suite's run too.
"""

from __future__ import annotations

import ast
import csv
import re
import runpy
import shlex
import sys
from dataclasses import dataclass

import pytest
from conftest import REPO

from pelt.cli import main as pelt_main
from pelt.report.demo_table import HEADER, demo_table

PAGES = ["README.md", *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md"))]
# The pages whose examples read the demo's outputs: run here, block after block.
RUN_PAGES = ("README.md", "docs/using-tables.md")
# Blocks that nothing here runs: (page, a line of the block) -> the test that covers it, or why none does.
ELSEWHERE = {
    ("README.md", "make demo"): "the suite's demo run is this run (tests/demo_run.py, fixture finished)",
    ("README.md", ".venv/bin/snakemake --report report.html"): "test_workflow.py::test_demo_end_to_end",
    ("README.md", "make test"): "CI (.ci/run) runs it",
    ("docs/cluster.md", "snakemake --workflow-profile profiles/slurm --configfile config/paper.yaml"): (
        "test_operations.py::test_slurm_submissions_and_local_rules (stand-in sbatch)"
    ),
    ("docs/cluster.md", "spark:"): "test_operations.py::test_corpus_and_linking_on_a_spark_cluster_equal_a_local_run",
    ("docs/languages.md", "--configfile config/mlama.yaml"): (
        "test_workflow.py::test_mlama_config_plans_one_model_over_each_languages_table (planned: the Hub's mBERT)"
    ),
    ("docs/languages.md", "merged:"): (
        "test_merged_languages.py: planned, and run on two wikis written for it (a slow test), as the page shows it"
    ),
    ("docs/layout.md", "Snakefile"): "a listing of the repository, not a command",
    ("docs/layout.md", "corpus/"): "a listing of the library's packages, not a command",
    ("docs/layout.md", "registry.py"): "a listing of the library's cross-cutting modules, not a command",
    (
        "docs/own-entities.md",
        "tasks:",
    ): "test_workflow.py::test_an_entity_list_alone_builds_its_table_and_no_task_is_an_error",
    ("docs/own-entities.md", "entities_drugs:"): "test_workflow.py::test_s2orc_domain_is_linked_by_string_matching",
    (
        "docs/running.md",
        "ETA",
    ): "a progress line: test_logs.py::test_on_a_terminal_a_job_echoes_its_progress_lines_named",
    ("docs/running.md", ".venv/bin/snakemake --report report.html"): "test_workflow.py::test_demo_end_to_end",
    ("docs/running.md", "snakemake --cores all --sdm conda"): (
        "test_envs.py::test_each_rule_gets_its_pinned_env_with_either_conda_flag"
    ),
    ("docs/running.md", "models:"): "a real model: needs the Hub (model names: test_registry.py)",
    ("docs/running.md", "snakemake --cores all --configfile config/paper.yaml"): (
        "test_workflow.py::test_paper_config_plans_the_authors_training_data (planned, not run: the paper's data)"
    ),
    ("docs/running.md", "snakemake download --cores 4 --configfile config/paper.yaml"): (
        "test_workflow.py::test_the_paper_download_plans_on_a_machine_without_its_files"
    ),
    ("docs/running.md", "export HF_HOME=/shared/hf"): "needs the Hub",
    ("docs/task-kinds.md", "kinds/"): "test_task_kinds.py writes the page's files and runs the kind",
    ("docs/using-tables.md", "hf upload"): "needs the Hub (the pushed folder: test_explore.py)",
    ("docs/using-tables.md", 'EntityTable.load("you/pelt-wikipedia-roberta-base")'): (
        "needs the Hub: test_travel.py::test_load_from_file_folder_and_hub, with a stand-in hub"
    ),
    ("docs/using-tables.md", "pip install /path/to/pelt"): (
        "test_install.py::test_library_installs_alone_and_runs_the_example"
    ),
}
# docs/task-kinds.md's blocks are files named just before each, or config lines: one key covers the page.
PAGE_KEYS = {"docs/task-kinds.md": ("docs/task-kinds.md", "kinds/")}
# The suite cannot download roberta-base: a block that builds a table with it runs on the demo model.
OFFLINE = {'"roberta-base"': '"results/models/demo"'}
COMMANDS = ("python examples/", "pelt ")


@dataclass
class Block:
    page: str
    line: int
    language: str
    code: str

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(page: str) -> list[Block]:
    text = (REPO / page).read_text(encoding="utf-8")
    found = []
    for match in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.M | re.S):
        found.append(Block(page, text.count("\n", 0, match.start()) + 1, match[1], match[2]))
    return found


def commands(code: str) -> list[str]:
    """The shell commands of a block: continuation lines joined, comments and blank lines left out."""
    return [c.strip() for c in code.replace("\\\n", " ").splitlines() if c.strip() and not c.startswith("#")]


def elsewhere(block: Block) -> tuple[str, str] | None:
    """The ELSEWHERE key that covers a block, if any (the longest that matches)."""
    if block.page in PAGE_KEYS:
        return PAGE_KEYS[block.page]
    keys = [(page, key) for page, key in ELSEWHERE if page == block.page and key in block.code]
    return max(keys, key=lambda k: len(k[1]), default=None)


def runs_here(block: Block) -> bool:
    if block.page not in RUN_PAGES or elsewhere(block):
        return False
    if block.language == "python":
        return True
    return block.language == "bash" and all(c.startswith(COMMANDS) for c in commands(block.code))


def test_every_block_is_run_here_or_says_where():
    unclassified, used = [], set()
    for page in PAGES:
        page_blocks = blocks(page)
        for i, block in enumerate(page_blocks):
            output = block.language == "text" and i > 0 and runs_here(page_blocks[i - 1])
            if runs_here(block) or output:
                continue
            key = elsewhere(block)
            if key is None:
                unclassified.append(f"{block.name} ({block.language or 'no language'}): {block.code[:60]!r}")
            used.add(key)
    assert not unclassified, "blocks neither run here nor listed in ELSEWHERE:\n" + "\n".join(unclassified)
    assert not set(ELSEWHERE) - used, f"ELSEWHERE names blocks the pages no longer have: {set(ELSEWHERE) - used}"


def _literal(comment: str):
    """The Python literal a comment starts with (up to a ``;`` or ``:`` that follows it), else a marker."""
    cuts = [m.start() for m in re.finditer(r"[;:]", comment)] + [len(comment)]
    for cut in sorted(cuts, reverse=True):
        try:
            return ast.literal_eval(comment[:cut].strip())
        except (ValueError, SyntaxError):
            continue
    return _literal


def _same(got, shown) -> bool:
    """Equal, floats to the three decimals a page shows."""
    if isinstance(shown, float):
        return isinstance(got, (int, float)) and abs(got - shown) <= 5e-4 + 1e-6
    if isinstance(shown, (list, tuple)):
        got = list(got) if not isinstance(got, str) else got
        return isinstance(got, list) and len(got) == len(shown) and all(map(_same, got, shown))
    return got == shown


def run_python(block: Block, namespace: dict) -> int:
    """Run a Python block statement by statement; check each expression whose comment is a literal.
    The number of values checked."""
    code = block.code
    for old, new in OFFLINE.items():
        code = code.replace(old, new)
    lines, checked = code.splitlines(), 0
    for statement in ast.parse(code).body:
        source = ast.get_source_segment(code, statement)
        tail = lines[statement.end_lineno - 1][statement.end_col_offset :]
        shown = _literal(tail.split("#", 1)[1]) if "  #" in tail else _literal
        if isinstance(statement, ast.Expr) and shown is not _literal:
            value = statement.value
            if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "print":
                value = value.args[0]
            got = eval(compile(ast.Expression(value), block.name, "eval"), namespace)
            assert _same(got, shown), f"{block.name}: {source} gives {got!r}, the page shows {shown!r}"
            checked += 1
        else:
            exec(compile(ast.Module([statement], []), block.name, "exec"), namespace)
    return checked


def run_commands(block: Block, monkeypatch, capsys) -> str:
    """A block's commands, in this process: ``python examples/X.py ...`` as the script, ``pelt ...`` by
    pelt's CLI. What they print."""
    out = []
    for command in commands(block.code):
        words = shlex.split(command)
        if words[0] == "python":
            monkeypatch.setattr(sys, "argv", [str(REPO / words[1]), *words[2:]])
            with pytest.raises(SystemExit) as exit_:
                runpy.run_path(str(REPO / words[1]), run_name="__main__")
            code = exit_.value.code
        else:
            code = pelt_main(words[1:])
        printed, err = capsys.readouterr()
        assert code in (0, None), f"{block.name}: {command} exited {code}: {err[-2000:]}"
        out.append(printed)
    return "".join(out)


@pytest.mark.parametrize("page", RUN_PAGES)
def test_a_pages_examples_run_on_the_demo_run_and_print_what_they_show(page, finished, tmp_path, monkeypatch, capsys):
    (tmp_path / "results").symlink_to(finished / "results")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    page_blocks, ran, checked = blocks(page), 0, 0
    for i, block in enumerate(page_blocks):
        if not runs_here(block):
            continue
        ran += 1
        if block.language == "python":
            checked += run_python(block, namespace)
            continue
        printed = run_commands(block, monkeypatch, capsys)
        after = page_blocks[i + 1] if i + 1 < len(page_blocks) else None
        if after is not None and after.language == "text":
            assert printed.splitlines() == after.code.splitlines(), f"{block.name} prints:\n{printed}"
            checked += 1
    assert ran and checked, f"{page}: no example ran ({ran}) or none showed a value ({checked})"


def readme_table() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index(HEADER)
    return text[start : text.index("\n\n", start) + 1]


def test_the_readmes_demo_table_is_rendered_from_the_runs_summaries():
    """Every number of the README's table from the output files of the run it quotes, kept in
    benchmarks/demo-results/ (that run's results/eval/summary/*.csv): a rerun that changes them
    changes both, or this fails."""
    assert readme_table() == demo_table(REPO / "benchmarks" / "demo-results")


def _recorded(summary: str) -> dict[tuple[str, ...], dict[str, str]]:
    """The recorded run's rows of ``<summary>.csv``, keyed by variant (LAMA) or by benchmark, variant
    and setting (fine-tuning)."""
    with (REPO / "benchmarks" / "demo-results" / f"{summary}.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    if summary == "lama":
        return {(row["variant"],): row for row in rows}
    return {(row["benchmark"], row["variant"], row["setting"]): row for row in rows}


def test_the_readmes_sentences_on_the_demo_quote_the_recorded_run():
    """The numbers the README's sentences quote under its table (the gains, the baselines, LAMA's
    buckets and controls) are the recorded run's, as its table's are: a re-recorded run that moves
    one of them fails here until the sentence says it (the table alone was checked before, and its
    sentences once kept the numbers of an older record)."""
    text = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    tuned = _recorded("fewrel") | _recorded("wiki80")

    def accuracy(benchmark: str, variant: str, setting: str, column: str = "accuracy_mean") -> float:
        return 100 * float(tuned[benchmark, variant, setting][column])

    def gain(benchmark: str, setting: str) -> str:
        return f"{accuracy(benchmark, 'pelt', setting) - accuracy(benchmark, 'baseline', setting):+.1f}"

    fewrel = f"FewRel 1.0 {gain('fewrel1', '5-1')} and {gain('fewrel1', '10-1')}, FewRel 2.0 {gain('fewrel2', '5-1')}"
    assert f"{fewrel}, Wiki80 1 % {gain('wiki80', '1%')}, the knowledge-free controls" in text
    assert f"this run's grows ({gain('wiki80', '1%')}, {gain('wiki80', '10%')}, {gain('wiki80', '100%')})" in text
    base, pelt = (f"{accuracy('wiki80', v, s):.1f}" for v, s in (("baseline", "1%"), ("baseline", "100%")))
    rare = accuracy("wiki80", "baseline", "100%", "rare_heads_mean")
    assert f"({base} -> {pelt}, rare heads {rare:.1f})" in text
    rare = accuracy("wiki80", "pelt", "100%", "rare_heads_mean")
    assert f"({accuracy('wiki80', 'pelt', '100%'):.1f}, rare heads {rare:.1f})" in text

    lama = _recorded("lama")

    def p_at_1(variant: str, bucket: str) -> float:
        return 100 * float(lama[variant,][f"per_fact_p_at_1 {bucket}"])

    rare_bucket, known = "[0,10)", "[10,50)"
    assert (
        f"rare subjects go from {p_at_1('baseline', rare_bucket):.1f} to **{p_at_1('pelt', rare_bucket):.1f}**" in text
    )
    assert f"controls fall to {p_at_1('permuted', rare_bucket):.1f}" in text
    assert p_at_1("permuted", rare_bucket) == p_at_1("random", rare_bucket)  # "fall to" one number
    assert f"swap stays at {p_at_1('swapped', rare_bucket):.1f}" in text
    assert f"{int(lama['baseline',][f'facts {known}']):,} facts): {p_at_1('baseline', known):.1f} -> " in text
    assert f"-> {p_at_1('pelt', known):.1f} per fact" in text
    slot = p_at_1("random", known) - p_at_1("baseline", known)
    assert f"random vectors alone give {p_at_1('random', known):.1f} ({slot:+.1f})" in text
    assert f"table is {p_at_1('pelt', known) - p_at_1('random', known):.1f} points above the random control" in text


def test_the_demo_table_renders_the_suites_run(finished):
    """The suite's run (one seed, Wiki80 at 100 % only, extra LAMA facts: other numbers than the README's
    run) renders through the same function into the README's rows and columns, with a number in every
    cell the suite ran."""
    rendered = demo_table(finished / "results" / "eval" / "summary").splitlines()
    shown = readme_table().splitlines()
    assert [r.split(" | ")[0] for r in rendered] == [r.split(" | ")[0] for r in shown]
    for row in rendered[2:]:
        cells = [c.strip("* ") for c in row.strip("|").split(" | ")[1:]]
        numbers = [bool(re.fullmatch(r"\d+\.\d( ± \d+\.\d)?", c)) for c in cells]
        if row.startswith("| LAMA"):
            assert all(numbers), row  # every variant
        elif not row.startswith(("| Wiki80 1 %", "| Wiki80 10 %")):  # not in the suite's grid
            assert numbers[:2] == [True, True], row  # baseline and pelt
