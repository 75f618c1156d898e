"""Before any fine-tuning: does a demo model carry what the table's vector says to where the
relation encoder reads? (issue 31, item 4)

Fine-tuning reads an entity at its start marker (the paper) or at its slot (``read_at``). On the
demo, which pretraining runs of the model gain in FewRel and Wiki80 differs with the seed; this
probe measures the frozen model (no training step) on each FewRel test set: the leave-one-out
nearest-centroid accuracy (cosine) of the test heads' kind (company, band, person...; drug, gene,
microbe...) from the head's state, and of the test relation from the [head; tail] states, without
the table (baseline, at the markers) and with it (at the markers and at the slots). A kind the
frozen marker does not tell apart is one that a few dozen few-shot steps must first learn to carry
there.

    python benchmarks/reading_probe.py --run . [--run /other/run ...]

``--run`` is a folder holding a finished demo run's ``results/`` (its model, tables, task entities
and LAMA sweep, whose chosen L is used unless ``--norm`` gives one); the test sets and the demo's
entity kinds are read from this checkout's ``resources/demo``. One JSON line per run.
"""

from __future__ import annotations

import argparse
import csv
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from pelt.encoding.models import load_masked_lm
from pelt.eval.settings import EncoderSettings
from pelt.table import EntityTable
from pelt.tasks.fewrel.data import read_instances
from pelt.tasks.relation.encoder import RelationEncoder, resolve_instances

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "resources" / "demo"
# FewRel test set, the table (and task entities) its entities resolve against, as the demo's config
TESTS = {"fewrel1": ("fewrel/val_wiki.json", "wikipedia"), "fewrel2": ("fewrel/val_pubmed.json", "biomed")}
KINDS = ("wikipedia/demo-kinds.tsv", "s2orc/demo-kinds.tsv")
READINGS = (("baseline", "markers"), ("pelt", "markers"), ("pelt", "slots"))


def loo_centroid_accuracy(vectors: np.ndarray, labels: Sequence[str]) -> float:
    """Share of rows whose nearest class centroid (cosine; the row left out of its own class's
    centroid) is their own class. A class of one row cannot be predicted for it (no centroid left)."""
    x = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    y = np.asarray(labels)
    classes = sorted(set(labels))
    sums = np.stack([x[y == c].sum(0) for c in classes])
    counts = np.array([(y == c).sum() for c in classes], dtype=float)
    own = np.searchsorted(classes, y)
    right = 0
    for i in range(len(x)):
        s, n = sums.copy(), counts.copy()
        s[own[i]] -= x[i]
        n[own[i]] -= 1
        keep = n > 0
        centroids = s[keep] / np.linalg.norm(s[keep], axis=1, keepdims=True)
        right += np.flatnonzero(keep)[int(np.argmax(centroids @ x[i]))] == own[i]
    return right / len(x)


def read_kinds() -> dict[str, str]:
    kinds = {}
    for name in KINDS:
        with open(DEMO / name, encoding="utf-8") as fh:
            rows = csv.reader(fh, delimiter="\t")
            kinds.update({row[0]: row[1] for row in rows if len(row) >= 2 and not row[0].startswith("#")})
    return kinds


def probe(run: Path, kinds: dict[str, str], norm: float | None = None) -> dict:
    results = run / "results"
    norm = norm or json.loads((results / "eval/lama/demo/norm_sweep.json").read_text())["chosen_norm"]
    row: dict = {"run": str(run), "norm": norm}
    # one load a run: the encoders only read the frozen model (the default markers add no tokens)
    model, tokenizer = load_masked_lm(str(results / "models/demo"), device="cpu", precision="fp32")
    for task, (test, corpus) in TESTS.items():
        instances = read_instances([DEMO / test])
        entity_ids = resolve_instances(instances, str(results / f"task_entities/{corpus}/task_entities.parquet"))
        table = EntityTable.open(str(results / f"tables/{corpus}/demo/table.parquet"))
        heads = [kinds.get(inst.head.qid) for inst in instances]
        known = [i for i, kind in enumerate(heads) if kind]
        for variant, read_at in READINGS:
            with_table = variant == "pelt"
            encoder = RelationEncoder(
                model,
                tokenizer,
                table if with_table else None,
                norm=norm if with_table else None,
                settings=EncoderSettings(read_at=read_at),
            )
            states = encoder.encode(encoder.mark(instances, entity_ids), batch_size=64, desc=task).numpy()
            hidden = states.shape[1] // 2
            key = f"{task} {variant} {read_at}"
            row[f"{key} relation"] = round(100 * loo_centroid_accuracy(states, [i.relation for i in instances]), 1)
            row[f"{key} head kind"] = round(
                100 * loo_centroid_accuracy(states[known, :hidden], [heads[i] for i in known]), 1
            )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="append", required=True, type=Path, help="a folder with a demo run's results/")
    parser.add_argument("--norm", type=float, help="L for every run (default: the one its LAMA sweep chose)")
    args = parser.parse_args()
    torch.set_grad_enabled(False)
    kinds = read_kinds()
    for run in args.run:
        print(json.dumps(probe(run, kinds, args.norm)), flush=True)


if __name__ == "__main__":
    main()
