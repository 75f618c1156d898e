"""The token arrays of ``ChunkTokenizer`` (pelt.linking.chunks), each distinct chunk tokenized once
and most without spaCy, are those of spaCy's ``Doc`` of each line: on the real pages of every
language split at spaces, and on random lines of the characters, special cases (with spaces too),
URLs, emoji and whitespace that its rules touch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokenizer import Tokenizer

from pelt.corpus.wikipedia.site import SiteInfo
from pelt.corpus.wikipedia.wikitext import wikitext_to_plain
from pelt.linking.chunks import ARRAY_ATTRS, ChunkTokenizer
from pelt.linking.sentences import new_pipeline, nlp, paragraphs

# spaCy languages split at spaces: the default rules (English, Hebrew, Urdu), Arabic's and
# Persian's suffixes and special cases with spaces, French's token_match, German's ordinals.
LANGUAGES = ["en", "de", "fr", "ar", "he", "fa", "ur"]


def spacys(tokenizer: Tokenizer, text: str) -> tuple[np.ndarray, list[int]]:
    """spaCy's arrays of each line's ``Doc`` (its own ``__call__``), one after another, and their sizes."""
    arrays = [Tokenizer.__call__(tokenizer, text[start:end]).to_array(ARRAY_ATTRS) for start, end in paragraphs(text)]
    joined = np.concatenate(arrays) if arrays else np.zeros((0, len(ARRAY_ATTRS)), dtype=np.uint64)
    return joined, [len(array) for array in arrays]


def assert_spacys(tokenizer: ChunkTokenizer, text: str) -> None:
    array, sizes = tokenizer.token_arrays(text, paragraphs(text))
    expected, expected_sizes = spacys(tokenizer, text)
    assert sizes.tolist() == expected_sizes, text
    assert array.dtype == expected.dtype and np.array_equal(array, expected), text


def real_texts(shared_data: Path, wikipedia_sample_articles: list) -> dict[str, list[str]]:
    """The plain text of the real pages of each language, and of English: 40 articles of the dump
    sample and the pages of ``wikitext_pages``."""
    texts = {"en": [text for _, text, _ in wikipedia_sample_articles[:40]]}
    texts["en"] += [
        wikitext_to_plain(page.read_text())[0] for page in sorted((shared_data / "wikitext_pages").glob("*.wiki"))
    ]
    for language in LANGUAGES[1:]:
        site = SiteInfo.for_language(language)
        pages = sorted((shared_data / "wikitext_pages_i18n" / language).glob("*.wiki"))
        texts[language] = [wikitext_to_plain(page.read_text(), site)[0] for page in pages]
    return texts


def test_tokens_of_the_real_pages_are_spacys(shared_data: Path, wikipedia_sample_articles: list) -> None:
    """Every page of every language, tokenized after the pages before it (the chunks held reused):
    the arrays of spaCy's ``Doc`` of each line, most chunks split without spaCy."""
    for language, pages in real_texts(shared_data, wikipedia_sample_articles).items():
        tokenizer = new_pipeline(language).tokenizer
        assert isinstance(tokenizer, ChunkTokenizer), language
        for text in pages:
            assert_spacys(tokenizer, text)
        chunks = list(tokenizer.chunks)
        split = [chunk for chunk in chunks if tokenizer.split(chunk) not in (None, [chunk])]
        assert len(split) > len(chunks) / 10, language  # the affix loop without spaCy, on many


def test_the_affix_loop_without_spacy() -> None:
    """Prefixes and suffixes split off as spaCy's loop splits them; a chunk with an infix, a special
    case or a case its second pass matches is left to spaCy."""
    english = new_pipeline("en").tokenizer
    assert english.split("(Berlin),") == ["(", "Berlin", ")", ","]
    assert english.split('"1990s."') == ['"', "1990s", ".", '"']
    assert english.split("10km") == ["10", "km"] and english.split("Amsterdam") == ["Amsterdam"]
    assert english.split("al-Razi.") is None  # an infix: spaCy's
    assert english.split("(e.g.") is None and english.split("don't") is None  # special cases
    arabic = new_pipeline("ar").tokenizer
    assert arabic.split("برلين،") == ["برلين", "،"]


@pytest.mark.parametrize(
    ("language", "line"),
    [
        ("ar", "ولد في 500 ب. م في مصر"),  # a special case with a space: spaCy's second pass joins two chunks
        ("en", "New  York's\ttallest\u00a0tower "),  # whitespace other than one space between chunks
        ("en", "  leading spaces and a URL https://example.com/a_b?c=1, (e.g. 10km)."),
        ("fr", "L'Hôtel-Dieu d'aujourd'hui, 10e arrondissement."),
        ("de", "Am 10. Dezember 1870. Ludwig XIV. starb z. B. um 12 Uhr."),
        # Polish: ":-/~" alone is ":-/" and "~", its second pass joining ":" and "-/"; after ":')" that
        # pass matches ":')" and ":" first, and the line's tokens are ":" "-/" "~"
        ("pl", "a:') :-/~ b"),
    ],
)
def test_lines_spacy_tokenizes_as_they_are(language: str, line: str) -> None:
    tokenizer = new_pipeline(language).tokenizer
    assert_spacys(tokenizer, f"{line}\n\n{line} {line}\n")


def test_tokenizers_of_other_kinds_are_kept() -> None:
    """Chinese keeps its character tokenizer; a rule the analysis does not read leaves spaCy's
    tokenizer as it is."""
    assert not isinstance(nlp("zh").tokenizer, ChunkTokenizer)
    english = nlp("en").tokenizer
    custom = Tokenizer(english.vocab, rules=english.rules, prefix_search=lambda text: None)
    assert ChunkTokenizer.of(custom) is custom


def pieces(tokenizer: Tokenizer) -> list[str]:
    """What random lines are made of: letters of several scripts, digits, the characters the
    rules name, special cases (some with spaces), URLs, emoji and whitespace."""
    cases = sorted(tokenizer.rules)
    sources = [
        getattr(rule, "__wrapped__", rule).__self__.pattern
        for rule in (tokenizer.prefix_search, tokenizer.suffix_search, tokenizer.infix_finditer)
    ]
    named = sorted(set("".join(sources)) - set("\\[](){}?*+|^$"))
    return [
        *"aZéßשלוםبرلين0159",
        *"()[]{}.,;:!?\"'«»-–—/%$€£°#@&*+=<>~^_…·",
        "km",
        "'s",
        "n't",
        *named[:: max(1, len(named) // 60)],
        *cases[:: max(1, len(cases) // 40)],
        *[case for case in cases if " " in case.strip()],
        "https://example.com/a_b?c=1",
        "www.example.org",
        "👍🏽",
        "😀",
        " ",
        " ",
        " ",
        "  ",
        "\t",
        "\u00a0",
        "\u3000",
        "\n",
    ]


@pytest.mark.parametrize("language", [*LANGUAGES, "pl"])
def test_random_lines_are_spacys(language: str) -> None:
    tokenizer = new_pipeline(language).tokenizer
    choices = pieces(tokenizer)

    @settings(max_examples=120, derandomize=True, database=None, deadline=None)
    @given(st.lists(st.lists(st.sampled_from(choices), max_size=12), min_size=1, max_size=6))
    def check(texts: list[list[str]]) -> None:
        for parts in texts:  # one after another, the chunks of the first held for the next
            assert_spacys(tokenizer, "".join(parts))

    check()
