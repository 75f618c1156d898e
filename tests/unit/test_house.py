"""The house's size limits on pelt's source: a module of at most 600 lines, a function of at most 80.
A module or a function past them is one that does two things; checked here so that one grows past
them in review, not unnoticed."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

MODULE_LINES = 600
FUNCTION_LINES = 80
SOURCE = REPO / "src" / "pelt"


def modules() -> list[Path]:
    """Every module of pelt."""
    return sorted(SOURCE.rglob("*.py"))


def long_functions(text: str) -> list[tuple[str, int, int]]:
    """(qualified name, first line, lines) of each function of a module longer than the limit,
    counted from its ``def`` (decorators aside) to its last line, nested functions and methods
    each on their own as well as within the function that holds them."""
    found = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = prefix
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}."
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = child.end_lineno - child.lineno + 1
                if lines > FUNCTION_LINES:
                    found.append((name.removesuffix("."), child.lineno, lines))
            visit(child, name)

    visit(ast.parse(text), "")
    return found


def test_every_module_is_within_its_lines():
    found = [
        f"{path.relative_to(REPO)}: {lines} lines"
        for path in modules()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MODULE_LINES
    ]
    assert found == [], f"modules over {MODULE_LINES} lines:\n" + "\n".join(found)


def test_every_function_is_within_its_lines():
    found = [
        f"{path.relative_to(REPO)}:{line}: {name} is {lines} lines"
        for path in modules()
        for name, line, lines in long_functions(path.read_text(encoding="utf-8"))
    ]
    assert found == [], f"functions over {FUNCTION_LINES} lines:\n" + "\n".join(found)


def test_the_check_finds_a_long_function_and_a_long_method():
    """A function one line over the limit is named, a method by its class; one within it is not."""
    body = "".join(f"    x = {i}\n" for i in range(FUNCTION_LINES))
    method = body.replace("    ", "        ")
    source = f"def short():\n    pass\n\ndef long():\n{body}\nclass C:\n    def method(self):\n{method}"
    over = FUNCTION_LINES + 1
    assert long_functions(source) == [("long", 4, over), ("C.method", FUNCTION_LINES + 7, over)]
