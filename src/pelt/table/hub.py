"""Tables on the Hugging Face Hub, both ways: fetching one table file (and its sidecar) from a
dataset repository, and publishing a table as one: ``table.parquet`` (what
:meth:`~pelt.table.lookup.EntityTable.load` fetches) and a dataset card saying which model the vectors
belong to, what corpus they came from under which licence, and how to load them.

Only the Hub needs ``huggingface_hub``, so it is imported where a function talks to the Hub; the
layout can be written to a local folder without it (to check it, or upload it with another tool).
The card's front matter is written as JSON values, which are YAML, so no YAML library is needed;
the sidecar is not published (it is rebuilt on open and would double the upload).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from pelt.table.format import sidecar_path

if TYPE_CHECKING:
    from pelt.table.lookup import EntityTable

logger = logging.getLogger(__name__)


def download_table(repo_id: str, filename: str, revision: str | None) -> str:
    """The local path of ``filename`` from a hub dataset repository (downloaded once, then cached)."""
    from huggingface_hub import snapshot_download  # only tables from the hub need it

    patterns = [filename, str(sidecar_path(filename))]
    try:
        folder = snapshot_download(repo_id, repo_type="dataset", revision=revision, allow_patterns=patterns)
    except (OSError, ValueError) as err:  # the hub's HTTP, offline and bad-repo-id errors
        raise FileNotFoundError(
            f"entity table {repo_id!r} is neither a local path nor a reachable Hugging Face Hub dataset: {err}"
        ) from err
    path = Path(folder) / filename
    if not path.exists():
        raise FileNotFoundError(f"hub dataset {repo_id!r} (revision {revision or 'main'}) has no {filename}")
    logger.info("entity table %s from hub dataset %s", path, repo_id)
    return str(path)


TABLE_FILE = "table.parquet"  # EntityTable.load's default filename
CARD_FILE = "README.md"


def _card_fields(
    table: EntityTable, corpus: str | None, language: str | None, license: str | None
) -> dict[str, object]:
    """Front matter: the hub's own keys (licence, language, tags, the Parquet file as the dataset) and pelt's."""
    meta = table.metadata
    corpus = corpus or meta.get("corpus")
    language = language or meta.get("language")
    license = license or meta.get("corpus_license")
    fields: dict[str, object] = {"pretty_name": f"PELT entity table for {meta['model']}"}
    if license:
        fields["license"] = license
    if language:
        fields["language"] = [language]
    fields["tags"] = ["pelt", "entity-embeddings"]
    fields["configs"] = [{"config_name": "default", "data_files": TABLE_FILE}]
    fields["model"] = meta["model"]
    for key in ("model_digest", "hub_name", "revision", "model_type", "representation"):
        if meta.get(key) is not None:
            fields[key] = meta[key]
    if corpus:
        fields["corpus"] = corpus
    fields["hidden_size"] = table.hidden_size
    fields["norm"] = table.norm
    fields["entities"] = len(table)
    fields["sentences"] = int(table.column("n_sentences").to_numpy().sum())
    fields["mentions"] = int(table.column("frequency").to_numpy().sum())
    return fields


def dataset_card(
    table: EntityTable,
    name: str,
    *,
    corpus: str | None = None,
    language: str | None = None,
    license: str | None = None,
) -> str:
    """The README.md of a table's dataset repository ``name`` (a hub repo id or a folder): what a reader
    of the hub page needs to trust and use the table. ``corpus``, ``language`` and ``license`` (the
    corpus's) default to the table's metadata keys ``corpus``, ``language`` and ``corpus_license``."""
    fields = _card_fields(table, corpus, language, license)
    digest = fields.get("model_digest")
    front = "\n".join(f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in fields.items())
    rows = [
        ("model", f"`{fields['model']}`"),
        ("model weights (sha256, `pelt.encoding.models.weights_digest`)", f"`{digest}`" if digest else "not recorded"),
        ("corpus", fields.get("corpus", "not recorded")),
        ("language", ", ".join(fields.get("language", ["not recorded"]))),
        ("corpus licence", fields.get("license", "not recorded")),
        ("entities", f"{fields['entities']:,}"),
        ("sentences encoded", f"{fields['sentences']:,}"),
        ("mentions in the corpus", f"{fields['mentions']:,}"),
        ("hidden size H", fields["hidden_size"]),
        ("default norm L", fields["norm"]),
    ]
    table_rows = "\n".join(f"| {key} | {value} |" for key, value in rows)
    return f"""---
{front}
---

# {fields["pretty_name"]}

A pluggable entity lookup table (PELT, Ye et al., ACL 2022) built with pelt: one vector per
entity, the sum of the model's output representations of the entity's masked mentions, to be
injected into `{fields["model"]}` as an input embedding. The vectors fit that model only (same
weights); `EntityTable.check_model` verifies it.

| | |
|---|---|
{table_rows}

## Load

```python
from pelt.table import EntityTable

table = EntityTable.load({json.dumps(name)})
vectors = table.lookup(["some entity id"])  # [n, H] float32: L * sum / ||sum||
table.most_similar("some entity id", k=10)
```

`{TABLE_FILE}` holds `entity_id`, `n_sentences`, `frequency` and `vector_sum` (fixed-size lists of
float32), sorted by `entity_id`, with pelt's metadata as JSON under the schema metadata key `pelt`.
"""


def write_dataset_folder(
    table: EntityTable, folder: str | os.PathLike[str], *, name: str | None = None, **card: str | None
) -> list[Path]:
    """The repository's files in ``folder`` (``name`` in the card's example defaults to it); returns them."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    table_file = folder / TABLE_FILE
    if not (table_file.exists() and table_file.samefile(table.path)):
        shutil.copyfile(table.path, table_file)
    card_file = folder / CARD_FILE
    card_file.write_text(dataset_card(table, name or str(folder), **card), encoding="utf-8")
    return [table_file, card_file]


def upload_dataset(table: EntityTable, repo_id: str, *, private: bool = False, **card: str | None) -> str:
    """Create (or update) the hub dataset ``repo_id`` with the table and its card, in one commit; returns its URL."""
    try:
        from huggingface_hub import CommitOperationAdd, HfApi
    except ImportError as err:
        raise ImportError(
            "uploading needs huggingface_hub: pip install huggingface_hub, or write the folder with --local"
        ) from err
    api = HfApi()
    url = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    operations = [
        CommitOperationAdd(path_in_repo=TABLE_FILE, path_or_fileobj=str(table.path)),
        CommitOperationAdd(path_in_repo=CARD_FILE, path_or_fileobj=dataset_card(table, repo_id, **card).encode()),
    ]
    api.create_commit(repo_id, operations, commit_message=f"pelt table {table.build_id}", repo_type="dataset")
    return str(url)
