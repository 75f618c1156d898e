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


def test_the_throughput_fails_naming_both_counts_when_its_reproduction_and_spark_disagree() -> None:
    """corpus_throughput.py times a pure-Python reproduction of the linker; where its counts are not
    Spark's, its stage figures measure other work, and the run must fail saying which counts differ."""
    import corpus_throughput

    py = {"aliases": 18_734, "name_occurrences": 24_670, "names_linked": 4_702}
    counts = {"aliases": 18_734, "name_occurrences": 24_670, "heuristic_names_iteration_1": 4_000}
    counts["heuristic_names_iteration_2"] = 702
    assert corpus_throughput.disagreements(py, {"local[1]": {"link_counts": counts}}) == []
    unpruned = {**py, "name_occurrences": 59_030, "names_linked": 6_188}
    (failed,) = corpus_throughput.disagreements(unpruned, {"local[1]": {"link_counts": counts}})
    assert "name occurrences 59,030 here, 24,670 in Spark" in failed
    assert "names linked 6,188 here, 4,702 in Spark" in failed


def test_the_real_pages_of_a_language_are_its_shared_pages_titled_by_their_files(shared_data: Path) -> None:
    """The per-language throughput reads each language's real pages (benchmarks/language_sample.py)."""
    import language_sample

    folder = shared_data / "wikitext_pages_i18n"
    assert {"de", "fr", "ja", "zh", "ar"} <= set(language_sample.real_languages(folder))
    (berlin,) = language_sample.real_pages("ar", folder)
    assert berlin.title == "برلين" and berlin.text == next((folder / "ar").glob("*.wiki")).read_text()
    pages = language_sample.real_pages("de", folder)
    assert {"Ang Lee", "Zwilling (Begriffsklärung)"} <= {page.title for page in pages}
    assert sorted(page.page_id for page in pages) == list(range(1, len(pages) + 1))


def test_english_of_a_samples_size_takes_the_closest_article_to_each_of_its_own() -> None:
    """A language of a few pages is compared with English of its size too (its tokenizer has seen as
    little text): for each of its articles, longest first, the English article closest in length."""
    from dataclasses import replace

    import corpus_throughput

    from pelt.corpus.wikipedia.pages import DumpPage

    def page(page_id: int) -> DumpPage:
        return DumpPage(page_id=page_id, ns=0, title=str(page_id), redirect_to=None, text="")

    english = corpus_throughput.Sample(
        language="en", code="en", site=None, pages=[], articles=[page(i) for i in range(4)],
        plain=[100, 50, 10, 400], titles={}, name_entities={}, linkable=frozenset(), bloom=None, aliases=0,
    )  # fmt: skip
    arabic = replace(english, language="ar", code="ar", articles=[page(7), page(8), page(9)], plain=[45, 380, 60])
    same = corpus_throughput.english_of_its_size(english, arabic)
    assert [p.page_id for p in same.articles] == [3, 1, 2] and same.plain == [400, 50, 10]
    assert same.code == "en" and same.language == "en (ar's size)"


def test_a_language_below_half_is_told_the_most_its_segmenter_leaves() -> None:
    """Japanese's split runs MeCab's analysis, which is not pelt's: the per-language report says
    what the ratio to English would be at most were the rest of the split free (the floor of its
    parse, link and the segmenter alone); a language without a segmenter of its own has none."""
    import corpus_throughput

    def result(language: str, chars: int, cpu: dict[str, float]) -> dict:
        stages = {"parse": 0.1, "anchors": 0.0, "names": 0.1, "heuristic": 0.0, **cpu}
        return {
            "language": language, "spacy": language, "articles": 1, "wikitext_chars": chars, "plain_chars": chars,
            "tokens": 1, "sentences": 1, "name_occurrences": 1, "names_linked": 1, "profiled_stage": "segment",
            "profile_top": [], "cpu_s": stages,
        }  # fmt: skip

    english = result("en", 1_000_000, {"segment": 0.3})  # 2 M chars per CPU s
    japanese = result("ja", 500_000, {"segment": 0.8, "segmenter": 0.3})  # 0.5 M: 0.25 of English's
    hebrew = result("he", 500_000, {"segment": 0.8})
    text = corpus_throughput.languages_report([english, japanese, hebrew], [english, english])
    # Were the rest of split free: 500,000 / (0.1 + 0.3 + 0.1) = 1.00 M, half of English's.
    assert "ja: below half of English's; its segmenter alone takes 0.300 of split's 0.800 CPU s" in text
    assert "were the rest of split free, 1.00 M, 0.50 of English's" in text
    assert japanese["ratio_to_en"] == 0.25 and japanese["ratio_to_en_at_most"] == 0.5
    assert "he: below half of English's; cProfile" in text and "ratio_to_en_at_most" not in hebrew
    assert corpus_throughput.segmenter_seconds([{"text": "Berlin is a city."}], "en", 1) is None
    assert corpus_throughput.segmenter_seconds([{"text": "東京は都市。\n大阪"}], "ja", 1) >= 0
