"""pelt's article text beside two peer parsers' on the real sample pages: WikiExtractor and mwparserfromhell.

Pages: the articles of the real dump sample (``../shared/data/wikipedia_dump_sample``, main
namespace, no redirects) and the real pages of ``../shared/data/wikitext_pages``. Each parser turns
each page's wikitext into plain text:

* ``pelt``: ``pelt.corpus.wikipedia.wikitext.wikitext_to_plain`` (text and anchor spans in one pass);
* ``wikiextractor``: ``Extractor.clean_text`` (its default: templates expanded, here with no
  template definitions, as a run without ``--templates``; paragraphs joined by newlines), and a
  second, untimed pass with ``keepLinks=True`` for its anchors;
* ``mwparserfromhell``: ``parse(text).strip_code()`` (its defaults: normalize, collapse), anchors
  from ``filter_wikilinks()``.

Measured per parser, summed over the pages:

* token agreement both ways: tokens are runs of word characters and single other non-space
  characters; ``pelt in peer`` is the multiset overlap of a page's pelt tokens and the peer's over
  the pelt tokens, ``peer in pelt`` over the peer's;
* leftover markup: occurrences of ``[[``, ``]]``, ``{{``, ``}}``, ``<ref``, ``''``, ``{|``, ``|}``,
  ``<!--``, HTML/extension tags, ``__MAGIC__`` words and escaped entities (``&amp;`` ...) in the text;
* anchors equal to the visible text: of the raw ``[[target|label]]trail`` links (a regular
  expression over the wikitext, as tests/unit/corpus/test_corpus.py computes them), how many the parser
  reports as an anchor whose text is that label (quotes, tags and entities removed) to that target;
  for pelt the anchor text is ``text[start:end]``, so the span is checked against the text it
  indexes; the peers expose link labels, not spans, so theirs are checked by label;
* speed: wikitext characters per CPU second of this process (one core), median of ``--repeats``;
  the parsers take turns, in an order rotated at each repeat (pelt, WikiExtractor, mwparserfromhell;
  then WikiExtractor, mwparserfromhell, pelt; ...), so that none is always the first or the last
  to run (caches, the machine's load): ``--no-rotate`` times each parser's repeats in a row, as
  before.

The most frequent tokens one parser has and the other lacks are printed, for the reading in
benchmarks/README.md. The peers are not project dependencies; install them beside pelt:

    pip install --target /tmp/peers wikiextractor==3.1.0 mwparserfromhell==0.7.2
    PYTHONPATH=src:/tmp/peers python benchmarks/wikitext_peers.py --out results/benchmarks/wikitext_peers.json
"""

from __future__ import annotations

import argparse
import html
import json
import logging
import os
import platform
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from pelt.corpus.wikipedia.dump import iter_dump_pages
from pelt.corpus.wikipedia.titles import normalize_title
from pelt.corpus.wikipedia.wikitext import wikitext_to_plain

try:
    import mwparserfromhell
    from wikiextractor.extract import Extractor
except ImportError as exc:  # not project dependencies: say how to get them
    raise SystemExit(
        f"{exc}: install the peers first, e.g. pip install --target /tmp/peers wikiextractor==3.1.0"
        " mwparserfromhell==0.7.2, and run with PYTHONPATH=src:/tmp/peers"
    ) from exc

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
DUMP = SHARED / "wikipedia_dump_sample" / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
PAGES = SHARED / "wikitext_pages"

TOKEN = re.compile(r"\w+|[^\w\s]")
MARKUP = {
    "[[": re.compile(r"\[\["),
    "]]": re.compile(r"\]\]"),
    "{{": re.compile(r"\{\{"),
    "}}": re.compile(r"\}\}"),
    "<ref": re.compile(r"<ref", re.I),
    "''": re.compile(r"''"),
    "{|": re.compile(r"\{\|"),
    "|}": re.compile(r"\|\}"),
    "<!--": re.compile(r"<!--"),
    "<tag>": re.compile(r"</?[a-zA-Z][a-zA-Z0-9]*(?:\s[^<>]*)?/?>"),
    "__MAGIC__": re.compile(r"__[A-Z]{3,}__"),
    "&entity;": re.compile(r"&(?:[a-zA-Z]{2,8}|#\d{1,7}|#x[0-9a-fA-F]{1,6});"),
}
RAW_LINK = re.compile(r"\[\[([^\[\]|]+)(?:\|((?:[^\[\]]|\[(?!\[)|\](?!\]))*))?\]\]([a-z]*)")
WE_LINK = re.compile(r'<a href="([^"]*)">(.*?)</a>', re.S)


