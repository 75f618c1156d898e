"""Tables on the Hugging Face Hub, both ways: fetching one table file (and its sidecar) from a
dataset repository, and publishing a table as one: ``table.parquet`` (what
:meth:`~pelt.table.lookup.EntityTable.load` fetches) and a dataset card saying which model the vectors
belong to (a Hub name, or plainly a local folder), what corpus they came from under which licence
(the vectors derive from its text), how to load them from that repository and how to cite the method.

Only the Hub needs ``huggingface_hub``, so it is imported where a function talks to the Hub; the
layout can be written to a local folder without it (to check it, or upload it with another tool).
The card's front matter is written as JSON values, which are YAML, so no YAML library is needed;
the sidecar is not published (it is rebuilt on open and would double the upload).
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from pelt.table.format import sidecar_path

if TYPE_CHECKING:
    from pelt.table.lookup import EntityTable

logger = logging.getLogger(__name__)


# A Hub repo id: ``name`` or ``namespace/name``, letters, digits, ``-``, ``_`` and ``.``.
_REPO_ID = re.compile(r"[\w.-]+(/[\w.-]+)?")


def is_repo_id(source: str) -> bool:
    """Whether ``source`` can name a Hub repository, so that a missing local path (``/data/x``,
    ``results/tables/wikipedia/demo``, ``t.parquet``) is said to be missing instead of asked of the Hub."""
    return bool(_REPO_ID.fullmatch(source)) and not source.endswith(".parquet")


def download_table(repo_id: str, filename: str, revision: str | None) -> str:
    """The local path of ``filename`` from a hub dataset repository (downloaded once, then cached)."""
    if not is_repo_id(repo_id):
        raise FileNotFoundError(
            f"entity table {repo_id} does not exist: give a table.parquet, the folder holding one, "
            "or a Hugging Face Hub dataset repo id (user/name)"
        )
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

UNKNOWN_LICENSE = "unknown"  # the Hub's own id for it

CITATION = """@inproceedings{ye-etal-2022-simple,
    title = "A Simple but Effective Pluggable Entity Lookup Table for Pre-trained Language Models",
    author = "Ye, Deming and Lin, Yankai and Li, Peng and Sun, Maosong and Liu, Zhiyuan",
    booktitle = "Proceedings of the 60th Annual Meeting of the Association for Computational Linguistics",
    year = "2022",
    publisher = "Association for Computational Linguistics",
}"""


def corpus_license(metadata: dict[str, object]) -> str:
    """The licence of the table's corpus: its metadata's ``corpus_license``, else that of its corpus kind
    (``corpus_kind``, else a ``corpus`` named as a kind, as the demo's ``wikipedia`` is; the kind's
    registry entry says its licence), else unknown."""
    from pelt.registry import CORPUS_KINDS  # when needed: the registry imports every task kind's package

    if metadata.get("corpus_license"):
        return str(metadata["corpus_license"])
    kind = CORPUS_KINDS.get(str(metadata.get("corpus_kind") or metadata.get("corpus")).lower())
    return kind.license if kind is not None and kind.license is not None else UNKNOWN_LICENSE


def _card_fields(
    table: EntityTable, corpus: str | None, language: str | None, license: str | None
) -> dict[str, object]:
    """Front matter: the hub's own keys (licence, language, tags, the Parquet file as the dataset) and pelt's."""
    meta = table.metadata
    corpus = corpus or meta.get("corpus")
    # A merged table's metadata says "multilingual" and lists its corpora's languages: the Hub wants those.
    languages = [language] if language else meta.get("languages") or [meta.get("language")]
    model = meta.get("hub_name") or meta["model"]
    fields: dict[str, object] = {"pretty_name": f"PELT entity table for {model}"}
    fields["license"] = license or corpus_license(meta)
    if any(languages):
        fields["language"] = [str(lang) for lang in languages if lang]
    fields["tags"] = ["pelt", "entity-embeddings"]
    fields["configs"] = [{"config_name": "default", "data_files": TABLE_FILE}]
    fields["model"] = model
    fields["model_source"] = "hub" if meta.get("hub_name") else "local folder"
    for key in ("model_digest", "revision", "model_type", "representation"):
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


def _model_lines(fields: dict[str, object]) -> tuple[str, str]:
    """What the card says of the model, and the line of its snippet that loads it: a Hub model by its
    name, a local folder as what it is (a path on the machine that built the table, which no reader has)."""
    model = fields["model"]
    if fields["model_source"] == "hub":
        revision = f" at revision `{fields['revision']}`" if fields.get("revision") else ""
        return (
            f"the Hugging Face Hub model [`{model}`](https://huggingface.co/{model}){revision}",
            f"model, tokenizer = load_masked_lm({json.dumps(model)})",
        )
    return (
        f"a local model folder, `{model}`, on the machine that built the table: not on the Hugging Face Hub; "
        "only a copy of those weights (their digest below) fits the vectors",
        'model, tokenizer = load_masked_lm("path/to/your/copy/of/the/model")  # see above: a local folder',
    )


def dataset_card(
    table: EntityTable,
    repo_id: str,
    *,
    corpus: str | None = None,
    language: str | None = None,
    license: str | None = None,
) -> str:
    """The README.md of a table's dataset repository ``repo_id``: what a reader of the hub page needs to
    trust and use the table, and to cite and license it. ``corpus``, ``language`` and ``license`` (the
    corpus's) default to the table's metadata keys ``corpus``, ``language`` and ``corpus_license``,
    the licence then to its corpus kind's (:func:`corpus_license`)."""
    fields = _card_fields(table, corpus, language, license)
    digest = fields.get("model_digest")
    about_model, load_model = _model_lines(fields)
    licence = fields["license"]
    licence_note = (
        "not recorded by the table: ask whoever built it before reuse"
        if licence == UNKNOWN_LICENSE
        else f"`{licence}`, the corpus's: the vectors are derived from its text"
    )
    front = "\n".join(f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in fields.items())
    rows = [
        ("model", about_model),
        ("model weights (sha256, `pelt.encoding.models.weights_digest`)", f"`{digest}`" if digest else "not recorded"),
        ("corpus", fields.get("corpus", "not recorded")),
        ("language", ", ".join(fields.get("language", ["not recorded"]))),
        ("licence", licence_note),
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
injected into the model as an input embedding. The vectors fit that model only (same weights);
`EntityTable.check_model` verifies it.

| | |
|---|---|
{table_rows}

## Load

```python
from pelt.encoding.models import load_masked_lm
from pelt.table import EntityTable

table = EntityTable.load({json.dumps(repo_id)})
{load_model}
table.check_model(model)  # the weights the vectors were built with
vectors = table.lookup(["some entity id"])  # [n, H] float32: L * sum / ||sum||
table.most_similar("some entity id", k=10)
```

`pelt.encoding.injection.inject` puts the vectors into the model's input; `table.find` gives the
entity id of a QID or an alias.

`{TABLE_FILE}` holds `entity_id`, `n_sentences`, `frequency` and `vector_sum` (fixed-size lists of
float32), sorted by `entity_id`, with pelt's metadata as JSON under the schema metadata key `pelt`.

## Citation

```bibtex
{CITATION}
```
"""


def write_dataset_folder(table: EntityTable, folder: str | os.PathLike[str], repo_id: str, **card: str | None) -> str:
    """The repository ``repo_id``'s files written to ``folder`` instead (to check, or upload with another
    tool); returns the folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    table_file = folder / TABLE_FILE
    if not (table_file.exists() and table_file.samefile(table.path)):
        shutil.copyfile(table.path, table_file)
    (folder / CARD_FILE).write_text(dataset_card(table, repo_id, **card), encoding="utf-8")
    return str(folder)


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


def push_table(
    table: EntityTable,
    repo_id: str,
    *,
    private: bool = False,
    local_dir: str | os.PathLike[str] | None = None,
    corpus: str | None = None,
    language: str | None = None,
    license: str | None = None,
) -> str:
    """Publish the table as the Hub dataset ``repo_id`` (created if needed, one commit) with its card (model,
    corpus, licence, citation, how to load it from ``repo_id``); returns its URL. With ``local_dir``, that
    repository's files are written to the folder instead (returned). ``table.push_to_hub(repo_id, ...)``
    and ``pelt table push`` both call this; :meth:`EntityTable.load` reads the repository back."""
    card = {"corpus": corpus, "language": language, "license": license}
    if local_dir is not None:
        return write_dataset_folder(table, local_dir, repo_id, **card)
    return upload_dataset(table, repo_id, private=private, **card)
