"""The demo masked LM: a byte-level BPE tokenizer and a small RoBERTa trained briefly on the demo corpus.

No model hub is reachable where the default workflow must run, so the workflow trains its own tiny
model.  It is not meant to know much; it is meant to be a real RoBERTa checkpoint (same classes,
same files) so that every later stage runs the code paths that ``roberta-base`` would.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import pyarrow.dataset as ds
import torch
from tokenizers import AddedToken, ByteLevelBPETokenizer
from tqdm.auto import tqdm
from transformers import (
    DataCollatorForLanguageModeling,
    PreTrainedTokenizerBase,
    RobertaConfig,
    RobertaForMaskedLM,
    RobertaTokenizer,
    get_linear_schedule_with_warmup,
)

logger = logging.getLogger(__name__)

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
    bpe.train_from_iterator(texts, vocab_size=vocab_size, min_frequency=2, special_tokens=SPECIAL_TOKENS)
    merges = [tuple(m) for m in json.loads(bpe.to_str())["model"]["merges"]]
    return tokenizer_class(
        vocab=bpe.get_vocab(),
        merges=merges,
        mask_token=AddedToken("<mask>", lstrip=True, rstrip=False, special=True),
        **kwargs,
    )


def _read_texts(documents_path: str | Sequence[str]) -> list[str]:
    """The texts of a documents folder, or of the union of several (one per corpus file), in order."""
    paths = [documents_path] if isinstance(documents_path, str) else list(documents_path)
    table = ds.dataset([ds.dataset(path, format="parquet") for path in paths]).to_table(columns=["text"])
    texts = [t for t in table.column("text").to_pylist() if t]
    skipped = table.num_rows - len(texts)
    if skipped:
        logger.warning("demo model: skipped %d empty documents", skipped)
    if not texts:
        raise ValueError(f"no document text in {documents_path}")
    return texts


def train_demo_model(
    documents_path: str | Sequence[str],
    out_dir: str,
    *,
    vocab_size: int = 4000,
    hidden_size: int = 128,
    num_layers: int = 2,
    num_heads: int = 2,
    max_seq_len: int = 64,
    steps: int = 300,
    batch_size: int = 32,
    seed: int = 42,
) -> dict[str, float]:
    """Train tokenizer and masked LM on the ``text`` column of ``documents_path`` (a documents folder
    or a list of them); save both to ``out_dir``.

    Documents are cut into blocks of ``max_seq_len`` tokens (specials included) and batches drawn
    from a seeded generator, so a rerun gives the same weights.  The model has exactly
    ``max_seq_len`` usable positions: longer inputs are windowed by the encoder.
    """
    start = time.perf_counter()
    torch.manual_seed(seed)
    texts = _read_texts(documents_path)
    tokenizer = train_bpe_tokenizer(texts, vocab_size, model_max_length=max_seq_len)
    blocks = tokenizer(texts, truncation=True, max_length=max_seq_len, return_overflowing_tokens=True)["input_ids"]
    config = RobertaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        intermediate_size=4 * hidden_size,
        max_position_embeddings=max_seq_len + tokenizer.pad_token_id + 1,
        type_vocab_size=1,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=True,
    )
    model = RobertaForMaskedLM(config)
    model.train()
    collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    schedule = get_linear_schedule_with_warmup(optimizer, max(1, steps // 10), steps)
    generator = torch.Generator().manual_seed(seed)
    losses: list[float] = []
    order = torch.randperm(len(blocks), generator=generator).tolist()
    for step in tqdm(range(steps), desc="demo model", unit="step"):
        if len(order) < batch_size:
            order += torch.randperm(len(blocks), generator=generator).tolist()
        picked, order = order[:batch_size], order[batch_size:]
        batch = collator([{"input_ids": blocks[i]} for i in picked])
        loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        losses.append(loss.item())
        if step % 50 == 0 or step == steps - 1:
            logger.info("demo model step %d/%d: MLM loss %.3f", step + 1, steps, losses[-1])
    model.eval()
    out = Path(out_dir)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    tail = losses[-min(20, len(losses)) :]
    summary = {
        "steps": float(steps),
        "blocks": float(len(blocks)),
        "vocab_size": float(len(tokenizer)),
        "initial_loss": losses[0],
        "final_loss": sum(tail) / len(tail),
        "uniform_loss": math.log(len(tokenizer)),
        "seconds": time.perf_counter() - start,
    }
    logger.info("demo model saved to %s: %s", out, summary)
    return summary
