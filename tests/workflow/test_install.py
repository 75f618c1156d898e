"""The library installs alone (issue 16 item 6): ``pip install`` of pelt into a fresh virtual
environment (no system site-packages, no PYTHONPATH) pulls in only the library's dependencies, and
examples/use_a_table.py runs there on a table built here, giving the same predictions.

Cost: pip resolves within constraints.txt, so every wheel comes from pip's cache or the local
wheel directory after the first run, and ``--no-compile`` skips byte-compiling torch's thousands
of modules (most of the install's CPU time): about 19 s of CPU, see benchmarks/README.md, "Installing the library
alone".
"""

from __future__ import annotations

import json
import os
import runpy
import shutil
import subprocess
import sys

import pytest
from conftest import REPO

from pelt.encoding.encode import build_table
from pelt.encoding.models import default_norm, load_masked_lm, model_identity, representation
from pelt.table import write_table

EXAMPLE = REPO / "examples" / "use_a_table.py"
MENTIONS = [
    ("Marie Curie", "Marie Curie was born in Warsaw and worked in Paris.", (0, 11)),
    ("Warsaw", "The city of Warsaw lies on the Vistula river in Poland.", (12, 18)),
]
WORKFLOW_ONLY = ("pyspark", "snakemake", "spacy", "pandas", "jsonschema")


def _example(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    """The example's --json result, run in this process (this environment's pelt)."""
    argv = sys.argv
    sys.argv = [str(EXAMPLE), *args, "--json"]
    try:
        with pytest.raises(SystemExit) as exit_:
            runpy.run_path(str(EXAMPLE), run_name="__main__")
    finally:
        sys.argv = argv
    out, err = capsys.readouterr()
    assert exit_.value.code == 0, err
    return json.loads(out)


def test_library_installs_alone_and_runs_the_example(tiny_model_dirs, tmp_path, capsys):
    model_dir = str(tiny_model_dirs["roberta"])
    model, tokenizer = load_masked_lm(model_dir)
    ids, sums, counts = build_table(model, tokenizer, *map(list, zip(*MENTIONS)), max_seq_len=64)
    metadata = {
        "model": model_dir,
        **model_identity(model, model_dir),
        "model_type": model.config.model_type,
        "hidden_size": model.config.hidden_size,
        "representation": representation(model),
        "max_seq_len": 64,
        "norm": default_norm(model),
    }
    write_table(tmp_path / "tables" / "table.parquet", ids, sums, counts, counts, metadata)
    moved = shutil.copytree(model_dir, tmp_path / "models" / "moved")  # the table must accept its model anywhere
    args = ["--model", str(moved), "--table", str(tmp_path / "tables"), "--text", "Marie Curie was born in [MASK]."]
    args += ["--entity", "Marie Curie", "--device", "cpu"]
    expected = _example(capsys, *args)

    # The sources an sdist holds, built outside the repo: no build leftovers there, no tests or workflow here.
    source = tmp_path / "source"
    shutil.copytree(REPO / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, source / name)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    pip = [sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-compile"]
    subprocess.run([*pip, "-c", str(REPO / "constraints.txt"), str(source)], check=True, timeout=900)

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    probe = (
        "import importlib.util, json, pelt; "
        f"print(json.dumps([pelt.__file__, [m for m in {WORKFLOW_ONLY!r} if importlib.util.find_spec(m)]]))"
    )
    found = subprocess.run([python, "-c", probe], env=env, cwd=tmp_path, check=True, capture_output=True, text=True)
    where, present = json.loads(found.stdout)
    assert where.startswith(str(venv)), f"pelt imported from {where}, not from the fresh environment"
    assert present == [], f"the library alone installed workflow packages: {present}"
    run = subprocess.run([python, str(EXAMPLE), *args, "--json"], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert got["entity"] == expected["entity"] and got["with_table"]["n_injected"] == 1
    for key in ("without_table", "with_table"):
        assert [w for w, _ in got[key]["top"]] == [w for w, _ in expected[key]["top"]]
        assert [p for _, p in got[key]["top"]] == pytest.approx([p for _, p in expected[key]["top"]], rel=1e-4)
