"""The demo masked LM: a byte-level BPE tokenizer and a small RoBERTa trained on the demo's pretraining text.

No model hub is reachable where the default workflow must run, so the workflow trains its own
model: a real RoBERTa checkpoint (same classes, same files), so that every later stage runs the
code paths that ``roberta-base`` would, and one that learns the facts of the demo world's frequent
entities, so that what the table adds about the rare ones can be measured
(``resources/demo/world.py``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import shutil
import sys
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from tokenizers import AddedToken, ByteLevelBPETokenizer
from transformers import (
    PreTrainedTokenizerBase,
    RobertaConfig,
    RobertaForMaskedLM,
    RobertaTokenizer,
    get_linear_schedule_with_warmup,
)

from pelt.encoding.models import attention_for_training, autocast_label, resolve_autocast
from pelt.logs import Progress

logger = logging.getLogger(__name__)

_LOSS_WINDOW = 100
"""Steps whose mean loss is logged and reported: one step's loss is too noisy to read."""

SPECIAL_TOKENS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]


def train_bpe_tokenizer(
    texts: Iterable[str],
    vocab_size: int,
    tokenizer_class: type[PreTrainedTokenizerBase] = RobertaTokenizer,
    **kwargs: object,
) -> PreTrainedTokenizerBase:
    """A RoBERTa-style (or BART-style, via ``tokenizer_class``) tokenizer trained on ``texts``.

    The mask token strips the space before it, as in ``roberta-base``: ``"in <mask>."`` must
    tokenize to the mask id and not to a separate space token, or cloze prompts break.
    """
    bpe = ByteLevelBPETokenizer()
    # Its progress bar redraws a line: in a log file that is a run of blank-looking lines.
    bpe.train_from_iterator(
        texts,
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=SPECIAL_TOKENS,
        show_progress=sys.stderr.isatty(),
    )
    merges = [tuple(m) for m in json.loads(bpe.to_str())["model"]["merges"]]
    return tokenizer_class(
        vocab=bpe.get_vocab(),
        merges=merges,
        mask_token=AddedToken("<mask>", lstrip=True, rstrip=False, special=True),
        **kwargs,
    )


def read_documents(path: str | os.PathLike[str]) -> list[str]:
    """The documents of a plain-text file, one per line (blank lines skipped, and counted)."""
    with open(path, encoding="utf-8") as fh:
        lines = [line.strip() for line in fh]
    texts = [line for line in lines if line]
    if len(texts) < len(lines):
        logger.warning("demo model: skipped %d blank lines of %s", len(lines) - len(texts), path)
    if not texts:
        raise ValueError(f"no document text in {path}")
    return texts


def _mask(
    ids: torch.Tensor, special: torch.Tensor, mask_id: int, vocab_size: int, rate: float, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's masking: ``rate`` of the non-special tokens are chosen, 80 % become the mask token,
    10 % a random token, 10 % stay; returns the inputs and the chosen positions."""
    chosen = (torch.rand(ids.shape, generator=generator) < rate) & ~torch.isin(ids, special)
    draw = torch.rand(ids.shape, generator=generator)
    inputs = ids.clone()
    inputs[chosen & (draw < 0.8)] = mask_id
    swap = chosen & (draw >= 0.8) & (draw < 0.9)
    inputs[swap] = torch.randint(vocab_size, ids.shape, generator=generator)[swap]
    return inputs, chosen


def pack_blocks(blocks: list[list[int]], width: int, pad_id: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Several blocks per row of ``width`` tokens (first fit, longest first), each attending only to
    itself and numbered from the first position as if it were alone in its row.

    Returns input ids, position ids and a boolean attention mask of shape (rows, 1, width, width).
    The demo's documents average a third of the model's length, so a padded batch is mostly padding:
    packed, a step costs half as much and computes, per block, what the padded batch computed
    (``tests/unit/test_demo_model.py`` checks it). A padding position attends to itself only, so that no
    row of the mask is empty (that would make attention NaN); nothing reads its output.
    """
    rows: list[list[int]] = []
    filled: list[int] = []
    for index in sorted(range(len(blocks)), key=lambda i: -len(blocks[i])):
        size = len(blocks[index])
        if size > width:
            raise ValueError(f"a block of {size} tokens does not fit a row of {width}")
        row = next((r for r, used in enumerate(filled) if used + size <= width), len(rows))
        if row == len(rows):
            rows.append([])
            filled.append(0)
        rows[row].append(index)
        filled[row] += size
    # Filled in numpy: a torch call per block costs more than the step's packing itself.
    ids = np.full((len(rows), width), pad_id, dtype=np.int64)
    positions = np.full((len(rows), width), pad_id, dtype=np.int64)
    segment = np.full((len(rows), width), -1, dtype=np.int64)
    # RoBERTa numbers positions from pad_id + 1 (its create_position_ids_from_input_ids).
    numbers = np.arange(pad_id + 1, pad_id + 1 + width)
    for r, members in enumerate(rows):
        start = 0
        for k, index in enumerate(members):
            end = start + len(blocks[index])
            ids[r, start:end] = blocks[index]
            positions[r, start:end] = numbers[: end - start]
            segment[r, start:end] = k
            start = end
    attention = (segment[:, :, None] == segment[:, None, :]) & (segment[:, None, :] >= 0)
    attention |= np.eye(width, dtype=bool)
    return torch.from_numpy(ids), torch.from_numpy(positions), torch.from_numpy(attention[:, None])


@dataclass(frozen=True)
class DemoModelSettings:
    """The demo model's size and recipe: the config's ``demo_model`` less its documents, whose
    defaults are the schema's (tests/unit/test_demo_model.py keeps them in step)."""

    vocab_size: int = 5000
    hidden_size: int = 128
    num_layers: int = 2
    num_heads: int = 2
    max_seq_len: int = 64
    steps: int = 3000
    batch_size: int = 128
    learning_rate: float = 3e-3
    mask_rate: float = 0.3
    seed: int = 42
    precision: str = "auto"


SHIPPED_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "training.json")


