"""Sentence splitting: spaCy's sentencizer on token arrays; spans are trimmed, ordered, never cross a
paragraph, and survive long text."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import spacy
from spacy.language import Language

import pelt.linking.sentences
from pelt.corpus.s2orc import iter_s2orc_records, paper_text
from pelt.linking.sentences import (
    bounded_vocabulary,
    new_pipeline,
    nlp,
    paragraphs,
    sentence_spans,
    string_id,
    tokenize,
    trim_span,
)


def texts(text: str) -> list[str]:
    return [text[start:end] for start, end in sentence_spans(text, tokenize(text))]


def test_sentences_and_abbreviations():
    assert texts("Hello there.  Mr. Smith went to Washington. It was fun!") == [
        "Hello there.",
        "Mr. Smith went to Washington.",
        "It was fun!",
    ]


def test_paragraph_breaks_end_sentences_and_whitespace_is_trimmed():
    text = "  History \n\nThe town grew quickly  \n   It had no period at the end\n\t\nA last one. "
    assert texts(text) == ["History", "The town grew quickly", "It had no period at the end", "A last one."]
    assert paragraphs("a\n\n b \n") == [(0, 1), (3, 6)]


def test_spans_index_the_original_text():
    text = "Première phrase. Zweiter Satz — mit Umlauten äöü.\nΤρίτη πρόταση."
    spans = sentence_spans(text, tokenize(text))
    assert [text[s:e] for s, e in spans] == [
        "Première phrase.",
        "Zweiter Satz — mit Umlauten äöü.",
        "Τρίτη πρόταση.",
    ]
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:]))


def test_empty_and_blank_text():
    assert sentence_spans("", tokenize("")) == []
    assert sentence_spans(" \n\t\n ", tokenize(" \n\t\n ")) == []
    assert trim_span("  \n ", 0, 4) is None
    assert trim_span(" ab ", 0, 4) == (1, 3)


def test_paragraph_longer_than_spacys_default_limit():
    text = "Short words here. " * 60_000  # about 1.1 million characters on one line
    spans = sentence_spans(text, tokenize(text))
    assert len(text) > 1_000_000
    assert len(spans) == 60_000
    assert text[spans[-1][0] : spans[-1][1]] == "Short words here."


@cache
def sentencizer() -> Language:
    pipeline = spacy.blank("en")
    pipeline.add_pipe("sentencizer")
    return pipeline


def spacy_sentences(text: str) -> list[tuple[int, int]]:
    """The reference: spaCy's own sentencizer on each line, spans trimmed."""
    pipeline = sentencizer()
    spans = []
    for start, end in paragraphs(text):
        for sent in pipeline(text[start:end]).sents:
            span = trim_span(text, start + sent.start_char, start + sent.end_char)
            if span is not None:
                spans.append(span)
    return spans


def test_sentences_equal_spacys_sentencizer_on_the_real_samples(wikipedia_sample_articles, shared_data: Path):
    texts = [text for _, text, _ in wikipedia_sample_articles]
    for path in sorted((shared_data / "s2orc_sample").rglob("*.json*")):
        texts += [paper_text(record)[1] for record, _, _ in iter_s2orc_records(str(path)) if record]
    texts += ['...Wait. !? (Yes.) "Quoted." Next\n  . leading dot\n\n)) x. y', "a.\u2028b. c"]
    assert len(texts) > 500 and sum(map(len, texts)) > 3_000_000
    for text in texts:
        assert sentence_spans(text, tokenize(text)) == spacy_sentences(text)


