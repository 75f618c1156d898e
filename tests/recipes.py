"""Recipes that cut a test file out of a public file (tests/real_data.py, the ``recipe`` column).

Some real test files are not a file of their own anywhere: a page's wikitext is the ``<text>`` of one
``<page>`` of a compressed dump, a string literal of a Scala test, a member of a zip, a field of a
recorded API response. Their manifest row names the public file they were cut from (pinned, with its
own sha256) and a recipe: steps separated by ``|``, each ``kind`` or ``kind:argument``, each taking
the bytes the previous one gave, e.g. ``bz2|xml-page:Berlin`` or ``zip:content.json|json:articles/X/content``.
The derived bytes must then match the row's sha256, so a recipe is checked by what it gives, never
trusted. Step kinds (one function each, in ``STEPS``):

- ``bz2``, ``xz``: decompress (``xz`` keeps what a cut-off stream gives: a truncated sample's end);
- ``zip:MEMBER``: the member's bytes;
- ``json:PATH``, ``yaml:PATH``: the string at ``PATH`` (keys and list indices joined by ``/``), UTF-8;
- ``xml-page:TITLE``: the ``<text>`` of the MediaWiki export's ``<page>`` titled TITLE, as an XML
  parser reads it (entities decoded), UTF-8; the document may be cut off after that page;
- ``xml-head:N``: the export's bytes up to the line closing its N-th ``</page>``, ``</mediawiki>`` added;
- ``scala-string:PREFIX``: the ``\"\"\"`` literal right after the one occurrence of PREFIX, ``\\n`` decoded;
- ``crlf``: CRLF line ends as LF.
"""

from __future__ import annotations

import bz2
import io
import json
import lzma
import re
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Callable

import yaml

_CHUNK = 1 << 20
# What a step raises on an input it cannot read (a bad archive, document or encoding).
_UNREADABLE = (ValueError, OSError, EOFError, lzma.LZMAError, zipfile.BadZipFile, ET.ParseError, yaml.YAMLError)


class RecipeError(ValueError):
    """A recipe that does not parse, or a step that finds nothing to take in its input."""


def _bz2(data: bytes, arg: str) -> bytes:
    return bz2.decompress(data)


def _xz(data: bytes, arg: str) -> bytes:
    """A stream cut off before its end gives what it holds, where ``lzma.decompress`` would refuse it."""
    return lzma.LZMADecompressor().decompress(data)


def _zip(data: bytes, member: str) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        try:
            return archive.read(member)
        except KeyError:
            raise RecipeError(f"no member {member!r} in the zip") from None


def _walk(tree: object, path: str) -> bytes:
    """The string at ``path`` (``a/0/b``: keys, list indices) in a parsed JSON or YAML document."""
    for key in path.split("/"):
        try:
            tree = tree[int(key)] if isinstance(tree, list) else tree[key]
        except (KeyError, IndexError, TypeError, ValueError):
            raise RecipeError(f"no {key!r} on the path {path!r}") from None
    if not isinstance(tree, str):
        raise RecipeError(f"{path!r} holds a {type(tree).__name__}, not a string")
    return tree.encode("utf-8")


def _json(data: bytes, path: str) -> bytes:
    return _walk(json.loads(data), path)


def _yaml(data: bytes, path: str) -> bytes:
    return _walk(yaml.safe_load(data), path)


def _xml_page(data: bytes, title: str) -> bytes:
    """Reads the export in chunks and stops at the page: a dump cut off later (a truncated sample)
    still gives its earlier pages, and the pages before it are dropped as they are passed."""
    parser = ET.XMLPullParser(events=("end",))
    for start in range(0, len(data), _CHUNK):
        parser.feed(data[start : start + _CHUNK])  # no close(): a document cut off is no error here
        for _, element in parser.read_events():
            if element.tag.rpartition("}")[2] != "page":
                continue
            if element.findtext("{*}title") == title:
                text = element.find("{*}revision/{*}text")
                if text is None:
                    raise RecipeError(f"the page {title!r} has no revision text")
                return (text.text or "").encode("utf-8")
            element.clear()
    raise RecipeError(f"no page titled {title!r}")


def _xml_head(data: bytes, count: str) -> bytes:
    end = -1
    for _ in range(int(count)):
        end = data.find(b"</page>", end + 1)
        if end < 0:
            raise RecipeError(f"fewer than {count} pages")
    line_end = data.find(b"\n", end)
    if line_end < 0:
        raise RecipeError(f"the line of page {count}'s </page> does not end")
    return data[: line_end + 1] + b"</mediawiki>\n"


def _scala_string(data: bytes, prefix: str) -> bytes:
    text = data.decode("utf-8")
    found = [m.end() for m in re.finditer(re.escape(prefix), text)]
    if len(found) != 1:
        raise RecipeError(f"{prefix!r} occurs {len(found)} times, not once")
    start = found[0]
    if not text.startswith('"""', start):
        raise RecipeError(f'no """ literal right after {prefix!r}')
    end = text.find('"""', start + 3)
    if end < 0:
        raise RecipeError(f"the literal after {prefix!r} is not closed")
    return text[start + 3 : end].replace("\\n", "\n").encode("utf-8")


def _crlf(data: bytes, arg: str) -> bytes:
    return data.replace(b"\r\n", b"\n")


# kind -> (step, whether it takes an argument)
STEPS: dict[str, tuple[Callable[[bytes, str], bytes], bool]] = {
    "bz2": (_bz2, False),
    "xz": (_xz, False),
    "zip": (_zip, True),
    "json": (_json, True),
    "yaml": (_yaml, True),
    "xml-page": (_xml_page, True),
    "xml-head": (_xml_head, True),
    "scala-string": (_scala_string, True),
    "crlf": (_crlf, False),
}


def parse(recipe: str) -> list[tuple[str, str]]:
    """The recipe's steps as (kind, argument); raises ``RecipeError`` on an unknown kind or a missing
    or surplus argument, so that a bad row fails when the manifest is read, not on a fetch."""
    steps = []
    for step in recipe.split("|"):
        kind, colon, arg = step.partition(":")
        if kind not in STEPS:
            raise RecipeError(f"unknown step {kind!r} (known: {', '.join(STEPS)})")
        if STEPS[kind][1] != bool(colon and arg):
            raise RecipeError(f"step {kind!r} {'needs' if STEPS[kind][1] else 'takes no'} argument")
        if kind == "xml-head" and not arg.isdigit():
            raise RecipeError(f"xml-head takes a page count, not {arg!r}")
        steps.append((kind, arg))
    return steps


def derive(recipe: str, source: bytes, done: dict[str, bytes] | None = None) -> bytes:
    """The bytes ``recipe`` cuts out of ``source``. ``done`` (one dict per source, kept by the caller)
    holds each intermediate result by the recipe's prefix, so that the rows cut from one dump
    decompress it once."""
    steps, raw = parse(recipe), recipe.split("|")
    data = source
    for i, (kind, arg) in enumerate(steps):
        prefix = "|".join(raw[: i + 1])
        if done is not None and prefix in done:
            data = done[prefix]
            continue
        try:
            data = STEPS[kind][0](data, arg)
        except _UNREADABLE as err:
            raise RecipeError(f"step {raw[i]!r}: {' '.join(str(err).split()) or type(err).__name__}") from err
        if done is not None and i < len(steps) - 1:
            done[prefix] = data
    return data
