"""Relation classification shared by FewRel and Wiki80: instances, entity markers, the sentence encoder.

**Data.**  FewRel files map relation -> instances ``{"tokens", "h": [name, id, [[positions], ...]],
"t": ...}``; Wiki80 files are JSONL ``{"token", "h": {"name", "id", "pos": [start, end)}, "t",
"relation"}``.  Both become :class:`Instance` (token spans half-open).  A FewRel entity may list several
mentions; the first is used, as FewRel's own loader does.  Wiki80 is FewRel train + val under
relation *names* instead of property ids, so which Wiki80 relation is a FewRel relation is decided by
shared instances (:func:`drop_overlapping`), which needs no id -> name table.

**Markers.**  The representation is the paper's code base's (thunlp RE-Context-or-Names, PELT
``RE/``): markers around head and tail, and the concatenated last hidden states at the two *start*
markers.  Two sets (:data:`MARKERS`, the tasks' ``markers`` setting): ``tokens`` is the paper's
code, four new tokens (``[unused0..3]``: before and after the head, before and after the tail)
added to the vocabulary with freshly initialised embeddings; ``punct``, the default, is plain text
every tokenizer already knows -- ``@`` around the head, ``#`` around the tail (the "entity marker
(punct)" of Zhou & Chen, 2022) -- so that no parameter is added (the premise of PELT).  With a
table, the head reads ``@ head ( E ) @`` as in the paper's code (start marker, mention, brackets
and slot, end marker): the text is the tokens joined by spaces with the markers as words, and
:func:`pelt.encoding.injection.inject` inserts ``( E )`` after each mention's character span.

**Finding the markers after injection.**  Injection only adds the bracket and slot tokens, so the
k-th occurrence of a marker's token id before injection is its k-th occurrence after; k is counted
once per instance on the plain tokenization (the sentence itself may contain ``@``).  This is why
a marker must not tokenize to the unknown token (the slot's id) or to a bracket token.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tokenizers import AddedToken
from transformers import (
    PreTrainedModel,
    PreTrainedTokenizerBase,
    get_linear_schedule_with_warmup,
)

from pelt.encoding.injection import Prepared, assemble, prepare
from pelt.encoding.models import (
    attention_for_training,
    autocast_label,
    default_norm,
    load_masked_lm,
    max_input_length,
    mention_token_span,
    resolve_autocast,
    token_states,
)
from pelt.eval.buckets import HEAD_GROUPS, RARE_BELOW
from pelt.eval.controls import CONTROLS
from pelt.eval.settings import READ_AT, EncoderSettings, Markers, OptimizerSettings, TableInputs, markers_named
from pelt.eval.variants import resolve_norm, resolve_variant
from pelt.linking.task_entities import resolve_entities
from pelt.logs import progress
from pelt.table import EntityTable
from pelt.tasks.relation.data import Instance

logger = logging.getLogger(__name__)


DEFAULT_MARKERS = markers_named(EncoderSettings().markers)


_TOKENIZE_CHUNK = 1024  # texts tokenized per call when marking (bounds the offset lists held at once)


def drop_overlapping(instances: Sequence[Instance], held_out: Sequence[Instance]) -> tuple[list[Instance], list[str]]:
    """``instances`` without every relation that shares a name or any instance with ``held_out``; and those relations.

    Whole relations go, not single instances: few-shot evaluation is about relations never seen in
    training, and a Wiki80 relation that shares sentences with FewRel's val set *is* a val relation.
    """
    keys = {inst.key for inst in held_out}
    names = {inst.relation for inst in held_out}
    dropped = sorted({inst.relation for inst in instances if inst.relation in names or inst.key in keys})
    gone = set(dropped)
    if dropped:
        logger.info("dropped %d relations that occur in the held-out data: %s", len(dropped), dropped)
    return [inst for inst in instances if inst.relation not in gone], dropped


@dataclass(frozen=True)
class MarkedText:
    """An instance ready for the encoder: the marked text as it is batched (tokenized, with the
    table's slots when one is held: prepared once, encoded at every step), and where its head and
    tail are read."""

    text: str
    prepared: Prepared
    read: tuple[int, ...]  # positions of the head and tail representations in ``prepared.ids`` (two, or four: ``both``)
    markers_cut: int  # start markers that ``max_length`` cut off (read at the first token instead)


def marked_text(inst: Instance, markers: Markers = DEFAULT_MARKERS) -> tuple[str, list[tuple[int, int]], list[int]]:
    """The tokens joined by spaces, with the head and tail each between its two markers.

    Returns the text, the character spans of the head and tail mentions (markers excluded) and the
    character offsets of their start markers.
    """
    words: list[str] = []
    offset = 0

    def add(word: str) -> int:
        nonlocal offset
        words.append(word)
        offset += len(word) + 1
        return offset - len(word) - 1

    sides = (inst.head, inst.tail)
    around = (markers.head, markers.tail)
    spans = [[0, 0], [0, 0]]
    marker_chars = [0, 0]
    for i, token in enumerate(inst.tokens):
        for side, entity in enumerate(sides):
            if i == entity.start:
                marker_chars[side] = add(around[side][0])
        start = add(token)
        for side, entity in enumerate(sides):
            if i == entity.start:
                spans[side][0] = start
            if i == entity.end - 1:
                spans[side][1] = start + len(token)
                add(around[side][1])
    return " ".join(words), [(s, e) for s, e in spans], marker_chars


def _occurrence(ids: Sequence[int], token_id: int, k: int) -> int | None:
    """Position of the ``k``-th ``token_id`` in ``ids``; None where there are fewer (cut off)."""
    seen = 0
    for pos, tid in enumerate(ids):
        seen += tid == token_id
        if seen == k:
            return pos
    return None


def _slots_after(starts: Sequence[int], slots: Sequence[int]) -> list[int]:
    """Per entity, the position of its slot, else its start marker (``starts``: head, tail). A slot
    follows its mention, so an entity's slot is the first one after its start marker, unless the
    other entity's start marker comes first (then that slot is the other's)."""
    out = []
    for side, start in enumerate(starts):
        other = starts[1 - side]
        after = [p for p in slots if p > start and not start < other < p]
        out.append(min(after) if after else start)
    return out


class RelationEncoder(torch.nn.Module):
    """Sentence encoder for relation classification: [state at head start marker; state at tail start marker].

    ``read_at="slots"`` reads an entity at its slot where the table gave it one, an option beside
    the paper's markers: the frozen demo model's state at the slot tells the demo's born-in heads
    from its died-in heads more often than its state at the marker (68 % against 55 %, issue 31),
    though fine-tuned on few-shot episodes neither did (``benchmarks/README.md``). ``read_at="both"``
    appends the slots' states to the markers' (four states a sentence): the wording the markers
    read and the vector the slot holds, where a small model does not carry the second to the first.

    Holds the masked LM (fine-tuned) and, for the pelt variant, the frozen table.  ``stats`` counts
    slots injected, mentions whose entity the table lacks, and markers cut off by ``max_length``
    (their state falls back to the first token's), over every forward since the last reset.

    ``settings`` says how a sentence is read (markers, length, ``read_at``, what a mention the table
    lacks becomes); its precision is the caller's to resolve for the model's device, given here as
    ``autocast`` (:func:`load_encoder`), and its device is where the caller loaded the model.
    """

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        table: EntityTable | Mapping[str, EntityTable] | None,
        *,
        norm: float | None,
        settings: EncoderSettings = EncoderSettings(),
        autocast: bool = False,
        variant: str | None = None,
    ):
        super().__init__()
        if settings.read_at not in READ_AT:
            raise ValueError(f"unknown read_at {settings.read_at!r}; expected one of {tuple(READ_AT)}")
        markers = markers_named(settings.markers)
        if markers.new_tokens:
            add_marker_tokens(model, tokenizer, markers)
        self.model = model
        self.tokenizer = tokenizer
        self.table = table
        self.norm = norm
        self.markers = markers
        # a longer budget than the model's would overrun the positions
        self.max_length = min(settings.max_length, max_input_length(model))
        self.autocast = autocast
        self.missing = settings.missing  # what a mention without a vector becomes (pelt.encoding.injection.MISSING)
        self.variant = variant or ("pelt" if table is not None else "baseline")  # for result files
        self.read_at = settings.read_at
        self.stats: Counter = Counter()
        bracket = (
            tokenizer(" (", add_special_tokens=False)["input_ids"]
            + tokenizer(" )", add_special_tokens=False)["input_ids"]
        )
        self._inserted_ids = {*bracket, tokenizer.unk_token_id}

    @property
    def precision(self) -> str:
        """What the forward computes in, for result files: ``bf16 autocast`` or ``fp32``."""
        return autocast_label(self.autocast)

    @property
    def out_features(self) -> int:
        return (4 if self.read_at == "both" else 2) * self.model.config.hidden_size

    def mark(
        self, instances: Sequence[Instance], entity_ids: Sequence[tuple[str | None, str | None]]
    ) -> list[MarkedText]:
        """Marked texts of ``instances``; ``entity_ids`` (head, tail) are injected when a table is held."""
        out: list[MarkedText] = []
        for lo in range(0, len(instances), _TOKENIZE_CHUNK):
            chunk = instances[lo : lo + _TOKENIZE_CHUNK]
            marked = [marked_text(inst, self.markers) for inst in chunk]
            texts = [text for text, _, _ in marked]
            encoded = self.tokenizer(
                texts,
                return_offsets_mapping=True,
                return_special_tokens_mask=True,
                return_attention_mask=False,
                verbose=False,
            )
            mentions = [
                [(s, e, eid) for (s, e), eid in zip(spans, entity_ids[lo + b]) if eid] if self.table is not None else []
                for b, (_, spans, _) in enumerate(marked)
            ]
            prepared = prepare(
                self.model,
                self.tokenizer,
                texts,
                mentions,
                self.table,
                norm=self.norm,
                max_length=self.max_length,
                missing=self.missing,
            )
            for b, (text, _, marker_chars) in enumerate(marked):
                ids = encoded["input_ids"][b]
                starts = []
                for side, char in enumerate(marker_chars):
                    span = mention_token_span(
                        encoded["offset_mapping"][b], encoded["special_tokens_mask"][b], char, char + 1
                    )
                    token_id = ids[span[0]] if span else None
                    if token_id is None or token_id in self._inserted_ids:
                        raise ValueError(
                            f"marker {(self.markers.head, self.markers.tail)[side][0]!r} is the unknown or a bracket "
                            "token of this tokenizer; choose other markers"
                        )
                    starts.append(_occurrence(prepared[b].ids, token_id, ids[: span[0] + 1].count(token_id)))
                cut = starts.count(None)
                found = [0 if p is None else p for p in starts]
                slots = _slots_after(found, prepared[b].slots)
                read = {"markers": found, "slots": slots, "both": found + slots}[self.read_at]
                out.append(MarkedText(text, prepared[b], tuple(read), cut))
        return out

    def forward(self, marked: Sequence[MarkedText]) -> torch.Tensor:
        """[len(marked), out_features] float32 representations (gradients flow into the model, not the table)."""
        batch = assemble(self.model, self.tokenizer, [m.prepared for m in marked], missing=self.missing)
        self.stats["texts"] += len(marked)
        self.stats["injected"] += batch.n_injected
        self.stats["missing"] += batch.n_missing
        self.stats["markers_cut"] += sum(m.markers_cut for m in marked)
        device = batch.input_ids.device
        with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=self.autocast):
            states = token_states(self.model, batch.inputs_embeds, batch.attention_mask)
        rows = torch.arange(len(marked), device=device).repeat_interleave(len(marked[0].read))
        positions = torch.tensor([p for m in marked for p in m.read], device=device)
        picked = states[rows, positions].float()
        return picked.view(len(marked), self.out_features)

    def pop_stats(self) -> dict[str, int]:
        """The counts since the last call (texts encoded, slots injected, mentions missing from the table, markers
        cut); resets them."""
        stats = {
            "texts_encoded": self.stats["texts"],
            "injected": self.stats["injected"],
            "missing_from_table": self.stats["missing"],
            "markers_cut": self.stats["markers_cut"],
        }
        if stats["markers_cut"]:
            logger.warning(
                "%d start markers were cut off by max_length %d; their state is the first token's",
                stats["markers_cut"],
                self.max_length,
            )
        self.stats.clear()
        return stats

    @torch.inference_mode()
    def encode(self, marked: Sequence[MarkedText], batch_size: int, desc: str = "encode") -> torch.Tensor:
        """Representations of many texts in eval mode (no dropout, no gradients); training mode is restored."""
        was_training = self.training
        self.eval()
        try:
            parts = [
                self(marked[lo : lo + batch_size])
                for lo in progress(range(0, len(marked), batch_size), desc, unit="batches")
            ]
        finally:
            self.train(was_training)
        return torch.cat(parts) if parts else torch.zeros(0, self.out_features)


def add_marker_tokens(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, markers: Markers) -> None:
    """Make the four markers tokens of ``tokenizer``, never split, as the paper's code does; the
    embedding matrix grows by the ones the vocabulary lacks (``resize_token_embeddings``
    initialises them from the old embeddings' mean and covariance, drawn from torch's seeded RNG).
    A space before a marker is absorbed, as the paper's code inserts the ids with no space token;
    a sentence's first word reads as after a space (the paper's code tokenizes it without one)."""
    words = [*markers.head, *markers.tail]
    tokenizer.add_tokens([AddedToken(w, lstrip=True, rstrip=False, normalized=False) for w in words])
    if len(tokenizer) > model.get_input_embeddings().num_embeddings:
        model.resize_token_embeddings(len(tokenizer))


def load_encoder(
    model_name_or_path: str,
    tables: TableInputs,
    settings: EncoderSettings,
    what: str,
) -> RelationEncoder:
    """The encoder of a fine-tuning run, its variant checked as LAMA's: ``baseline`` holds no
    table (one may be given, for the heads' frequencies), ``pelt`` and the controls
    (:mod:`pelt.eval.controls`) inject the table they are given.

    With ``tables.train_table`` (FewRel 2.0: training and validation resolve against the Wikipedia
    table, the test against the biomedical one, as the authors' loader) the encoder holds both
    tables as ``{"train": ..., "test": ...}`` and entity ids name theirs (``train:<id>``,
    :func:`pelt.encoding.injection.inject`); L is one for both. Weights stay fp32; the precision says whether
    the forward runs under bf16 autocast (:func:`pelt.encoding.models.resolve_autocast`: ``auto`` where bf16 is
    native, on a GPU or a CPU with AVX-512 BF16).
    """
    variant = resolve_variant(tables.variant, tables.table, tables.task_entities, what, injecting=("pelt", *CONTROLS))
    model, tokenizer = load_masked_lm(model_name_or_path, device=settings.device, precision="fp32")
    autocast = resolve_autocast(settings.precision, model.device)
    attention_for_training(model, autocast)
    table: EntityTable | dict[str, EntityTable] | None = None
    norm = None
    if variant != "baseline":
        table = EntityTable.open(tables.table)
        table.check_model(model)
        norm = resolve_norm(tables.norm, tables.norm_sweep, default_norm(model))
        if tables.train_table is not None:
            train_table = EntityTable.open(tables.train_table)
            train_table.check_model(model)
            table = {"train": train_table, "test": table}
    return RelationEncoder(model, tokenizer, table, norm=norm, settings=settings, autocast=autocast, variant=variant)


def resolve_instances(
    instances: Sequence[Instance], task_entities_path: str | None
) -> list[tuple[str | None, str | None]]:
    """(head, tail) entity ids through ``task_entities.parquet``
    (:func:`pelt.linking.task_entities.resolve_entities`)."""
    if task_entities_path is None:
        return [(None, None)] * len(instances)
    flat = resolve_entities([(e.name, e.qid) for inst in instances for e in (inst.head, inst.tail)], task_entities_path)
    return list(zip(flat[0::2], flat[1::2]))


def entity_counts(
    entity_ids: Sequence[tuple[str | None, str | None]], table: EntityTable | None, resolved: bool
) -> dict[str, int | None]:
    """How the head and tail mentions resolve: unresolved, resolved but absent from the table, in the table.

    Counts that were not measured (no task entities given: ``resolved`` False; no table) are None.
    """
    flat = [e for pair in entity_ids for e in pair]
    in_table = sum(e is not None and e in table for e in flat) if table is not None else None
    unresolved = sum(e is None for e in flat) if resolved else None
    return {
        "mentions": len(flat),
        "unresolved": unresolved,
        "not_in_table": len(flat) - unresolved - in_table if resolved and table is not None else None,
        "in_table": in_table,
    }


def head_groups(entity_ids: Sequence[tuple[str | None, str | None]], table_path: str | None) -> list[str] | None:
    """Each instance's group (:data:`HEAD_GROUPS`) by its head's corpus frequency in the table at
    ``table_path`` (an entity the table lacks has frequency 0; a control table has the real
    table's counts); None without a table, where nothing is known."""
    if table_path is None:
        return None
    table = EntityTable.open(table_path)
    heads = sorted({h for h, _ in entity_ids if h is not None})
    frequency = dict(zip(heads, table.counts(heads, missing="zero")[1].tolist())) if heads else {}
    return ["unresolved" if h is None else "rare" if frequency[h] < RARE_BELOW else "frequent" for h, _ in entity_ids]


def accuracy_by_head(correct: Sequence[bool], groups: Sequence[str] | None) -> dict[str, dict] | None:
    """Accuracy and count of each head group that has instances (``correct`` and ``groups`` per
    scored instance, a query counted as often as episodes ask it)."""
    if groups is None:
        return None
    out = {}
    for group in HEAD_GROUPS:
        hits = [c for c, g in zip(correct, groups) if g == group]
        if hits:
            out[group] = {"n": len(hits), "accuracy": sum(hits) / len(hits)}
    return out


def accuracy_by_relation(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, dict]:
    """Per gold relation: its scored queries, accuracy, and the relations its errors went to (share
    of its queries, most first). It names the relations a model cannot tell apart: in the demo,
    born in and died in a city, which only the head's own fact separates."""
    out = {}
    for relation in sorted(set(gold)):
        answers = [p for g, p in zip(gold, predicted) if g == relation]
        errors = Counter(p for p in answers if p != relation)
        out[relation] = {
            "n": len(answers),
            "accuracy": 1 - sum(errors.values()) / len(answers),
            "errors": {other: count / len(answers) for other, count in errors.most_common()},
        }
    return out


def trains_deterministically(model: torch.nn.Module) -> bool:
    """Whether training mode adds no randomness to ``model``'s forward: no dropout module with p > 0
    and no dropout rate in its config (attention dropout may be an argument, not a module).  An
    instance's encoding is then a function of the weights alone, so one forward per optimiser step
    serves every episode that uses it."""
    if any(isinstance(m, torch.nn.modules.dropout._DropoutNd) and m.p > 0 for m in model.modules()):
        return False
    config = getattr(model, "config", None)
    rates = [v for k, v in (vars(config) if config is not None else {}).items() if "dropout" in k]
    return not any(isinstance(v, int | float) and v > 0 for v in rates)


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch: dropout and initialisation then repeat exactly on CPU."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class AdamWNoBiasCorrection(torch.optim.Optimizer):
    """AdamW without Adam's bias correction: the old ``transformers.AdamW(correct_bias=False)`` that the
    paper's FewRel code trains with (BERT's original optimiser). Its first few hundred updates are then
    up to 6.5 times larger than torch's AdamW takes; the decay is decoupled and applied after the
    update, as there."""

    def __init__(
        self, params, lr: float, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-6, weight_decay: float = 0.0
    ):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay})

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self.state[param]
                if not state:
                    state["exp_avg"] = torch.zeros_like(param)
                    state["exp_avg_sq"] = torch.zeros_like(param)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.mul_(beta1).add_(param.grad, alpha=1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(param.grad, param.grad, value=1 - beta2)
                param.addcdiv_(exp_avg, exp_avg_sq.sqrt().add_(group["eps"]), value=-group["lr"])
                if group["weight_decay"]:
                    param.add_(param, alpha=-group["lr"] * group["weight_decay"])


def adamw_with_warmup(
    module: torch.nn.Module,
    settings: OptimizerSettings,
    total_steps: int,
    *,
    warmup_steps: int | None = None,
    bias_correction: bool = True,
) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.LambdaLR]:
    """AdamW with linear warm-up over ``settings.warmup`` of the steps (or ``warmup_steps`` steps, as
    the paper's FewRel code: 300), then linear decay (the paper's schedule); ``bias_correction``
    False is that code's optimiser (:class:`AdamWNoBiasCorrection`).

    Biases and LayerNorm weights get no weight decay, as in both code bases of the paper.
    """
    decay, no_decay = [], []
    for name, param in module.named_parameters():
        if param.requires_grad:
            (no_decay if name.endswith("bias") or "norm" in name.lower() else decay).append(param)
    groups = [{"params": decay, "weight_decay": settings.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    lr = settings.lr
    optimizer = torch.optim.AdamW(groups, lr=lr) if bias_correction else AdamWNoBiasCorrection(groups, lr=lr)
    warm = int(settings.warmup * total_steps) if warmup_steps is None else warmup_steps
    schedule = get_linear_schedule_with_warmup(optimizer, warm, max(1, total_steps))
    return optimizer, schedule


def take_step(
    module: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    schedule: torch.optim.lr_scheduler.LambdaLR,
    settings: OptimizerSettings,
) -> None:
    """One update of the gradients accumulated in ``module``: clipped at ``settings.max_grad_norm``
    (None: not clipped), stepped, scheduled, cleared; FewRel and Wiki80 step alike."""
    if settings.max_grad_norm is not None:
        torch.nn.utils.clip_grad_norm_(module.parameters(), settings.max_grad_norm)
    optimizer.step()
    schedule.step()
    optimizer.zero_grad()


def snapshot(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    """A copy of the weights on the host, to restore the best checkpoint after training (model selection)."""
    return {k: v.detach().to("cpu", copy=True) for k, v in module.state_dict().items()}


def holdout_relations(relations: Iterable[str], count: int) -> list[str]:
    """``count`` relations picked by a hash of their names: the same split on every run, seed and machine."""
    ranked = sorted(set(relations), key=lambda r: hashlib.blake2b(r.encode(), digest_size=8).hexdigest())
    return sorted(ranked[:count])


def default_holdout_size(n_relations: int, n_way: int) -> int:
    """A quarter of the training relations (FewRel's own 64 train / 16 val), at least ``n_way``."""
    return max(n_way, math.ceil(n_relations / 4))


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name one file (relative, absolute, through links): to refuse selecting on test data."""
    return Path(a).resolve() == Path(b).resolve()
