"""Conda environments and pip pins must not drift apart."""

from __future__ import annotations

import re
import tomllib

import yaml
from conftest import REPO


def _pip_pins() -> dict[str, str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pins = {}
    for spec in project["dependencies"] + project["optional-dependencies"]["dev"]:
        name, version = re.fullmatch(r"([A-Za-z0-9_.-]+)==([^;\s]+)", spec).groups()
        pins[name.lower()] = version
    return pins


def _env_pins(path) -> dict[str, str]:
    pins = {}
    for dep in yaml.safe_load(path.read_text())["dependencies"]:
        for spec in dep["pip"] if isinstance(dep, dict) else []:
            name, version = spec.split("==")
            pins[name.lower()] = version
    return pins


def test_every_dependency_is_pinned_exactly():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    loose = [d for d in project["dependencies"] if "==" not in d]
    assert not loose, f"unpinned dependencies in pyproject.toml: {loose}"


def test_conda_envs_match_pip_pins():
    pins = _pip_pins()
    envs = sorted((REPO / "envs").glob("*.yaml"))
    assert envs, "no envs/*.yaml"
    for env in envs:
        env_pins = _env_pins(env)
        assert env_pins, f"{env.name} pins nothing"
        for name, version in env_pins.items():
            assert name in pins, f"{env.name}: {name} is not a dependency in pyproject.toml"
            assert version == pins[name], f"{env.name}: {name}=={version}, pyproject.toml has {pins[name]}"
