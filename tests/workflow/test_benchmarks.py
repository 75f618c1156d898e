"""The linking-scale benchmark measures what it says only if its replication is faithful: a copy of
the real dump sample under ``--rename titles`` must read exactly as the sample, with every link the
corpus stage finds pointing at the copy's own entity, or documents of one copy reach another's
pages through a shared target and the candidates grow with the number of copies."""

from __future__ import annotations

import bz2
import html
import sys
from pathlib import Path

from conftest import REPO

from pelt.corpus.wikipedia.wikitext import wikitext_to_plain

sys.path.insert(0, str(REPO / "benchmarks"))
import linking_scale  # noqa: E402


def test_a_titles_copy_reads_as_the_sample_with_every_link_its_own(shared_data: Path) -> None:
    (dump,) = (shared_data / "wikipedia_dump_sample").glob("*.bz2")
    xml = bz2.decompress(dump.read_bytes()).decode("utf-8")
    pages = [m.group(0) for m in linking_scale._PAGE.finditer(xml)]
    texts = links = colon = 0
    for page in pages:
        copy = linking_scale.rename_page(page, 3, "titles")
        title = linking_scale._TITLE.search(page).group(2)
        assert linking_scale._TITLE.search(copy).group(2) == f"{title} (copy 3)"
        original, renamed = linking_scale._TEXT.search(page), linking_scale._TEXT.search(copy)
        if original is None:
            continue
        plain, anchors = wikitext_to_plain(html.unescape(original.group(2)))
        plain_copy, anchors_copy = wikitext_to_plain(html.unescape(renamed.group(2)))
        assert plain_copy == plain, title
        assert [(a.start, a.end, f"{a.target} (copy 3)") for a in anchors] == [
            (a.start, a.end, a.target) for a in anchors_copy
        ], title
        texts += 1
        links += len(anchors)
        colon += sum(":" in a.target for a in anchors)
    # the sample has the links the first replication missed: article targets with a colon, and
    # links made by templates ({{HMS|Ajax|22}})
    assert texts > 100 and links > 20_000 and colon > 20


def test_a_language_sample_keeps_the_english_samples_markup_and_links(shared_data: Path) -> None:
    """The per-language throughput reads the sample made in each language (benchmarks/language_sample.py):
    a page parses to as many anchors as the English one, each pointing at the English target's
    translation, with the language's letters in the text."""
    import re
    from itertools import islice

    import language_sample

    from pelt.corpus.wikipedia.dump import iter_dump_pages
    from pelt.corpus.wikipedia.site import SiteInfo
    from pelt.corpus.wikipedia.titles import normalize_title

    (dump,) = (shared_data / "wikipedia_dump_sample").glob("*.bz2")
    pages = [p for p in islice(iter_dump_pages(dump), 30) if p.ns == 0 and p.redirect_to is None][:4]
    counts = language_sample.english_words(p.text for p in pages)
    # the language's letters, and at least which share of the text they make
    letters = {"de": ("[äöüß]", 0.001), "zh": ("[\u4e00-\u9fff]", 0.2), "ar": ("[\u0600-\u06ff]", 0.2)}
    letters["ru"] = ("[а-я]", 0.2)
    for language, (pattern, share) in letters.items():
        translation = language_sample.Translation(language, counts)
        for page in pages:
            _, anchors = wikitext_to_plain(page.text)
            text, translated = wikitext_to_plain(translation.text(page.text), SiteInfo.for_language(language))
            assert [a.target for a in translated] == [normalize_title(translation.text(a.target)) for a in anchors]
            assert len(re.findall(pattern, text)) > share * len(text), (language, page.title)
