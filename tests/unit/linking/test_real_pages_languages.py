"""Sentences, anchors and names on the real Chinese, Japanese, Arabic, Hebrew, Persian and Urdu pages
(``../shared/data/wikitext_pages_i18n``), with each language's tokenizer (issue 54 item 2), and the
refusal of a language whose tokenizer's package is missing.

Chinese and Japanese sentences end at 。！？ (with the closing punctuation after it) or at a line's
end; Chinese names are found wherever their characters stand, Japanese ones where MeCab's
words begin and end; every anchor placed in a sentence has its exact offsets there."""

from __future__ import annotations

import bisect
import importlib.util
import re
import unicodedata
from dataclasses import asdict
from pathlib import Path

import pytest
from spacy.pipeline import Sentencizer

from pelt.corpus.wikipedia.site import SiteInfo
from pelt.corpus.wikipedia.wikitext import Link, wikitext_to_plain
from pelt.linking.languages import TOKENIZER_PACKAGES, blank_pipeline, missing_packages
from pelt.linking.names import candidate_names, name_filter, name_key
from pelt.linking.segmentation import segment_document
from pelt.linking.sentences import Tokens, sentence_spans, tokenize

LANGUAGES = ["zh", "ja", "ar", "he", "fa", "ur"]
ENDERS = "。！？"
# Anchors the sentence splitter cuts, on these pages: a "." or "。" inside a name ends a sentence.
# Where spaCy's sentencizer may end a sentence (Chinese texts write "．" too: 《禮記．大學》 is cut).
FINAL = set(Sentencizer.default_punct_chars)
CUT_ANCHORS = {
    "zh": ["Peter J. Denning"],
    "ja": [
        "バック・イン・ザ・U.S. -ライブ2002",
        "野ブタ。をプロデュース",
        "発表!全るーみっくアニメ大投票 高橋留美子だっちゃ",
    ],
}


def read(shared_data: Path, language: str) -> list[tuple[str, list[Link]]]:
    """Text and anchors of each page of the language, as the corpus job makes them."""
    site = SiteInfo.for_language(language)
    found = sorted((shared_data / "wikitext_pages_i18n" / language).glob("*.wiki"))
    assert found, f"no {language} pages in {shared_data / 'wikitext_pages_i18n'}"
    return [wikitext_to_plain(page.read_text(), site) for page in found]


def closing(text: str) -> bool:
    """Only punctuation and spaces: what may follow a sentence's final character in it."""
    return all(char.isspace() or unicodedata.category(char).startswith("P") for char in text)


@pytest.mark.parametrize("language", ["zh", "ja"])
def test_sentences_end_at_the_sentence_final_characters(shared_data: Path, language: str) -> None:
    """Each sentence ends after 。！？ (or another of spaCy's sentence-final characters) and the
    closing punctuation after it, or at its line's end; none goes on past 。！？, none is cut in a
    decimal number (``6.02``), and none ends with the opening bracket or quote of the next (``。「``)."""
    sentences = 0
    for text, _ in read(shared_data, language):
        spans = sentence_spans(text, tokenize(text, language), language)
        for (start, end), (after, _) in zip(spans, [*spans[1:], (len(text), len(text))]):
            sentence = text[start:end]
            for i, char in enumerate(sentence):
                assert char not in ENDERS or closing(sentence[i + 1 :]), f"goes on after its end: {sentence!r}"
            assert unicodedata.category(sentence[-1]) not in ("Ps", "Pi"), f"ends with an opening: {sentence!r}"
            line_end = not text[end:].split("\n", 1)[0].strip()
            assert line_end or set(sentence) & FINAL, f"cut without an end: {sentence!r}"
            decimal = re.search(r"[0-9]\.$", sentence) and text[after : after + 1].isdigit()
            assert line_end or not decimal, f"cut in a number: {sentence!r}"
            sentences += 1
    assert sentences > 1000


def occurrences(text: str, name: str, blocked: list[tuple[int, int]]) -> set[tuple[int, int]]:
    """Every place ``name`` stands in the text, overlapping ones too, but where it touches an anchor."""
    found, at = set(), text.find(name)
    while at >= 0:
        if not any(at < end and start < at + len(name) for start, end in blocked):
            found.add((at, at + len(name)))
        at = text.find(name, at + 1)
    return found


