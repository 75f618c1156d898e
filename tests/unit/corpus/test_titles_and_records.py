"""normalize_title's one-scan path gives MediaWiki's normalisation of every title, and page_record is
the corpus stage's row of a page (the public view that benchmarks/corpus_throughput.py reads)."""

from __future__ import annotations

import html
import random

from pelt.corpus.wikipedia.build import page_record
from pelt.corpus.wikipedia.pages import DumpPage
from pelt.corpus.wikipedia.site import DIRECTIONAL_MARKS, WS_RUN, SiteInfo
from pelt.corpus.wikipedia.titles import normalize_title


def every_step(title: str) -> str:
    """normalize_title's rule, every step run on every title."""
    if "&" in title:
        title = html.unescape(title)
    title = DIRECTIONAL_MARKS.sub("", title)
    title = WS_RUN.sub(" ", title.split("#", 1)[0]).strip()
    return title[:1].upper() + title[1:]


def test_normalize_title_is_every_step_on_random_titles():
    """On 20,000 random titles of letters (cased, uncased, with a two-character upper case), spaces
    single and doubled, other whitespace, underscores, fragments, entities and directional marks."""
    pieces = ["a", "Z", "é", "ß", "ǆ", "ŉ", "北", "ب", " ", "  ", "_", "#x", "&amp;", "&", "\t", "\n", "\u00a0"]
    pieces += ["\u200e", "\u2067", "\u3000", "1", "(", "'"]
    rng = random.Random(3)
    titles = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 6))) for _ in range(20_000)]
    assert {normalize_title(title) == title[:1].upper() + title[1:] for title in titles} == {True, False}
    for title in titles:
        assert normalize_title(title) == every_step(title), repr(title)


def test_page_record_is_the_corpus_stage_row():
    """An article (its text and anchors), a redirect (in the site's redirect word) and a page of
    another namespace, by column."""
    german = SiteInfo.for_language("de")
    article = page_record(DumpPage(1, 0, "berlin", None, "'''Berlin''' ist eine [[Stadt]]."), german)
    assert (article["page_id"], article["title"], article["is_redirect"], article["skip"]) == (1, "Berlin", False, None)
    assert article["text"] == "Berlin ist eine Stadt."
    assert article["links"] == [(16, 21, "Stadt")]  # (start, end, target)
    redirect = page_record(DumpPage(2, 0, "BER", None, "#WEITERLEITUNG [[Berlin]]"), german)
    assert (redirect["is_redirect"], redirect["redirect_to"], redirect["text"]) == (True, "Berlin", None)
    assert page_record(DumpPage(3, 4, "Hilfe", None, "x"), german)["skip"] == "other_namespace"
