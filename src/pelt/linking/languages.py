"""The language of a corpus in the linking stage: which spaCy pipeline tokenizes it, its few extra
rules, and its stop words (docs/languages.md).

The language comes from the corpus (:func:`pelt.logs.corpus_language`: the Wikipedia dump's own, or
``corpora.<name>.language``) as a Wikipedia code; spaCy's blank pipeline of that language brings its
tokenizer exceptions ("z. B.", "Nr.", "M.", "1er" stay one token, so the sentencizer never cuts
there), its punctuation and its stop words. What spaCy's data lacks is added here as small rules
(:data:`ORDINAL_DOT_LANGUAGES`), and nothing is downloaded: every pipeline is blank.
"""

from __future__ import annotations

import importlib.util
import logging
import pkgutil
import re
from collections.abc import Callable
from functools import cache

import spacy
import spacy.lang
from spacy.language import Language
from spacy.util import compile_suffix_regex

from pelt.linking.affixes import screen_tokenizer, screened
from pelt.linking.chunks import ChunkTokenizer
from pelt.linking.tokenizers import CharacterTokenizer, MecabTokenizer

log = logging.getLogger(__name__)

# Wikipedia codes that name a language spaCy files under another code: Simple English is English,
# Wikipedia's "no" is Bokmal (spaCy's "nb"), and Cantonese and Classical Chinese are written in
# Chinese characters, which spaCy's Chinese segments one by one whatever the variety.
ALIASES = {"simple": "en", "no": "nb", "zh-yue": "zh", "zh-classical": "zh"}
# spaCy's language-neutral pipeline: the fallback for a language spaCy has no data for.
FALLBACK = "xx"
# Languages whose tokenizer imports a package spaCy does not install: (import name, pip name) of
# each. Japanese's (pelt's own tokenizer, MeCab with UniDic: :class:`MecabTokenizer`) are pinned in
# the workflow's dependencies (pyproject.toml's `workflow` extra, constraints.txt, envs/spark.yaml),
# so `make install` brings them; spaCy's Korean (which also needs the mecab-ko library), Thai and
# Vietnamese are not, and a corpus in them is refused until they are installed
# (:func:`missing_packages`). Chinese needs none: spaCy's default segmenter is one token per
# character.
TOKENIZER_PACKAGES: dict[str, tuple[tuple[str, str], ...]] = {
    "ja": (("fugashi", "fugashi"), ("unidic_lite", "unidic-lite")),
    "ko": (("natto", "natto-py"),),
    "th": (("pythainlp", "pythainlp"),),
    "vi": (("pyvi", "pyvi"),),
}
# Languages whose packages the workflow pins: `make install` brings them.
PINNED_PACKAGES = frozenset({"ja"})
# Languages whose tokenizer splits words into several tokens (spaCy's Chinese makes one token per
# character): there a stop word ("我们") is a sequence of tokens, not one.
WRITTEN_WITHOUT_SPACES = frozenset({"zh", "ja", "th", "bo"})
# Languages that write ordinals with a dot ("am 10. Dezember", "im 19. Jahrhundert", "Ludwig XIV.",
# Finnish "10. joulukuuta", Czech "Karel IV."). spaCy keeps "10." one token in some of them (de, nb,
# hu, sl, sr, tr) and splits it in the others, where its sentencizer then cuts the sentence in two;
# and where it keeps the dot, it keeps it after a year too ("Er starb 1870."), so that the sentence
# never ends. The rule here, the same in all of them: a number of one to three digits or a Roman
# numeral followed by a dot is one token (an ordinal), and a dot after a longer number is split
# off (a year or a quantity ending the sentence: ordinals past 999 are rare).
ORDINAL_DOT_LANGUAGES = frozenset(
    {"cs", "da", "de", "et", "fi", "hr", "hu", "is", "lv", "nb", "pl", "sk", "sl", "sr", "tr"}
)
_ORDINAL = re.compile(r"(?:[0-9]{1,3}|[IVXLC]+)\.").fullmatch
_NUMBER_DOT = r"(?<=[0-9]{4})\."


@cache
def spacy_languages() -> tuple[str, ...]:
    """The language codes of the installed spaCy (its ``spacy.lang`` packages)."""
    return tuple(sorted(module.name for module in pkgutil.iter_modules(spacy.lang.__path__) if module.ispkg))


