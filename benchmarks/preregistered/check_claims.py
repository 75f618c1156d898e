"""The paper's claims checked on any run's summaries, by the rule the pre-registered replication
committed before its runs (PLAN.md, ``analyse.passed``): for each claim the run measured, pelt gains
at least the target and scores above the permuted and random controls.

    make check-claims SUMMARY=results/eval/summary      # or runs/<run>/results/eval/summary

One line per claim; exit status 1 when a measured claim fails, 2 when the run measured none. A
claim whose setting or controls the run did not score is said so, never counted as a pass.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import analyse  # noqa: E402  (the plan's own rule, not a copy of it)


def check(summary: Path) -> list[tuple[analyse.Claim, dict[str, float] | None, bool]]:
    """(claim, its variants' scores or None where not measured, passed) for every claim."""
    out = []
    for claim in analyse.CLAIMS:
        try:
            values = analyse.claim_values(claim, summary)
        except (FileNotFoundError, KeyError, ValueError):
            out.append((claim, None, False))
            continue
        out.append((claim, values, analyse.passed(claim, values)))
    return out


def readout(claim: analyse.Claim, summary: Path) -> str:
    """Where the run's encoder read the entities for a fine-tuning claim (its summary's ``read_at``)."""
    if claim.source == "lama":
        return ""
    rows = [r for r in analyse._read(summary / f"{claim.source}.csv") if r["benchmark"] == claim.benchmark]
    if any("read_at" not in r for r in rows):  # a summary written before it recorded the readout
        return ", readout not recorded"
    return ", read at " + "/".join(sorted({r["read_at"] for r in rows}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("summary", type=Path, help="a run's results/eval/summary folder")
    args = parser.parse_args(argv)
    checked = check(args.summary)
    for claim, values, ok in checked:
        if values is None:
            print(f"not measured  {claim.name}: {claim.label} (no summary row for every variant)")
            continue
        best = max(values[c] for c in analyse.NO_KNOWLEDGE)
        print(
            f"{'pass' if ok else 'FAIL':<13} {claim.name}: pelt {values['pelt']:.1f} - baseline "
            f"{values['baseline']:.1f} = {values['pelt'] - values['baseline']:+.1f} (target {claim.target:+.0f}), "
            f"best knowledge-free control {best:.1f}{readout(claim, args.summary)}"
        )
    measured = [ok for _, values, ok in checked if values is not None]
    if not measured:
        print(f"{args.summary}: no claim measured (lama.csv, fewrel.csv, wiki80.csv with every variant)")
        return 2
    print(f"{sum(measured)} of {len(measured)} measured claims pass")
    return 0 if all(measured) else 1


if __name__ == "__main__":
    raise SystemExit(main())
