"""The library's version ranges, the workflow's exact pins (constraints.txt) and the conda
environments must not drift apart."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import tomllib
import yaml
from conftest import REPO
from demo_run import snakemake, write_config
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version
from snakemake.api import SnakemakeApi
from snakemake.settings.enums import Quietness
from snakemake.settings.types import DeploymentMethod, DeploymentSettings, OutputSettings, ResourceSettings


def _requirements() -> list[Requirement]:
    """Every requirement of pyproject.toml: the library's and each extra's (pelt's own extras left out)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    specs = project["dependencies"] + [s for extra in project["optional-dependencies"].values() for s in extra]
    return [r for r in map(Requirement, specs) if canonicalize_name(r.name) != "pelt"]


def _constraints() -> dict[str, str]:
    pins = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            match = re.fullmatch(r"([A-Za-z0-9_.-]+)==([^;\s]+)", line)
            assert match, f"constraints.txt: {line!r} is not an exact pin (name==version)"
            pins[canonicalize_name(match[1])] = match[2]
    return pins


def _env_pins(path) -> dict[str, str]:
    pins = {}
    for dep in yaml.safe_load(path.read_text())["dependencies"]:
        for spec in dep["pip"] if isinstance(dep, dict) else []:
            name, version = spec.split("==")
            pins[canonicalize_name(name)] = version
    return pins


def test_library_has_ranges_and_the_workflow_extras():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    library = {canonicalize_name(Requirement(s).name): Requirement(s) for s in project["dependencies"]}
    assert {"torch", "transformers", "pyarrow", "numpy"} <= set(library)
    assert not {"pyspark", "snakemake", "spacy"} & set(library), "workflow-only packages in the library's dependencies"
    assert all(not any(s.operator == "==" for s in r.specifier) for r in library.values()), "library pins exactly"
    assert project["requires-python"] == ">=3.10"
    workflow = {canonicalize_name(Requirement(s).name) for s in project["optional-dependencies"]["workflow"]}
    assert {"pyspark", "snakemake", "spacy"} <= workflow


def test_every_requirement_is_pinned_within_its_range():
    pins = _constraints()
    for req in _requirements():
        name = canonicalize_name(req.name)
        assert name in pins, f"{name} ({req}) has no pin in constraints.txt"
        assert req.specifier.contains(pins[name], prereleases=True), (
            f"constraints.txt: {name}=={pins[name]} not in {req}"
        )
    unused = set(pins) - {canonicalize_name(r.name) for r in _requirements()}
    assert not unused, f"constraints.txt pins what pyproject.toml does not require: {sorted(unused)}"


def test_the_lowest_constraints_are_the_librarys_lower_bounds():
    """constraints-lowest.txt (.ci/lowest, `make lowest`) pins each of the library's dependencies at its
    range's lower bound, and nothing else."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    bounds = {}
    for req in map(Requirement, project["dependencies"]):
        (lower,) = [s.version for s in req.specifier if s.operator == ">="]
        bounds[canonicalize_name(req.name)] = lower
    lines = [ln for ln in (REPO / "constraints-lowest.txt").read_text().splitlines() if ln and not ln.startswith("#")]
    pins = {canonicalize_name(name): Version(version) for name, version in (ln.split("==") for ln in lines)}
    assert pins == {name: Version(lower) for name, lower in bounds.items()}


def test_conda_envs_match_the_constraints():
    pins = _constraints()
    envs = sorted((REPO / "envs").glob("*.yaml"))
    assert envs, "no envs/*.yaml"
    for env in envs:
        env_pins = _env_pins(env)
        assert env_pins, f"{env.name} pins nothing"
        for name, version in env_pins.items():
            assert name in pins, f"{env.name}: {name} is not pinned in constraints.txt"
            assert version == pins[name], f"{env.name}: {name}=={version}, constraints.txt has {pins[name]}"


def test_make_installs_with_the_constraints():
    """Every package `make install` fetches is held to the pins: pyspark's wheel, built beside the
    other pins' install, and the project with its extras."""
    makefile = (REPO / "Makefile").read_text()
    fetches = re.findall(r"pip (?:install|wheel) [^\\&;\n]*", makefile)
    assert any(f.endswith("-e '.[dev]'") for f in fetches), fetches
    unpinned = [f for f in fetches if "-c constraints.txt" not in f and "--upgrade pip" not in f]
    assert not unpinned, unpinned
    assert re.search(r"^\$\(STAMP\): .*constraints\.txt", makefile, re.M), "a pin change must reinstall"


# conda's answers to what Snakemake asks before it plans (its version, its prefix, its channel
# priority): this machine has no conda, and planning creates no environment.
FAKE_CONDA = """#!/bin/sh
case "$*" in
  "--version") echo "conda 24.11.0" ;;
  "info --json") echo '{"conda_prefix": "/none", "root_prefix": "/none", "envs_dirs": [], "platform": "linux-64"}' ;;
  "config --get channel_priority --json") echo '{"get": {"channel_priority": "strict"}}' ;;
  *) echo "fake conda cannot: $*" >&2; exit 1 ;;
esac
"""


@pytest.mark.parametrize("flags", [("--use-conda",), ("--sdm", "conda")], ids=["use-conda", "sdm-conda"])
def test_each_rule_gets_its_pinned_env_with_either_conda_flag(tmp_path, monkeypatch, flags):
    """Users type `--use-conda` (our older docs, most tutorials); Snakemake 9 teaches `--sdm conda`.
    Both must plan the demo with every rule that runs code in one of envs/*.yaml, which pin what
    constraints.txt pins (the test above)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "conda").write_text(FAKE_CONDA)
    (bin_dir / "conda").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    work = tmp_path / "work"
    write_config(work)
    plan = snakemake(work, "-n", "--cores", "1", *flags)
    assert plan.returncode == 0, plan.stdout[-3000:] + plan.stderr[-3000:]
    envs = snakemake(work, "--list-conda-envs", "--cores", "1", *flags)
    assert envs.returncode == 0, envs.stdout[-3000:] + envs.stderr[-3000:]
    listed = {Path(line.split()[0]).resolve() for line in envs.stdout.splitlines()[1:] if line.strip()}
    assert listed == set((REPO / "envs").glob("*.yaml")), envs.stdout

    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
        workflow = api.workflow(
            resource_settings=ResourceSettings(cores=1),
            snakefile=REPO / "Snakefile",
            workdir=work,
            deployment_settings=DeploymentSettings(deployment_method={DeploymentMethod.CONDA}),
        )._workflow
        without = [r.name for r in workflow.rules if not r.norun and not r.conda_env]
    assert not without, f"rules that run code without a conda env: {without}"


def test_the_catalog_entry_says_what_the_workflow_supports():
    """The workflow catalog shows conda and the report as supported: both must be true of the
    workflow (the test above plans with conda; the suite builds the report)."""
    entry = yaml.safe_load((REPO / ".snakemake-workflow-catalog.yml").read_text())["usage"]
    assert entry["software-stack-deployment"]["conda"] is True and entry["report"] is True
    assert "--sdm conda" in entry["mandatory-flags"]["desc"]
    running = (REPO / "docs" / "running.md").read_text()
    assert "--sdm conda" in running and "--use-conda" in running
