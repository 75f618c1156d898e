"""Tiny random RoBERTa / BERT / BART masked LMs for tests (no model hub is reachable here).

Each is a real checkpoint directory (``save_pretrained``: safetensors + fast tokenizer trained with
the ``tokenizers`` library on :data:`CORPUS`), so tests exercise the same ``from_pretrained`` path as
``roberta-base``.  Use the session fixture ``tiny_model_dirs`` (``{"roberta": Path, "bert": Path,
"bart": Path}``): import it into a test module, or list this module in ``pytest_plugins``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from tokenizers import BertWordPieceTokenizer
from transformers import (
    BartConfig,
    BartForConditionalGeneration,
    BartTokenizer,
    BertConfig,
    BertForMaskedLM,
    BertTokenizer,
    RobertaConfig,
    RobertaForMaskedLM,
)

from pelt.demo_model import train_bpe_tokenizer

FAMILIES = ("roberta", "bert", "bart")
HIDDEN = 32
MAX_POSITIONS = 64  # usable tokens per sequence for every family

CORPUS = [
    "Marie Curie was born in Warsaw and worked in Paris.",
    "Paris is the capital of France, a country in Europe.",
    "Albert Einstein was born in Ulm and worked in Bern and Berlin.",
    "The city of Warsaw lies on the Vistula river in Poland.",
    "Ada Lovelace wrote the first program for the Analytical Engine.",
    "Berlin is the capital of Germany (a country in Europe).",
    "The cat sat on the mat, and the dog sat on the log.",
    "Niels Bohr was born in Copenhagen, the capital of Denmark.",
] * 8


def _config_kwargs(tokenizer) -> dict[str, object]:
    return dict(
        vocab_size=len(tokenizer),
        pad_token_id=tokenizer.pad_token_id,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )


def _build_roberta(out: Path) -> None:
    tokenizer = train_bpe_tokenizer(CORPUS, 400)
    config = RobertaConfig(
        hidden_size=HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=MAX_POSITIONS + tokenizer.pad_token_id + 1,
        type_vocab_size=1,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        **_config_kwargs(tokenizer),
    )
    RobertaForMaskedLM(config).save_pretrained(out)
    tokenizer.save_pretrained(out)


def _build_bert(out: Path) -> None:
    wordpiece = BertWordPieceTokenizer(lowercase=True)
    wordpiece.train_from_iterator(CORPUS, vocab_size=300, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    tokenizer = BertTokenizer(vocab=wordpiece.get_vocab(), do_lower_case=True)
    config = BertConfig(
        hidden_size=HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=MAX_POSITIONS,
        **_config_kwargs(tokenizer),
    )
    BertForMaskedLM(config).save_pretrained(out)
    tokenizer.save_pretrained(out)


def _build_bart(out: Path) -> None:
    tokenizer = train_bpe_tokenizer(CORPUS, 400, tokenizer_class=BartTokenizer)
    config = BartConfig(
        vocab_size=len(tokenizer),
        d_model=HIDDEN,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=MAX_POSITIONS,
        dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.eos_token_id,
        forced_eos_token_id=tokenizer.eos_token_id,
    )
    BartForConditionalGeneration(config).save_pretrained(out)
    tokenizer.save_pretrained(out)


_BUILDERS = {"roberta": _build_roberta, "bert": _build_bert, "bart": _build_bart}


def build_tiny_masked_lm(family: str, out: Path, seed: int = 0) -> Path:
    """Save a tiny randomly initialised masked LM of ``family`` (seeded) with its tokenizer to ``out``."""
    torch.manual_seed(seed)
    _BUILDERS[family](out)
    return out


@pytest.fixture(scope="session")
def tiny_model_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One saved tiny model per family, built once per test session."""
    root = tmp_path_factory.mktemp("tiny_models")
    return {family: build_tiny_masked_lm(family, root / family) for family in FAMILIES}
