"""The per-language input of the throughput benchmark (``corpus_throughput.py --languages``):
real pages of each Wikipedia where the shared data has them, else the English sample made in the
language.

**Real pages** (:func:`real_pages`): the ``.wiki`` files of ``../shared/data/wikitext_pages_i18n``
(German, French, Japanese, Chinese, Arabic, Hebrew, Urdu, Persian: real revisions, read from the
shared data, never committed), titled by their file names. Arabic, Hebrew and Persian have one
page each, so their text is split by a tokenizer that has seen none of their language (the
benchmark times each half of a sample after the other half): 5 % slower than the same page in two
halves, each after the other.

**The English sample made in a language** (``<code>:generated``, :func:`translated`), for the
languages without real pages; each language's sample is the English one with its words replaced,
word type by word type, and its markup kept:

* **Markup is kept as it is**: HTML and ``<ref>`` tags, entities, URLs, template names, parameter
  and attribute names with quoted values, namespace and interlanguage prefixes (``[[Category:``,
  ``[[fr:``: MediaWiki's canonical English names work on every wiki), image options (``thumb``,
  ``220px``), magic words. Numbers and punctuation stay, so the markup density, the paragraphs, the
  sentences, the links and the templates are the sample's.
* **Every other run of ASCII letters is a word** and is replaced by the same word of the language
  wherever it stands (titles and link targets too), so a page keeps its links, its anchors keep
  their targets and the aliases keep their mentions: the link structure is the sample's. English
  stop words, by their frequency in the sample, become the language's stop words (spaCy's list),
  shortest first (frequent words are short); the other words become made-up words of the same
  length whose letters are drawn from the letters of the language's stop words, in their
  frequency there (umlauts and ß in German, accents in French, Cyrillic, Arabic or Hebrew
  letters), seeded by the word, so the sample's distribution of words (how many distinct ones, how
  often each) is kept. Capitals are kept where the script has them.
* **A language written without spaces** (Chinese): a word becomes one to three characters (by the
  English word's length: 1-2, 3-7, 8+ letters: Chinese content words are mostly two characters,
  its one-character words mostly function words, which come from the stop words) drawn from the
  ideographs of its stop words, written
  without spaces between words, with ``。`` and ``，`` for ". " and ", ". Arabic writes ``،`` and
  ``؟`` for ", " and "? ". A stop word written with an apostrophe (French and Italian ``l'``,
  ``d'``) is joined to the next word ("d'xxx"), as elision is.

What it does not make: the language's morphology (inflections, compounds), its own abbreviations
and ordinals (the tokenizer exceptions are exercised only where a stop word is one), its own
templates. ``--languages en:generated`` runs the method on English itself, to show what the
method alone changes.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path

from pelt.corpus.wikipedia.pages import DumpPage
from pelt.linking.languages import stop_words, written_without_spaces

_PROTECTED = [
    r"<[^<>\n]*>",  # HTML and ref tags, with their attributes
    r"&#?\w+;",  # entities
    r"\[?(?:https?:)?//[^\s\]|<>{}]*",  # URLs
    r"\{\{[^{}|\n]*",  # template names and parser functions ({{cite web, {{#if:)
    r"\|\s*[A-Za-z_][\w -]*?\s*=",  # parameter names (|title=) and cell attributes (| style=)
    r"\w+\s*=\s*\"[^\"\n]*\"",  # attributes with quoted values
    r"\[\[:?\s*(?:[a-z]{1,3}(?:-[a-z]+)*|(?i:file|image|media|category|template|wikipedia|wp|help|portal|special"
    r"|user|talk|draft|module|wiktionary|wikt|commons|meta|wikisource|wikiquote))\s*:",  # [[Category:, [[fr:
    r"(?<=\|)\s*(?:thumb|thumbnail|left|right|center|centre|none|upright|frame|frameless|border|\d*x?\d+px)"
    r"\s*(?=[|\]])",  # image options
    r"__[A-Z]+__",  # behaviour switches
    r"#[A-Za-z]+",  # #REDIRECT
]
_TOKEN = re.compile("(" + "|".join(_PROTECTED) + ")|([A-Za-z]+)")
_CJK = "\u4e00-\u9fff"
REAL_PAGES = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikitext_pages_i18n"
_JOIN = "\x00"  # after a word that is joined to the next (an elided stop word)


def english_words(texts: Iterable[str]) -> Counter[str]:
    """How often each word (lower case) occurs outside the markup of ``texts``."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(m.group(2).lower() for m in _TOKEN.finditer(text) if m.group(2))
    return counts


