"""mLAMA's reader on real release files (issue 54, item 5): the shared sample's six languages
(../shared/data/mlama_sample: de, fr, ja, zh, en, ar; five relations each, whole files), each
language's templates, its facts with their subjects' QIDs, and the relations it cannot probe counted."""

from __future__ import annotations

from pathlib import Path

import pytest

from pelt.tasks.lama.data import load_facts
from pelt.tasks.mlama.data import fact_files, load_templates, templates_file

LANGUAGES = ("ar", "de", "en", "fr", "ja", "zh")
RELATIONS = ["P103", "P1412", "P17", "P19", "P36"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_languages_facts_and_templates_read_from_the_release(shared_data: Path, language: str):
    release = shared_data / "mlama_sample"
    files = fact_files(release, language)
    assert [Path(f).stem for f in files] == RELATIONS  # the language's relations, its templates left out
    templates, invalid = load_templates(templates_file(release, language))
    assert len(templates) + len(invalid) >= 40  # one machine-translated template per LAMA relation
    assert all(t.count("[X]") == 1 and t.count("[Y]") == 1 for t in templates.values())
    facts, counts = load_facts(files)
    assert len(facts) >= 5 * 300 and {f.relation for f in facts} == set(RELATIONS)
    assert all(f.subject_qid and f.subject_qid.startswith("Q") for f in facts)
    without_template = sorted({f.relation for f in facts} - set(templates))
    assert without_template == sorted(set(RELATIONS) & set(invalid))  # counted as the runner counts them


def test_the_same_fact_is_labelled_in_each_language(shared_data: Path):
    """Capitals (P36): one subject QID's fact read from every language's file, labels differing where
    the languages write the name differently (the table's entity is the QID, the probe's words the label)."""
    release = shared_data / "mlama_sample"
    labels = {}
    for language in LANGUAGES:
        facts, _ = load_facts(fact_files(release, language, ["P36"]))
        labels[language] = {f.subject_qid: f.subject for f in facts}
    shared = set.intersection(*(set(by_qid) for by_qid in labels.values()))
    assert len(shared) >= 100
    qid = sorted(shared)[0]
    assert len({labels[language][qid] for language in LANGUAGES}) >= 2
