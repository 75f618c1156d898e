"""spaCy's tokenizer rules, each behind a test of what a match needs: the same tokens, sooner.

spaCy's tokenizer splits every chunk (a run of non-space characters) that it has not cached yet by
five regular expressions: prefix, suffix, infix, ``token_match`` and ``url_match``. On text its
worker has not seen they are a third (English) to two thirds (French) of the time of tokenizing:
the suffix expression, 82 alternatives each ending in ``$``, is tried at every position of a chunk
(2.5 us a call on the English sample), and French's ``token_match``, 266 alternatives of
hyphenated and elided words in 1.45 MB, 3.8 us. Yet most chunks are plain words, which none of
them matches, and a chunk ending in ``,`` can only be matched by the few suffix alternatives that
can end with one.

:func:`analysis` reads an expression (:class:`_Reader`) and finds (1) a set of characters that
every match holds one of (the ``.`` of ``(?<=[A-Z][A-Z])\\.$``, the digit of ``(?<=[0-9])km$``,
the hyphens and apostrophes of French's words; no letter: plain words hold letters) and (2) for
each top-level alternative, the characters its match can begin or end with, where it must begin
at the string's start (``^``) or end at its end (``$``). :func:`screened` puts both before the
expression: a string holding none of (1) gets "no match" at once, and a ``search`` (the suffix
rule) runs only the alternatives that can end with the string's last character (or begin with
its first): an expression made of them, in their order, compiled once per character. Each is the
whole expression's result, by construction: a match of any other alternative would hold, begin
or end with a character it cannot (1.0 and 0.5 us a call). Tests compare the rules on random
strings and the tokens of the real pages of every language with spaCy's. What the reader does not
follow (back references, scoped flags, comments, verbose expressions) leaves an expression as it
is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

Chars = frozenset[str] | None  # a set of characters; None: no set known (any character may do)

# One token of an expression's source: an escape (hexadecimal ones whole), a group's opening, a
# quantifier, or one character.
_TOKEN = re.compile(
    r"\\(?:u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|x[0-9A-Fa-f]{2}|.)|\(\?(?:P<\w+>|<[=!]|[:=!>]|[a-zA-Z-]*[:)])?"
    r"|\{(?:\d*,\d*|\d+)\}|.",
    re.DOTALL,
)
_CONTROL = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_CATEGORIES = frozenset("dDwWsS")
_ZERO_WIDTH = frozenset("bBAZ")  # outside a set


class _Unsupported(ValueError):
    """A construct the reader does not follow: the expression is left unscreened."""


def _escaped(token: str, in_set: bool) -> str | None:
    """The character an escape stands for, None for a category (``\\d``, ``\\w``, ...)."""
    kind = token[1]
    if kind in "uUx":
        return chr(int(token[2:], 16))
    if kind in _CATEGORIES:
        return None
    if kind in _CONTROL and (in_set or kind != "b"):
        return _CONTROL[kind]
    if kind.isascii() and kind.isalnum():  # a back reference, an octal or named escape, or invalid
        raise _Unsupported(token)
    return kind


def _uncased(chars: frozenset[str]) -> bool:
    """Whether no character of ``chars`` has another case: under IGNORECASE such a character still
    matches only itself."""
    return all(c.lower() == c == c.upper() for c in chars)


def _without_letters(chars: Chars) -> Chars:
    """``chars`` when none is a letter, else None: a set that plain words hold is no test."""
    return None if chars is None or any(map(str.isalpha, chars)) else chars


def _fewer(a: Chars, b: Chars) -> Chars:
    """Of two sets either of which a match must hold a character of, the smaller."""
    if a is None or b is None:
        return a if b is None else b
    return a if len(a) <= len(b) else b


def _union(a: Chars, b: Chars) -> Chars:
    return None if a is None or b is None else a | b


@dataclass(frozen=True)
class _Node:
    """What the reader knows of a part of an expression: ``needed``, letter-free characters one of
    which each of its matches holds (in what it consumes or its lookarounds read); ``first`` and
    ``last``, the characters its match can begin and end with; ``empty``, whether it can consume
    nothing (then ``first`` and ``last`` hold only what a non-empty match can begin or end with)."""

    needed: Chars
    first: Chars
    last: Chars
    empty: bool


_ZERO = _Node(None, frozenset(), frozenset(), True)  # an anchor, a lookaround: consumes nothing
_ANY = _Node(None, None, None, False)  # ".", a category, a negated set: one character, any


def _sequence(nodes: list[_Node]) -> _Node:
    """The node of ``nodes`` one after another."""
    first: Chars = frozenset()
    for node in nodes:
        first = _union(first, node.first)
        if not node.empty:
            break
    last: Chars = frozenset()
    for node in reversed(nodes):
        last = _union(last, node.last)
        if not node.empty:
            break
    needed: Chars = None
    for node in nodes:
        needed = _fewer(needed, node.needed)
    return _Node(needed, first, last, all(node.empty for node in nodes))


def _alternatives(nodes: list[_Node]) -> _Node:
    """The node of any one of ``nodes``."""
    needed: Chars = frozenset()
    first: Chars = frozenset()
    last: Chars = frozenset()
    for node in nodes:
        needed, first, last = _union(needed, node.needed), _union(first, node.first), _union(last, node.last)
    return _Node(needed or None, first, last, any(node.empty for node in nodes))


class _Reader:
    """A recursive-descent reader of Python's regular expression syntax, as far as spaCy's rules use
    it, that computes a :class:`_Node` instead of a parse tree. ``branches``: the token spans and
    nodes of the top-level alternatives."""

    def __init__(self, source: str, ignore_case: bool) -> None:
        self.tokens = _TOKEN.findall(source)
        self.at = 0
        self.ignore_case = ignore_case
        self.sets: dict[tuple[str, ...], _Node] = {}  # spaCy repeats the same sets many times
        self.branches: list[tuple[int, int, _Node]] = []

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> str:
        if self.at >= len(self.tokens):
            raise _Unsupported("unexpected end")
        self.at += 1
        return self.tokens[self.at - 1]

    def alternation(self, top: bool = False) -> _Node:
        branches = []
        while True:
            start = self.at
            branches.append(self.sequence())
            if top:
                self.branches.append((start, self.at, branches[-1]))
            if self.peek() != "|":
                return _alternatives(branches)
            self.take()

    def sequence(self) -> _Node:
        nodes = []
        while self.peek() not in (None, "|", ")"):
            node = self.atom()
            following = self.peek() or ""
            if following in ("*", "+", "?") or (following.startswith("{") and len(following) > 1):
                quantifier = self.take()
                if quantifier in ("*", "?") or re.fullmatch(r"\{0*(?:,\d*)?\}", quantifier):
                    node = _Node(None, node.first, node.last, True)  # may occur zero times
                if self.peek() in ("?", "+"):  # lazy or possessive: the same characters
                    self.take()
            nodes.append(node)
        return _sequence(nodes)

    def atom(self) -> _Node:
        token = self.take()
        if token.startswith("("):
            return self.group(token)
        if token == "[":
            return self.character_set()
        if token in ("^", "$"):
            return _ZERO
        if token == ".":
            return _ANY
        if token.startswith("{") or token in ("*", "+", "?"):
            raise _Unsupported(token)  # Python's "nothing to repeat"; a "{" it takes literally
        if token.startswith("\\"):
            if token[1] in _ZERO_WIDTH:
                return _ZERO
            char = _escaped(token, in_set=False)
            return _ANY if char is None else self.characters(frozenset(char))
        return self.characters(frozenset(token))

    def characters(self, chars: frozenset[str]) -> _Node:
        """A literal or a set: one of ``chars``. Under IGNORECASE a character with other cases
        matches them too: an ASCII letter its two cases, any other is not followed."""
        if self.ignore_case and not _uncased(chars):
            if not all(c.isascii() for c in chars):
                return _ANY
            ends = frozenset(chars | {c.lower() for c in chars} | {c.upper() for c in chars})
            return _Node(None, ends, ends, False)
        return _Node(_without_letters(chars), chars, chars, False)

    def group(self, opening: str) -> _Node:
        if opening.startswith("(?") and opening.endswith(")") and opening != "(?)":
            if self.at != 1 or any(flag not in "aiLmsux" for flag in opening[2:-1]) or set("Lx") & set(opening):
                raise _Unsupported(opening)  # flags apply to the whole expression: only at its start
            return _ZERO
        if opening.startswith("(?") and not opening.endswith((":", ">", "=", "!")) or "-" in opening:
            raise _Unsupported(opening)  # comments, conditionals, scoped flags
        if opening not in ("(", "(?:", "(?>", "(?=", "(?<=", "(?!", "(?<!") and not opening.startswith("(?P<"):
            raise _Unsupported(opening)
        inner = self.alternation()
        if self.take() != ")":
            raise _Unsupported("unclosed group")
        if opening in ("(?!", "(?<!"):
            return _ZERO
        if opening in ("(?=", "(?<="):
            return _Node(inner.needed, frozenset(), frozenset(), True)
        return inner

    def character_set(self) -> _Node:
        start = self.at
        negated = self.peek() == "^"
        first = start + negated  # a "]" first in the set is one of its characters
        try:
            end = self.tokens.index("]", first + 1 if self.peek_at(first) == "]" else first)
        except ValueError:
            raise _Unsupported("unclosed set") from None
        key = tuple(self.tokens[start:end])
        self.at = end + 1
        if key not in self.sets:
            chars = None if negated else self.set_characters(list(self.tokens[first:end]))
            self.sets[key] = _ANY if chars is None else self.characters(chars)
        return self.sets[key]

    def peek_at(self, at: int) -> str | None:
        return self.tokens[at] if at < len(self.tokens) else None

    @staticmethod
    def set_characters(tokens: list[str]) -> frozenset[str] | None:
        """The characters of a set's tokens (between ``[`` and ``]``, no ``^``), None when it holds
        a category or a letter."""
        chars: set[str] = set()
        items = [char for token in tokens for char in ([token] if token.startswith("\\") else token)]
        at = 0
        while at < len(items):
            low = _escaped(items[at], in_set=True) if items[at].startswith("\\") else items[at]
            if low is None:
                return None
            if at + 2 < len(items) and items[at + 1] == "-":
                high = _escaped(items[at + 2], in_set=True) if items[at + 2].startswith("\\") else items[at + 2]
                if high is None or high < low:
                    raise _Unsupported("bad range")
                span = range(ord(low), ord(high) + 1)
                if any(chr(code).isalpha() for code in span):
                    return None  # letters: no test, and no set worth holding
                chars.update(map(chr, span))
                at += 3
            else:
                chars.add(low)
                at += 1
        return frozenset(chars)


@dataclass(frozen=True)
class Branch:
    """A top-level alternative of an expression: its source (the global flags left out), the
    characters its match can begin and end with (None: not known, or it can be empty), and whether
    it begins with ``^`` (or ``\\A``) and ends with ``$`` (or ``\\Z``)."""

    source: str
    first: Chars
    last: Chars
    at_start: bool
    at_end: bool


@dataclass(frozen=True)
class Analysis:
    """What :func:`analysis` finds in an expression: ``needed``, letter-free characters one of which
    every match holds (None: no such set), and its top-level alternatives."""

    needed: Chars
    branches: tuple[Branch, ...]


@cache
def analysis(source: str, flags: int = re.UNICODE) -> Analysis | None:
    """The :class:`Analysis` of the expression ``source`` compiled with ``flags``, or None when the
    reader does not follow it."""
    if flags & re.VERBOSE:  # whitespace and comments that are not characters
        return None
    try:
        reader = _Reader(source, bool(flags & re.IGNORECASE))
        whole = reader.alternation(top=True)
        if reader.peek() is not None:
            raise _Unsupported("unbalanced )")
    except (_Unsupported, ValueError, OverflowError, IndexError):
        return None
    starts, ends = (("\\A",), ("\\Z",)) if flags & re.MULTILINE else (("^", "\\A"), ("$", "\\Z"))
    branches = []
    for start, end, node in reader.branches:
        tokens = reader.tokens[start:end]
        if start == 0 and tokens and tokens[0].startswith("(?") and tokens[0].endswith(")"):
            tokens = tokens[1:]  # the global flags: compiled with ``flags``
        first, last = (None, None) if node.empty else (node.first, node.last)
        at_start, at_end = bool(tokens) and tokens[0] in starts, bool(tokens) and tokens[-1] in ends
        branches.append(Branch("".join(tokens), first, last, at_start, at_end))
    return Analysis(_without_letters(whole.needed), tuple(branches))


def _set_source(chars: frozenset[str]) -> str:
    """A character set matching exactly ``chars``, as runs of code points."""
    codes = sorted(map(ord, chars))
    runs: list[list[int]] = []
    for code in codes:
        if runs and code == runs[-1][1] + 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return "[" + "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in runs) + "]"


_NO_MATCH: dict[str, Callable[[], Any]] = {
    "search": lambda: None,
    "match": lambda: None,
    "fullmatch": lambda: None,
    "finditer": lambda: iter(()),
}


def _rule_for(rule: Callable[[str], Any], ends: list[tuple[str, Chars]], char: str) -> Callable[[str], Any]:
    """``rule``'s method on an expression of the alternatives whose match can begin (or end: ``ends``
    holds the characters of one side) with ``char``; ``rule`` itself where that is all of them or,
    under IGNORECASE, ``char`` is a non-ASCII character with other cases (not followed)."""
    pattern: re.Pattern[str] = rule.__self__  # type: ignore[attr-defined]
    method: str = rule.__name__  # type: ignore[attr-defined]
    if pattern.flags & re.IGNORECASE and not char.isascii() and not _uncased(frozenset(char)):
        return rule
    chosen = [source for source, chars in ends if chars is None or char in chars]
    if len(chosen) == len(ends):
        return rule
    if not chosen:
        no_match = _NO_MATCH[method]
        return lambda text: no_match()
    return getattr(re.compile("|".join(chosen), pattern.flags), method)


def _sorting_side(rule: Callable[[str], Any], found: Analysis) -> tuple[int, list[tuple[str, Chars]]] | None:
    """The side (0: a string's first character, -1: its last) by which the alternatives of a
    ``search`` are sorted, with the characters each can begin (or end) with on it: the side that
    leaves the fewest unsorted (an alternative that does not begin with ``^``, or end with ``$``,
    can match anywhere), None when neither sorts half of them. A ``match`` or ``fullmatch`` is not
    sorted: spaCy's (``token_match``, ``url_match``) fail at their first characters, and French's
    1.45 MB, compiled again in parts, took 6 s more to build for no time saved."""
    if rule.__name__ != "search" or len(found.branches) < 2:  # type: ignore[attr-defined]
        return None
    sides = {
        0: [(b.source, b.first if b.at_start else None) for b in found.branches],
        -1: [(b.source, b.last if b.at_end else None) for b in found.branches],
    }
    unsorted = {side: sum(chars is None for _, chars in ends) for side, ends in sides.items()}
    side = min(unsorted, key=unsorted.__getitem__)
    return None if unsorted[side] * 2 > len(found.branches) else (side, sides[side])


def screened(rule: Callable[[str], Any] | None) -> Callable[[str], Any] | None:
    """``rule`` (a compiled expression's ``search``, ``match``, ``fullmatch`` or ``finditer``, as
    spaCy's tokenizer holds them) behind its :func:`analysis`: a string holding none of the
    characters every match needs gets the method's "no match" (None, or an empty iterator) at
    once, any other the result of the alternatives that can match its first or last character
    (:func:`_sorting_side`: one expression per character, compiled when first met), which is the
    whole expression's. Any other rule, or one the reader does not follow, is returned as it is."""
    pattern = getattr(rule, "__self__", None)
    method = getattr(rule, "__name__", None)
    if not isinstance(pattern, re.Pattern) or method not in _NO_MATCH or not isinstance(pattern.pattern, str):
        return rule
    found = analysis(pattern.pattern, pattern.flags)
    sorting = None if found is None else _sorting_side(rule, found)
    if found is None or (sorting is None and not found.needed):
        return rule
    holds = re.compile(_set_source(found.needed)).search if found.needed else None
    no_match = _NO_MATCH[method]
    if sorting is None:

        def screened_rule(text: str) -> Any:
            return rule(text) if holds(text) else no_match()

        screened_rule.__wrapped__ = rule  # type: ignore[attr-defined]
        return screened_rule
    side, ends = sorting
    rules: dict[str, Callable[[str], Any]] = {}

    def sorted_rule(text: str) -> Any:
        if holds is not None and not holds(text):
            return no_match()
        if not text or text[-1] == "\n":  # "$" matches before a last newline too
            return rule(text)
        char = text[side]
        fast = rules.get(char)
        if fast is None:
            fast = rules[char] = _rule_for(rule, ends, char)
        return fast(text)

    sorted_rule.__wrapped__ = rule  # type: ignore[attr-defined]
    return sorted_rule


# The rules worth their analysis: spaCy's suffix expression is tried at every position of a chunk
# (2.5 us a call on the English sample, 1.0 us screened and sorted), its ``token_match`` (French:
# 3.8 us, 0.5 screened) and ``url_match`` hold hundreds of alternatives; its prefix expression,
# anchored at the start, and its infix one, one scan, cost less than the test (0.4 and 0.2 us a
# call on the Hebrew page, 0.6 behind it).
SCREENED_RULES = ("suffix_search", "token_match", "url_match")


def screen_tokenizer(tokenizer: Any) -> None:
    """Puts the rules of :data:`SCREENED_RULES` of a spaCy ``Tokenizer`` behind their analysis
    (:func:`screened`). Setting a rule makes spaCy rebuild its special cases, with the same
    results: once, at the pipeline's build."""
    for name in SCREENED_RULES:
        rule = getattr(tokenizer, name, None)
        fast = screened(rule)
        if fast is not rule:
            setattr(tokenizer, name, fast)