def clean_label(label: str) -> str:
    """A link label as a reader sees it: no quote markup, tags or entities, spaces collapsed."""
    label = re.sub(r"'{2,}", "", re.sub(r"<[^<>]*>", "", label))
    return re.sub(r"\s+", " ", html.unescape(label)).strip()


def raw_links(wikitext: str) -> Counter[tuple[str, str]]:
    """(visible label, normalised target) of each article link of the wikitext."""
    found: Counter[tuple[str, str]] = Counter()
    for m in RAW_LINK.finditer(wikitext):
        target = normalize_title(m.group(1).lstrip(":"))
        if ":" in target:  # File:, Category:, interwiki: not article links
            continue
        label = m.group(1) if m.group(2) is None else m.group(2)
        found[(clean_label(label) + m.group(3), target)] += 1
    return found


def load_pages() -> list[tuple[str, str]]:
    pages = [(p.title, p.text) for p in iter_dump_pages(DUMP) if p.ns == 0 and p.redirect_to is None]
    pages += [(path.stem, path.read_text(encoding="utf-8")) for path in sorted(PAGES.glob("*.wiki"))]
    return pages


def pelt_text(title: str, wikitext: str) -> str:
    return wikitext_to_plain(wikitext)[0]


def pelt_anchors(title: str, wikitext: str) -> list[tuple[str, str]]:
    text, links = wikitext_to_plain(wikitext)
    return [(text[link.start : link.end], link.target) for link in links]


def wikiextractor_text(title: str, wikitext: str, keep_links: bool = False) -> str:
    extractor = Extractor(0, 0, "", title, [wikitext], keepLinks=keep_links)
    return "\n".join(extractor.clean_text(wikitext, html_safe=False))


def wikiextractor_anchors(title: str, wikitext: str) -> list[tuple[str, str]]:
    text = wikiextractor_text(title, wikitext, keep_links=True)
    return [(clean_label(label), normalize_title(unquote(href))) for href, label in WE_LINK.findall(text)]


def mwparser_text(title: str, wikitext: str) -> str:
    return mwparserfromhell.parse(wikitext).strip_code()


def mwparser_anchors(title: str, wikitext: str) -> list[tuple[str, str]]:
    anchors = []
    for link in mwparserfromhell.parse(wikitext).filter_wikilinks():
        label = link.text.strip_code() if link.text is not None else str(link.title)
        anchors.append((clean_label(label), normalize_title(str(link.title).lstrip(":"))))
    return anchors


PARSERS: dict[str, tuple[Callable[[str, str], str], Callable[[str, str], list[tuple[str, str]]]]] = {
    "pelt": (pelt_text, pelt_anchors),
    "wikiextractor": (wikiextractor_text, wikiextractor_anchors),
    "mwparserfromhell": (mwparser_text, mwparser_anchors),
}


def timed_texts(
    convert: Callable[[str, str], str], pages: list[tuple[str, str]], repeats: int
) -> tuple[list[str], float]:
    """Each page's text and the median CPU seconds of converting them all."""
    times, texts = [], []
    for _ in range(repeats):
        started = time.process_time()
        texts = [convert(title, wikitext) for title, wikitext in pages]
        times.append(time.process_time() - started)
    return texts, statistics.median(times)


def rotated_texts(
    names: list[str], pages: list[tuple[str, str]], repeats: int
) -> dict[str, tuple[list[str], float, list[float]]]:
    """Per parser: each page's text, the median CPU seconds of converting them all and every
    repeat's, the parsers taking turns in an order rotated at each repeat."""
    times: dict[str, list[float]] = {name: [] for name in names}
    texts: dict[str, list[str]] = {}
    for repeat in range(repeats):
        shift = repeat % len(names)
        for name in names[shift:] + names[:shift]:
            convert = PARSERS[name][0]
            started = time.process_time()
            texts[name] = [convert(title, wikitext) for title, wikitext in pages]
            times[name].append(time.process_time() - started)
    return {name: (texts[name], statistics.median(times[name]), times[name]) for name in names}