def token_aligned(spans: set[tuple[int, int]], key: str, text: str, tokens: Tokens) -> set[tuple[int, int]]:
    """The spans whose first and last characters are a token's, with the name's tokens between."""
    words = ~tokens.is_space
    starts, ends = tokens.start[words].tolist(), tokens.end[words].tolist()
    aligned = set()
    for start, end in spans:
        first, last = bisect.bisect_left(starts, start), bisect.bisect_left(ends, end)
        if first < len(starts) and starts[first] == start and last < len(ends) and ends[last] == end:
            if " ".join(text[starts[i] : ends[i]] for i in range(first, last + 1)) == key:
                aligned.add((start, end))
    return aligned


@pytest.mark.parametrize("language", LANGUAGES)
def test_names_are_found_where_the_tokens_allow_and_anchors_are_exact(shared_data: Path, language: str) -> None:
    """The anchors' texts are the names: each place one stands in the text, outside the anchors and
    on token boundaries, is a candidate, and nothing else is; in Chinese that is everywhere its
    characters stand (written without spaces, every character a token). Every anchor is placed in
    its sentence with exact offsets, but the ones the splitter cuts (CUT_ANCHORS)."""
    cut = []
    for text, links in read(shared_data, language):
        tokens = tokenize(text, language)
        spans = sentence_spans(text, tokens, language)
        blocked = [(link.start, link.end) for link in links]
        names = {name_key(text[link.start : link.end], language): text[link.start : link.end] for link in links}
        found = {
            (spans[c["sent_idx"]][0] + c["start"], spans[c["sent_idx"]][0] + c["end"], c["name"])
            for c in candidate_names(text, tokens, spans, name_filter(sorted(names)), blocked)
            if c["name"] in names
        }
        sentence_starts = [start for start, _ in spans]
        expected = set()
        for key, name in names.items():
            places = occurrences(text, name, blocked)
            places = {(a, b) for a, b in places if spans[bisect.bisect_right(sentence_starts, a) - 1][1] >= b}
            aligned = token_aligned(places, key, text, tokens)
            if language == "zh" and all(unicodedata.name(char, "").startswith("CJK") for char in name):
                assert aligned == places, f"{name}: found only where {aligned}, it stands at {places}"
            expected |= {(start, end, key) for start, end in aligned}
        assert found == expected, f"{language}: {sorted(found ^ expected)[:5]}"
        document = {"doc_id": "d", "title": "t", "text": text, "links": [asdict(link) for link in links]}
        (row,) = segment_document(document, language=language)
        assert row["n_invalid"] == row["n_blank"] == 0 and len(row["anchors"]) == len(links)
        for anchor, link in zip(row["anchors"], links):
            if anchor["sent_idx"] is None:
                cut.append(anchor["text"])
            else:
                assert (
                    row["sentences"][anchor["sent_idx"]][anchor["start"] : anchor["end"]] == text[link.start : link.end]
                )
    assert sorted(cut) == sorted(CUT_ANCHORS.get(language, []))


def test_every_supported_language_has_its_tokenizer() -> None:
    """What `make install` brings is enough for every language of spaCy's but those whose package
    pelt does not pin: Japanese's MeCab and UniDic are pinned, Chinese needs none."""
    for language in ("en", "de", "fr", "zh", "ja", "ar", "he", "fa", "ur", "es", "ru", "simple", "zh-yue"):
        assert missing_packages(language) is None, language
    assert [token.text for token in blank_pipeline("ja")("東京都に住む。")] == ["東京", "都", "に", "住む", "。"]


@pytest.mark.parametrize("language", ["ja", "th", "ko", "vi"])
def test_a_language_whose_package_is_missing_is_refused_in_one_line(
    monkeypatch: pytest.MonkeyPatch, language: str
) -> None:
    find_spec = importlib.util.find_spec
    packages = dict(TOKENIZER_PACKAGES[language])
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in packages else find_spec(name, *a))
    message = missing_packages(language)
    assert message is not None and "\n" not in message
    assert f"language {language!r}" in message and all(pip in message for pip in packages.values())
    if language == "ja":
        assert "make install" in message and "pip install -c constraints.txt fugashi unidic-lite" in message
    with pytest.raises(ImportError) as refused:
        blank_pipeline(language)
    assert str(refused.value) == message
