"""Multilingual models through the existing families (issue 30 item 3): XLM-R is RoBERTa's family,
multilingual BERT BERT's, with their real tokenizer types (SentencePiece unigram; cased WordPiece
with CJK characters apart), on sentences in German, French, Japanese, Arabic and Chinese."""

from __future__ import annotations

import pytest
import torch
from tiny_models import MULTILINGUAL, MULTILINGUAL_CORPUS, check_mention_spans_from_the_ends

from pelt.encoding.encode import build_table
from pelt.encoding.models import default_norm, family, load_masked_lm

# entity, sentence, mention: one sentence each, so that a table row is one vector
ROWS = [
    ("Q37", MULTILINGUAL_CORPUS[0], "Marie Curie"),  # German
    ("Zürich", MULTILINGUAL_CORPUS[1], "Zürich"),  # an umlaut inside a word
    ("Varsovie", MULTILINGUAL_CORPUS[2], "Varsovie"),  # French, after "à"
    ("l'Académie", MULTILINGUAL_CORPUS[2], "Académie"),  # after an elided article
    ("ワルシャワ", MULTILINGUAL_CORPUS[3], "ワルシャワ"),  # Japanese: no spaces around the mention
    ("東京", MULTILINGUAL_CORPUS[4], "東京"),  # at the start, kanji
    ("وارسو", MULTILINGUAL_CORPUS[5], "وارسو"),  # Arabic, right to left
    ("华沙", MULTILINGUAL_CORPUS[6], "华沙"),  # Chinese
]


@pytest.mark.parametrize("name", MULTILINGUAL)
def test_a_multilingual_model_is_its_familys(name, multilingual_model_dirs):
    model, _ = load_masked_lm(str(multilingual_model_dirs[name]))
    assert family(model).name == MULTILINGUAL[name]
    assert default_norm(model) == {"roberta": 7.0, "bert": 10.0}[MULTILINGUAL[name]]


@pytest.mark.parametrize("name", MULTILINGUAL)
def test_a_multilingual_table_holds_the_vector_that_gives_the_masks_logits(name, multilingual_model_dirs):
    """The definition, on every language: the row is r, whose product with the output embeddings
    (plus the bias) is the model's own logits at the mask put over the mention's tokens."""
    model, tokenizer = load_masked_lm(str(multilingual_model_dirs[name]))
    spans = [(sentence.index(mention), sentence.index(mention) + len(mention)) for _, sentence, mention in ROWS]
    ids, sums, counts = build_table(model, tokenizer, [r[0] for r in ROWS], [r[1] for r in ROWS], spans)
    assert ids == [r[0] for r in ROWS] and counts.tolist() == [1] * len(ROWS)
    head = model.get_output_embeddings()
    for row, (_, sentence, _), (start, end) in zip(sums, ROWS, spans):
        encoded = tokenizer(sentence, return_offsets_mapping=True, return_special_tokens_mask=True)
        hit = [
            i
            for i, ((s, e), special) in enumerate(zip(encoded["offset_mapping"], encoded["special_tokens_mask"]))
            if not special and s < end and e > start
        ]
        masked = encoded["input_ids"][: hit[0]] + [tokenizer.mask_token_id] + encoded["input_ids"][hit[-1] + 1 :]
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([masked])).logits[0, hit[0]]
            torch.testing.assert_close(torch.from_numpy(row) @ head.weight.T + head.bias, logits, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", MULTILINGUAL)
def test_the_mention_span_from_the_ends_holds_in_every_script(name, multilingual_model_dirs):
    """Pool preparation's two-end lookup against every offset, on every character span of each
    language's sentence (unigram's bare "▁" tokens, WordPiece's CJK characters, right to left)."""
    _, tokenizer = load_masked_lm(str(multilingual_model_dirs[name]))
    assert check_mention_spans_from_the_ends(tokenizer, sorted(set(MULTILINGUAL_CORPUS))) > 2000
