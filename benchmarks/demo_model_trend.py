"""What a known subject's LAMA facts cost and a rare subject's gain, over demo models of several sizes
and seeds (issue 31, item 3): the trend with model size that one 2-core machine cannot afford.

Each shape and seed is trained with the demo's recipe (``pelt.encoding.demo_model``, 3,000 steps) on
``--device``, put in place of the demo model in a copy of a finished run's ``results/`` (``make
demo``, or only ``snakemake results/eval/lama/demo/norm_sweep.json``), and the workflow reruns what
depends on it: the entity table (in fp32, as on a CPU) and the LAMA norm sweep. Reported per model,
at the L the sweep chooses (macro P@1, the workflow's rule), P@1 per fact on frequent [10,50) and
rare [0,10) subjects with and without the table; then per shape the mean and how many seeds keep
the frequent bucket within 3 points with a rare gain of 20 or more (the issue's bar).

    python benchmarks/demo_model_trend.py --run . --device cuda --workers 16 --out trend.jsonl \\
        --shapes 128x2:3e-3,256x2:1e-3,512x2:5e-4,128x4:3e-3 --seeds 42,43,44,45

A shape is ``hidden x layers : learning rate`` (64 hidden units a head). The recipe's 3e-3 does
not train a 256-wide model (benchmarks/README.md), hence a rate per shape. ``--rows`` reprints the
table of an earlier ``--out`` without training.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import torch
import yaml

from pelt.encoding.demo_model import DemoModelSettings, train_demo_model

REPO = Path(__file__).resolve().parents[1]
FREQUENT, RARE = "[10,50)", "[0,10)"
# The bar for a model that keeps what it knows: frequent within 3 points, rare gain >= 20.
KEEPS, GAINS = -3.0, 20.0


@dataclass(frozen=True)
class Shape:
    hidden: int
    layers: int
    learning_rate: float

    @classmethod
    def parse(cls, text: str) -> Shape:
        size, rate = text.split(":")
        hidden, layers = size.split("x")
        return cls(int(hidden), int(layers), float(rate))

    @property
    def name(self) -> str:
        return f"{self.hidden}x{self.layers}"


def sweep_row(sweep: dict) -> dict:
    """P@1 (points) on frequent and rare subjects without the table and at the chosen L."""
    chosen = next(n for n in sweep["norms"] if n["norm"] == sweep["chosen_norm"])
    base, pelt = sweep["baseline"]["buckets"], chosen["buckets"]
    row = {"chosen_norm": sweep["chosen_norm"]}
    for label, bucket in (("frequent", FREQUENT), ("rare", RARE)):
        row[f"{label}_baseline"] = 100 * base[bucket]
        row[f"{label}_pelt"] = 100 * pelt[bucket]
        row[f"{label}_delta"] = 100 * (pelt[bucket] - base[bucket])
    return row


def shape_summary(rows: list[dict]) -> dict:
    """Means over a shape's seeds, and how many of them meet the bar."""
    return {
        "models": len(rows),
        "frequent_delta": statistics.mean(r["frequent_delta"] for r in rows),
        "rare_delta": statistics.mean(r["rare_delta"] for r in rows),
        "frequent_baseline": statistics.mean(r["frequent_baseline"] for r in rows),
        "meet_bar": sum(r["frequent_delta"] >= KEEPS and r["rare_delta"] >= GAINS for r in rows),
    }


