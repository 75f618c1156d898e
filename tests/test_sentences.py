"""Sentence splitting: spans are trimmed, ordered, never cross a paragraph, and survive long text."""

from __future__ import annotations

from pelt.sentences import paragraphs, split_sentences, trim_span


def texts(text: str) -> list[str]:
    return [text[start:end] for start, end in split_sentences(text)]


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
    spans = split_sentences(text)
    assert [text[s:e] for s, e in spans] == [
        "Première phrase.",
        "Zweiter Satz — mit Umlauten äöü.",
        "Τρίτη πρόταση.",
    ]
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:]))


def test_empty_and_blank_text():
    assert split_sentences("") == []
    assert split_sentences(" \n\t\n ") == []
    assert trim_span("  \n ", 0, 4) is None
    assert trim_span(" ab ", 0, 4) == (1, 3)


def test_paragraph_longer_than_spacys_default_limit():
    text = "Short words here. " * 60_000  # about 1.1 million characters on one line
    spans = split_sentences(text)
    assert len(text) > 1_000_000
    assert len(spans) == 60_000
    assert text[spans[-1][0] : spans[-1][1]] == "Short words here."
