"""What pelt sees of the machine, and what a run needs of it, each said in one line.

``pelt info`` prints the versions and hardware (as ``spacy info`` does), so that a bug report carries
them; :func:`preflight` names what a run would miss before any job starts, so that a machine
without Java gets one line instead of the forty of a failed Spark gateway buried in a job's log.
Pure Python at import: torch and pyspark are asked for their versions only when the report is made.
"""

from __future__ import annotations

import glob
import importlib.metadata
import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

# Spark 4 runs on Java 17 and 21 (its documentation); pyspark's gateway fails on anything older.
MIN_JAVA = 17
JAVA_HINT = "install Java 17 or later (Debian/Ubuntu: apt-get install openjdk-17-jre-headless) or set JAVA_HOME"
PACKAGES = ("torch", "transformers", "tokenizers", "pyarrow", "pyspark", "spacy", "snakemake", "numpy")


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def java_executable() -> str | None:
    """The ``java`` Spark will start: ``$JAVA_HOME/bin/java`` when JAVA_HOME is set, else the PATH's."""
    home = os.environ.get("JAVA_HOME")
    if home:
        path = os.path.join(home, "bin", "java")
        return path if os.access(path, os.X_OK) else None
    return shutil.which("java")


def java_version(executable: str) -> int | None:
    """The major version ``java -version`` reports (``1.8.0_292`` is 8, ``17.0.15`` is 17)."""
    try:
        run = subprocess.run([executable, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', run.stderr + run.stdout)
    if not match:
        return None
    major = int(match[1])
    return int(match[2] or 0) if major == 1 else major


def java_problem() -> str | None:
    """One line saying why Spark cannot start here, or None."""
    executable = java_executable()
    if executable is None:
        where = (
            f"JAVA_HOME={os.environ['JAVA_HOME']} has no bin/java" if os.environ.get("JAVA_HOME") else "no java on PATH"
        )
        return f"Java not found ({where}): the corpus, linking and sampling stages run on Spark; {JAVA_HINT}"
    version = java_version(executable)
    if version is None:
        return f"{executable} -version reports no version: {JAVA_HINT}"
    if version < MIN_JAVA:
        return (
            f"Java {version} found at {executable}, Spark {_version('pyspark')} needs {MIN_JAVA} or later: {JAVA_HINT}"
        )
    return None


def gpu_problem() -> str | None:
    """One line saying why a run that asks for a GPU would not get one, or None."""
    try:
        import torch
    except ImportError:
        return "a GPU is asked for (encoding.device: cuda) but torch is not installed"
    if not torch.cuda.is_available():
        build = torch.version.cuda or "none"
        return f"a GPU is asked for (encoding.device: cuda) but torch {torch.__version__} (CUDA {build}) sees none"
    return None


def preflight(*, spark: bool, gpu: bool, languages: Sequence[str] = ()) -> list[str]:
    """What a run would miss, one line each: Java where Spark runs, a GPU where one is asked for, the
    packages each corpus language's tokenizer needs (:func:`pelt.linking.languages.missing_packages`)."""
    problems = [java_problem() if spark else None, gpu_problem() if gpu else None]
    if languages:
        from pelt.linking.languages import missing_packages  # spaCy: only where a corpus is to be linked

        problems += [missing_packages(language) for language in dict.fromkeys(languages)]
    return [p for p in problems if p]


def corpus_languages(corpora: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The language of each corpus as its linking job will see it: the configured one, else a
    Wikipedia dump's own (its header, read from the first file); none where neither is known yet
    (files still to download; S2ORC's English default needs no package)."""
    from pelt.corpus.wikipedia.dump import dump_site
    from pelt.registry import CORPUS_KINDS

    languages = []
    for corpus in corpora.values():
        if corpus.get("language"):
            languages.append(corpus["language"])
        elif CORPUS_KINDS[corpus["kind"]].has_pages:
            paths = corpus["path"] if isinstance(corpus["path"], list) else [corpus["path"]]
            files = sorted(f for p in paths for f in glob.glob(p))
            if files:
                languages.append(dump_site(files[0]).language)
    return languages


def report() -> list[tuple[str, str]]:
    """(name, value) rows: pelt, Python, the platform, CPUs, memory, Java, the GPU, the key packages."""
    rows = [
        ("pelt", _version("pelt")),
        ("Python", f"{platform.python_version()} ({sys.executable})"),
        ("platform", platform.platform()),
        ("CPU cores", str(os.cpu_count())),
    ]
    if hasattr(os, "sysconf") and "SC_PHYS_PAGES" in os.sysconf_names:
        rows.append(("memory", f"{os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE') / 2**30:.1f} GiB"))
    executable = java_executable()
    version = java_version(executable) if executable else None
    rows.append(("Java", f"{version} ({executable})" if version else "not found"))
    rows += [(name, _version(name)) for name in PACKAGES]
    try:
        import torch

        devices = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        rows.append(("GPU", ", ".join(devices) if devices else f"none (torch CUDA build: {torch.version.cuda})"))
    except ImportError:
        rows.append(("GPU", "unknown (torch not installed)"))
    return rows


def format_report(rows: Sequence[tuple[str, str]]) -> str:
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)
