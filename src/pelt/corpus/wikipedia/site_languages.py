"""The built-in facts of each language's Wikipedia that a dump does not say: namespace aliases, redirect
words, disambiguation templates, link trails and prefixes, language variants. Data, apart from the
logic that reads a dump's ``<siteinfo>`` and merges these facts into a site
(:mod:`pelt.corpus.wikipedia.site`), so that adding a language is one entry in :data:`LANGUAGES` here
and no code (docs/languages.md, "Adding a language or a rule").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Language:
    """The built-in facts of one language's Wikipedia: what a dump does not say (namespace aliases,
    the redirect magic word, disambiguation templates, MediaWiki's ``$linkTrail``)."""

    namespaces: Mapping[int, tuple[str, ...]]  # local names and aliases, by namespace key
    redirect_words: tuple[str, ...]  # ``#WEITERLEITUNG``: the words after "#", besides "redirect"
    disambiguation_templates: frozenset[str]  # names as written; compared normalised (``template_key``)
    link_trail: str  # a character class with its quantifier, or "" where links take no trail
    disambiguation_suffix: str = ""  # a regex on the normalised name: any template it finds is one too
    # MediaWiki's $linkPrefixCharset where the language sets $linkPrefixExtension (Arabic): letters
    # right before "[[" that join the link's text, as a character class; "" where none do.
    link_prefix: str = ""
    # The variants of language-conversion markup ``-{zh-hans:A; zh-hant:B}-``, in the order a reader
    # of the unconverted text is shown them (MediaWiki's fallbacks of the wiki's own code); () where
    # the wiki has no such markup.
    variants: tuple[str, ...] = ()