def _seeded(language: str, word: str) -> random.Random:
    return random.Random(hashlib.blake2b(f"{language}\t{word}".encode(), digest_size=8).digest())


class Translation:
    """The word-for-word replacement of the English sample's words by ``language``'s (module docstring)."""

    def __init__(self, language: str, counts: Counter[str]) -> None:
        self.language = language
        self.spaceless = written_without_spaces(language)
        self.counts = counts
        own = stop_words(language)
        if self.spaceless:
            own = {w for w in own if re.fullmatch(f"[{_CJK}]+", w)}
        else:
            own = {w for w in own if re.fullmatch(r"[^\W\d_]+['’]?", w)}
        self.stop_words = sorted(own, key=lambda w: (len(w), w))
        letters = Counter(c for w in self.stop_words for c in w.lower() if c.isalpha())
        if not letters:  # a language without stop words (xx): English letters
            letters = Counter(c for w in counts for c in w)
        self.letters, self.weights = zip(*sorted(letters.items()))

    @cached_property
    def words(self) -> dict[str, str]:
        """Each English word type (lower case) and its replacement."""
        english_stop = stop_words("en")
        ranked = [w for w, _ in self.counts.most_common() if w in english_stop]
        words = dict(zip(ranked, self.stop_words))
        for word in self.counts:
            if word not in words:
                words[word] = self._made_up(word)
        return words

    def _made_up(self, word: str) -> str:
        length = (1 + (len(word) > 2) + (len(word) > 7)) if self.spaceless else len(word)
        return "".join(_seeded(self.language, word).choices(self.letters, self.weights, k=length))

    def word(self, english: str) -> str:
        """The replacement of one English word, in its case (all capitals, capitalised, lower; a word
        of mixed case, "fMRI", letter by letter where the replacement is as long)."""
        lower = english.lower()
        word = self.words.get(lower) or self._made_up(lower)
        if english == lower:
            pass
        elif len(english) > 1 and english.isupper():
            word = word.upper()
        elif english[1:] != lower[1:] and len(word) == len(english):
            word = "".join(c.upper() if e.isupper() else c for c, e in zip(word, english))
        elif english[0].isupper():
            word = word[:1].upper() + word[1:]
        return word + _JOIN if word[-1] in "'’" else word

    def _token(self, match: re.Match[str]) -> str:
        return match.group(1) or self.word(match.group(2))

    def text(self, wikitext: str) -> str:
        """The wikitext with its words replaced and its markup kept."""
        text = re.sub(_JOIN + " *", "", _TOKEN.sub(self._token, wikitext))
        if self.spaceless:
            text = re.sub(f"(?<=[{_CJK}]) +(?=[{_CJK}])", "", text)
            text = re.sub(f"(?<=[{_CJK}])\\. *", "。", text)
            text = re.sub(f"(?<=[{_CJK}]), *", "，", text)
        elif self.language == "ar":
            text = text.replace(", ", "، ").replace("? ", "؟ ")
        return text

    def page(self, page: DumpPage) -> DumpPage:
        """The page with its title, redirect target and wikitext in the language."""
        return DumpPage(
            page_id=page.page_id,
            ns=page.ns,
            title=self.text(page.title),
            redirect_to=self.text(page.redirect_to) if page.redirect_to is not None else None,
            text=self.text(page.text),
            revision_id=page.revision_id,
            text_deleted=page.text_deleted,
        )


def translated(pages: list[DumpPage], language: str, counts: Counter[str]) -> list[DumpPage]:
    """The sample's pages in ``language`` (``<code>:generated``)."""
    code = language.removesuffix(":generated")
    translation = Translation(code, counts)
    return [translation.page(page) for page in pages]


def real_languages(folder: Path = REAL_PAGES) -> list[str]:
    """The languages that have real pages in ``folder`` (:func:`real_pages`)."""
    return sorted(path.name for path in folder.iterdir() if any(path.glob("*.wiki")))


def real_pages(language: str, folder: Path = REAL_PAGES) -> list[DumpPage]:
    """The real pages of ``language`` in ``folder`` (module docstring), as main-namespace pages
    numbered from 1 in the order of their files' names, titled by them (a title with ``_``, ``/``
    and ``:`` made spaces, as the files are named)."""
    files = sorted((folder / language).glob("*.wiki"))
    if not files:
        raise ValueError(f"no real pages of {language!r} in {folder} (it has {', '.join(real_languages(folder))})")
    return [
        DumpPage(page_id=number, ns=0, title=path.stem.replace("_", " "), redirect_to=None, text=path.read_text())
        for number, path in enumerate(files, 1)
    ]
