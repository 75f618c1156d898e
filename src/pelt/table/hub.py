"""Tables shared on the Hugging Face Hub: fetching one table file (and its sidecar) from a dataset
repository, kept apart so that only tables from the hub need ``huggingface_hub``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from pelt.table.format import sidecar_path

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
