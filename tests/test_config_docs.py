"""Every key of the config schema is documented in config/README.md."""

from __future__ import annotations

import jsonschema
import pytest
import yaml

from conftest import REPO


def _keys(schema: dict) -> set[str]:
    keys = set()
    for name, sub in schema.get("properties", {}).items():
        keys.add(name)
        keys |= _keys(sub)
        if isinstance(sub.get("additionalProperties"), dict):
            keys |= _keys(sub["additionalProperties"])
        if isinstance(sub.get("items"), dict):
            keys |= _keys(sub["items"])
    return keys


def test_every_schema_key_is_documented():
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    readme = (REPO / "config" / "README.md").read_text()
    missing = sorted(k for k in _keys(schema) if f"`{k}`" not in readme)
    assert not missing, f"config keys not documented in config/README.md: {missing}"


@pytest.mark.parametrize("name", ["config.yaml", "paper.yaml"])
def test_shipped_configs_are_valid(name):
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    jsonschema.validate(yaml.safe_load((REPO / "config" / name).read_text()), schema)
