"""The closest entities to a name that found none: a misspelling, a surname alone, another casing.

A user's entity list is typed by hand, so some names find no entity; naming them with the
entities they most likely meant saves a search through the corpus. Used by the task-entity
resolution (names against the corpus's titles and link texts) and by ``pelt table ids --suggest``
(against a table's ids and aliases). rapidfuzz's ``WRatio`` scores a pair 0-100 as the best of a
whole-string, a partial and a word-order-free comparison, so ``Enstein`` finds ``Einstein`` (93)
and ``Albert Einstein`` (83), and ``Curie`` finds ``Marie Curie`` (90).

On a corpus of millions of names, the candidates are first narrowed to those sharing a blocking
key with a name (:func:`blocking_keys`: the first or last three letters of a word), which a typo
inside a word leaves intact; each name is then scored against the candidates that share a key with
it alone, through an index of keys. A list of a million names all unfound is a list of the wrong
thing, not of typos: suggestions are computed for the first ``max_names`` (:data:`MAX_NAMES`), the
rest counted in the log and given none, so the cost has a bound whatever the list.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence

from rapidfuzz import fuzz, process, utils

logger = logging.getLogger(__name__)

MIN_SCORE = 80.0  # below it, suggestions were unrelated names sharing a syllable
SUGGESTIONS = 3  # per name
# Names given suggestions, at most: 10,000 against 200,000 candidates took 35 CPU seconds
# (benchmarks/suggest_scale.py), a typed list's typos are far fewer.
MAX_NAMES = 10_000
_WORD = re.compile(r"\w+")


def blocking_keys(name: str) -> set[str]:
    """The first and the last three letters of each word of three letters or more, case-folded."""
    words = [w for w in _WORD.findall(name.casefold()) if len(w) >= 3]
    return {w[:3] for w in words} | {w[-3:] for w in words}


def closest_entities(
    names: Sequence[str], candidates: Iterable[tuple[str, str]], k: int = SUGGESTIONS, max_names: int = MAX_NAMES
) -> dict[str, list[str]]:
    """For each of ``names``, the ids of at most ``k`` entities whose names score at least
    :data:`MIN_SCORE`, best first (ties by id, so that reruns agree); computed for the first
    ``max_names`` distinct names, the others (counted in a warning) get an empty list.

    ``candidates`` are (name, entity id) pairs: an entity's title, aliases and link texts each
    give one, and an entity counts once, at its best-scoring name. Only those sharing a blocking
    key with the name are scored, so a stream of millions costs one pass.
    """
    unique = list(dict.fromkeys(names))
    asked = unique[:max_names]
    if len(unique) > max_names:
        logger.warning(
            "suggestions for the first %d of %d names not found; the other %d get none",
            max_names,
            len(unique),
            len(unique) - max_names,
        )
    keys = set().union(*map(blocking_keys, asked))
    pairs = sorted({pair for pair in candidates if blocking_keys(pair[0]) & keys})
    choices = [utils.default_process(name) for name, _ in pairs]
    by_key: dict[str, list[int]] = {}
    for i, (name, _) in enumerate(pairs):
        for key in blocking_keys(name) & keys:
            by_key.setdefault(key, []).append(i)
    result: dict[str, list[str]] = {name: [] for name in unique}
    for query in asked:
        shared = sorted(set().union(*(by_key.get(key, ()) for key in blocking_keys(query))))
        best: dict[str, float] = {}
        # More hits than k: several of an entity's names may score at the top.
        for _, score, i in process.extract(
            utils.default_process(query),
            [choices[i] for i in shared],
            scorer=fuzz.WRatio,
            limit=8 * k,
            score_cutoff=MIN_SCORE,
        ):
            entity_id = pairs[shared[i]][1]
            best[entity_id] = max(score, best.get(entity_id, 0.0))
        result[query] = [e for e, _ in sorted(best.items(), key=lambda item: (-item[1], item[0]))[:k]]
    return result


def describe(name: str, suggestions: Sequence[str]) -> str:
    """One log or error line for a name that found no entity."""
    closest = ", ".join(repr(s) for s in suggestions) if suggestions else "none close"
    return f"{name!r} found no entity (closest: {closest})"
