"""spaCy's tokenizer rules behind their analysis (pelt.linking.affixes): the characters a match
needs and the alternatives a first or last character leaves are read right, every screened rule
gives the rule's own result on random strings of the characters its expression names, and the
tokens of the real pages of every language are spaCy's."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pelt.corpus.wikipedia.site import SiteInfo
from pelt.corpus.wikipedia.wikitext import wikitext_to_plain
from pelt.linking import languages
from pelt.linking.affixes import SCREENED_RULES, Branch, analysis, screened
from pelt.linking.languages import blank_pipeline
from pelt.linking.sentences import new_pipeline, tokenize

RULES = ("prefix_search", "suffix_search", "infix_finditer", "token_match", "url_match")
# spaCy languages with rules of their own (Arabic, Persian suffixes; French hyphens and elision;
# German ordinals; Hungarian, Indonesian, Haitian prefixes) and the default (English, Hebrew).
LANGUAGES = ["en", "fr", "de", "ar", "fa", "ur", "he", "hu", "id", "ht", "ca", "it", "sv", "el", "ru", "bn"]


def test_the_characters_every_match_needs():
    assert analysis(r"(?<=[0-9])km$").needed == frozenset("0123456789")  # the lookbehind's, not a letter
    assert analysis(r"\.\.+$").needed == frozenset(".")
    assert analysis(r"(?<=[A-Z][A-Z])\.$|'s$|—$").needed == frozenset(".'—")
    assert analysis(r"x?-|[+*]").needed == frozenset("-+*")  # the optional "x" is no need
    assert analysis(r"(?i)(?:^d['’][a-z]+$)").needed == frozenset("'’")  # uncased, so the same in any case
    assert analysis(r"ab|-").needed is None  # an alternative of letters only: plain words match it
    assert analysis(r"(?!-)a").needed is None  # a negative lookahead needs nothing
    assert analysis(r"[^.]").needed is None and analysis(r"\d").needed is None
    assert analysis(r"(a)\1") is None and analysis(r"(?i:a)-") is None  # not followed: left as they are
    assert analysis(r"[]-]") is not None and analysis(r"[]-]").needed == frozenset("]-")


def test_the_first_and_last_characters_of_each_alternative():
    found = analysis(r"(?u)^[(«]|^\.\.+|ab?$|(?<=[0-9])(?:km|m)$|x*$")
    assert found.branches == (
        Branch(r"^[(«]", frozenset("(«"), frozenset("(«"), True, False),
        Branch(r"^\.\.+", frozenset("."), frozenset("."), True, False),
        Branch(r"ab?$", frozenset("a"), frozenset("ab"), False, True),
        Branch(r"(?<=[0-9])(?:km|m)$", frozenset("km"), frozenset("m"), False, True),
        Branch(r"x*$", None, None, False, True),  # may be empty: no first or last character
    )
    # Under IGNORECASE an ASCII letter begins a match in either case; an uncased character as it is.
    (branch,) = analysis(r"(?i)^l'", re.IGNORECASE | re.UNICODE).branches
    assert branch.first == frozenset("lL") and branch.last == frozenset("'")


def spans(result: Any) -> Any:
    """A result comparable across expressions: a match's span, every span of an iterator."""
    if result is None or isinstance(result, re.Match):
        return None if result is None else result.span()
    return [match.span() for match in result]


