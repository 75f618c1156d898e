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

from pelt.encoding.demo_model import train_bpe_tokenizer

FAMILIES = ("roberta", "bert", "bart")
MULTILINGUAL = {"xlm-roberta": "roberta", "multilingual-bert": "bert"}  # model -> the family it is
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


def _roberta_shaped(config_class, tokenizer):
    """RoBERTa's layout at test size: positions offset past the padding id, one token type."""
    return config_class(
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


def _build_roberta(out: Path) -> None:
    tokenizer = train_bpe_tokenizer(CORPUS, 400)
    RobertaForMaskedLM(_roberta_shaped(RobertaConfig, tokenizer)).save_pretrained(out)
    tokenizer.save_pretrained(out)


def _save_bert(tokenizer, out: Path) -> None:
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


def _build_bert(out: Path) -> None:
    wordpiece = BertWordPieceTokenizer(lowercase=True)
    wordpiece.train_from_iterator(CORPUS, vocab_size=300, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    tokenizer = BertTokenizer(vocab=wordpiece.get_vocab(), do_lower_case=True)
    _save_bert(tokenizer, out)


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


# Multilingual relatives of the families, for tests/unit/test_multilingual.py: the real tokenizer
# types of XLM-R (SentencePiece unigram, "▁" word starts) and multilingual BERT (cased WordPiece,
# accents kept, CJK characters split one by one), trained on text in six languages and scripts.
MULTILINGUAL_CORPUS = [
    "Marie Curie wurde 1867 in Warschau geboren und starb 1934 in Passy.",
    "Die Straße führt über die Brücke nach Zürich, am 10. Dezember 1815 eröffnet.",
    "Marie Curie est née à Varsovie ; l'Académie des sciences l'a élue en 1911.",
    "マリ・キュリーはワルシャワで生まれ、パリで研究した。",
    "東京は日本の首都であり、大阪は第二の都市である。",
    "ولدت ماري كوري في وارسو وعملت في باريس.",
    "居里夫人出生于华沙，后来在巴黎工作。",
    "Marie Curie was born in Warsaw and worked in Paris.",
] * 8


def _build_xlm_roberta(out: Path) -> None:
    from tokenizers import SentencePieceUnigramTokenizer
    from tokenizers.processors import TemplateProcessing
    from transformers import XLMRobertaConfig, XLMRobertaForMaskedLM, XLMRobertaTokenizerFast

    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    unigram = SentencePieceUnigramTokenizer()
    unigram.train_from_iterator(MULTILINGUAL_CORPUS, vocab_size=400, special_tokens=specials, unk_token="<unk>")
    backend = unigram._tokenizer
    bos, eos = backend.token_to_id("<s>"), backend.token_to_id("</s>")
    backend.post_processor = TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", bos), ("</s>", eos)]
    )
    tokenizer = XLMRobertaTokenizerFast(
        tokenizer_object=backend,
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
    )
    XLMRobertaForMaskedLM(_roberta_shaped(XLMRobertaConfig, tokenizer)).save_pretrained(out)
    tokenizer.save_pretrained(out)


def _build_multilingual_bert(out: Path) -> None:
    wordpiece = BertWordPieceTokenizer(lowercase=False, strip_accents=False, handle_chinese_chars=True)
    wordpiece.train_from_iterator(
        MULTILINGUAL_CORPUS, vocab_size=500, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    )
    tokenizer = BertTokenizer(
        vocab=wordpiece.get_vocab(), do_lower_case=False, strip_accents=False, tokenize_chinese_chars=True
    )
    _save_bert(tokenizer, out)


_BUILDERS = {
    "roberta": _build_roberta,
    "bert": _build_bert,
    "bart": _build_bart,
    "xlm-roberta": _build_xlm_roberta,
    "multilingual-bert": _build_multilingual_bert,
}


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


@pytest.fixture(scope="session")
def multilingual_model_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A tiny XLM-R and multilingual BERT (:data:`MULTILINGUAL`), built once per session."""
    root = tmp_path_factory.mktemp("multilingual_models")
    return {name: build_tiny_masked_lm(name, root / name) for name in MULTILINGUAL}


def check_mention_spans_from_the_ends(tokenizer, sentences: list[str]) -> int:
    """Pool preparation's two-end lookup of a mention's tokens against reading every offset, on
    every character span of ``sentences``; returns how many spans were compared."""
    from pelt.encoding.host import _encode_batch, encoding_mention_span, mention_token_span

    checked = 0
    for sentence, encoded in zip(sentences, _encode_batch(tokenizer.backend_tokenizer, sentences)):
        special = encoded.special_tokens_mask
        for start in range(len(sentence)):
            for end in range(start + 1, len(sentence) + 1):
                expected = mention_token_span(encoded.offsets, special, start, end)
                assert encoding_mention_span(encoded, special, start, end) == expected, sentence[start:end]
                checked += 1
    return checked
