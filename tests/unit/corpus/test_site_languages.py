"""The built-in site facts of Chinese, Arabic, Hebrew, Persian and Urdu (issue 54 item 2), Japanese's
link trail, Arabic's link prefix, Chinese language-conversion markup and directional marks, on
snippets written for the test; the real pages are tests/unit/corpus/test_real_pages_i18n.py."""

from __future__ import annotations

import pickle
from functools import partial

import pytest
from test_wikitext_complexity import RATIO_BOUND, _growth_ratio

from pelt.corpus.wikipedia.site import SiteInfo
from pelt.corpus.wikipedia.titles import is_disambiguation, normalize_title, redirect_target
from pelt.corpus.wikipedia.wikitext import wikitext_to_plain


def anchors(wikitext: str, language: str) -> tuple[str, list[tuple[str, str]]]:
    text, links = wikitext_to_plain(wikitext, SiteInfo.for_language(language))
    return text, [(text[link.start : link.end], link.target) for link in links]


@pytest.mark.parametrize(
    ("language", "wikitext", "expected"),
    [
        (
            "zh",
            "[[文件:a.jpg|thumb|说明]][[檔案:b.png|右|說明]][[File:c.svg|图]]"
            "[[北京]]市是[[中国]]的首都。[[分类:城市]][[Category:首都]][[分類:中國]]",
            ("北京市是中国的首都。", [("北京", "北京"), ("中国", "中国")]),
        ),
        (
            "ar",
            "[[ملف:a.jpg|تصغير|يسار|وصف]][[صورة:b.png|وصف]]مدينة [[برلين]] عاصمة [[ألمانيا]].[[تصنيف:مدن]]",
            ("مدينة برلين عاصمة ألمانيا.", [("برلين", "برلين"), ("ألمانيا", "ألمانيا")]),
        ),
        (
            "he",
            "[[קובץ:a.jpg|ממוזער|תיאור]][[תמונה:b.png|תיאור]]העיר [[ברלין]] היא בירת [[גרמניה]].[[קטגוריה:ערים]]",
            ("העיר ברלין היא בירת גרמניה.", [("ברלין", "ברלין"), ("גרמניה", "גרמניה")]),
        ),
        (
            "fa",
            "[[پرونده:a.jpg|بندانگشتی|توضیح]][[تصویر:b.png|توضیح]]شهر [[برلین]] پایتخت [[آلمان]] است.[[رده:شهرها]]",
            ("شهر برلین پایتخت آلمان است.", [("برلین", "برلین"), ("آلمان", "آلمان")]),
        ),
        (
            "ur",
            "[[فائل:a.jpg|تصغیر|وضاحت]][[ملف:b.png|وضاحت]]شہر [[برلن]] [[جرمنی]] کا دار الحکومت ہے۔[[زمرہ:شہر]]",
            ("شہر برلن جرمنی کا دار الحکومت ہے۔", [("برلن", "برلن"), ("جرمنی", "جرمنی")]),
        ),
    ],
    ids=["zh", "ar", "he", "fa", "ur"],
)
def test_files_and_categories_in_the_local_names_show_nothing(
    language: str, wikitext: str, expected: tuple[str, list[tuple[str, str]]]
) -> None:
    assert anchors(wikitext, language) == expected


@pytest.mark.parametrize(
    ("language", "redirect", "disambiguation"),
    [
        ("zh", "#重定向 [[北京]]", "{{消歧义}}"),
        ("zh", "#重新導向 [[北京]]", "{{Disambig}}"),
        ("ar", "#تحويل [[برلين]]", "{{توضيح}}"),
        ("he", "#הפניה [[ברלין]]", "{{פירושונים}}"),
        ("fa", "#تغییر_مسیر [[برلین]]", "{{ابهام‌زدایی}}"),
        ("ur", "#رجوع_مکرر [[برلن]]", "{{Disambig}}"),
    ],
)
def test_redirect_words_and_disambiguation_templates(language: str, redirect: str, disambiguation: str) -> None:
    site = SiteInfo.for_language(language)
    target = redirect.partition("[[")[2]
    assert redirect_target(redirect, site) == target.removesuffix("]]")
    assert redirect_target("#REDIRECT [[" + target, site) is not None  # the English word works everywhere
    assert is_disambiguation("* [[a]]\n" + disambiguation, site)
    assert not is_disambiguation("{{Otheruses}} [[a]]", site)


def test_link_trails_of_each_language() -> None:
    assert anchors("[[北京]]市和[[Beijing]]s", "zh")[1] == [("北京", "北京"), ("Beijing", "Beijing")]
    # Japanese takes MediaWiki's default trail: Latin letters join, kana and kanji do not
    assert anchors("[[クロロフィル]]aおよび[[東京]]都", "ja")[1] == [
        ("クロロフィルa", "クロロフィル"),
        ("東京", "東京"),
    ]
    assert anchors("ה[[רחוב]]ות [[בית]]ים.", "he")[1] == [("רחובות", "רחוב"), ("ביתים", "בית")]
    assert anchors("[[مسلم]]ون و[[كتاب]]ٌ", "ar")[1] == [("مسلمون", "مسلم"), ("وكتابٌ", "كتاب")]  # harakat too
    assert anchors("[[کتاب]]\u200cها", "fa")[1] == [("کتاب\u200cها", "کتاب")]  # the ZWNJ joins
    # MessagesUr.php's trail has no ں (noon ghunna): MediaWiki's anchor stops before it
    assert anchors("[[پاکستان]]ی [[شہر]]وں", "ur")[1] == [("پاکستانی", "پاکستان"), ("شہرو", "شہر")]


