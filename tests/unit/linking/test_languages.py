"""Sentences, tokens and names per language (docs/languages.md): German and French abbreviations and
ordinals do not end a sentence, Chinese (written without spaces) is split into sentences and
its unlinked mentions found, Arabic and Hebrew (right to left) mentions have exact offsets, and
each language has its own stop words; English is unchanged."""

from __future__ import annotations

import itertools
import logging
import unicodedata

import pytest
from spacy.lang.en.stop_words import STOP_WORDS
from spacy.tokens import Doc

from pelt.linking.candidates import stop_word_keys
from pelt.linking.heuristic import heuristic_links
from pelt.linking.languages import FALLBACK, spacy_language
from pelt.linking.names import candidate_names, name_filter, name_key
from pelt.linking.segmentation import segment_document
from pelt.linking.sentences import nlp, sentence_spans, tokenize


def sentences(text: str, language: str) -> list[str]:
    return [text[start:end] for start, end in sentence_spans(text, tokenize(text, language))]


def test_german_ordinals_and_abbreviations_do_not_end_a_sentence():
    text = (
        "Er wurde am 10. Dezember 1815 in London geboren. Das ist z. B. Nr. 5 im 19. Jahrhundert, "
        "als Ludwig XIV. regierte. Er starb 1870. Danach kam (am 3., 4. und 5. Mai) usw. nichts."
    )
    assert sentences(text, "de") == [
        "Er wurde am 10. Dezember 1815 in London geboren.",
        "Das ist z. B. Nr. 5 im 19. Jahrhundert, als Ludwig XIV. regierte.",
        "Er starb 1870.",  # a year ends the sentence: spaCy's German alone keeps "1870." one token
        "Danach kam (am 3., 4. und 5. Mai) usw. nichts.",
    ]
    # English rules cut the date: what the linking stage did on every corpus before.
    assert sentences("Er wurde am 10. Dezember 1815 geboren.", "en")[1] == "Dezember 1815 geboren."


def test_an_ordinal_is_kept_in_the_languages_where_spacy_splits_it():
    assert sentences("Hän syntyi 10. joulukuuta 1815 Lontoossa. Hän kuoli 1870. Loppu.", "fi") == [
        "Hän syntyi 10. joulukuuta 1815 Lontoossa.",
        "Hän kuoli 1870.",
        "Loppu.",
    ]


def test_french_abbreviations_and_ordinals_do_not_end_a_sentence():
    text = "M. Dupont est né le 1er janvier 1900. Il vécut au XIXe siècle, cf. p. 12. Mme Curie visita St. Louis. Fin."
    assert sentences(text, "fr") == [
        "M. Dupont est né le 1er janvier 1900.",
        "Il vécut au XIXe siècle, cf. p. 12.",
        "Mme Curie visita St. Louis.",
        "Fin.",
    ]


CHINESE = "北京是中国的首都。北京有很多人！上海也很大。"


def test_chinese_is_split_into_sentences_and_an_unlinked_mention_is_linked():
    """No spaces: spaCy's Chinese makes a token of each character (its ``char`` segmenter, no extra
    package), names are character sequences, and the heuristic links the second 北京 of the text
    through the first, an anchor."""
    assert sentences(CHINESE, "zh") == ["北京是中国的首都。", "北京有很多人！", "上海也很大。"]
    names = {name_key(alias, "zh"): alias for alias in ("北京", "上海", "中国")}
    assert set(names) == {"北 京", "上 海", "中 国"}
    document = {"doc_id": "d", "title": "首都", "text": CHINESE, "links": [{"start": 0, "end": 2, "target": "北京"}]}
    (row,) = segment_document(document, name_filter(sorted(names)), language="zh")
    # The filter's false positives are left out, as the exact join of the Spark path does.
    found = {(c["sent_idx"], row["sentences"][c["sent_idx"]][c["start"] : c["end"]]) for c in row["candidates"]}
    found = {(sent_idx, text) for sent_idx, text in found if name_key(text, "zh") in names}
    assert found == {(0, "中国"), (1, "北京"), (2, "上海")}  # the anchored 北京 is no candidate
    linked = heuristic_links({"北京", "首都"}, {"北 京": {"北京", "北京 (电影)"}}, {}, max_iterations=1)
    assert linked == {"北 京": ("北京", 1)}
    # With English rules a line of Chinese is one token: no name is ever found in it.
    (english,) = segment_document(document, name_filter(sorted(names)))
    assert english["sentences"] == [CHINESE] and english["candidates"] == []


