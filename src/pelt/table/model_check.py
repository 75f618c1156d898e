"""Whether a table and a model belong together: the model a table was built for is known by its
weights' digest (by its name for tables older than digests), which both using a table with a model
and merging tables compare.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transformers import PreTrainedModel


def model_mismatch(metadata: Mapping[str, object], model: PreTrainedModel) -> str | None:
    """Why ``model`` is not the one a table's metadata names, or None when it is."""
    recorded = metadata.get("model_digest")
    if recorded is not None:
        from pelt.encoding.models import weights_digest  # here: importing torch would slow every `pelt table` command

        digest = weights_digest(model)
        if digest == recorded:
            return None
        return f"built for model {metadata['model']!r} with weights {recorded}, {model.name_or_path!r} has {digest}"
    from pelt.encoding.models import same_model_name

    if same_model_name(str(metadata["model"]), model.name_or_path):
        return None
    return f"built for model {metadata['model']!r}, not {model.name_or_path!r}"


def same_model(a: Mapping[str, object], b: Mapping[str, object]) -> bool:
    """Tables name one model when their weight digests agree, or (without digests) their model names do."""
    if a.get("model_digest") is not None and b.get("model_digest") is not None:
        return a["model_digest"] == b["model_digest"]
    return a.get("model") == b.get("model")


def model_label(metadata: Mapping[str, object]) -> str:
    """How an error names the model of a table: by name and weights, the two :func:`same_model` compares."""
    return f"{metadata.get('model')!r} (weights {metadata.get('model_digest')})"
