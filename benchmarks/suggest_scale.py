"""Suggestions for a million names not found, against 200,000 candidate names (issue 56 item 6).

Names and candidates are made of random syllables, so that blocking keys are shared as in real
names; every name is unfound. The time is CPU seconds of this process (one core), for the default
bound on names suggested (:data:`pelt.suggest.MAX_NAMES`) and, for the trend, a tenth of it.

    python benchmarks/suggest_scale.py [--names 1000000] [--candidates 200000]
"""

from __future__ import annotations

import argparse
import random
import time

from pelt.suggest import MAX_NAMES, closest_entities

SYLLABLES = [a + b for a in "bcdfgklmnprstvz" for b in "aeiou"] + ["ein", "ber", "son", "ova", "ski"]


def _name(rng: random.Random) -> str:
    return " ".join("".join(rng.choices(SYLLABLES, k=rng.randint(2, 4))).title() for _ in range(rng.randint(1, 3)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, default=1_000_000)
    parser.add_argument("--candidates", type=int, default=200_000)
    args = parser.parse_args()
    rng = random.Random(56)
    candidates = [(_name(rng), f"E{i}") for i in range(args.candidates)]
    names = [_name(rng) + "x" for _ in range(args.names)]  # a letter more: none found as it is
    for bound in (MAX_NAMES // 10, MAX_NAMES):
        start = time.process_time()
        found = closest_entities(names, candidates, max_names=bound)
        seconds = time.process_time() - start
        with_some = sum(1 for suggestions in found.values() if suggestions)
        print(
            f"{args.names:,} names unfound ({len(set(names)):,} distinct), {args.candidates:,} candidates, "
            f"max_names {bound:,}: "
            f"{seconds:.1f} CPU s, {with_some:,} names with a suggestion"
        )


if __name__ == "__main__":
    main()