def training_inputs(documents_path: str | os.PathLike[str], settings: DemoModelSettings) -> str:
    """A digest of what decides the demo model's weights: its documents and its settings."""
    digest = hashlib.blake2b(Path(documents_path).read_bytes(), digest_size=16)
    digest.update(json.dumps(asdict(settings), sort_keys=True).encode())
    return digest.hexdigest()


def demo_model(
    documents_path: str | os.PathLike[str],
    out_dir: str,
    settings: DemoModelSettings = DemoModelSettings(),
    shipped: str | os.PathLike[str] | None = None,
) -> dict[str, float | str]:
    """The demo model: the ``shipped`` one when it was trained on these documents with these
    settings (its ``training.json`` records the digest of both), else one trained here.

    Training takes 10 to 20 minutes on two cores without native bf16, most of ``make demo`` and of
    the test suite, and gives the same weights on every run (fixed steps, seeded batches), so the
    repository ships the model with what it was trained on. A changed world or setting (another
    seed, more steps) no longer matches and trains anew; nothing stale is taken.
    """
    inputs = training_inputs(documents_path, settings)
    if shipped is not None:
        summary = json.loads((Path(shipped) / "training.json").read_text())
        if summary.get("inputs") == inputs:
            Path(out_dir).mkdir(parents=True, exist_ok=True)
            for name in SHIPPED_FILES:
                shutil.copyfile(Path(shipped) / name, Path(out_dir) / name)
            logger.info("demo model: the shipped one (%s), trained on these documents and settings", shipped)
            return summary
        logger.info(
            "demo model: the shipped one (%s) was trained on other documents or settings (%s, these %s): training",
            shipped,
            summary.get("inputs"),
            inputs,
        )
    return train_demo_model(documents_path, out_dir, settings)


