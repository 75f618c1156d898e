"""Plugging entity vectors into a masked LM's input: a mention of e becomes ``mention ( E(e) )``.

After the mention's last token come the model's own tokens for " (" and " )" with one slot between
them whose input embedding is E(e) = L * sum / ||sum|| instead of a word embedding; position
embeddings and layer norm apply as usual, and no parameter is added.  The same function with
``tables=None`` is the baseline: plain tokenization, so with- and without-table runs share code.

A mention whose entity no table holds is, by ``missing`` (see :data:`MISSING`): left as plain text
(``plain``, ours: the prompt is then the baseline's), or given the brackets around the mask token
(``mask``, as the authors' FewRel loader), or the same with the mask slot hidden from attention
(``hidden``, as the authors' LAMA connector).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pelt.encoding.models import max_input_length, mention_token_span, tokenize_with_offsets
from pelt.table import EntityTable

logger = logging.getLogger(__name__)

Mention = tuple[int, int, str]
Hit = tuple[str | None, str]  # (domain or None for a single table, entity id inside that table)
# What a mention of an entity without a vector becomes (module docstring).
MISSING = ("plain", "mask", "hidden")


@dataclass
class InjectedBatch:
    """Model inputs with entity slots; right-padded, on the model's device.

    ``input_ids`` holds ``tokenizer.unk_token_id`` at entity slots (their real input is in
    ``inputs_embeds``), so token-id based lookups such as ``input_ids == mask_token_id`` still work.
    """

    input_ids: torch.Tensor  # [B, T] long
    inputs_embeds: torch.Tensor  # [B, T, H]
    attention_mask: torch.Tensor  # [B, T] long
    entity_positions: list[list[int]]  # slot positions per text
    n_injected: int  # slots filled
    n_missing: int  # mentions whose entity no table holds (treated as ``missing`` says)


class _Resolver:
    """Finds the table holding an entity id and the id inside it.

    With several tables (a Mapping domain -> table), ``"domain:entity"`` names the domain when the
    part before the first colon is one of the keys; any other id (Wikipedia titles contain colons)
    is looked up in each table in the Mapping's order and the first holding it wins.
    """

    def __init__(self, tables: EntityTable | Mapping[str, EntityTable], model: PreTrainedModel):
        self.tables: dict[str | None, EntityTable] = {None: tables} if isinstance(tables, EntityTable) else dict(tables)
        for table in self.tables.values():
            table.check_model(model)

    def find(self, entity_id: str) -> Hit | None:
        domain, sep, rest = entity_id.partition(":")
        if sep and domain in self.tables:
            return (domain, rest) if rest in self.tables[domain] else None
        for name, table in self.tables.items():
            if entity_id in table:
                return name, entity_id
        return None

    def vectors(self, found: list[Hit], norm: float | None) -> np.ndarray:
        """E for each (domain, id), one lookup per table; each table's own L unless ``norm`` is given."""
        hidden = next(iter(self.tables.values())).hidden_size
        out = np.zeros((len(found), hidden), np.float32)
        for name, table in self.tables.items():
            picked = [k for k, (d, _) in enumerate(found) if d == name]
            if picked:
                out[picked] = table.lookup([found[k][1] for k in picked], norm=norm)
        return out


@dataclass(frozen=True, eq=False)
class Prepared:
    """One text as :func:`inject` batches it: its token ids with the slots inserted and cut to the
    length, and each slot's vector. A fine-tuning run encodes the same texts hundreds of times;
    preparing each once (:func:`prepare`) and batching the prepared ones (:func:`assemble`) spares
    the tokenizer and the table lookups every step, with the very same inputs."""

    ids: tuple[int, ...]
    slots: tuple[int, ...]  # positions of the slots with a vector
    vectors: np.ndarray | None  # [len(slots), H] float32; None without slots
    masked: tuple[int, ...]  # positions of the slots of entities without a vector (``missing``)
    n_missing: int  # mentions whose entity no table holds