def anchor_agreement(anchors: list[list[tuple[str, str]]], pages: list[tuple[str, str]]) -> dict[str, int]:
    reported = matched = 0
    expected_total = 0
    for found, (_, wikitext) in zip(anchors, pages):
        expected = raw_links(wikitext)
        expected_total += sum(expected.values())
        for anchor in found:
            if ":" in anchor[1]:
                continue
            reported += 1
            if expected[anchor] > 0:
                expected[anchor] -= 1
                matched += 1
    return {"raw_links": expected_total, "anchors": reported, "anchors_equal_to_a_raw_label": matched}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--top", type=int, default=25, help="tokens listed where pelt and a peer differ most")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--no-rotate", action="store_true", help="time each parser's repeats in a row, the parsers one after another"
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)  # WikiExtractor warns per template it cannot expand
    pages = load_pages()
    chars = sum(len(wikitext) for _, wikitext in pages)
    print(f"{len(pages)} pages, {chars:,} wikitext characters; load {os.getloadavg()[0]:.1f}", flush=True)

    texts: dict[str, list[str]] = {}
    result: dict[str, Any] = {
        "pages": len(pages),
        "wikitext_chars": chars,
        "machine": f"{platform.node()} {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_start": os.getloadavg()[0],
        "timing": "in a row" if args.no_rotate else "rotated",
        "parsers": {},
    }
    rotated = {} if args.no_rotate else rotated_texts(list(PARSERS), pages, args.repeats)
    for name, (to_text, to_anchors) in PARSERS.items():
        if args.no_rotate:
            texts[name], seconds = timed_texts(to_text, pages, args.repeats)
            runs = None
        else:
            texts[name], seconds, runs = rotated[name]
        leftovers = {marker: sum(len(rx.findall(t)) for t in texts[name]) for marker, rx in MARKUP.items()}
        anchors = anchor_agreement([to_anchors(title, wikitext) for title, wikitext in pages], pages)
        result["parsers"][name] = {
            "cpu_s": round(seconds, 3),
            "cpu_s_runs": runs and [round(t, 3) for t in runs],
            "chars_per_cpu_s": round(chars / seconds),
            "plain_chars": sum(len(t) for t in texts[name]),
            "tokens": sum(len(TOKEN.findall(t)) for t in texts[name]),
            "leftover_markup": leftovers,
            **anchors,
        }
        print(name, json.dumps(result["parsers"][name]), flush=True)

    pelt_tokens = [Counter(TOKEN.findall(t)) for t in texts["pelt"]]
    for name in ("wikiextractor", "mwparserfromhell"):
        theirs = [Counter(TOKEN.findall(t)) for t in texts[name]]
        common = sum(sum((a & b).values()) for a, b in zip(pelt_tokens, theirs))
        only_pelt = sum((a - b for a, b in zip(pelt_tokens, theirs)), Counter())
        only_peer = sum((b - a for a, b in zip(pelt_tokens, theirs)), Counter())
        agreement = {
            "pelt_in_peer": round(common / sum(sum(a.values()) for a in pelt_tokens), 4),
            "peer_in_pelt": round(common / sum(sum(b.values()) for b in theirs), 4),
            "only_pelt_top": only_pelt.most_common(args.top),
            "only_peer_top": only_peer.most_common(args.top),
            "only_pelt_total": sum(only_pelt.values()),
            "only_peer_total": sum(only_peer.values()),
        }
        result["parsers"][name]["agreement_with_pelt"] = agreement
        print(name, "vs pelt", json.dumps(agreement, ensure_ascii=False), flush=True)
    pelt_rate = result["parsers"]["pelt"]["chars_per_cpu_s"]
    result["pelt_speed_over"] = {
        name: round(pelt_rate / result["parsers"][name]["chars_per_cpu_s"], 2) for name in PARSERS if name != "pelt"
    }
    print("pelt's chars per CPU second over each peer's:", json.dumps(result["pelt_speed_over"]), flush=True)
    result["load_end"] = os.getloadavg()[0]
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
