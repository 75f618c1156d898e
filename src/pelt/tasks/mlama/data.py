"""mLAMA's data files (Kassner, Dufter and Schütze 2021; pure Python, so Spark and torch jobs share
it): the release's per-language folders, each language's templates and facts.

The release (``mlama1.1.zip``, unpacked by the download rules into ``data/mLAMA/release/``) holds one
folder per language, ``mlama1.1/<language>/``, with one ``<relation>.jsonl`` per relation (41 T-REx
relations ``P19``, ``P36``, ...; Google-RE's ``place_of_birth`` and ``place_of_death``) and the
language's ``templates.jsonl`` (``{"relation": ..., "template": ...}``, the machine-translated LAMA
template). A fact is LAMA's layout: ``sub_label`` and ``obj_label`` in the language, ``sub_uri`` and
``obj_uri`` (Wikidata QIDs; absent for Google-RE) and ``lineid``. Its subject is read as LAMA's
(:func:`pelt.tasks.lama.data.lama_subject`: label and QID), and so is the file
(:func:`pelt.tasks.lama.data.load_facts`: the relation is the file's name). A language's templates
may lack a relation or hold a translation without ``[X]`` or ``[Y]``: such a relation is not probed
and is counted (the authors' reader skips it too).
"""

from __future__ import annotations

import os
from pathlib import Path

from pelt.tasks.jsonl import read_jsonl

TEMPLATES = "templates.jsonl"


def language_folder(release: str | os.PathLike[str], language: str) -> Path:
    """The folder of one language in an unpacked release: ``<release>/<language>/``, or the release
    folder's ``mlama1.1/<language>/`` (the archive's own top folder)."""
    release = Path(release)
    for folder in (release / language, release / "mlama1.1" / language):
        if folder.is_dir():
            return folder
    raise FileNotFoundError(f"mLAMA: no folder for language {language!r} in {release}")


def fact_files(release: str | os.PathLike[str], language: str, relations: list[str] | None = None) -> list[str]:
    """The language's fact files (every ``<relation>.jsonl`` but the templates), sorted, or those of
    ``relations`` only; a relation the language has no file for is an error naming it."""
    folder = language_folder(release, language)
    files = {path.stem: str(path) for path in folder.glob("*.jsonl") if path.name != TEMPLATES}
    if relations is None:
        return [files[name] for name in sorted(files)]
    missing = [name for name in relations if name not in files]
    if missing:
        raise FileNotFoundError(f"mLAMA: {folder} has no facts for relations {missing}")
    return [files[name] for name in relations]


def templates_file(release: str | os.PathLike[str], language: str) -> str:
    """The language's ``templates.jsonl``."""
    return str(language_folder(release, language) / TEMPLATES)


def load_templates(path: str | os.PathLike[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Relation -> template of the relations a language can be probed on, and relation -> why not
    for those whose template has not exactly one ``[X]`` and one ``[Y]``."""
    templates: dict[str, str] = {}
    invalid: dict[str, str] = {}
    for lineno, record in read_jsonl(path):
        relation, template = record.get("relation"), record.get("template")
        if not isinstance(relation, str) or not isinstance(template, str):
            raise ValueError(f"{path}:{lineno}: a template needs a relation and a template")
        if template.count("[X]") == 1 and template.count("[Y]") == 1:
            templates[relation] = template
        else:
            invalid[relation] = f"template {template!r} has not exactly one [X] and one [Y]"
    return templates, invalid
