"""Supervised relation classification on Wiki80 (80 relations), with and without a table.

As in the paper's code base (thunlp PELT ``RE/run_wiki80.py``): a linear layer (after dropout) over
the concatenated states at the head and tail start markers (:class:`pelt.tasks.relation.encoder.RelationEncoder`),
cross-entropy, AdamW with linear warm-up over ``warmup`` of the steps then linear decay, gradient
norm clipped at 1, fp32 weights.  The table is frozen; the model is fine-tuned.

Settings: 1% / 10% / 100% = which training file (``train_0.01.jsonl``, ``train_0.1.jsonl``,
``train.jsonl``).  The paper trains 5 epochs on 100% (batch 32, lr 3e-5) and "10-25 times" as
many epochs on the small settings, which the caller sets through ``epochs``.

Evaluation: accuracy on ``eval_file`` (the test set, or ``dev.jsonl`` where the test set is absent)
with the weights after the last epoch.  The paper's code keeps the checkpoint that is best on dev and
reports test; that needs a third file, given as ``select_on`` (evaluated after every epoch), and
is refused when it is the evaluation file itself, which would select on the test data.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from pelt.eval.settings import TableInputs, as_record
from pelt.logs import progress
from pelt.tasks.relation.data import Instance
from pelt.tasks.relation.encoder import (
    MarkedText,
    RelationEncoder,
    accuracy_by_head,
    accuracy_by_relation,
    adamw_with_warmup,
    entity_counts,
    head_groups,
    load_encoder,
    resolve_instances,
    same_file,
    seed_everything,
    snapshot,
    take_step,
)
from pelt.tasks.wiki80.data import read_wiki80
from pelt.tasks.wiki80.settings import Wiki80Settings

logger = logging.getLogger(__name__)


class MarkerClassifier(torch.nn.Module):
    """Dropout and a linear layer over the encoder's [head start; tail start] representation."""

    def __init__(self, encoder: RelationEncoder, n_labels: int, dropout: float):
        super().__init__()
        self.encoder = encoder
        self.dropout = torch.nn.Dropout(dropout)
        self.classifier = torch.nn.Linear(encoder.out_features, n_labels, device=encoder.model.device)

    def forward(self, marked: Sequence[MarkedText]) -> torch.Tensor:
        return self.classifier(self.dropout(self.encoder(marked)))


def read_labels(label2id_path: str) -> dict[str, int]:
    """Wiki80's ``label2id.json``: relation name -> class index 0..C-1."""
    with open(label2id_path, encoding="utf-8") as fh:
        labels = json.load(fh)
    if not isinstance(labels, dict) or sorted(labels.values()) != list(range(len(labels))):
        raise ValueError(f"{label2id_path}: expected a mapping relation -> 0..{len(labels) - 1 if labels else 0}")
    return labels


def setting_of(train_path: str) -> str:
    """``1%`` for ``train_0.01.jsonl``, ``10%`` for ``train_0.1.jsonl``, ``100%`` for ``train.jsonl``; else the stem."""
    stem = Path(train_path).name.removesuffix(".jsonl")
    if stem == "train":
        return "100%"
    match = re.fullmatch(r"train_(0?\.\d+)", stem)
    return f"{float(match.group(1)) * 100:g}%" if match else stem


def _labels(instances: Sequence[Instance], label2id: dict[str, int], path: str) -> torch.Tensor:
    unknown = sorted({inst.relation for inst in instances} - set(label2id))
    if unknown:
        raise ValueError(f"{path}: relations not in label2id: {unknown}")
    return torch.tensor([label2id[inst.relation] for inst in instances])


@torch.inference_mode()
def predictions(classifier: MarkerClassifier, marked: Sequence[MarkedText], batch_size: int) -> list[int]:
    """The argmax class of each text (eval mode; training mode restored)."""
    was_training = classifier.training
    classifier.eval()
    try:
        predicted = torch.cat(
            [
                classifier(marked[lo : lo + batch_size]).argmax(dim=-1).cpu()
                for lo in progress(range(0, len(marked), batch_size), "Wiki80 eval", unit="batches")
            ]
        )
    finally:
        classifier.train(was_training)
    return predicted.tolist()


def accuracy(
    classifier: MarkerClassifier, marked: Sequence[MarkedText], labels: torch.Tensor, batch_size: int
) -> float:
    """Share of correct argmax predictions."""
    predicted = predictions(classifier, marked, batch_size)
    return sum(p == g for p, g in zip(predicted, labels.tolist())) / len(predicted)


@dataclass(frozen=True)
class Wiki80Files:
    """A Wiki80 run's data: it trains on ``train`` and is scored on ``eval``, with the epoch best on
    ``select_on`` (the paper's protocol: select on dev, test on test), else the last epoch."""

    train: str
    eval: str
    label2id: str
    select_on: str | None = None