# Arabic letters (ء-ي) and the Arabic marks (harakat, Quranic signs) MediaWiki's Arabic counts as
# letters of a word: its $linkTrail and $linkPrefixCharset.
_ARABIC_LETTERS = "ء-ي\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7\u06e8\u06ea-\u06ed"
_ENGLISH_DAB = (
    "disambiguation",
    "disambig",
    "dab",
    "disamb",
    "dbig",
    "hndis",
    "geodis",
    "numberdis",
    "mathdab",
    "schooldis",
    "hospitaldis",
    "roaddis",
    "shipindex",
    "set index",
    "letter-numbercombdisambig",
)
LANGUAGES: dict[str, Language] = {
    # English Wikipedia's local namespaces and aliases, besides the canonical ones. Any template
    # whose name ends in "disambiguation" ("Human name disambiguation", "Disambiguation cleanup")
    # is a disambiguation template too; "Disambiguation needed" is an inline clean-up tag.
    "en": Language(
        namespaces={
            4: ("Wikipedia", "WP"),
            5: ("Wikipedia talk",),
            100: ("Portal",),
            101: ("Portal talk",),
            108: ("Book",),
            118: ("Draft",),
            446: ("Education Program",),
            710: ("TimedText",),
            828: ("Module",),
            2300: ("Gadget",),
        },
        redirect_words=(),
        disambiguation_templates=frozenset(_ENGLISH_DAB),
        link_trail="[a-z]+",
        disambiguation_suffix=r"(?:^|\s)disambiguation(?:\s+cleanup)?$",
    ),
    "de": Language(
        namespaces={
            -2: ("Medium",),
            -1: ("Spezial",),
            1: ("Diskussion",),
            2: ("Benutzer", "Benutzerin"),
            3: ("Benutzer Diskussion", "Benutzerin Diskussion"),
            4: ("Wikipedia", "WP"),
            5: ("Wikipedia Diskussion",),
            6: ("Datei", "Bild"),
            7: ("Datei Diskussion", "Bild Diskussion"),
            9: ("MediaWiki Diskussion",),
            10: ("Vorlage",),
            11: ("Vorlage Diskussion",),
            12: ("Hilfe",),
            13: ("Hilfe Diskussion",),
            14: ("Kategorie",),
            15: ("Kategorie Diskussion",),
            100: ("Portal",),
            101: ("Portal Diskussion",),
            828: ("Modul",),
            829: ("Modul Diskussion",),
        },
        redirect_words=("weiterleitung",),
        disambiguation_templates=frozenset({"Begriffsklärung"}),
        link_trail="[a-zäöüß]+",
    ),
    "fr": Language(
        namespaces={
            -2: ("Média",),
            -1: ("Spécial",),
            1: ("Discussion",),
            2: ("Utilisateur", "Utilisatrice"),
            3: ("Discussion utilisateur", "Discussion utilisatrice"),
            4: ("Wikipédia", "WP"),
            5: ("Discussion Wikipédia",),
            6: ("Fichier", "Image"),
            7: ("Discussion fichier", "Discussion image"),
            9: ("Discussion MediaWiki",),
            10: ("Modèle",),
            11: ("Discussion modèle",),
            12: ("Aide",),
            13: ("Discussion aide",),
            14: ("Catégorie",),
            15: ("Discussion catégorie",),
            100: ("Portail",),
            101: ("Discussion Portail",),
            102: ("Projet",),
            103: ("Discussion Projet",),
            104: ("Référence",),
            828: ("Module",),
        },
        redirect_words=("redirection",),
        disambiguation_templates=frozenset(
            {"Homonymie", "Bandeau standard pour page d'homonymie", "Patronymie", "Toponymie"}
        ),
        link_trail="[a-zàâçéèêîôûäëïöüùÇÉÂÊÎÔÛÄËÏÖÜÀÈÙ]+",
    ),
    # The languages below: namespaces and aliases from each wiki's API siteinfo (June 2024, as DBpedia's
    # extraction framework stores it: core/src/main/settings/<xx>wiki-configuration.xml), the link trail
    # and prefix from its `general` block (Parsoid's baseconfig/<xx>wiki.json, 2026) or MessagesXx.php,
    # the disambiguation templates from its MediaWiki:Disambiguationspage (DBpedia's Disambiguation.scala).
    "ja": Language(
        namespaces={
            -2: ("メディア",),
            -1: ("特別",),
            1: ("ノート", "トーク"),
            2: ("利用者",),
            3: ("利用者‐会話", "利用者・トーク"),
            4: ("Wikipedia", "WP"),
            5: ("Wikipedia‐ノート", "Wikipedia talk", "Wikipedia・トーク"),
            6: ("ファイル", "画像"),
            7: ("ファイル‐ノート", "ファイル・トーク", "画像‐ノート"),
            9: ("MediaWiki‐ノート", "MediaWiki・トーク"),
            10: ("テンプレート",),
            11: ("Template‐ノート", "テンプレート・トーク"),
            12: ("ヘルプ",),
            13: ("Help‐ノート", "ヘルプ・トーク"),
            14: ("カテゴリ",),
            15: ("Category‐ノート", "カテゴリ・トーク"),
            100: ("Portal",),
            101: ("Portal‐ノート", "Portal・トーク", "ポータル‐ノート"),
            102: ("プロジェクト",),
            103: ("プロジェクト‐ノート", "プロジェクト・トーク"),
            828: ("モジュール", "Module"),
            829: ("モジュール‐ノート", "Module talk", "モジュール・トーク"),
        },
        redirect_words=("転送", "リダイレクト"),
        disambiguation_templates=frozenset({"Aimai", "曖昧さ回避", "人名の曖昧さ回避", "地名の曖昧さ回避"}),
        # MessagesJa.php sets none, so English's: jawiki's siteinfo says /^([a-z]+)(.*)$/sD, and
        # kana and kanji after "]]" never join the link ([[東京]]都), Latin letters do ([[クロロフィル]]a).
        link_trail="[a-z]+",
    ),
    "zh": Language(
        namespaces={
            -2: ("媒体", "媒体文件", "媒体档案", "媒體", "媒體文件", "媒體檔案"),
            -1: ("特殊",),
            1: ("对话", "對話", "討論", "讨论"),
            2: ("U", "使用者", "用戶", "用户"),
            3: (
                "UT",
                "使用者对话",
                "使用者對話",
                "使用者討論",
                "使用者讨论",
                "用戶對話",
                "用戶討論",
                "用户对话",
                "用户讨论",
            ),
            4: ("Wikipedia", "WP", "专案", "專案", "維基百科", "维基百科"),
            5: (
                "Wikipedia talk",
                "WT",
                "Wikipedia对话",
                "Wikipedia對話",
                "Wikipedia討論",
                "Wikipedia讨论",
                "专案讨论",
                "專案討論",
                "維基百科對話",
                "維基百科討論",
                "维基百科对话",
                "维基百科讨论",
            ),
            6: ("图像", "图片", "圖像", "圖片", "文件", "档案", "檔案"),
            7: (
                "图像对话",
                "图像讨论",
                "图片讨论",
                "圖像對話",
                "圖像討論",
                "圖片討論",
                "文件对话",
                "文件對話",
                "文件討論",
                "文件讨论",
                "档案对话",
                "档案讨论",
                "檔案對話",
                "檔案討論",
            ),
            9: ("MediaWiki討論", "MediaWiki讨论"),
            10: ("T", "样板", "模板", "樣板"),
            11: ("样板对话", "样板讨论", "模板对话", "模板對話", "模板討論", "模板讨论", "樣板對話", "樣板討論"),
            12: ("H", "使用說明", "使用说明", "帮助", "幫助", "說明", "说明"),
            13: (
                "使用說明討論",
                "使用说明讨论",
                "帮助对话",
                "帮助讨论",
                "幫助對話",
                "幫助討論",
                "說明討論",
                "说明讨论",
            ),
            14: ("CAT", "分类", "分類"),
            15: ("分类对话", "分类讨论", "分類對話", "分類討論"),
            100: ("Portal", "P", "主題", "主题"),
            101: ("Portal talk", "主題對話", "主題討論", "主题对话", "主题讨论"),
            102: ("WikiProject", "PJ", "WPJ", "专题", "專題", "維基專題", "维基专题"),
            103: (
                "WikiProject talk",
                "PJT",
                "WPJT",
                "专题对话",
                "专题讨论",
                "專題對話",
                "專題討論",
                "維基專題對話",
                "維基專題討論",
                "维基专题对话",
                "维基专题讨论",
            ),
            118: ("Draft", "草稿"),
            119: ("Draft talk", "草稿討論", "草稿讨论"),
            828: ("Module", "模块", "模塊", "模組", "模组"),
            829: (
                "Module talk",
                "模块对话",
                "模块讨论",
                "模塊對話",
                "模塊討論",
                "模組對話",
                "模組討論",
                "模组对话",
                "模组讨论",
            ),
            2600: ("Topic", "話題", "话题"),
        },
        redirect_words=("重定向", "重新導向"),
        disambiguation_templates=frozenset(
            {"Disambig", "消歧义", "消歧義", "消除歧义", "消除歧義", "消含糊", "消除含糊"}
        ),
        link_trail="",  # zhwiki's siteinfo: /^()(.*)$/sD
        variants=("zh", "zh-hans", "zh-hant", "zh-cn", "zh-tw", "zh-hk", "zh-sg", "zh-mo", "zh-my"),
    ),
    "ar": Language(
        namespaces={
            -2: ("ميديا", "وسائط"),
            -1: ("خاص",),
            1: ("نقاش",),
            2: ("مستخدم", "مستخدمة"),
            3: ("نقاش المستخدم", "نقاش المستخدمة"),
            4: ("ويكيبيديا", "WP", "Wikipedia", "وب"),
            5: ("نقاش ويكيبيديا", "Wikipedia talk", "نو"),
            6: ("ملف", "صورة"),
            7: ("نقاش الملف", "نقاش الصورة"),
            8: ("ميدياويكي",),
            9: ("نقاش ميدياويكي",),
            10: ("قالب",),
            11: ("نقاش القالب",),
            12: ("مساعدة",),
            13: ("نقاش المساعدة",),
            14: ("تصنيف",),
            15: ("نقاش التصنيف",),
            100: ("بوابة",),
            101: ("نقاش البوابة",),
            828: ("وحدة", "Module"),
            829: ("نقاش الوحدة", "Module talk"),
            2600: ("موضوع", "Topic"),
        },
        redirect_words=("تحويل",),
        disambiguation_templates=frozenset({"Disambig", "توضيح", "صفحة توضيح"}),
        # arwiki's siteinfo: the letters ء-ي with the Arabic marks (harakat), after and before the link.
        link_trail=f"[a-z{_ARABIC_LETTERS}]+",
        link_prefix=f"[a-zA-Z{_ARABIC_LETTERS}]",
    ),
    "he": Language(
        namespaces={
            -2: ("מדיה",),
            -1: ("מיוחד", "מי"),
            1: ("שיחה", "ש"),
            2: ("משתמש", "U", "מש", "משתמשת"),
            3: ("שיחת משתמש", "שיחת משתמשת", "שמש"),
            4: ("ויקיפדיה", "WP", "Wikipedia", "וק"),
            5: ("שיחת ויקיפדיה", "Wikipedia talk", "שוק"),
            6: ("קובץ", "קו", "תמונה"),
            7: ("שיחת קובץ", "שיחת תמונה", "שקו"),
            8: ("מדיה ויקי", "מו"),
            9: ("שיחת מדיה ויקי", "שמו"),
            10: ("תבנית", "תב"),
            11: ("שיחת תבנית", "שתב"),
            12: ("עזרה", "עז"),
            13: ("שיחת עזרה", "שעז"),
            14: ("קטגוריה", "קט"),
            15: ("שיחת קטגוריה", "שקט"),
            100: ("פורטל", "פ"),
            101: ("שיחת פורטל", "שפ"),
            108: ("ספר",),
            109: ("שיחת ספר",),
            118: ("טיוטה", "Draft", "טי"),
            119: ("שיחת טיוטה", "Draft talk", "שטי"),
            828: ("יחידה", "Module", "י"),
            829: ("שיחת יחידה", "Module talk", "שי"),
            2600: ("נושא", "Topic", "נ"),
        },
        redirect_words=("הפניה",),
        disambiguation_templates=frozenset({"פירושונים"}),
        # MessagesHe.php: /^([a-zא-ת]+)(.*)$/sDu. Hebrew writes prepositions on the word (ב[[ברלין]]):
        # MediaWiki's he has no link prefix, so they stay outside the anchor.
        link_trail="[a-zא-ת]+",
    ),
    "fa": Language(
        namespaces={
            -2: ("مدیا", "رسانه", "رسانه\u200cای"),
            -1: ("ویژه",),
            1: ("بحث",),
            2: ("کاربر", "كاربر"),
            3: ("بحث کاربر", "بحث كاربر", "بک"),
            4: ("ویکی\u200cپدیا", "WP", "Wikipedia", "ويكي پديا", "ويکي\u200cپديا", "وپ", "ویکی پدیا"),
            5: ("بحث ویکی\u200cپدیا", "Wikipedia talk", "بحث ويکي پديا", "بحث ويکي\u200cپديا", "بحث ویکی پدیا", "بوپ"),
            6: ("پرونده", "تصویر"),
            7: ("بحث پرونده", "بحث تصویر"),
            8: ("مدیاویکی",),
            9: ("بحث مدیاویکی",),
            10: ("الگو",),
            11: ("بحث الگو",),
            12: ("راهنما", "ره"),
            13: ("بحث راهنما",),
            14: ("رده",),
            15: ("بحث رده",),
            100: ("درگاه",),
            101: ("بحث درگاه",),
            118: ("پیش\u200cنویس", "Draft", "پيش نويس", "پيشنويس", "پيش\u200cنويس", "پیش نویس", "پیشنویس"),
            119: (
                "بحث پیش\u200cنویس",
                "Draft talk",
                "بحث پيش نويس",
                "بحث پيشنويس",
                "بحث پيش\u200cنويس",
                "بحث پیش نویس",
                "بحث پیشنویس",
            ),
            828: ("پودمان", "Module", "پود"),
            829: ("بحث پودمان", "Module talk"),
            2600: ("مبحث", "Topic"),
        },
        redirect_words=("تغییر_مسیر", "تغییرمسیر"),
        disambiguation_templates=frozenset(
            {
                "ابهام زدایی",
                "ابهام\u200cزدائی",
                "ابهام\u200cزدایی",
                "ابهام\u200cزدایی-جغرافیا",
                "ابهام\u200cزدایی اعداد",
                "ابهام\u200cزدایی جغرافیا",
                "ابهام\u200cزدایی ریاضی",
                "ابهام\u200cزدایی فرودگاه",
                "ابهام\u200cزدایی نام",
                "ابهام\u200cزدایی نهاد آموزشی",
                "رفع ابهام",
            }
        ),
        link_trail="[ابپتثجچحخدذرزژسشصضطظعغفقکگلمنوهیآأئؤة\u200c]+",  # fawiki's siteinfo, with the ZWNJ
    ),
    "ur": Language(
        namespaces={
            -2: ("میڈیا", "زریعہ", "وسیط"),
            -1: ("خاص",),
            1: ("تبادلۂ خیال",),
            2: ("صارف",),
            3: ("تبادلۂ خیال صارف",),
            4: ("ویکیپیڈیا", "WP", "Wikipedia", "وپ"),
            5: ("تبادلۂ خیال ویکیپیڈیا", "Wikipedia talk", "ویکیپیڈیا تبادلۂ خیال"),
            6: ("فائل", "تصویر", "ملف"),
            7: ("تبادلۂ خیال فائل", "تبادلۂ خیال تصویر", "تبادلۂ خیال ملف"),
            8: ("میڈیاویکی", "میڈیاوکی"),
            9: ("تبادلۂ خیال میڈیاویکی", "تبادلۂ خیال میڈیاوکی"),
            10: ("سانچہ",),
            11: ("تبادلۂ خیال سانچہ",),
            12: ("معاونت",),
            13: ("تبادلۂ خیال معاونت",),
            14: ("زمرہ",),
            15: ("تبادلۂ خیال زمرہ",),
            100: ("باب", "Portal"),
            101: ("تبادلۂ خیال باب", "Portal talk"),
            102: ("کتاب",),
            103: ("تبادلۂ خیال کتاب",),
            118: ("مسودہ", "Draft"),
            119: ("تبادلۂ خیال مسودہ", "Draft talk"),
            828: ("ماڈیول", "Module"),
            829: ("تبادلۂ خیال ماڈیول", "Module talk"),
            2600: ("موضوع", "Topic"),
        },
        redirect_words=("رجوع_مکرر",),
        disambiguation_templates=frozenset({"Disambig"}),
        link_trail="[ابپتٹثجچحخدڈذرڑزژسشصضطظعغفقکگلمنوؤہھیئےآأءۃ]+",  # MessagesUr.php
    ),
}