def inject(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    texts: list[str],
    mentions: list[list[Mention]],
    tables: EntityTable | Mapping[str, EntityTable] | None,
    *,
    norm: float | None = None,
    max_length: int | None = None,
    missing: str = "plain",
) -> InjectedBatch:
    """Tokenize ``texts`` and insert ``( E )`` after each mention ``(start, end, entity_id)`` found in ``tables``.

    Texts may contain the tokenizer's mask token string, which becomes the mask id.  A mention whose
    entity no table holds becomes what ``missing`` says (module docstring) and is counted in
    ``n_missing``; a span that is empty, out of range or covers no token is a ValueError.  Sequences
    longer than ``max_length`` (default: the model's positions) lose body tokens from the end,
    keeping their closing special tokens; slots cut off are dropped (logged).  Embeddings are built
    with the model's own input embedding, so gradients reach it when fine-tuning; table vectors are
    constants (the table is frozen).
    """
    prepared = prepare(model, tokenizer, texts, mentions, tables, norm=norm, max_length=max_length, missing=missing)
    return assemble(model, tokenizer, prepared, missing=missing)


def prepare(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    texts: list[str],
    mentions: list[list[Mention]],
    tables: EntityTable | Mapping[str, EntityTable] | None,
    *,
    norm: float | None = None,
    max_length: int | None = None,
    missing: str = "plain",
) -> list[Prepared]:
    """The first half of :func:`inject` (same arguments, same errors): each text tokenized, its slots
    inserted, cut to length, and its vectors looked up (one lookup per table for all the texts)."""
    if not texts or len(texts) != len(mentions):
        raise ValueError(f"inject: {len(texts)} texts but {len(mentions)} mention lists")
    if missing not in MISSING:
        raise ValueError(f"inject: missing must be one of {MISSING}, got {missing!r}")
    limit = max_length or max_input_length(model)
    resolver = None if tables is None else _Resolver(tables, model)
    encoded = tokenize_with_offsets(tokenizer, texts)
    open_ids = tokenizer(" (", add_special_tokens=False)["input_ids"]
    close_ids = tokenizer(" )", add_special_tokens=False)["input_ids"]
    slot_id = tokenizer.unk_token_id
    texts_slots: list[tuple[list[int], list[tuple[int, Hit | None]], int]] = []
    found: list[Hit] = []  # per vector slot kept, in (text, position) order
    n_truncated = n_cut = 0
    for b, text in enumerate(texts):
        ids = encoded["input_ids"][b]
        special = encoded["special_tokens_mask"][b]
        inserts: list[tuple[int, Hit | None]] = []
        n_missing = 0
        for start, end, entity_id in mentions[b]:
            if not 0 <= start < end <= len(text):
                raise ValueError(
                    f"text {b}: mention span [{start}, {end}) of {entity_id!r} is empty or outside the text"
                )
            span = mention_token_span(encoded["offset_mapping"][b], special, start, end)
            if span is None:
                raise ValueError(f"text {b}: mention {text[start:end]!r} of {entity_id!r} covers no token")
            if resolver is None:
                continue
            hit = resolver.find(entity_id)
            n_missing += hit is None
            if hit is not None or missing != "plain":
                inserts.append((span[1], hit))
        seq, slots, cut = _with_slots(ids, special, inserts, (open_ids, slot_id, close_ids), limit)
        if cut >= 0:
            n_truncated += 1
            n_cut += cut
        texts_slots.append((seq, slots, n_missing))
        found += [hit for _, hit in slots if hit is not None]
    if n_truncated:
        logger.warning("inject: %d texts cut to %d tokens, dropping %d entity slots", n_truncated, limit, n_cut)
    vectors = resolver.vectors(found, norm) if resolver is not None and found else None
    prepared, row = [], 0
    for seq, slots, n_missing in texts_slots:
        kept = tuple(pos for pos, hit in slots if hit is not None)
        own = None if not kept or vectors is None else vectors[row : row + len(kept)]
        row += len(kept)
        masked = tuple(pos for pos, hit in slots if hit is None)
        prepared.append(Prepared(tuple(seq), kept, own, masked, n_missing))
    return prepared