def test_chinese_characters_are_spacys_tokens_in_linear_time():
    """pelt's character tokenizer makes spaCy's ``char`` segmenter's tokens and whitespace (spaCy's
    is quadratic in a line's length): on random lines of characters, spaces, other whitespace and
    Latin letters, and on a long line."""
    import random

    import spacy

    ours, spacys = nlp("zh").tokenizer, spacy.blank("zh").tokenizer
    assert type(ours).__name__ == "CharacterTokenizer"
    pieces = ["北", "京", "。", "a", "B", "1", " ", "  ", "\t", "\u00a0", "\u3000", "x y", "é", "(", "𠀀"]
    rng = random.Random(0)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 20))) for _ in range(500)]
    for text in [*texts, "".join(texts), " 北京 ", "  ", ""]:
        expected = [(t.text, t.idx, t.whitespace_) for t in spacys(text)]
        assert [(t.text, t.idx, t.whitespace_) for t in ours(text)] == expected, repr(text)


def test_chinese_token_arrays_are_the_docs():
    """``tokenize`` takes Chinese tokens as arrays without a ``Doc`` (``CharacterTokenizer.token_arrays``):
    the same values as ``Doc.to_array`` of the tokenizer's ``Doc`` per line, on random texts of
    characters, spaces, other whitespace, Latin letters and blank lines, a fresh tokenizer's
    lexemes included."""
    import random

    import numpy as np

    from pelt.linking.sentences import _ATTRS, paragraphs
    from pelt.linking.tokenizers import CharacterTokenizer

    tokenizer = CharacterTokenizer(nlp("zh").vocab)
    pieces = ["北", "京", "。", "，", "a", "B", "1", " ", "  ", "\t", "\u00a0", "\u3000", "x y", "é", "(", "𠀀"]
    pieces += ["\n", "\n\n"]
    rng = random.Random(1)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 40))) for _ in range(500)]
    for text in [*texts, "".join(texts), " 北京 ", "  ", "", "\n"]:
        lines = paragraphs(text)
        docs = [tokenizer(text[start:end]).to_array(_ATTRS) for start, end in lines]
        array, sizes = tokenizer.token_arrays(text, lines)
        assert sizes.tolist() == [len(doc) for doc in docs], repr(text)
        expected = np.concatenate(docs) if docs else np.zeros((0, len(_ATTRS)), dtype=np.uint64)
        assert array.dtype == expected.dtype and array.tolist() == expected.tolist(), repr(text)


def mecab_reference(line: str) -> tuple[list[str], list[str]]:
    """The tokens of a line and the whitespace after each, from MeCab's nodes one at a time (each
    node's ``white_space``: what MeCab skipped before it), by the rules of ``MecabTokenizer``: a
    space right after a word is its trailing space, any other skipped run (or text MeCab did not
    read) one token, and a word of two or more punctuation characters split where the character
    changes."""
    import fugashi
    import unidic_lite

    tagger = fugashi.GenericTagger(f"-d {unidic_lite.DICDIR} -r {unidic_lite.DICDIR}/mecabrc")
    words: list[str] = []
    spaces: list[str] = []

    def gap(text: str) -> None:
        if text and words and not spaces[-1] and text[0] == " ":
            spaces[-1], text = " ", text[1:]
        if text:
            words.append(text)
            spaces.append("")

    position = 0
    for node in tagger(line):
        gap(node.white_space)
        surface = node.surface
        if len(surface) > 1 and all(unicodedata.category(char).startswith("P") for char in surface):
            runs = ["".join(run) for _, run in itertools.groupby(surface)]
        else:
            runs = [surface]
        words += runs
        spaces += [""] * len(runs)
        position += len(node.white_space) + len(surface)
    gap(line[position:])
    return words, spaces


