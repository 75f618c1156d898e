"""German and French templates that print words of the sentence (issue 30 item 5): dates, centuries,
ordinals, quotations. Real German and French pages lost them ("né le à Moulins", "mit den Worten
gelobt:" followed by nothing); the snippets here are written for the test."""

from __future__ import annotations

import pytest

from pelt.corpus.wikipedia.site import SiteInfo
from pelt.corpus.wikipedia.wikitext import wikitext_to_plain


@pytest.mark.parametrize(
    ("language", "wikitext", "expected"),
    [
        # French dates: the month as written, its number as its name, day 1 as "1er"
        ("fr", "né le {{Date de naissance|11|novembre|1866}} à Moulins", "né le 11 novembre 1866 à Moulins"),
        ("fr", "née le {{date de naissance|1|5|1900|âge=oui}}.", "née le 1er mai 1900."),
        (
            "fr",
            "mort le {{Date de décès|13|novembre|1936|11|novembre|1866}} à Paris",
            "mort le 13 novembre 1936 (à 70 ans) à Paris",
        ),
        ("fr", "mort le {{Date de décès|2|mars|1936}}.", "mort le 2 mars 1936."),
        ("fr", "le {{date|14|juillet|1789}}, en {{date||mars|1900}}", "le 14 juillet 1789, en mars 1900"),
        # English {{date}} unchanged beside the French one
        ("en", "on {{date|2006-01-15}}", "on 15 January 2006"),
        # centuries and millennia
        ("fr", "au {{XXe siècle}}, au {{-Ier siècle}}", "au XXe siècle, au Ier siècle av. J.-C."),
        ("fr", "le {{s-|XIX}}, le {{s-|I|er}}, le {{s|XVIII}}", "le XIXe siècle, le Ier siècle, le XVIIIe"),
        ("fr", "au {{-s-|V}} et au {{IIIe millénaire}}", "au Ve siècle av. J.-C. et au IIIe millénaire"),
        # ordinals and the ordinal's superscript
        ("fr", "la {{1re}} fois, le {{1er}} mai, la {{3e}} place", "la 1re fois, le 1er mai, la 3e place"),
        ("fr", "la {{2e|édition}} et le XIX{{e}}", "la 2e édition et le XIXe"),
        # English {{e}} is an exponent
        ("en", "6.2{{e|18}} m", "6.2×10^18 m"),
        # German quotations: the quoted text, not the author or the translation
        (
            "de",
            "mit den Worten gelobt: {{Zitat-en|A fine film.|Übersetzung=Ein feiner Film.}} Danach",
            "mit den Worten gelobt: A fine film. Danach",
        ),
        ("de", "Er sagte: {{Zitat|Text=Ich komme.|Autor=Er}} Dann", "Er sagte: Ich komme. Dann"),
        ("de", "{{Zitat|Ich bin ein Berliner.|John F. Kennedy}}", "Ich bin ein Berliner."),
    ],
)
def test_german_and_french_templates_print_their_words(language: str, wikitext: str, expected: str) -> None:
    text, links = wikitext_to_plain(wikitext, SiteInfo.for_language(language))
    assert (text, links) == (expected, [])


@pytest.mark.parametrize(
    "wikitext",
    # names that only look like those families: no century without its word, no ordinal without digits
    ["{{XX siècle}}", "{{XXe}}", "{{nd}}", "{{siècle}}"],
)
def test_lookalike_names_show_nothing(wikitext: str) -> None:
    assert wikitext_to_plain(wikitext) == ("", [])