def run_wiki80(
    model_name_or_path: str,
    files: Wiki80Files,
    out_json: str,
    *,
    tables: TableInputs,
    settings: Wiki80Settings,
    seed: int,
    setting: str | None = None,
) -> dict:
    """Fine-tune a marker classifier on the training file, score it on the evaluated one; write and return the result.

    ``setting`` names the training size in the result (default: from the file name, see
    :func:`setting_of`).
    """
    if files.select_on is not None and same_file(files.select_on, files.eval):
        raise ValueError("run_wiki80: select_on is the evaluation file; model selection would see the test data")
    seed_everything(seed)
    labels = read_labels(files.label2id)
    paths = {"train": files.train, "eval": files.eval, **({"select": files.select_on} if files.select_on else {})}
    data = {name: read_wiki80(path) for name, path in paths.items()}
    if not data["train"] or not data["eval"]:
        raise ValueError(f"run_wiki80: no usable instance in {paths['train'] if not data['train'] else paths['eval']}")
    encoder = load_encoder(model_name_or_path, tables, settings.encoder, "run_wiki80")
    torch.manual_seed(seed)  # the classifier's initialisation does not depend on how the model was loaded
    classifier = MarkerClassifier(encoder, len(labels), settings.dropout)
    marked, gold, counts = {}, {}, {}
    for name, instances in data.items():
        entity_ids = resolve_instances(instances, tables.task_entities)
        marked[name] = encoder.mark(instances, entity_ids)
        gold[name] = _labels(instances, labels, paths[name])
        counts[name] = entity_counts(entity_ids, encoder.table, tables.task_entities is not None)
    # every variant, the baseline too, is split by the evaluated heads' frequency
    groups = head_groups(resolve_instances(data["eval"], tables.task_entities), tables.table)
    selection, train_loss = _fit(classifier, marked, gold, settings, seed)
    encoder.pop_stats()  # training's counts; the result reports the evaluation set's
    predicted = predictions(classifier, marked["eval"], settings.eval_batch_size)
    correct = [p == g for p, g in zip(predicted, gold["eval"].tolist())]
    relation_of = {index: name for name, index in labels.items()}
    counts["eval"].update(encoder.pop_stats())
    result = {
        "task": "wiki80",
        "model": model_name_or_path,
        "variant": encoder.variant,
        "seed": seed,
        "setting": setting or setting_of(files.train),
        "accuracy": sum(correct) / len(correct),
        "by_head": accuracy_by_head(correct, groups),
        "by_relation": accuracy_by_relation(
            [relation_of[g] for g in gold["eval"].tolist()], [relation_of[p] for p in predicted]
        ),
        "n": len(marked["eval"]),
        "classes": len(labels),
        "norm": encoder.norm,
        "table": tables.table if encoder.table is not None else None,
        "train_file": files.train,
        "eval_file": files.eval,
        "train_instances": len(marked["train"]),
        "selection": selection and dict(selection, file=files.select_on),
        "train_loss": train_loss,
        "entities": counts,
        "hyperparameters": as_record(settings, precision=encoder.precision),
    }
    with open(out_json, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=2)
    logger.info(
        "Wiki80 %s %s seed %d: accuracy %.4f on %d",
        result["setting"],
        result["variant"],
        seed,
        result["accuracy"],
        result["n"],
    )
    return result


def _fit(
    classifier: MarkerClassifier,
    marked: Mapping[str, list[MarkedText]],
    gold: Mapping[str, torch.Tensor],
    settings: Wiki80Settings,
    seed: int,
) -> tuple[dict | None, list[float]]:
    """Train for the epochs; with a selection set, keep the weights of the epoch best on it (ties:
    the earlier) and return its history, else None (the last epoch is scored); and each epoch's
    mean training loss. The log shows ten of those at most (the 1 % setting trains 250 epochs of
    one batch): the result keeps them all."""
    batch_size = settings.batch_size
    n_batches = math.ceil(len(marked["train"]) / batch_size)
    optimizer, schedule = adamw_with_warmup(classifier, settings.optimizer, settings.epochs * n_batches)
    rng = np.random.default_rng(seed)
    history: list[dict] = []
    best: tuple[float, int, dict] | None = None
    epoch_losses: list[float] = []
    stride = math.ceil(settings.epochs / 10)
    classifier.train()
    for epoch in progress(range(1, settings.epochs + 1), "Wiki80 epochs", unit="epochs"):
        order = rng.permutation(len(marked["train"]))
        losses = []
        for lo in range(0, len(order), batch_size):
            picked = order[lo : lo + batch_size]
            logits = classifier([marked["train"][i] for i in picked])
            loss = F.cross_entropy(logits, gold["train"][picked].to(logits.device))
            loss.backward()
            take_step(classifier, optimizer, schedule, settings.optimizer)
            losses.append(loss.item())
        epoch_losses.append(float(np.mean(losses)))
        if epoch % stride == 0 or epoch == settings.epochs:
            logger.info("Wiki80 epoch %d: training loss %.4f", epoch, epoch_losses[-1])
        if "select" in marked:
            acc = accuracy(classifier, marked["select"], gold["select"], settings.eval_batch_size)
            history.append({"epoch": epoch, "accuracy": acc, "train_loss": epoch_losses[-1]})
            if best is None or acc > best[0]:
                best = (acc, epoch, snapshot(classifier))
    if best is None:
        return None, epoch_losses
    classifier.load_state_dict(best[2])
    return {"history": history, "best_epoch": best[1]}, epoch_losses
