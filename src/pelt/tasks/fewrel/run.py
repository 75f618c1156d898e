"""Few-shot relation classification (FewRel 1.0 and 2.0) with Prototypical Networks, with and without a table.

Protocol (the paper, its appendix and its code base, thunlp PELT ``FewRel/``):

- **Proto** (Snell et al. 2017): an episode has N relations with K support instances each and
  ``n_query`` queries per relation; a relation's prototype is the mean of its K support encodings,
  and a query's logits are minus its squared Euclidean distances to the prototypes.  The encoder is
  the PLM with entity markers (:class:`pelt.tasks.relation.encoder.RelationEncoder`).
- **Training**: ``steps`` optimizer steps (paper: 1500), each over ``batch_size`` episodes (the
  code base's ``--batch_size``: episodes per step; the paper searched 4 / 8 / 32 and reports 32)
  accumulated one episode at a time, so memory is that of one episode; an encoder without dropout
  (the demo model) encodes the instances of a step's episodes once instead, which computes the same
  loss and gradient (:func:`_shared_logits`).  Training episodes are
  ``train_n_way``-way (default N) with ``train_n_query`` queries per relation (5, the toolkit's
  default; the authors' runs used 1).  As the toolkit's Proto, dropout (p = 0.5) on the support and
  query encodings in training.  AdamW, linear warm-up over ``warmup`` of the steps then linear
  decay, gradient norm clipped at 1; the paper code's schedule is there too (``warmup_steps`` 300,
  ``bias_correction`` off, ``max_grad_norm`` None).  The table is frozen; the model is fine-tuned.
- **Model selection**: every ``eval_every`` steps (paper: 250) from ``first_eval`` on (the paper's
  code: 500) and after the last step, accuracy on ``val_episodes`` fixed validation episodes; the
  best weights (ties: the earlier) are tested.
- **Validation data never overlaps the test data.**  The paper's scripts pass ``val_wiki`` as both
  validation and test set.  Here, when the configured validation data shares a relation or an
  instance with the test data (or none is given), validation uses *held-out training relations*:
  :func:`pelt.tasks.relation.encoder.holdout_relations` picks them by a hash of their names (the same on
  every run and seed), a quarter of the training relations and at least N unless ``val_relations``
  says otherwise.  Training relations that share a name or any instance with the test or validation
  data are dropped first (Wiki80 files hold FewRel's val relations too).
- **Test**: ``test_episodes`` episodes, N-way K-shot, accuracy over all their queries.  The code
  base tests 2000 batches of 32 episodes with 1 query per relation (64,000 episodes) and validates
  on 200 batches of 32 (6,400); thanks to encoding each instance once (below) such counts are
  cheap.  Test episodes depend only on the seed and the data, so the
  baseline and the pelt variant of a seed are scored on the same episodes.
- Evaluation encodes each instance that an episode uses once (the model is fixed in eval mode),
  then scores every episode from those vectors: exactly the per-episode result at a fraction of the
  cost, since test episodes reuse instances many times.

Random streams: training episodes, validation episodes and test episodes draw from separate
generators derived from the seed, so changing ``steps`` does not change the test episodes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from pelt.eval.settings import TableInputs, as_record
from pelt.logs import progress
from pelt.tasks.fewrel.data import read_instances
from pelt.tasks.fewrel.settings import FewRelSettings
from pelt.tasks.relation.data import Instance
from pelt.tasks.relation.encoder import (
    MarkedText,
    RelationEncoder,
    accuracy_by_head,
    accuracy_by_relation,
    adamw_with_warmup,
    default_holdout_size,
    drop_overlapping,
    entity_counts,
    head_groups,
    holdout_relations,
    load_encoder,
    resolve_instances,
    seed_everything,
    snapshot,
    take_step,
    trains_deterministically,
)

logger = logging.getLogger(__name__)

# Independent random streams per seed (see the module docstring).
_TRAIN_STREAM, _VAL_STREAM, _TEST_STREAM = 0, 1, 2


@dataclass(frozen=True)
class Episode:
    """One N-way K-shot task: instance indices of the supports (N x K) and of the queries, with their labels."""

    relations: tuple[str, ...]
    support: tuple[tuple[int, ...], ...]
    query: tuple[int, ...]
    labels: tuple[int, ...]  # position in ``relations`` of each query's relation


def relation_pool(instances: Sequence[Instance], need: int, n_way: int, what: str) -> dict[str, list[int]]:
    """Relation -> instance indices, for the relations with at least ``need`` (K + Q) instances.

    Smaller relations cannot fill an episode; they are dropped and logged.  Fewer than ``n_way``
    usable relations is an error.
    """
    pool: dict[str, list[int]] = {}
    for i, inst in enumerate(instances):
        pool.setdefault(inst.relation, []).append(i)
    small = sorted(r for r, idx in pool.items() if len(idx) < need)
    if small:
        logger.warning(
            "%s: %d relations have fewer than %d instances and are not sampled: %s", what, len(small), need, small
        )
    pool = {r: idx for r, idx in sorted(pool.items()) if len(idx) >= need}
    if len(pool) < n_way:
        raise ValueError(
            f"{what}: {len(pool)} relations with at least {need} instances, {n_way}-way episodes need {n_way}"
        )
    return pool


def sample_episode(
    pool: Mapping[str, Sequence[int]], n_way: int, k_shot: int, n_query: int, rng: np.random.Generator
) -> Episode:
    """N distinct relations, then K supports and ``n_query`` queries per relation, all distinct (FewRel's sampler)."""
    names = sorted(pool)
    picked = [names[i] for i in rng.choice(len(names), n_way, replace=False)]
    support, query, labels = [], [], []
    for label, relation in enumerate(picked):
        members = pool[relation]
        chosen = [members[i] for i in rng.choice(len(members), k_shot + n_query, replace=False)]
        support.append(tuple(chosen[:k_shot]))
        query += chosen[k_shot:]
        labels += [label] * n_query
    return Episode(tuple(picked), tuple(support), tuple(query), tuple(labels))


def sample_episodes(
    pool: Mapping[str, Sequence[int]], count: int, n_way: int, k_shot: int, n_query: int, seed: int, stream: int
) -> list[Episode]:
    """``count`` episodes from the seed's ``stream`` (module docstring): the same list for the same seed and data."""
    rng = np.random.default_rng([seed, stream])
    return [sample_episode(pool, n_way, k_shot, n_query, rng) for _ in range(count)]


def proto_logits(support: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
    """[M, N] minus squared Euclidean distances of queries [M, D] to prototypes (means of support [N, K, D])."""
    prototypes = support.mean(dim=1)
    return -((query[:, None, :] - prototypes[None, :, :]) ** 2).sum(dim=-1)


def _instances(episode: Episode) -> list[int]:
    """The episode's instance indices, supports (relation by relation) then queries."""
    return [i for row in episode.support for i in row] + list(episode.query)


def _logits(vectors: torch.Tensor, episode: Episode, dropout: float) -> torch.Tensor:
    """Training logits from the encodings of :func:`_instances`; ``dropout`` on the encodings, as the
    toolkit's Proto (``nn.Dropout()``, p = 0.5)."""
    n, k = len(episode.support), len(episode.support[0])
    vectors = F.dropout(vectors, dropout, training=True)
    return proto_logits(vectors[: n * k].view(n, k, -1), vectors[n * k :])


def _episode_logits(
    encoder: RelationEncoder, marked: Sequence[MarkedText], episode: Episode, dropout: float = 0.0
) -> torch.Tensor:
    """Training logits of one episode, supports and queries encoded in one forward."""
    return _logits(encoder([marked[i] for i in _instances(episode)]), episode, dropout)


def _shared_logits(
    encoder: RelationEncoder, marked: Sequence[MarkedText], episodes: Sequence[Episode], dropout: float
) -> list[torch.Tensor]:
    """Training logits of several episodes, each instance they use encoded once in one forward.

    For an encoder without dropout (:func:`pelt.tasks.relation.encoder.trains_deterministically`) this is the
    per-episode computation exactly (same logits, same gradients, the encodings' dropout masks drawn
    in the same order), at the cost of one forward over the union: on the demo a step's four
    episodes use about 105 distinct instances for 200 encodings.  Memory is that of the union.
    """
    used = sorted({i for episode in episodes for i in _instances(episode)})
    row_of = {i: r for r, i in enumerate(used)}
    vectors = encoder([marked[i] for i in used])
    return [_logits(vectors[[row_of[i] for i in _instances(ep)]], ep, dropout) for ep in episodes]


def query_predictions(
    encoder: RelationEncoder, marked: Sequence[MarkedText], episodes: Sequence[Episode], batch_size: int, desc: str
) -> list[tuple[int, str, str]]:
    """(instance index, gold relation, predicted relation) of every query of ``episodes``; each
    instance used is encoded once (module docstring)."""
    used = sorted({i for ep in episodes for row in ep.support for i in row} | {i for ep in episodes for i in ep.query})
    vectors = encoder.encode([marked[i] for i in used], batch_size, desc=desc)
    row_of = {i: r for r, i in enumerate(used)}
    outcomes = []
    for ep in episodes:
        support = vectors[[row_of[i] for row in ep.support for i in row]].view(len(ep.support), len(ep.support[0]), -1)
        predicted = proto_logits(support, vectors[[row_of[i] for i in ep.query]]).argmax(dim=-1).tolist()
        outcomes += [(i, ep.relations[label], ep.relations[p]) for i, p, label in zip(ep.query, predicted, ep.labels)]
    return outcomes


def episode_accuracy(
    encoder: RelationEncoder, marked: Sequence[MarkedText], episodes: Sequence[Episode], batch_size: int, desc: str
) -> float:
    """Accuracy over all queries of ``episodes``."""
    outcomes = query_predictions(encoder, marked, episodes, batch_size, desc)
    return sum(gold == predicted for _, gold, predicted in outcomes) / len(outcomes)


def split_fewrel(
    train: Sequence[Instance],
    val: Sequence[Instance],
    test: Sequence[Instance],
    *,
    n_way: int,
    val_relations: int | None = None,
    excluded: Sequence[Instance] = (),
) -> tuple[list[Instance], list[Instance], dict]:
    """Training and validation instances that share no relation and no instance with the test data.

    The configured validation data is used when it is disjoint from the test data; otherwise
    validation relations are held out of the training data (see the module docstring).  Relations
    of ``excluded`` are removed from the training data too.  Returns the two lists and a description
    of the split for the result file (``validation_source``: ``given``, ``holdout``, or ``none`` when
    there is neither usable validation data nor a training relation to hold out).
    """
    test_keys = {inst.key for inst in test}
    test_relations = {inst.relation for inst in test}
    val_usable = bool(val) and not any(inst.key in test_keys or inst.relation in test_relations for inst in val)
    if val and not val_usable:
        logger.info("FewRel: the validation data overlaps the test data; validating on held-out training relations")
    train_kept, dropped = drop_overlapping(train, [*test, *(val if val_usable else ()), *excluded])
    if val_usable:
        val_kept, source, held = list(val), "given", []
    else:
        relations = sorted({inst.relation for inst in train_kept})
        held = holdout_relations(relations, val_relations or default_holdout_size(len(relations), n_way))
        held_set = set(held)
        val_kept = [inst for inst in train_kept if inst.relation in held_set]
        train_kept = [inst for inst in train_kept if inst.relation not in held_set]
        source = "holdout" if held else "none"
    info = {
        "validation_source": source,
        "validation_relations": sorted({inst.relation for inst in val_kept}),
        "train_relations_dropped_overlap": dropped,
        "train_relations": len({inst.relation for inst in train_kept}),
        "train_instances": len(train_kept),
        "validation_instances": len(val_kept),
        "test_relations": len(test_relations),
        "test_instances": len(test),
    }
    return train_kept, val_kept, info


@dataclass(frozen=True)
class FewRelFiles:
    """A FewRel run's data: ``train`` files are FewRel JSON (``train_wiki.json``) or Wiki80 JSONL
    (``.jsonl``); ``val`` may be the test files themselves (see the module docstring); ``exclude``
    names files whose relations must not be trained on either (FewRel 2.0 from Wiki80:
    ``val_wiki.json``, which leaves FewRel's 64 training relations, the paper's training set, of
    which validation then holds out a quarter)."""

    train: Sequence[str]
    val: Sequence[str]
    test: Sequence[str]
    exclude: Sequence[str] = ()


def run_fewrel(
    model_name_or_path: str,
    files: FewRelFiles,
    out_json: str,
    *,
    tables: TableInputs,
    settings: FewRelSettings,
    seed: int,
    dataset: str = "fewrel",
) -> dict:
    """Train Proto on training episodes, select on validation episodes, test N-way K-shot; write and return the result.

    ``dataset`` names the benchmark in the result (``fewrel1`` / ``fewrel2`` match the paper's
    Table 2). ``tables.train_table`` (FewRel 2.0) serves the training and validation instances,
    ``tables.table`` the test instances: Wikipedia-domain training data then gets Wikipedia
    vectors, as in the authors' loader, instead of none.

    ``steps`` 0 tests the pre-trained encoder as it is, without fine-tuning: the training,
    validation and excluded files are then not read, so a benchmark without training relations (the
    demo, whose FewRel relations are all its Wiki80 relations) can still be scored.
    """
    seed_everything(seed)
    test_data = read_instances(files.test)
    pools = _pools(files, test_data, settings)
    encoder = load_encoder(model_name_or_path, tables, settings.encoder, "run_fewrel")
    marked, counts, groups = _mark(encoder, tables, pools.data)
    val_set = _episodes(pools.val, settings.val_episodes, settings, seed, _VAL_STREAM) if settings.steps else []
    test_set = _episodes(pools.test, settings.test_episodes, settings, seed, _TEST_STREAM)
    history = _train(encoder, marked, pools.train, val_set, settings, seed)
    counts["training_passes"] = encoder.pop_stats()  # every encoding of training and validation
    outcomes = query_predictions(encoder, marked["test"], test_set, settings.eval_batch_size, "FewRel test")
    correct = [gold == predicted for _, gold, predicted in outcomes]
    counts["test"].update(encoder.pop_stats())
    result = {
        "task": "fewrel",
        "dataset": dataset,
        "model": model_name_or_path,
        "variant": encoder.variant,
        "seed": seed,
        "setting": settings.setting,
        "accuracy": sum(correct) / len(correct),
        "by_head": accuracy_by_head(correct, groups and [groups[i] for i, _, _ in outcomes]),
        "by_relation": accuracy_by_relation([gold for _, gold, _ in outcomes], [p for _, _, p in outcomes]),
        "n": len(test_set),
        "n_queries": sum(len(ep.query) for ep in test_set),
        "norm": encoder.norm,
        "table": tables.table if encoder.table is not None else None,
        "train_table": tables.train_table if isinstance(encoder.table, Mapping) else None,
        "validation": history,
        "data": pools.split,
        "entities": counts,
        "hyperparameters": as_record(
            settings, train_n_way=settings.training_n_way, exclude=list(files.exclude), precision=encoder.precision
        ),
    }
    with open(out_json, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=2)
    logger.info(
        "FewRel %s %s %s seed %d: accuracy %.4f", dataset, settings.setting, encoder.variant, seed, result["accuracy"]
    )
    return result


@dataclass(frozen=True)
class _Pools:
    """The instances of each split, and per split the relations an episode can draw from."""

    data: dict[str, list[Instance]]
    train: dict[str, list[int]]
    val: dict[str, list[int]]
    test: dict[str, list[int]]
    split: dict


def _pools(files: FewRelFiles, test_data: list[Instance], settings: FewRelSettings) -> _Pools:
    n_way, k_shot = settings.n_way, settings.k_shot
    if settings.steps:
        train_data, val_data, split = split_fewrel(
            read_instances(files.train),
            read_instances(files.val),
            test_data,
            n_way=n_way,
            val_relations=settings.val_relations,
            excluded=read_instances(files.exclude),
        )
        train_need = k_shot + settings.train_n_query
        train_pool = relation_pool(train_data, train_need, settings.training_n_way, "FewRel training data")
        val_pool = relation_pool(val_data, k_shot + settings.n_query, n_way, "FewRel validation data")
    else:
        logger.info("FewRel: steps 0, testing the pre-trained encoder; training and validation data are not read")
        train_data, val_data, split = split_fewrel([], [], test_data, n_way=n_way)
        train_pool = val_pool = {}
    test_pool = relation_pool(test_data, k_shot + settings.n_query, n_way, "FewRel test data")
    data = {"train": train_data, "validation": val_data, "test": test_data}
    return _Pools(data, train_pool, val_pool, test_pool, split)


def _mark(
    encoder: RelationEncoder, tables: TableInputs, data: Mapping[str, list[Instance]]
) -> tuple[dict[str, list[MarkedText]], dict[str, dict], list[str] | None]:
    """Each split's instances marked for the encoder, the entity counts, and the test heads' groups
    (every variant, the baseline too, is split by the test heads' frequency)."""
    two = encoder.table if isinstance(encoder.table, Mapping) else None  # {"train": ..., "test": ...}
    marked, counts, groups = {}, {}, None
    for name, instances in data.items():
        side = "test" if name == "test" else "train"
        entities_path = tables.train_task_entities if two and side == "train" else tables.task_entities
        entity_ids = resolve_instances(instances, entities_path)
        counts[name] = entity_counts(entity_ids, two[side] if two else encoder.table, entities_path is not None)
        if name == "test":
            groups = head_groups(entity_ids, tables.table)
        if two:
            entity_ids = [tuple(e and f"{side}:{e}" for e in pair) for pair in entity_ids]
        marked[name] = encoder.mark(instances, entity_ids)
    return marked, counts, groups


def _episodes(
    pool: Mapping[str, Sequence[int]], count: int, settings: FewRelSettings, seed: int, stream: int
) -> list[Episode]:
    return sample_episodes(pool, count, settings.n_way, settings.k_shot, settings.n_query, seed, stream)


def _train(
    encoder: RelationEncoder,
    marked: Mapping[str, Sequence[MarkedText]],
    pool: Mapping[str, Sequence[int]],
    val_set: Sequence[Episode],
    settings: FewRelSettings,
    seed: int,
) -> dict:
    """Fine-tune with model selection on ``val_set``; leaves the best weights in ``encoder``; returns the history."""
    rng = np.random.default_rng([seed, _TRAIN_STREAM])
    steps, batch_size, dropout = settings.steps, settings.batch_size, settings.dropout
    optimizer, schedule = adamw_with_warmup(
        encoder,
        settings.optimizer,
        steps,
        warmup_steps=settings.warmup_steps,
        bias_correction=settings.bias_correction,
    )
    history: list[dict] = []
    best: tuple[float, int, dict] | None = None
    encoder.train()
    losses: list[float] = []
    shared = trains_deterministically(encoder.model)
    logger.info(
        "FewRel training: %s",
        "no dropout in the model, each step encodes its episodes' instances once"
        if shared
        else "the model has dropout, each episode is encoded and back-propagated alone",
    )

    def loss_of(logits: torch.Tensor, episode: Episode) -> torch.Tensor:
        return F.cross_entropy(logits, torch.tensor(episode.labels, device=logits.device))

    for step in progress(range(1, steps + 1), "FewRel training", unit="steps"):
        episodes = [
            sample_episode(pool, settings.training_n_way, settings.k_shot, settings.train_n_query, rng)
            for _ in range(batch_size)
        ]
        if shared:
            step_losses = [
                loss_of(lg, ep) for lg, ep in zip(_shared_logits(encoder, marked["train"], episodes, dropout), episodes)
            ]
            (torch.stack(step_losses).sum() / batch_size).backward()
        else:  # memory of one episode: its graph is freed before the next is built
            step_losses = []
            for episode in episodes:
                loss = loss_of(_episode_logits(encoder, marked["train"], episode, dropout), episode)
                (loss / batch_size).backward()
                step_losses.append(loss.detach())
        losses += [loss.item() for loss in step_losses]
        take_step(encoder, optimizer, schedule, settings.optimizer)
        if step >= settings.first_eval and (step % settings.eval_every == 0 or step == steps):
            accuracy = episode_accuracy(
                encoder, marked["validation"], val_set, settings.eval_batch_size, "FewRel validation"
            )
            history.append({"step": step, "accuracy": accuracy, "train_loss": float(np.mean(losses))})
            logger.info("FewRel step %d: validation accuracy %.4f, training loss %.4f", step, accuracy, np.mean(losses))
            losses = []
            if best is None or accuracy > best[0]:
                best = (accuracy, step, snapshot(encoder))
    encoder.eval()
    if best is not None:
        encoder.load_state_dict(best[2])
    return {
        "history": history,
        "best_step": best[1] if best else 0,
        "best_accuracy": best[0] if best else None,
        "episodes": len(val_set),
    }
