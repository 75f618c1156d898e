"""The library's version ranges, the workflow's exact pins (constraints.txt) and the conda
environments must not drift apart."""

from __future__ import annotations

import re

import tomllib
import yaml
from conftest import REPO
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name


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
