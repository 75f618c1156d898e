"""pelt info and the pre-run checks: what the machine has, and one line for what a run would miss."""

from __future__ import annotations

import os
import stat

import pytest

from pelt import info
from pelt.cli import main


def _fake_java(tmp_path, version_line: str) -> str:
    """A `java` that reports ``version_line`` on stderr, as java -version does."""
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    java.chmod(java.stat().st_mode | stat.S_IEXEC)
    return str(home)


@pytest.mark.parametrize(
    ("line", "major"),
    [
        ('openjdk version "17.0.15" 2025-04-15', 17),
        ('openjdk version "21" 2023-09-19', 21),
        ('java version "1.8.0_292"', 8),
        ("no version here", None),
    ],
)
def test_java_version_reads_both_numbering_schemes(tmp_path, line, major):
    assert info.java_version(os.path.join(_fake_java(tmp_path, line), "bin", "java")) == major


def test_an_old_or_missing_java_is_one_line_naming_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", _fake_java(tmp_path, 'java version "1.8.0_292"'))
    problems = info.preflight(spark=True, gpu=False)
    assert len(problems) == 1 and "Java 8 found" in problems[0] and "needs 17 or later" in problems[0]
    assert "\n" not in problems[0] and "openjdk-17" in problems[0]
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "nowhere"))
    (problem,) = info.preflight(spark=True, gpu=False)
    assert problem.startswith("Java not found (JAVA_HOME=") and "has no bin/java" in problem
    assert info.preflight(spark=False, gpu=False) == []  # nothing asks for Spark: nothing to miss


def test_a_gpu_asked_for_on_a_machine_without_one_is_named():
    import torch

    problems = info.preflight(spark=False, gpu=True)
    assert (problems == []) == torch.cuda.is_available()
    if problems:
        assert "a GPU is asked for" in problems[0] and "sees none" in problems[0]


def test_pelt_info_prints_versions_and_hardware_and_fails_on_what_is_missing(tmp_path, monkeypatch, capsys):
    assert main(["info"]) == (1 if info.java_problem() else 0)
    out = capsys.readouterr().out
    names = [line.split()[0] for line in out.splitlines() if line and not line.startswith("missing")]
    assert names[:4] == ["pelt", "Python", "platform", "CPU"] and "torch" in names and "pyspark" in names
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "nowhere"))
    assert main(["info"]) == 1
    out = capsys.readouterr().out
    assert any(line.startswith("Java") and line.endswith("not found") for line in out.splitlines())
    assert out.splitlines()[-1].startswith("missing: Java not found")


def test_a_corpus_language_whose_tokenizer_lacks_its_package_is_one_line(monkeypatch):
    import importlib.util

    assert info.preflight(spark=False, gpu=False, languages=["en", "ja", "de"]) == []  # all installed here
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "fugashi" else find_spec(name))
    (problem,) = info.preflight(spark=False, gpu=False, languages=["en", "ja", "ja"])
    assert problem.startswith("language 'ja'") and "fugashi" in problem and "\n" not in problem


def test_a_corpus_language_is_the_configured_one_else_the_dumps_own():
    from conftest import REPO

    demo = str(REPO / "resources" / "demo" / "wikipedia" / "demo-pages-articles.xml.bz2")
    corpora = {
        "wikipedia": {"kind": "wikipedia", "path": demo},
        "dewiki": {"kind": "wikipedia", "path": demo, "language": "de"},
        "biomed": {"kind": "s2orc", "path": "nowhere/*.jsonl"},
        "later": {"kind": "wikipedia", "path": "data/not-downloaded-*.bz2"},
    }
    assert info.corpus_languages(corpora) == ["en", "de"]
