"""The closest entities to a name that found none: a misspelling, a surname alone, another casing.

A user's entity list is typed by hand, so some names find no entity; naming them with the
entities they most likely meant saves a search through the corpus. Used by the task-entity
resolution (names against the corpus's titles and link texts) and by ``pelt table ids --suggest``
(against a table's ids and aliases). rapidfuzz's ``WRatio`` scores a pair 0-100 as the best of a
whole-string, a partial and a word-order-free comparison, so ``Enstein`` finds ``Einstein`` (93)
and ``Albert Einstein`` (83), and ``Curie`` finds ``Marie Curie`` (90).

On a corpus of millions of names, the candidates are first narrowed to those sharing a blocking
key with a name (:func:`blocking_keys`: the first or last three letters of a word), which a typo
inside a word leaves intact.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from rapidfuzz import fuzz, process, utils

MIN_SCORE = 80.0  # below it, suggestions were unrelated names sharing a syllable
SUGGESTIONS = 3  # per name
_WORD = re.compile(r"\w+")


def blocking_keys(name: str) -> set[str]:
    """The first and the last three letters of each word of three letters or more, case-folded."""
    words = [w for w in _WORD.findall(name.casefold()) if len(w) >= 3]
    return {w[:3] for w in words} | {w[-3:] for w in words}


def closest_entities(
    names: Sequence[str], candidates: Iterable[tuple[str, str]], k: int = SUGGESTIONS
) -> dict[str, list[str]]:
    """For each of ``names``, the ids of at most ``k`` entities whose names score at least
    :data:`MIN_SCORE`, best first (ties by id, so that reruns agree).

    ``candidates`` are (name, entity id) pairs: an entity's title, aliases and link texts each
    give one, and an entity counts once, at its best-scoring name. Only those sharing a
    blocking key with one of ``names`` are scored, so a stream of millions costs one pass.
    """
    keys = set().union(*map(blocking_keys, names))
    pairs = sorted({pair for pair in candidates if blocking_keys(pair[0]) & keys})
    choices = [utils.default_process(name) for name, _ in pairs]
    result: dict[str, list[str]] = {}
    for query in dict.fromkeys(names):
        best: dict[str, float] = {}
        # More hits than k: several of an entity's names may score at the top.
        for _, score, i in process.extract(
            utils.default_process(query), choices, scorer=fuzz.WRatio, limit=8 * k, score_cutoff=MIN_SCORE
        ):
            entity_id = pairs[i][1]
            best[entity_id] = max(score, best.get(entity_id, 0.0))
        result[query] = [e for e, _ in sorted(best.items(), key=lambda item: (-item[1], item[0]))[:k]]
    return result


def describe(name: str, suggestions: Sequence[str]) -> str:
    """One log or error line for a name that found no entity."""
    closest = ", ".join(repr(s) for s in suggestions) if suggestions else "none close"
    return f"{name!r} found no entity (closest: {closest})"
