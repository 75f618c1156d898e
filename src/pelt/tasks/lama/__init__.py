"""The LAMA probe (Petroni et al. 2019), a task kind: its data files (:mod:`pelt.tasks.lama.data`),
its runner and norm sweep (:mod:`pelt.tasks.lama.run`), LAMA-UHN (:mod:`pelt.tasks.lama.uhn`), and
here what the registry asks of a LAMA task (pure Python: the Snakefile imports it)."""

from __future__ import annotations

from collections.abc import Mapping

from pelt.registry import expand_globs


def run_files(name: str, task: Mapping, tasks: Mapping[str, Mapping], setting: str | None = None) -> dict:
    """The files a LAMA run reads: the facts (globs expanded) and the optional relations and
    common-vocabulary files."""
    files = {key: task[key] for key in ("relations", "common_vocab", "common_vocab_lowercased") if task.get(key)}
    return {"facts": expand_globs(task["facts"], f"tasks.{name}.facts"), **files}
