"""Training speed of the demo model in fp32 and under bf16 autocast, in one process, on this machine.

Trains the demo model (the workflow's recipe and sizes) for ``--steps`` steps once per precision,
alternating ``--repeats`` times so that both see the same machine, and reports seconds, steps per
second and the ratio fp32 / bf16 of the median times, with the mean MLM loss of the last steps of
each: a faster precision that learns less would show there. ``bf16`` runs the projections and
feed-forward layers in bf16 and attention in fp32 (``pelt.encoding.models.attention_for_training``); it is
what ``precision: auto`` picks on a CPU with AVX-512 BF16 or AMX (``native_bf16`` below says
whether this one has it; without it bf16 is emulated and slower).

    python benchmarks/demo_training.py --steps 300 --out results/benchmarks/demo_training.json
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
from pathlib import Path

import torch

from pelt.encoding.demo_model import DemoModelSettings, train_demo_model
from pelt.encoding.models import native_bf16

DOCUMENTS = Path(__file__).resolve().parents[1] / "resources" / "demo" / "pretraining" / "documents.txt"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2, help="torch threads (the workflow's demo_model job: 2)")
    parser.add_argument("--documents", default=str(DOCUMENTS))
    parser.add_argument("--out", help="write the result as JSON here too")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    runs: dict[str, list[dict]] = {"fp32": [], "bf16": []}
    for _ in range(args.repeats):
        for precision, results in runs.items():
            with tempfile.TemporaryDirectory() as out:
                results.append(
                    train_demo_model(args.documents, out, DemoModelSettings(steps=args.steps, precision=precision))
                )
    seconds = {p: statistics.median(r["seconds"] for r in results) for p, results in runs.items()}
    report = {
        "cpu": platform.processor() or platform.machine(),
        "native_bf16": native_bf16(torch.device("cpu")),
        "threads": args.threads,
        "steps": args.steps,
        "seconds": seconds,
        "steps_per_second": {p: args.steps / s for p, s in seconds.items()},
        "final_loss": {p: [round(r["final_loss"], 3) for r in results] for p, results in runs.items()},
        "speedup_bf16": seconds["fp32"] / seconds["bf16"],
    }
    print(json.dumps(report, indent=1))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