def table(rows: list[dict]) -> str:
    """Markdown: one line per model, then one per shape."""
    lines = [
        "| shape | seed | lr | final MLM loss | L | frequent: baseline -> pelt | rare: baseline -> pelt |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: (r["layers"], r["hidden"], r["seed"])):
        lines.append(
            f"| {r['hidden']}x{r['layers']} | {r['seed']} | {r['learning_rate']:g} | {r['final_loss']:.3f} "
            f"| {r['chosen_norm']:g} | {r['frequent_baseline']:.1f} -> {r['frequent_pelt']:.1f} "
            f"({r['frequent_delta']:+.1f}) | {r['rare_baseline']:.1f} -> {r['rare_pelt']:.1f} "
            f"({r['rare_delta']:+.1f}) |"
        )
    lines += [
        "",
        "| shape | models | frequent baseline | frequent, pelt - baseline | rare gain | within 3 and gain >= 20 |",
        "|---|---|---|---|---|---|",
    ]
    for shape in sorted({(r["layers"], r["hidden"]) for r in rows}):
        s = shape_summary([r for r in rows if (r["layers"], r["hidden"]) == shape])
        lines.append(
            f"| {shape[1]}x{shape[0]} | {s['models']} | {s['frequent_baseline']:.1f} | {s['frequent_delta']:+.1f} "
            f"| {s['rare_delta']:+.1f} | {s['meet_bar']} of {s['models']} |"
        )
    return "\n".join(lines)


def run_one(shape: Shape, seed: int, args: argparse.Namespace, work: Path) -> dict:
    """Train one model, rerun the table and the sweep on a copy of the run, return its row."""
    folder = work / f"{shape.name}-{seed}"
    shutil.copytree(args.run / "results", folder / "results", symlinks=True)
    for name in ("config", "resources"):
        (folder / name).symlink_to((args.run / name).resolve())
    model = folder / "results" / "models" / "demo"
    shutil.rmtree(model)
    settings = DemoModelSettings(
        hidden_size=shape.hidden,
        num_layers=shape.layers,
        num_heads=max(1, shape.hidden // 64),
        learning_rate=shape.learning_rate,
        seed=seed,
        steps=args.steps,
        precision="fp32",
    )
    documents = yaml.safe_load((folder / "config" / "config.yaml").read_text())["demo_model"]["documents"]
    training = train_demo_model(folder / documents, str(model), settings, args.device)
    # The copy is the default run's (results/), whatever the overlay says; fp32 tables as on a CPU.
    (folder / "overlay.yaml").write_text('run: ""\nencoding:\n  precision: fp32\n')
    with open(folder / "snakemake.log", "w") as log:
        subprocess.run(
            [sys.executable, "-m", "snakemake", "--cores", "2", "--snakefile", str(REPO / "Snakefile")]
            + ["--directory", str(folder), "--rerun-triggers", "mtime", "--configfile"]
            + [str(folder / "config" / "config.yaml"), str(folder / "overlay.yaml")]
            + ["--", "results/eval/lama/demo/norm_sweep.json"],
            stdout=log,
            stderr=subprocess.STDOUT,
            check=True,
        )
    sweep = json.loads((folder / "results/eval/lama/demo/norm_sweep.json").read_text())
    return {
        "hidden": shape.hidden,
        "layers": shape.layers,
        "learning_rate": shape.learning_rate,
        "seed": seed,
        "final_loss": training["final_loss"],
        "train_seconds": training["seconds"],
        "device": training["device"],
        **sweep_row(sweep),
        "sweep": sweep["norms"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, default=REPO, help="a folder with a finished run's results/ and config/")
    parser.add_argument("--shapes", default="128x2:3e-3,256x2:1e-3,512x2:5e-4,128x4:3e-3")
    parser.add_argument("--seeds", default="42,43,44,45")
    parser.add_argument("--steps", type=int, default=DemoModelSettings().steps)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--workers", type=int, default=1, help="models trained and swept side by side, a process each")
    parser.add_argument("--out", type=Path, help="one JSON line per model, appended as each finishes")
    parser.add_argument("--rows", type=Path, help="print the table of an earlier --out and stop")
    args = parser.parse_args()
    if args.rows:
        print(table([json.loads(line) for line in args.rows.read_text().splitlines()]))
        return
    if not (args.run / "results/eval/lama/demo/norm_sweep.json").exists():
        parser.error(f"{args.run} holds no finished LAMA norm sweep: run the demo there first")
    jobs = [(Shape.parse(s), int(seed)) for seed in args.seeds.split(",") for s in args.shapes.split(",")]
    rows: list[dict] = []
    # Processes, not threads: each trains with Python between its kernels, and threads would queue
    # at one GIL. One torch thread each, since they share the machine's cores.
    context = multiprocessing.get_context("spawn")
    with (
        tempfile.TemporaryDirectory() as work,
        ProcessPoolExecutor(args.workers, context, torch.set_num_threads, (1,)) as pool,
    ):
        futures = [pool.submit(run_one, shape, seed, args, Path(work)) for shape, seed in jobs]
        for future in as_completed(futures):
            row = future.result()
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items() if k != "sweep"}), flush=True)
            if args.out:
                with args.out.open("a") as out:
                    out.write(json.dumps(row) + "\n")
    print(table(rows))


if __name__ == "__main__":
    main()