@cache
def spacy_language(language: str) -> str:
    """spaCy's code for a corpus language (a Wikipedia code): itself, its alias (:data:`ALIASES`),
    or, for a language spaCy has no data for, :data:`FALLBACK` with a warning: the linking of a
    corpus in one of the hundreds of Wikipedia languages spaCy lacks is still done, on tokens split
    at spaces and punctuation, without stop words. Cached: the warning is logged once per process."""
    code = ALIASES.get(language, language)
    if code in spacy_languages():
        return code
    log.warning(
        "language %r: spaCy %s has no pipeline for it (it has %s); its language-neutral %r is used",
        language,
        spacy.__version__,
        ", ".join(spacy_languages()),
        FALLBACK,
    )
    return FALLBACK


def missing_packages(language: str) -> str | None:
    """One line naming the packages the tokenizer of ``language`` (a Wikipedia code) needs and this
    Python lacks, with the command that installs them; None when it has them all.

    The workflow asks before any job runs, so that a corpus in such a language is refused at once
    with the package's name, not by a Spark task's ImportError after the corpus stage (spaCy
    imports the package only when the pipeline is built). Looked up without importing them.
    """
    code = spacy_language(language)
    missing = [pip for module, pip in TOKENIZER_PACKAGES.get(code, ()) if importlib.util.find_spec(module) is None]
    if not missing:
        return None
    names = ", ".join(missing)
    if code in PINNED_PACKAGES:
        how = f"`make install` installs the workflow's pins (pip install -c constraints.txt {' '.join(missing)})"
    else:
        how = f"pelt does not pin them (pip install {' '.join(missing)})"
    return f"language {language!r}: the {code!r} tokenizer needs {names}, not installed; {how}"


def blank_pipeline(language: str) -> Language:
    """spaCy's blank pipeline of ``language`` (a Wikipedia code) with pelt's rules for it, its
    tokenizer's expressions behind their analysis (:mod:`pelt.linking.affixes`: the same tokens) and,
    in Chinese and Japanese, tokens taken as arrays (:mod:`pelt.linking.tokenizers`); in the
    languages split at spaces, as arrays too, each distinct chunk tokenized once (:mod:`pelt.linking.chunks`).

    A language whose tokenizer needs a package that is not installed (Japanese: fugashi and
    unidic-lite; Korean, Thai, Vietnamese) fails here with :func:`missing_packages`'s line, or with spaCy's
    message where the package is there but what it needs is not (Korean's mecab-ko library): its
    text is not tokenized into words without it.
    """
    code = spacy_language(language)
    missing = missing_packages(language)
    if missing is not None:
        raise ImportError(missing)
    # Japanese: spaCy's rule-based tokenizer in the place of its Japanese one (which imports
    # SudachiPy), replaced by MeCab's words below; the language's other data (stop words) is spaCy's.
    config = {"nlp": {"tokenizer": {"@tokenizers": "spacy.Tokenizer.v1"}}} if code == "ja" else {}
    try:
        pipeline = spacy.blank(code, config=config)
    except ImportError as error:
        raise ImportError(f"the linking stage cannot tokenize language {language!r}: {error}") from error
    if getattr(pipeline.tokenizer, "segmenter", None) == "char":
        pipeline.tokenizer = CharacterTokenizer(pipeline.vocab)
    if code == "ja":
        pipeline.tokenizer = MecabTokenizer(pipeline.vocab)
    if code in ORDINAL_DOT_LANGUAGES:
        tokenizer = pipeline.tokenizer
        tokenizer.token_match = _or_ordinal(tokenizer.token_match)
        tokenizer.suffix_search = compile_suffix_regex([*pipeline.Defaults.suffixes, _NUMBER_DOT]).search
    screen_tokenizer(pipeline.tokenizer)
    pipeline.tokenizer = ChunkTokenizer.of(pipeline.tokenizer)
    return pipeline


def _or_ordinal(token_match: Callable[[str], object] | None) -> Callable[[str], object]:
    """A tokenizer ``token_match`` that also keeps an ordinal with its dot one token (the
    language's own behind its analysis, :func:`pelt.linking.affixes.screened`: once wrapped here,
    ``screen_tokenizer`` cannot read it)."""
    if token_match is None:
        return _ORDINAL
    other = screened(token_match)
    return lambda text: _ORDINAL(text) or other(text)


def stop_words(language: str) -> frozenset[str]:
    """spaCy's stop words of the language (none for :data:`FALLBACK`)."""
    return frozenset(spacy.util.get_lang_class(spacy_language(language)).Defaults.stop_words)


def written_without_spaces(language: str) -> bool:
    """Whether the language's words are several tokens each (:data:`WRITTEN_WITHOUT_SPACES`)."""
    return spacy_language(language) in WRITTEN_WITHOUT_SPACES