def alphabet(rule: Callable[[str], Any], rng: random.Random) -> list[str]:
    """Characters a rule's expression tells apart: some of the characters its matches need and of
    those its alternatives begin and end with, digits, ASCII and other letters, spaces, a newline."""
    pattern = rule.__self__
    found = analysis(pattern.pattern, pattern.flags)
    named: set[str] = set(found.needed or ())
    for branch in found.branches:
        named |= set(branch.first or ()) | set(branch.last or ())
    chars = rng.sample(sorted(named), min(len(named), 60)) if named else []
    return chars + list("09aZkmsxé北ذש ") + ["\n", "-", ".", "'", "’", "km", "l'", "http://a.b", "www.x.org"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_screened_rules_give_the_rules_results(language: str):
    """Each rule of each language's tokenizer (the five, screened or not by the pipeline) gives the
    same match or matches behind its analysis as the expression alone, on 4,000 random strings of
    the characters the expression names."""
    tokenizer = blank_pipeline(language).tokenizer
    rng = random.Random(language)
    checked = 0
    for name in RULES:
        rule = getattr(tokenizer, name)
        rule = getattr(rule, "__wrapped__", rule)
        if not isinstance(getattr(rule, "__self__", None), re.Pattern):
            continue
        fast = screened(rule)
        pieces = alphabet(rule, rng)
        for _ in range(4000):
            text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
            assert spans(fast(text)) == spans(rule(text)), (language, name, text)
        checked += 1
    assert checked >= 4


@pytest.mark.parametrize(
    ("source", "flags"),
    [
        (r"(?i)(?:km|l'|s)$|[.,;]$|(?<=[0-9])x$|^-+|(?:ab)?c$", re.UNICODE),  # cases: ſ is s, K is k
        (r"[-–]k$|^\.\.+|(?<!a)b$|(?=\d)1$|é?z$|\]$|[]a-c]$", re.UNICODE),
        (r"-$|\.$|^,", re.MULTILINE),  # "$" before every newline: the ends are not the string's
        (r"(a)(?P<n>b)$|c(?:d|e)+$|f{0,2}g$|h{2}$", re.UNICODE),
    ],
)
def test_screened_searches_of_other_expressions(source: str, flags: int):
    """Expressions beyond spaCy's (IGNORECASE, lookbehinds, sets, MULTILINE, groups and counts):
    the same match behind the analysis on random strings of their characters and their cases."""
    rule = re.compile(source, flags).search
    fast = screened(rule)
    assert fast is not rule
    pieces = list("abcdefghkszxyKSſK1.,;-–é]'l\n ") + ["km", "KM", "l'", "L'", "ab", ".."]
    rng = random.Random(source)
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
        assert spans(fast(text)) == spans(rule(text)), (source, text)


def test_the_pipeline_screens_the_rules_worth_it():
    """English's suffix and url rules and French's token_match are screened, behind a test that
    sends a plain word nowhere; the prefix and infix rules are spaCy's own."""
    english = new_pipeline("en").tokenizer
    french = new_pipeline("fr").tokenizer
    assert set(SCREENED_RULES) == {"suffix_search", "token_match", "url_match"}
    for tokenizer, name in ((english, "suffix_search"), (english, "url_match"), (french, "token_match")):
        rule = getattr(tokenizer, name)
        assert not isinstance(getattr(rule, "__self__", None), re.Pattern), name
        assert rule("Berlin") is None and rule.__wrapped__("Berlin") is None
    assert isinstance(english.prefix_search.__self__, re.Pattern)
    assert english.suffix_search("1990),").span() == (5, 6)
    assert french.token_match("Saint-Denis").span() == (0, 11) and french.token_match("peut-être") is None


def real_texts(shared_data: Path, wikipedia_sample_articles: list) -> dict[str, list[str]]:
    """The plain text of the real pages of each language with a spaCy tokenizer of rules, and of
    the first 30 articles of the English sample."""
    texts = {"en": [text for _, text, _ in wikipedia_sample_articles[:30]]}
    for language in ("de", "fr", "ar", "he", "fa", "ur"):
        site = SiteInfo.for_language(language)
        pages = sorted((shared_data / "wikitext_pages_i18n" / language).glob("*.wiki"))
        texts[language] = [wikitext_to_plain(page.read_text(), site)[0] for page in pages]
    return texts


def test_tokens_of_the_real_pages_are_spacys(shared_data: Path, wikipedia_sample_articles, monkeypatch):
    """Every token array of the real pages (German, French, Arabic, Hebrew, Persian, Urdu, English)
    is the same with the rules screened as with spaCy's expressions alone."""
    texts = real_texts(shared_data, wikipedia_sample_articles)
    fields = ("orth", "lower", "start", "end", "is_space", "is_punct", "paragraph_start")
    screened_tokens = {}
    for language, pages in texts.items():
        new_pipeline(language)
        screened_tokens[language] = [tokenize(text, language) for text in pages]
    with monkeypatch.context() as patch:
        patch.setattr(languages, "screen_tokenizer", lambda tokenizer: None)
        patch.setattr(languages, "screened", lambda rule: rule)
        for language, pages in texts.items():
            new_pipeline(language)
            assert not hasattr(new_pipeline(language).tokenizer.suffix_search, "__wrapped__")
            for text, fast in zip(pages, screened_tokens[language], strict=True):
                plain = tokenize(text, language)
                assert all(np.array_equal(getattr(fast, f), getattr(plain, f)) for f in fields), language
    for language in texts:
        new_pipeline(language)  # the screened pipelines again, for the tests after this one
    assert sum(len(tokens) for tokens in screened_tokens["fr"]) > 30_000