def assemble(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    prepared: Sequence[Prepared],
    *,
    missing: str = "plain",
) -> InjectedBatch:
    """The second half of :func:`inject`: prepared texts as one right-padded batch on the model's device."""
    positions = [list(p.slots) for p in prepared]
    parts = [p.vectors for p in prepared if p.vectors is not None]
    vectors = np.concatenate(parts) if parts else None
    n_missing = sum(p.n_missing for p in prepared)
    batch = _tensors(model, tokenizer, [list(p.ids) for p in prepared], positions, vectors, n_missing)
    if any(p.masked for p in prepared):
        rows = torch.tensor([b for b, p in enumerate(prepared) for _ in p.masked], device=batch.input_ids.device)
        cols = torch.tensor([pos for p in prepared for pos in p.masked], device=batch.input_ids.device)
        mask_embedding = model.get_input_embeddings()(torch.tensor(tokenizer.mask_token_id, device=rows.device))
        batch.inputs_embeds = batch.inputs_embeds.index_put((rows, cols), mask_embedding.expand(len(rows), -1))
        if missing == "hidden":
            batch.attention_mask = batch.attention_mask.index_put((rows, cols), torch.zeros_like(rows))
    return batch


def _with_slots(
    ids: list[int],
    special: list[int],
    inserts: list[tuple[int, Hit | None]],
    bracket: tuple[list[int], int, list[int]],
    limit: int,
) -> tuple[list[int], list[tuple[int, Hit | None]], int]:
    """``ids`` with ``open slot close`` after each insertion point, cut to ``limit`` tokens.

    Returns the sequence, the (position, hit) of each slot kept and the number of slots cut off
    (-1 when nothing was cut).  The cut keeps the closing special tokens.
    """
    open_ids, slot_id, close_ids = bracket
    seq: list[int] = []
    slots: list[tuple[int, Hit | None]] = []
    copied = 0
    for last, hit in sorted(inserts, key=lambda x: x[0]):
        seq += ids[copied : last + 1] + open_ids
        slots.append((len(seq), hit))
        seq += [slot_id] + close_ids
        copied = last + 1
    seq += ids[copied:]
    if len(seq) <= limit:
        return seq, slots, -1
    n_suffix = next(i for i, sp in enumerate(reversed(special)) if not sp)
    keep = limit - n_suffix
    kept = [s for s in slots if s[0] < keep]
    return seq[:keep] + seq[len(seq) - n_suffix :], kept, len(slots) - len(kept)


def _tensors(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    sequences: list[list[int]],
    positions: list[list[int]],
    vectors: np.ndarray | None,
    n_missing: int,
) -> InjectedBatch:
    embedding = model.get_input_embeddings()
    device = embedding.weight.device
    width = max(len(s) for s in sequences)
    pad = tokenizer.pad_token_id
    input_ids = torch.tensor([seq + [pad] * (width - len(seq)) for seq in sequences], device=device)
    attention_mask = torch.tensor([[1] * len(seq) + [0] * (width - len(seq)) for seq in sequences])
    inputs_embeds = embedding(input_ids)
    if vectors is not None:
        values = torch.from_numpy(vectors).to(device=device, dtype=inputs_embeds.dtype)
        rows = torch.tensor([b for b, ps in enumerate(positions) for _ in ps], device=device)
        cols = torch.tensor([p for ps in positions for p in ps], device=device)
        inputs_embeds = inputs_embeds.index_put((rows, cols), values)
    return InjectedBatch(
        input_ids=input_ids,
        inputs_embeds=inputs_embeds,
        attention_mask=attention_mask.to(device),
        entity_positions=positions,
        n_injected=sum(len(p) for p in positions),
        n_missing=n_missing,
    )