def test_arabic_letters_before_a_link_join_it_and_hebrew_ones_do_not() -> None:
    """MediaWiki's Arabic sets $linkPrefixExtension: the letters written on the link's word (the
    conjunction و, the preposition ب) are part of its text; Hebrew's does not."""
    assert anchors("باريس و[[برلين]] وبال[[قاهرة]]. (Q[[برلين]])", "ar")[1] == [
        ("وبرلين", "برلين"),
        ("وبالقاهرة", "قاهرة"),
        ("Qبرلين", "برلين"),  # Latin letters are in the set too
    ]
    assert anchors("ו[[ברלין]] ב[[לונדון]]", "he") == ("וברלין בלונדון", [("ברלין", "ברלין"), ("לונדון", "לונדון")])
    # no prefix after a link, a file or a category: the letters after "]]" are the trail
    assert anchors("[[ملف:a.jpg|تصغير]]و[[برلين]]", "ar")[1] == [("وبرلين", "برلين")]
    assert anchors("[[برلين]][[باريس]]", "ar")[1] == [("برلين", "برلين"), ("باريس", "باريس")]


@pytest.mark.parametrize(
    ("wikitext", "expected"),
    [
        ("十六个-{zh-hans:联邦州; zh-hant:邦}-之一", "十六个联邦州之一"),
        ("群、環、-{zh-cn:域;zh-tw:體}-等", "群、環、域等"),  # zh-cn before zh-tw
        ("-{zh-tw:資訊;zh-hk:資訊科技;}-", "資訊"),
        ("德国联-{}-邦议院", "德国联邦议院"),  # an empty block keeps words apart for the converter
        ("差异\n-{zh-hant:; zh-hans:;}-\n物理", "差异\n物理"),
        ("-{保留原文}-与-{A|zh-hans:软件; zh-hant:軟體}-", "保留原文与软件"),
        ("-{H|zh-hans:软件; zh-hant:軟體}-软件", "软件"),  # a rule for the page: shows nothing
        ("-{T|zh-hans:标题; zh-hant:標題}-正文", "正文"),
        ("-{R|zh-hans:原文}-", "zh-hans:原文"),
        ("-{foo: bar}-", "foo: bar"),  # no variant: the text as written
        ("一-{[[北京|北京市]]}-二", "一北京市二"),
    ],
)
def test_chinese_conversion_markup_shows_the_unconverted_variant(wikitext: str, expected: str) -> None:
    assert anchors(wikitext, "zh")[0] == expected
    assert anchors(wikitext, "en")[0] != expected or "-{" not in wikitext  # only where the wiki has variants


def test_directional_marks_leave_the_text_anchors_and_titles() -> None:
    marks = "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    marked = f"העיר [[{marks}ברלין{marks}|ברלין\u200f]] היא ({marks}1237) [[\u200fלונדון]]ים."
    expected = [("ברלין", "ברלין"), ("לונדוןים", "לונדון")]
    assert anchors(marked, "he") == ("העיר ברלין היא (1237) לונדוןים.", expected)
    assert normalize_title("\u200fברלין\u200e") == "ברלין"
    assert redirect_target("#הפניה [[\u200fברלין\u202c]]", SiteInfo.for_language("he")) == "ברלין"


def test_new_site_facts_travel_to_the_executors() -> None:
    for language in ("zh", "ar", "he", "fa", "ur", "ja"):
        site = SiteInfo.for_language(language)
        assert pickle.loads(pickle.dumps(site)) == site
    assert SiteInfo.for_language("zh").variants[:3] == ("zh", "zh-hans", "zh-hant")
    assert SiteInfo.for_language("ar").link_prefix and not SiteInfo.for_language("he").link_prefix


# Each fails with the obvious way of writing its rule (each seen quadratic): a search for the letters
# at the end of the text before a link tries each start in a word, each running to the space after
# it; a lazy match of a conversion block runs to the page's end for each one unclosed; removing the
# marks one at a time copies the page for each.
CASES = {
    "Arabic word and a space before a link": ("ar", lambda n: "ب" * n + " [[a]]"),
    "unclosed conversion blocks": ("zh", lambda n: "-{zh-hans:a; " * n),
    "directional marks": ("he", lambda n: "\u200f[[a\u200e]]" * n),
}


@pytest.mark.parametrize("name", CASES)
def test_the_new_rules_take_time_linear_in_the_page(name: str) -> None:
    language, make = CASES[name]
    ratio = _growth_ratio(partial(wikitext_to_plain, site=SiteInfo.for_language(language)), make)
    assert ratio < RATIO_BOUND, f"{name}: 8 times the input took {ratio:.1f} times as long"