def test_tokens_are_spacys_tokens_with_their_string_ids():
    text = "The root of U.S. law\n\n  isn't New  York's."
    tokens = tokenize(text)
    tokenizer = spacy.blank("en").tokenizer  # a stock pipeline: pelt's computes only the attributes it reads
    reference = [token for start, end in paragraphs(text) for token in tokenizer(text[start:end])]
    assert [text[s:e] for s, e in zip(tokens.start, tokens.end)] == [token.text for token in reference]
    assert tokens.orth.tolist() == [string_id(token.text) for token in reference]
    assert tokens.lower.tolist() == [string_id(token.text.lower()) for token in reference]
    assert string_id("root") == reference[1].orth < 1000  # spaCy's own symbols have small ids, not hashes
    assert tokens.is_space.tolist() == [token.is_space for token in reference]
    assert tokens.is_punct.tolist() == [token.is_punct for token in reference]
    assert tokens.is_punct.any() and not tokens.is_punct.all()
    assert [text[s:e] for s, e in zip(tokens.start[tokens.paragraph_start], tokens.end[tokens.paragraph_start])] == [
        "The",
        "  ",
    ]


def test_vocabulary_stays_within_its_cap(monkeypatch):
    """Batches of tokens never seen before: the vocabulary never holds more than the cap and one
    batch, and the token ids taken before a new pipeline are still the strings' ids after it."""
    cap = len(new_pipeline().vocab.strings) + 1000  # a new pipeline: none of the chunks of the tests before
    monkeypatch.setattr(pelt.linking.sentences, "VOCABULARY_CAP", cap)
    first = tokenize("zq first words")
    sizes = []
    for batch in range(8):
        words = [f"zq{batch}x{i}w" for i in range(300)]
        with bounded_vocabulary():
            tokens = tokenize(" ".join(words))
        assert tokens.orth.tolist() == [string_id(word) for word in words]
        pipeline = nlp()  # its words' tokens kept as chunks (pelt.linking.chunks), not in the vocabulary
        sizes.append(len(pipeline.vocab.strings) + len(pipeline.tokenizer.chunks))
    assert max(sizes) <= cap + 300, sizes
    assert sizes[-1] < sizes[3]  # a new pipeline, its vocabulary smaller
    assert first.orth.tolist() == [string_id(word) for word in ("zq", "first", "words")]


def test_a_tokenizer_keeping_its_own_rows_stays_within_the_cap(monkeypatch):
    """Chinese tokens' attributes are kept by the tokenizer, not by spaCy's vocabulary
    (``LexemeTable``): they count against the cap too, and after a new pipeline the ids are the
    same."""
    new_pipeline("zh")
    cap = len(nlp("zh").vocab.strings) + 1000
    monkeypatch.setattr(pelt.linking.sentences, "VOCABULARY_CAP", cap)
    held = []
    for batch in range(8):
        text = "".join(chr(0x4E00 + batch * 300 + i) for i in range(300))
        with bounded_vocabulary():
            tokens = tokenize(text, "zh")
        assert tokens.orth.tolist() == [string_id(char) for char in text]
        pipeline = nlp("zh")
        held.append(len(pipeline.vocab.strings) + len(pipeline.tokenizer.lexemes))
    assert max(held) <= cap + 300, held
    assert held[4] < held[3]  # a new pipeline, its tokenizer's rows dropped with it


def test_the_attribute_getters_in_c_give_spacys_values():
    """The pipelines' ``LOWER``, ``IS_SPACE`` and ``IS_PUNCT`` getters are built-ins in place of
    spaCy's Python functions: the same value on every character and on strings of several, the
    empty one included; a language that keeps spaCy's getters gets them."""
    import random
    import sys

    from spacy.attrs import IS_PUNCT, IS_SPACE, LOWER
    from spacy.lang import lex_attrs

    getters = nlp("he").vocab.lex_attr_getters
    spacys = {LOWER: lex_attrs.lower, IS_SPACE: lex_attrs.is_space, IS_PUNCT: lex_attrs.is_punct}
    assert all(getters[attr] is not spacys[attr] for attr in spacys)
    chars = [chr(code) for code in range(sys.maxunicode + 1)]
    rng = random.Random(3)
    pieces = ["", "a", "!", "?!", "«»", "-", "'s", " ", "\u3000", "\t\n", "İ", "ß", "Σ", "。", "（", "𝐀", "\U000e0001"]
    strings = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 4))) for _ in range(2000)]
    for attr, spacy_getter in spacys.items():
        for string in [*chars, *strings]:
            assert getters[attr](string) == spacy_getter(string), (attr, string)