def test_japanese_tokens_are_mecabs_words_placed_in_the_text(shared_data):
    """``tokenize`` takes Japanese tokens as arrays from MeCab's words placed all at once
    (``MecabTokenizer.token_arrays``): the tokens of MeCab's nodes taken one at a time
    (:func:`mecab_reference`), and the arrays of a ``Doc`` of them, on the real Japanese pages and on
    random texts of words, spaces, ideographic spaces, tabs, NULs (MeCab stops reading there),
    runs of punctuation and blank lines; every character of a line is in a token; ``__call__`` gives the same tokens."""
    import random

    import numpy as np

    from pelt.corpus.wikipedia.site import SiteInfo
    from pelt.corpus.wikipedia.wikitext import wikitext_to_plain
    from pelt.linking.sentences import _ATTRS, new_pipeline, paragraphs

    tokenizer = new_pipeline("ja").tokenizer
    assert type(tokenizer).__name__ == "MecabTokenizer"
    pages = sorted((shared_data / "wikitext_pages_i18n" / "ja").glob("*.wiki"))
    real = [wikitext_to_plain(page.read_text(), SiteInfo.for_language("ja"))[0] for page in pages]
    pieces = ["東京", "タワー", "は", "。", "「", "」", " ", "  ", "\t", "\u3000", "a", "B", "1", "x y", "…", "ー"]
    pieces += ["\n", "\n\n", "Tokyo Tower", "2.5", "\x00", "\v", '"', "...", "?!", "--", "、"]
    rng = random.Random(2)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(400)]
    for text in [*real, *texts, " 東京 ", "  ", "", "\n", "x\x00y"]:
        lines = paragraphs(text)
        expected_words, expected_spaces, docs = [], [], []
        for start, end in lines:
            words, spaces = mecab_reference(text[start:end])
            assert "".join(w + s for w, s in zip(words, spaces)) == text[start:end]
            expected_words += words
            expected_spaces += spaces
            docs.append(Doc(tokenizer.vocab, words=words, spaces=[bool(s) for s in spaces]).to_array(_ATTRS))
        found = tokenizer.words(text, lines)
        assert found.words == expected_words, repr(text[:80])
        assert [" " if after else "" for after in found.trailing.tolist()] == expected_spaces, repr(text[:80])
        array, sizes = tokenizer.token_arrays(text, lines)
        assert sizes.tolist() == [len(doc) for doc in docs], repr(text[:80])
        expected = np.concatenate(docs) if docs else np.zeros((0, len(_ATTRS)), dtype=np.uint64)
        assert array.dtype == expected.dtype and array.tolist() == expected.tolist(), repr(text[:80])
    assert sum(map(len, real)) > 80_000
    assert [token.text for token in tokenizer("東京タワー 333 m")] == ["東京", "タワー", "333", "m"]
    assert [token.text for token in tokenizer('返す。"foo"')] == ["返す", "。", '"', "foo", '"']


def test_mecab_skips_exactly_the_characters_the_tokenizer_places_around_words():
    """MeCab leaves out of its words exactly the characters ``MecabTokenizer.SKIPPED`` names (a
    scan of every code point between two letters): what lets the words' offsets be the positions
    of the other characters."""
    from pelt.linking.sentences import new_pipeline

    parse = new_pipeline("ja").tokenizer.parse
    points = (point for point in range(1, 0x110000) if not 0xD800 <= point < 0xE000)
    skipped = {chr(point) for point in points if parse(f"a{chr(point)}b").replace(" ", "") == "ab"}
    assert skipped == set(type(new_pipeline("ja").tokenizer).SKIPPED)


@pytest.mark.parametrize(
    ("language", "text", "expected", "name"),
    [
        ("ar", "القاهرة مدينة كبيرة. هل تقع القاهرة على نهر النيل؟ نعم.", 3, "نهر النيل"),
        ("he", "ירושלים היא עיר עתיקה. תל אביב היא עיר גדולה ליד הים.", 2, "תל אביב"),
    ],
    ids=["arabic", "hebrew"],
)
def test_right_to_left_sentences_and_exact_mention_offsets(language, text, expected, name):
    """Text is stored in reading order, so offsets count characters from the sentence's first
    letter (its right end on screen); a two-word name in the second sentence has exact offsets."""
    tokens = tokenize(text, language)
    spans = sentence_spans(text, tokens)
    assert len(spans) == expected
    key = name_key(name, language)
    (candidate,) = [c for c in candidate_names(text, tokens, spans, name_filter([key])) if c["name"] == key]
    sentence_start = spans[candidate["sent_idx"]][0]
    assert candidate["sent_idx"] == 1 and candidate["n_tokens"] == 2
    assert text[sentence_start + candidate["start"] : sentence_start + candidate["end"]] == name


def test_stop_words_per_language():
    assert stop_word_keys("en") == STOP_WORDS  # English: spaCy's list, as before
    assert {"die", "der", "und"} <= stop_word_keys("de") and "die" not in stop_word_keys("en")
    assert {"le", "la", "et"} <= stop_word_keys("fr")
    assert {"في", "من"} <= stop_word_keys("ar") and "של" in stop_word_keys("he")
    # Chinese stop words are compared as their characters, as names are.
    assert {"的", "我 们"} <= stop_word_keys("zh") and "我们" not in stop_word_keys("zh")
    assert stop_word_keys("simple") == STOP_WORDS  # Simple English Wikipedia is English


def test_english_is_the_default_and_an_unknown_language_falls_back(caplog):
    assert nlp() is nlp("en")
    text = "Mr. Smith went to Washington. It was fun!"
    assert tokenize(text).orth.tolist() == tokenize(text, "en").orth.tolist()
    assert spacy_language("simple") == "en" and spacy_language("no") == "nb"
    with caplog.at_level(logging.WARNING, logger="pelt.linking.languages"):
        assert spacy_language("xqz") == FALLBACK
    assert "'xqz'" in caplog.text and "de, " in caplog.text  # names it and the languages there are
    assert sentences("Eins zwei. Drei.", "xqz") == ["Eins zwei.", "Drei."]
    assert stop_word_keys("xqz") == frozenset()
