"""The reading probe's leave-one-out nearest centroid (benchmarks/reading_probe.py), against its
definition computed the slow way."""

from __future__ import annotations

import sys

import numpy as np
from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import reading_probe  # noqa: E402


def _by_definition(x: np.ndarray, labels: list[str]) -> float:
    right = 0
    for i in range(len(x)):
        best, best_sim = None, -np.inf
        for c in sorted(set(labels)):
            rest = [x[j] / np.linalg.norm(x[j]) for j in range(len(x)) if j != i and labels[j] == c]
            if not rest:
                continue
            centroid = np.sum(rest, axis=0)
            sim = centroid @ x[i] / np.linalg.norm(centroid) / np.linalg.norm(x[i])
            if sim > best_sim:
                best, best_sim = c, sim
        right += best == labels[i]
    return right / len(x)


def test_leave_one_out_centroids_match_the_definition() -> None:
    rng = np.random.default_rng(0)
    labels = [str(k) for k in rng.integers(0, 4, size=60)] + ["alone"]  # a class of one is never predicted for it
    x = rng.normal(size=(61, 8)) + np.array([[float(label == str(k)) * 1.5 for k in range(8)] for label in labels])
    got = reading_probe.loo_centroid_accuracy(x, labels)
    assert got == _by_definition(x, labels)
    assert 0.25 < got < 1.0  # separated enough to beat chance, not so far that any method would be right


def test_a_row_does_not_vote_for_its_own_class() -> None:
    x = np.array([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0], [0.9, 0.2]])
    # row 2 alone in "b" has no centroid left: it is wrong; left out, the rest of "a" still finds "a"
    assert reading_probe.loo_centroid_accuracy(x, ["a", "a", "b", "a"]) == 0.75