def train_demo_model(
    documents_path: str | os.PathLike[str],
    out_dir: str,
    settings: DemoModelSettings = DemoModelSettings(),
    device: str | torch.device = "cpu",
) -> dict[str, float | str]:
    """Train tokenizer and masked LM on the documents of ``documents_path`` (one per line); save both
    to ``out_dir`` with ``training.json`` (the summary returned).

    A fixed number of steps, not a time budget, so that every machine trains the same model; batches
    come from a seeded generator, so a rerun gives the same weights. The recipe is the one that makes
    a model this small learn the demo's facts (resources/demo/README.md): no dropout (it has
    to memorise, not generalise), a high learning rate, 30 % masking, and the LM head applied at
    the masked positions only (most of a step's cost otherwise). Batches are drawn at random: batches
    of similar-length documents ran twice as fast but learnt the facts markedly worse (similar
    lengths meant similar kinds of document in a batch); a random batch is packed instead
    (``pack_blocks``), which is as fast and computes what the padded batch did. Documents longer than
    ``settings.max_seq_len`` tokens are cut into blocks; the model has exactly that many positions.

    ``settings.precision`` (:func:`pelt.encoding.models.resolve_autocast`): ``auto`` trains under bf16 autocast where
    the CPU computes bf16 natively (AVX-512 BF16, AMX), about 1.4x faster than fp32 with attention
    kept in fp32 (:func:`pelt.encoding.models.attention_for_training`), and in fp32 elsewhere. The two learn
    the demo's facts alike but give different weights; ``training.json`` records which one ran.

    ``device``: the workflow trains on the CPU, so that every machine trains the same model (a GPU's
    kernels give other weights). One GPU trains many seeds and sizes side by side (sixteen models of
    3,000 steps in three minutes on an H200), which is what makes them affordable to compare
    (``benchmarks/demo_model_trend.py``); it is not in ``settings`` because it is not the recipe.
    """
    start = time.perf_counter()
    torch.manual_seed(settings.seed)
    texts = read_documents(documents_path)
    max_seq_len = settings.max_seq_len
    tokenizer = train_bpe_tokenizer(texts, settings.vocab_size, model_max_length=max_seq_len)
    blocks = tokenizer(texts, truncation=True, max_length=max_seq_len, return_overflowing_tokens=True)["input_ids"]
    model = RobertaForMaskedLM(_roberta_config(tokenizer, settings)).to(device)
    autocast = resolve_autocast(settings.precision, model.device)
    attention_for_training(model, autocast)
    logger.info(
        "demo model: %d documents, %d blocks, vocabulary %d; %d steps of %d, %s on %s",
        len(texts),
        len(blocks),
        len(tokenizer),
        settings.steps,
        settings.batch_size,
        autocast_label(autocast),
        model.device,
    )
    losses = _train(model, tokenizer, blocks, settings, autocast)
    model.eval()
    out = Path(out_dir)
    # Stored in half precision, half the bytes (the shipped copy is a tracked file): every job loads
    # it in the precision it computes in (pelt.encoding.models.load_masked_lm), so the rounded weights are the
    # model, whether shipped or trained here.
    model.to(torch.float16).save_pretrained(out)
    tokenizer.save_pretrained(out)
    tail = losses[-_LOSS_WINDOW:]
    summary = {
        "steps": settings.steps,
        "batch_size": settings.batch_size,
        "documents": len(texts),
        "blocks": len(blocks),
        "vocab_size": len(tokenizer),
        "initial_loss": losses[0],
        "final_loss": sum(tail) / len(tail),
        "uniform_loss": math.log(len(tokenizer)),
        "precision": autocast_label(autocast),
        "attention": model.config._attn_implementation,
        "device": str(model.device),
        "seconds": time.perf_counter() - start,
        "inputs": training_inputs(documents_path, settings),
    }
    (out / "training.json").write_text(json.dumps(summary, indent=1) + "\n")
    logger.info("demo model saved to %s: %s", out, summary)
    return summary


def _roberta_config(tokenizer: PreTrainedTokenizerBase, settings: DemoModelSettings) -> RobertaConfig:
    """A RoBERTa without dropout (it has to memorise), positions for exactly ``max_seq_len`` tokens."""
    return RobertaConfig(
        vocab_size=len(tokenizer),
        hidden_size=settings.hidden_size,
        num_hidden_layers=settings.num_layers,
        num_attention_heads=settings.num_heads,
        intermediate_size=4 * settings.hidden_size,
        max_position_embeddings=settings.max_seq_len + tokenizer.pad_token_id + 1,
        type_vocab_size=1,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=True,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )


def _train(
    model: RobertaForMaskedLM,
    tokenizer: PreTrainedTokenizerBase,
    blocks: list[list[int]],
    settings: DemoModelSettings,
    autocast: bool,
) -> list[float]:
    """The training steps on random packed batches (seeded: a rerun gives the same weights); the losses."""
    model.train()
    special = torch.tensor(tokenizer.all_special_ids)
    # One fused kernel per step instead of a dozen per parameter: 6 % of the step on two cores.
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate, weight_decay=0.01, fused=True)
    schedule = get_linear_schedule_with_warmup(optimizer, max(1, settings.steps // 10), settings.steps)
    generator = torch.Generator().manual_seed(settings.seed)
    losses: list[float] = []
    order: list[int] = []
    batch_size = settings.batch_size

    def recent_loss() -> str:
        recent = losses[-_LOSS_WINDOW:]
        return f"MLM loss {sum(recent) / len(recent):.3f} (mean of the last {len(recent)} steps)" if recent else ""

    bar = Progress("demo model training", settings.steps, "steps", detail=recent_loss)
    for _ in range(settings.steps):
        if len(order) < batch_size:
            order += torch.randperm(len(blocks), generator=generator).tolist()
        picked, order = order[:batch_size], order[batch_size:]
        ids, positions, attention = pack_blocks(
            [blocks[i] for i in picked], settings.max_seq_len, tokenizer.pad_token_id
        )
        inputs, chosen = _mask(ids, special, tokenizer.mask_token_id, len(tokenizer), settings.mask_rate, generator)
        # Drawn on the CPU from the seeded generator whatever the device, so the batches are the same.
        ids, positions, attention, inputs, chosen = (
            t.to(model.device, non_blocking=True) for t in (ids, positions, attention, inputs, chosen)
        )
        with torch.autocast(model.device.type, dtype=torch.bfloat16, enabled=autocast):
            hidden = model.roberta(input_ids=inputs, position_ids=positions, attention_mask=attention).last_hidden_state
            logits = model.lm_head(hidden[chosen])
        loss = torch.nn.functional.cross_entropy(logits.float(), ids[chosen])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        losses.append(loss.item())
        bar.update()
    bar.close()
    return losses
