"""Every key of the config schema is documented in config/README.md."""

from __future__ import annotations

import jsonschema
import pytest
import yaml
from conftest import REPO

from pelt.config import config_schema

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


def _resolve(sub: dict, root: dict) -> dict:
    """A subschema with its local ``$ref`` (``#/$defs/name``) merged in, so that shared definitions count too."""
    if "$ref" not in sub:
        return sub
    target = root
    for part in sub["$ref"].removeprefix("#/").split("/"):
        target = target[part]
    return {**_resolve(target, root), **{k: v for k, v in sub.items() if k != "$ref"}}


def _keys(schema: dict, root: dict) -> set[str]:
    # a corpus kind's own keys: in a branch for its corpora (pelt.config.config_schema)
    keys = set().union(*(_keys(branch.get("then", {}), root) for branch in schema.get("allOf", [])))
    for name, sub in schema.get("properties", {}).items():
        keys.add(name)
        keys |= _nested_keys(_resolve(sub, root), root)
    for sub in schema.get("patternProperties", {}).values():  # `mlama_<language>`: its keys, not its pattern
        keys |= _nested_keys(_resolve(sub, root), root)
    return keys


def _nested_keys(sub: dict, root: dict) -> set[str]:
    """The keys of a subschema, its own and its entries' (``additionalProperties``, ``items``)."""
    keys = _keys(sub, root)
    for nested in ("additionalProperties", "items"):
        if isinstance(sub.get(nested), dict):
            keys |= _keys(_resolve(sub[nested], root), root)
    return keys


def test_every_schema_key_is_documented():
    schema = config_schema(SCHEMA, REPO)  # with each kind's block (workflow/schemas/tasks/, corpora/)
    readme = (REPO / "config" / "README.md").read_text()
    keys = _keys(schema, schema)
    assert {"fewrel2", "eval_every", "train_n_query", "label2id"} <= keys  # keys behind a $ref are found
    assert "page_props" in keys  # and a corpus kind's own
    missing = sorted(k for k in keys if f"`{k}`" not in readme)
    assert not missing, f"config keys not documented in config/README.md: {missing}"


@pytest.mark.parametrize("name", ["config.yaml", "paper.yaml", "mlama.yaml"])
def test_shipped_configs_are_valid(name):
    schema = config_schema(SCHEMA, REPO)
    jsonschema.validate(yaml.safe_load((REPO / "config" / name).read_text()), schema)


def test_config_problems_are_one_line_each_with_the_key_meant():
    from pelt.config import config_problems

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    schema = config_schema(SCHEMA, REPO)
    assert config_problems(config, schema) == []
    config["sampling"]["max_sentences_per_entiti"] = 3
    config["encoding"]["precision"] = "fp8"
    config["tasx"] = {}
    assert config_problems(config, schema) == [
        "tasx: unknown key; did you mean 'tasks'?",
        "encoding.precision: 'fp8' is not one of ['auto', 'fp32', 'bf16', 'fp16']",
        "sampling.max_sentences_per_entiti: unknown key; did you mean 'max_sentences_per_entity'?",
    ]
