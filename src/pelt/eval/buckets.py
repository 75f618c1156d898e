"""Frequency buckets: where a result is split by how often the corpus mentions its entity.

The paper's Table 5 splits LAMA by subject frequency; the demo splits FewRel and Wiki80 by the head's
the same way (rare: its first bucket). Kept apart from the task runners so that the summaries can
name the buckets without importing torch.
"""

from __future__ import annotations

from collections.abc import Sequence

# Lower bounds of the subject-frequency buckets (the paper's Table 5); the last bucket is open.
BUCKET_BOUNDS = (0, 10, 50, 100)
# Where facts whose subject resolved to no entity are reported, beside the frequency buckets.
UNRESOLVED = "unresolved"


def bucket_names(bounds: Sequence[int] = BUCKET_BOUNDS) -> list[str]:
    """``[0,10)``, ``[10,50)``, ``[50,100)``, ``[100,+)`` for the default bounds."""
    upper = [str(b) for b in bounds[1:]] + ["+"]
    return [f"[{lo},{hi})" for lo, hi in zip(bounds, upper)]


def frequency_bucket(frequency: int, bounds: Sequence[int] = BUCKET_BOUNDS) -> str:
    """The name of the bucket holding ``frequency`` (a count of corpus mentions)."""
    if frequency < bounds[0]:
        raise ValueError(f"frequency {frequency} is below the first bucket")
    index = max(i for i, lo in enumerate(bounds) if frequency >= lo)
    return bucket_names(bounds)[index]


# FewRel and Wiki80 results are split by the head entity's corpus frequency: rare below the paper's
# first bound (LAMA's [0,10) bucket), frequent from it; heads that resolved to no entity apart.
RARE_BELOW = BUCKET_BOUNDS[1]
HEAD_GROUPS = ("rare", "frequent", "unresolved")
