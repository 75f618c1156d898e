"""Corpus and linking throughput on the real dump sample, stage by stage, against 3 M chars/s/core.

Pure-Python stages are timed outside Spark in CPU seconds of this process (one core), each on the
whole sample, ``--repeats`` times (median):

* ``read``: bz2 + XML -> pages (``iter_dump_pages``);
* ``parse``: wikitext -> plain text + anchors (``wikitext_to_plain``), the corpus stage's articles;
* ``anchors``: the usable anchors of each document, the alias pass (``document_anchors``);
* ``segment``: one tokenization, sentence split and anchor placement (``segment_document``
  without a name filter; ``tokenize`` alone is reported beside it);
* ``names``: candidate names through the Bloom filter of the names the pruning keeps, on the
  tokens that ``segment`` made, exact, of a linkable name, longest match (``candidate_names`` +
  ``longest_names``: the rest of ``segment_document`` with a filter, and the Python that
  ``link_wikipedia`` runs per sentence);
* ``heuristic``: Algorithm 1 per document (``heuristic_links``) on its seeds, candidates and
  restricted adjacency.

What ``link_wikipedia`` decides in Spark joins between those steps is made here beforehand,
untimed, by the same library functions in a local Spark session (:func:`link_inputs`): titles
resolved (``resolve_titles``), aliases (``alias_table``), and the candidate pruning of
:mod:`pelt.linking.candidates` (``score_name_entities``: prior, cap, stop words) and of
:mod:`pelt.linking.link` (``linkable_names``: link probability), applied where ``link.py``
applies them: the benchmark calls the stage's own public functions. Then the whole
Spark stages, ``build_wikipedia_corpus`` and ``link_wikipedia``, in wall seconds for each
``--masters`` (``local[N]``): per-core rates divide by N; the Spark jobs, stages and tasks of one
linking run are counted. The reproduction must find the name occurrences and link the names that
Spark does, exactly, or its stage figures are not the pipeline's and the run fails (exit 1). The
slowest pure-Python stage is profiled with cProfile.

    python benchmarks/corpus_throughput.py --out results/benchmarks/corpus_throughput.json

``--languages de fr zh ...`` measures instead the pure-Python stages per language, English (the
dump sample) first as the reference, in one run and one table (chars/s/core of parse, split and
link, and the ratio to English's), on the pages of :mod:`language_sample`: the real pages of the
shared data, or ``<code>:generated``, the English sample made in the language. Each is parsed with
its language's site facts, split and linked with its spaCy pipeline and pruned with its stop
words. Each is compared with English of its size as well (:func:`english_of_its_size`: a sample
of a few pages is split by a tokenizer that has seen little of its language). A language whose
split runs a word segmenter of its own (Japanese: MeCab) has that segmenter timed alone too
(:func:`segmenter_seconds`), and a language below half of English's is told the most its ratio
could be were the rest of its split free. ``--rounds`` runs every sample once a round and keeps
the median, so that a change of load hits all alike.

    python benchmarks/corpus_throughput.py --languages de fr ja zh ar he ur fa --repeats 3 --rounds 3
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import logging
import os
import platform
import pstats
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from pelt.corpus.documents import expand_paths
from pelt.corpus.wikipedia.build import build_wikipedia_corpus, page_record
from pelt.corpus.wikipedia.dump import dump_site, iter_dump_pages
from pelt.corpus.wikipedia.pages import DumpPage
from pelt.corpus.wikipedia.site import SiteInfo
from pelt.corpus.wikipedia.titles import normalize_title
from pelt.corpus.wikipedia.wikitext import wikitext_to_plain
from pelt.linking.candidates import alias_keys, longest_names, score_name_entities
from pelt.linking.heuristic import heuristic_links
from pelt.linking.languages import spacy_language, spacy_languages
from pelt.linking.link import LinkSettings, alias_table, link_wikipedia, linkable_names
from pelt.linking.names import BloomFilter, candidate_names, name_filter
from pelt.linking.redirects import resolve_column, resolve_titles
from pelt.linking.segmentation import document_anchors, segment_document, valid_anchors
from pelt.linking.sentences import Tokens, new_pipeline, nlp, paragraphs, sentence_spans, tokenize
from pelt.spark import get_spark

sys.path.insert(0, str(Path(__file__).resolve().parent))
from language_sample import english_words, real_languages, real_pages, translated  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DUMP = "../shared/data/wikipedia_dump_sample/*.bz2"
TARGET = 3_000_000  # wikitext chars/s/core for parse + split + link (issue 57 item 2; issue 3's was 1 M)
LANGUAGES = "en (the dump sample), {real} (real pages), or <code>:generated for any code of spacy.lang"
PIPELINE = ("parse", "anchors", "segment", "names", "heuristic")  # read is reported beside: it is I/O + C code
SETTINGS = LinkSettings()  # the linker's defaults: its pruning and its iterations
# What resolve_titles reads of the corpus stage's pages.
PAGE_COLUMNS = {
    "page_id": "long",
    "title": "string",
    "is_redirect": "boolean",
    "redirect_to": "string",
    "is_disambiguation": "boolean",
}
SMALL_JOBS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"  # the demo's JVM: small jobs, 40 % less CPU


def settle() -> None:
    """Before the clock runs: what exists now frozen out of the garbage collector's reach, so that
    a collection falling in a timed stage does not scan the samples, every language's in one run
    (the Arabic sample's ``segment`` took 0.026 CPU s without, 0.021 with)."""
    gc.collect()
    gc.freeze()


@contextmanager
def clock(times: list[float], profile: cProfile.Profile | None) -> Iterator[None]:
    """Adds the CPU seconds of its block to ``times``; with ``profile``, profiles the block (the
    timed work only, not what prepares it)."""
    if profile is not None:
        profile.enable()
    start = time.process_time()
    try:
        yield
    finally:
        times.append(time.process_time() - start)
        if profile is not None:
            profile.disable()


def cpu_seconds(
    fn: Callable[[], Any], repeats: int, profile: cProfile.Profile | None = None
) -> tuple[float, list[float], Any]:
    """Median CPU seconds of ``fn()`` over ``repeats`` runs, all the runs, and the last result."""
    times: list[float] = []
    for _ in range(repeats):
        with clock(times, profile):
            result = fn()
    return statistics.median(times), times, result


def unseen_text_seconds(
    fn: Callable[[dict], Any],
    rows: list[dict],
    repeats: int,
    language: str = "en",
    profile: cProfile.Profile | None = None,
) -> tuple[float, list[float], list[Any]]:
    """Median CPU seconds of ``fn(row)`` over all ``rows`` as a worker that never saw them runs it.

    spaCy's tokenizer caches the tokens of every chunk it has seen, so timing a second pass over
    the same sample would measure a cache that holds exactly its words. Each half of the rows is
    timed in a new pipeline that has tokenized only the other half: cached common words, unseen
    rare ones, as in a Spark worker that has processed other documents (with only 53 documents
    seen, the cache is colder than a long-running worker's). What a worker does once per process
    (imports numpy makes on first use, cached tables, the pipeline's build) is done before the
    clock starts: numpy's first ``isin`` alone, an import, was a quarter of the Arabic page's split.
    ``language``: the pipeline that ``fn`` tokenizes with.
    """
    times: list[float] = []
    out: list[Any] = [None] * len(rows)
    fn(rows[0])  # what a worker does once
    for _ in range(repeats):
        halves: list[float] = []
        for parity in (0, 1):
            new_pipeline(language)
            for row in rows[1 - parity :: 2]:
                tokenize(row["text"], language)
            with clock(halves, profile):
                for i in range(parity, len(rows), 2):
                    out[i] = fn(rows[i])
        times.append(sum(halves))
    return statistics.median(times), times, out


@dataclass(frozen=True)
class Sample:
    """A sample as the pipeline reads it in ``language`` (as given: ``en``, ``de``,
    ``de:generated``; ``code``: the corpus language), and what ``link_wikipedia`` decides for it
    in Spark joins (made once, untimed, by :func:`link_inputs`): each title's entity, the (name ->
    entities) pairs the pruning keeps, the names linkable (link probability), the filter of the
    kept names."""

    language: str
    code: str
    site: SiteInfo
    pages: list[DumpPage]
    articles: list[DumpPage]  # the corpus stage's documents
    plain: list[int]  # the plain text's length of each article
    titles: dict[str, str | None]
    name_entities: dict[str, set[str]]
    linkable: frozenset[str]
    bloom: BloomFilter
    aliases: int


def english_of_its_size(english: Sample, sample: Sample) -> Sample:
    """English as small as ``sample``: for each of its articles, longest first, the article of
    ``english`` closest to it in plain-text length not taken yet, with ``english``'s pruning.

    A sample of a few pages is split by a tokenizer that has seen little of its language, where
    English's is split after the other half of 106 articles: English itself splits one article of
    the Arabic page's size at half the rate of its whole sample. Against English of its size, a
    language is compared with as warm a tokenizer cache."""
    free = dict(zip((page.page_id for page in english.articles), zip(english.plain, english.articles)))
    chosen: list[tuple[int, DumpPage]] = []
    for size in sorted(sample.plain, reverse=True):
        page_id = min(free, key=lambda key: abs(free[key][0] - size))
        chosen.append(free.pop(page_id))
    return replace(
        english,
        language=f"en ({sample.language}'s size)",
        pages=[page for _, page in chosen],
        articles=[page for _, page in chosen],
        plain=[size for size, _ in chosen],
    )


def corpus_pages(pages: list[DumpPage], site: SiteInfo) -> list[dict[str, Any]]:
    """The corpus stage's row of each main-namespace page it keeps (``page_record``: an article or
    a redirect, disambiguation marked), as ``build_wikipedia_corpus`` reads it with ``site``."""
    rows = [page_record(page, site) for page in pages]
    return [row for row in rows if row["skip"] is None]


def document_rows(articles: list[DumpPage], parsed: list[tuple[str, list]]) -> list[dict[str, Any]]:
    """The documents of ``link_wikipedia``: id, title, plain text and anchors of each article."""
    return [
        {
            "doc_id": str(page.page_id),
            "title": normalize_title(page.title),
            "text": text,
            "links": [{"start": link.start, "end": link.end, "target": link.target} for link in links],
        }
        for page, (text, links) in zip(articles, parsed, strict=True)
    ]


def sentence_inputs(rows: list[dict], tokens: list[Tokens], language: str) -> list[tuple[list, list]]:
    """Per document, its sentence spans and the spans of its anchors: what ``segment_document``
    hands ``candidate_names`` (computed untimed here, their time is ``segment``'s)."""
    return [
        (
            sentence_spans(row["text"], doc_tokens, language),
            [(start, end) for start, end, _ in valid_anchors(row["text"], row["links"])[0]],
        )
        for row, doc_tokens in zip(rows, tokens, strict=True)
    ]


def name_occurrences(
    rows: list[dict],
    tokens: list[Tokens],
    spans: list[tuple[list, list]],
    bloom: BloomFilter,
    names: set[str] | frozenset[str],
) -> list[dict[int, list[dict]]]:
    """Per document and sentence, the candidates (``candidate_names`` through ``bloom``, never over
    an anchor) whose name is one of ``names``: ``exact_names``, or its rows of a linkable name."""
    out = []
    for row, doc_tokens, (sents, blocked) in zip(rows, tokens, spans, strict=True):
        found: dict[int, list[dict]] = defaultdict(list)
        for cand in candidate_names(row["text"], doc_tokens, sents, bloom, blocked):
            if cand["name"] in names:
                found[cand["sent_idx"]].append(cand)
        out.append(found)
    return out


def find_names(
    rows: list[dict], tokens: list[Tokens], spans: list[tuple[list, list]], sample: Sample
) -> list[list[dict]]:
    """Per document, the occurrences the heuristic links: of a kept and linkable name, the longest
    per sentence (``longest_occurrences`` on ``exact_names`` of the linkable names)."""
    return [
        [
            name
            for sent_idx, cands in found.items()
            for name in longest_names({"doc_id": row["doc_id"], "sent_idx": sent_idx, "found": cands})
        ]
        for row, found in zip(rows, name_occurrences(rows, tokens, spans, sample.bloom, sample.linkable))
    ]


def link_inputs(spark: SparkSession, language: str, pages: list[DumpPage], site: SiteInfo | None = None) -> Sample:
    """The sample of ``pages`` in ``language`` (read as ``site``, by default the language's) with
    what ``link_wikipedia``'s Spark joins decide before its Python per document, by the library's
    functions as ``link.py`` applies them: titles resolved through redirects, the anchors kept, the
    aliases, their name keys, the (name, entity) pairs the pruning keeps (prior, cap, stop words)
    and, of the names found in the text, those whose link probability passes. Untimed: in Spark
    these are joins and aggregations, and the per-document Python that finds the names is timed in
    :func:`stages`."""
    code = language.removesuffix(":generated")
    site = site or SiteInfo.for_language(code)
    read = corpus_pages(pages, site)
    by_id = {page.page_id: page for page in pages}
    articles = [by_id[row["page_id"]] for row in read if not row["is_redirect"]]
    rows = document_rows(articles, [wikitext_to_plain(page.text, site) for page in articles])
    page_rows = [{column: row[column] for column in PAGE_COLUMNS} for row in read]
    titles = resolve_titles(spark.createDataFrame(page_rows, ", ".join(f"{c} {t}" for c, t in PAGE_COLUMNS.items())))
    anchors = spark.createDataFrame(
        [anchor for row in rows for anchor in document_anchors(row)], "doc_id string, text string, target string"
    )
    kept = resolve_column(anchors, titles, "target").filter(F.col("entity_id").isNotNull())
    aliases = alias_table(kept, titles)
    alias_names = alias_keys(aliases, code)
    scored, _ = score_name_entities(alias_names, aliases, SETTINGS.pruning, code)
    name_entities: dict[str, set[str]] = defaultdict(set)
    for pair in scored.filter("kept").select("name", "entity_id").collect():
        name_entities[pair["name"]].add(pair["entity_id"])
    bloom = name_filter(sorted(name_entities))
    tokens = [tokenize(row["text"], code) for row in rows]
    exact = name_occurrences(rows, tokens, sentence_inputs(rows, tokens, code), bloom, set(name_entities))
    found = sorted({(row["doc_id"], c["name"]) for row, doc in zip(rows, exact) for cs in doc.values() for c in cs})
    exact_found = spark.createDataFrame(found, "doc_id string, name string")
    _, linkable_frame = linkable_names(exact_found, kept, alias_names, scored.filter("kept"), SETTINGS.pruning)
    linkable = linkable_frame.collect()
    sample = Sample(
        language=language,
        code=code,
        site=site,
        pages=pages,
        articles=articles,
        plain=[len(row["text"]) for row in rows],
        titles={row["title"]: row["entity_id"] for row in titles.select("title", "entity_id").collect()},
        name_entities=dict(name_entities),
        linkable=frozenset(row["name"] for row in linkable),
        bloom=bloom,
        aliases=aliases.count(),
    )
    scored.unpersist()
    return sample


def heuristic_inputs(
    segments: list[dict],
    names: list[list[dict]],
    name_entities: dict[str, set[str]],
    titles: dict[str, str | None],
) -> list[tuple[set[str], dict[str, set[str]], dict[str, set[str]]]]:
    """(seeds, candidates, adjacency) per document, as ``link_wikipedia``'s joins build them.

    Anchor targets resolve through ``resolve_titles`` (titles absent from the dump keep
    themselves, as in the linker); the graph is the undirected hyperlink graph of all documents.
    """

    def resolve(title: str) -> str | None:
        return titles[title] if title in titles else title

    linked = []
    graph: dict[str, set[str]] = defaultdict(set)
    for seg in segments:
        own = resolve(seg["title"])
        entities = {e for e in (resolve(a["target"]) for a in seg["anchors"]) if e is not None}
        if own is None:  # a disambiguation page: no entity of its own, no edges
            linked.append(entities)
            continue
        linked.append(entities | {own})
        for entity in entities - {own}:
            graph[own].add(entity)
            graph[entity].add(own)
    inputs = []
    for seeds, found in zip(linked, names, strict=True):
        candidates = {n["name"]: name_entities[n["name"]] for n in found}
        nodes = seeds.union(*candidates.values())
        adjacency = {c: graph[c] & nodes for c in set().union(*candidates.values()) if graph[c] & nodes}
        inputs.append((seeds, candidates, adjacency))
    return inputs


def top_functions(profile: cProfile.Profile, n: int) -> list[dict[str, Any]]:
    """The ``n`` functions with the most own time, with their share of the profiled time."""
    stats = pstats.Stats(profile, stream=io.StringIO())
    total = stats.total_tt
    rows = sorted(stats.stats.items(), key=lambda item: -item[1][2])[:n]
    return [
        {
            "function": f"{Path(file).name}:{line}({func})",
            "calls": calls,
            "own_s": round(own, 3),
            "cumulative_s": round(cum, 3),
            "own_share": round(own / total, 3),
        }
        for (file, line, func), (_, calls, own, cum, _) in rows
    ]


def segmenter_seconds(rows: list[dict], language: str, repeats: int) -> float | None:
    """Median CPU seconds of the language's own word segmenter alone on every line of ``rows``
    (Japanese: MeCab's analysis, which ``MecabTokenizer`` calls; None for a language without one):
    the part of ``segment`` that is not pelt's, and so its floor."""
    analysis = getattr(nlp(language).tokenizer, "parse", None)
    if analysis is None:
        return None
    lines = [row["text"][start:end] for row in rows for start, end in paragraphs(row["text"])]
    seconds, _, _ = cpu_seconds(lambda: [analysis(line) for line in lines], repeats)
    return seconds


def stages(sample: Sample, repeats: int, profile_top: int, tokenize_alone: bool = False) -> dict[str, Any]:
    """CPU seconds of each per-document stage on the whole ``sample``, with its language's site
    facts and spaCy pipeline, and the pruning's decisions (:class:`Sample`); the slowest stage is
    timed once more under cProfile when ``profile_top`` (its top functions) is not 0; with
    ``tokenize_alone``, ``tokenize`` (part of ``segment``) is timed too."""
    code, site, articles = sample.code, sample.site, sample.articles
    timers: dict[str, Callable[..., tuple[float, list[float], Any]]] = {}
    timers["parse"] = partial(cpu_seconds, lambda: [wikitext_to_plain(p.text, site) for p in articles])
    cpu: dict[str, float] = {}
    cpu["parse"], _, parsed = timers["parse"](repeats)
    rows = document_rows(articles, parsed)
    timers["anchors"] = partial(cpu_seconds, lambda: [document_anchors(r) for r in rows])
    cpu["anchors"], _, _ = timers["anchors"](repeats)
    if tokenize_alone:
        cpu["tokenize"], _, tokens = unseen_text_seconds(lambda r: tokenize(r["text"], code), rows, repeats, code)
    else:
        tokens = [tokenize(r["text"], code) for r in rows]
    segment = partial(segment_document, language=code)
    timers["segment"] = lambda repeats, profile=None: unseen_text_seconds(
        lambda r: segment(r)[0], rows, repeats, code, profile
    )
    cpu["segment"], _, segments = timers["segment"](repeats)
    if (segmenter := segmenter_seconds(rows, code, repeats)) is not None:
        cpu["segmenter"] = segmenter
    spans = sentence_inputs(rows, tokens, code)
    timers["names"] = partial(cpu_seconds, lambda: find_names(rows, tokens, spans, sample))
    cpu["names"], _, names = timers["names"](repeats)
    inputs = heuristic_inputs(segments, names, sample.name_entities, sample.titles)
    link = partial(heuristic_links, max_iterations=SETTINGS.max_iterations)
    timers["heuristic"] = partial(cpu_seconds, lambda: [link(*i) for i in inputs])
    cpu["heuristic"], _, linked = timers["heuristic"](repeats)
    slowest = max(PIPELINE, key=lambda stage: cpu[stage])
    profile = cProfile.Profile()
    if profile_top:
        timers[slowest](1, profile)
    return {
        "language": sample.language,
        "spacy": spacy_language(code),
        "cpu_s": {k: round(v, 6) for k, v in cpu.items()},
        "pages": len(sample.pages),
        "articles": len(articles),
        "wikitext_chars_all_pages": sum(len(p.text) for p in sample.pages),
        "wikitext_chars": sum(len(p.text) for p in articles),
        "plain_chars": sum(len(r["text"]) for r in rows),
        "tokens": sum(len(t) for t in tokens),
        "sentences": sum(len(s["sentences"]) for s in segments),
        "aliases": sample.aliases,
        "names_kept": len(sample.name_entities),
        "names_linkable": len(sample.linkable),
        "name_occurrences": sum(map(len, names)),
        "names_linked": sum(map(len, linked)),
        "profiled_stage": slowest,
        "profile_top": top_functions(profile, profile_top) if profile_top else [],
    }


def rates(result: dict[str, Any]) -> dict[str, float]:
    """Chars per CPU second of parse and of the total (wikitext chars), of split and link (plain)."""
    cpu = result["cpu_s"]
    link = cpu["anchors"] + cpu["names"] + cpu["heuristic"]
    return {
        "parse": result["wikitext_chars"] / cpu["parse"],
        "split": result["plain_chars"] / cpu["segment"],
        "link": result["plain_chars"] / link,
        "total": result["wikitext_chars"] / (cpu["parse"] + cpu["segment"] + link),
    }


def languages_report(results: list[dict[str, Any]], of_their_sizes: list[dict[str, Any]]) -> str:
    """The table of chars/s/core per language and stage, and each language's ratio to English's,
    the whole sample's and that of English of its size (``of_their_sizes``, one per language after
    English)."""
    base = rates(results[0])
    lines = [
        "| language | spaCy | articles | wikitext chars | tokens | sentences | names found / linked | parse | split "
        "| link | **parse+split+link** | ratio to en | en of its size | ratio to it |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r, same in zip(results, [None, *of_their_sizes], strict=True):
        rate = r["rates"] = rates(r)
        r["ratio_to_en"] = round(rate["total"] / base["total"], 3)
        size = "- | -"
        if same is not None:
            r["ratio_to_en_of_its_size"] = round(rate["total"] / rates(same)["total"], 3)
            size = f"{rates(same)['total'] / 1e6:.2f} M | {r['ratio_to_en_of_its_size']:.2f}"
        lines.append(
            f"| {r['language']} | {r['spacy']} | {r['articles']} | {r['wikitext_chars']:,} | {r['tokens']:,} | "
            f"{r['sentences']:,} | {r['name_occurrences']:,} / {r['names_linked']:,} | {rate['parse'] / 1e6:.2f} M | "
            f"{rate['split'] / 1e6:.2f} M | {rate['link'] / 1e6:.2f} M | **{rate['total'] / 1e6:.2f} M** | "
            f"{r['ratio_to_en']:.2f} | {size} |"
        )
    for r in (r for r in results if r["ratio_to_en"] < 0.5):
        said = f"{r['language']}: below half of English's"
        if "segmenter" in (cpu := r["cpu_s"]):  # were the rest of the split free: the most it could be
            floor = r["wikitext_chars"] / (sum(cpu[stage] for stage in PIPELINE) - cpu["segment"] + cpu["segmenter"])
            r["ratio_to_en_at_most"] = round(floor / base["total"], 3)
            said += (
                f"; its segmenter alone takes {cpu['segmenter']:.3f} of split's {cpu['segment']:.3f} CPU s: were "
                f"the rest of split free, {floor / 1e6:.2f} M, {r['ratio_to_en_at_most']:.2f} of English's"
            )
        lines += ["", f"{said}; cProfile of `{r['profiled_stage']}`:", ""]
        lines += ["| function | calls | own s | cumulative s | own share |", "|---|---|---|---|---|"]
        lines += [
            f"| `{f['function']}` | {f['calls']} | {f['own_s']} | {f['cumulative_s']} | {f['own_share']:.1%} |"
            for f in r["profile_top"]
        ]
    return "\n".join(lines)


def job_counts(spark: Any, group: str) -> dict[str, int]:
    """Spark jobs, stages and tasks run under a job group: the fixed costs a small input pays."""
    tracker = spark.sparkContext.statusTracker()
    jobs = [tracker.getJobInfo(j) for j in tracker.getJobIdsForGroup(group)]
    stages = [tracker.getStageInfo(s) for job in jobs if job for s in job.stageIds]
    return {
        "jobs": len(jobs),
        "stages_run": sum(1 for s in stages if s and s.numCompletedTasks),
        "tasks_run": sum(s.numCompletedTasks for s in stages if s),
    }


def spark_stages(dump: str, masters: list[str], repeats: int, work: Path) -> dict[str, Any]:
    """Median wall seconds of the two Spark stages for each master; the last run's outputs stay in ``work``.

    Shuffle partitions = cores: on a sample of a few MB every extra partition is only another task.
    """
    out: dict[str, Any] = {}
    for master in masters:
        cores = int(re.fullmatch(r"local\[(\d+)\]", master).group(1))
        spark = get_spark(master, shuffle_partitions=cores)
        corpus, link = [], []
        for run in range(repeats):
            start = time.perf_counter()
            build_wikipedia_corpus(spark, [dump], str(work / "documents"), str(work / "pages"))
            corpus.append(time.perf_counter() - start)
            spark.sparkContext.setJobGroup(f"link-{run}", "link_wikipedia")
            start = time.perf_counter()
            counts = link_wikipedia(
                spark,
                str(work / "documents"),
                str(work / "pages"),
                str(work / "aliases"),
                str(work / "mentions"),
            )
            link.append(time.perf_counter() - start)
        out[master] = {
            "cores": cores,
            "corpus_wall_s": round(statistics.median(corpus), 2),
            "link_wall_s": round(statistics.median(link), 2),
            "corpus_runs_s": [round(t, 2) for t in corpus],
            "link_runs_s": [round(t, 2) for t in link],
            "link_spark_work": job_counts(spark, f"link-{repeats - 1}"),
            "link_counts": counts,
        }
        spark.stop()
    return out


def report(py: dict[str, Any], spark: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Markdown tables and the derived rates."""
    cpu = py["cpu_s"]
    units = {"read": py["wikitext_chars_all_pages"], "parse": py["wikitext_chars"]}
    lines = [
        "| stage | CPU s | pages/s/core | input chars/s/core | plain chars/s/core | share of parse+split+link |",
        "|---|---|---|---|---|---|",
    ]
    total = sum(cpu[s] for s in PIPELINE)
    for stage in ("read", *PIPELINE, "tokenize"):
        pages = py["pages"] if stage == "read" else py["articles"]
        chars = units.get(stage, py["plain_chars"])
        share = f"{cpu[stage] / total:.1%}" if stage in PIPELINE else {"read": "-", "tokenize": "(in segment)"}[stage]
        lines.append(
            f"| {stage} | {cpu[stage]:.2f} | {pages / cpu[stage]:,.0f} | {chars / cpu[stage]:,.0f} | "
            f"{py['plain_chars'] / cpu[stage]:,.0f} | {share} |"
        )
    derived = {
        "pipeline_cpu_s": round(total, 3),
        "pipeline_wikitext_chars_per_s_core": round(py["wikitext_chars"] / total),
        "pipeline_plain_chars_per_s_core": round(py["plain_chars"] / total),
        "pipeline_pages_per_s_core": round(py["articles"] / total, 1),
        "with_read_wikitext_chars_per_s_core": round(py["wikitext_chars"] / (total + cpu["read"])),
        "target_chars_per_s_core": TARGET,
    }
    lines.append(
        f"| **parse+split+link** | {total:.2f} | {derived['pipeline_pages_per_s_core']:,.1f} | "
        f"{derived['pipeline_wikitext_chars_per_s_core']:,} | {derived['pipeline_plain_chars_per_s_core']:,} | 100% |"
    )
    lines += [
        "",
        "| Spark master | corpus wall s | link wall s | link wall s, first run | "
        "wikitext chars/s/core (corpus+link) | plain chars/s/core (link) | pages/s/core (corpus+link) | "
        "link: Spark jobs / stages / tasks |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for master, m in spark.items():
        wall = m["corpus_wall_s"] + m["link_wall_s"]
        m["wikitext_chars_per_s_core"] = round(py["wikitext_chars"] / (wall * m["cores"]))
        m["plain_chars_per_s_core_link"] = round(py["plain_chars"] / (m["link_wall_s"] * m["cores"]))
        m["pages_per_s_core"] = round(py["articles"] / (wall * m["cores"]), 2)
        lines.append(
            f"| {master} | {m['corpus_wall_s']:.1f} | {m['link_wall_s']:.1f} | {m['link_runs_s'][0]:.1f} | "
            f"{m['wikitext_chars_per_s_core']:,} | "
            f"{m['plain_chars_per_s_core_link']:,} | {m['pages_per_s_core']} | "
            f"{m['link_spark_work']['jobs']} / {m['link_spark_work']['stages_run']} / "
            f"{m['link_spark_work']['tasks_run']} |"
        )
    lines += ["", f"cProfile of `{py['profiled_stage']}` (top functions by own time):", ""]
    lines += ["| function | calls | own s | cumulative s | own share |", "|---|---|---|---|---|"]
    lines += [
        f"| `{f['function']}` | {f['calls']} | {f['own_s']} | {f['cumulative_s']} | {f['own_share']:.1%} |"
        for f in py["profile_top"]
    ]
    return "\n".join(lines), derived


def disagreements(py: dict[str, Any], spark: dict[str, Any]) -> list[str]:
    """Each Spark master whose ``link_wikipedia`` counted other aliases, name occurrences or names
    linked than the reproduction, both counts named; each check is printed."""
    failed = []
    for master, m in spark.items():
        counts = m["link_counts"]
        spark_linked = sum(v for k, v in counts.items() if k.startswith("heuristic_names_iteration_"))
        pairs = {
            "aliases": (py["aliases"], counts["aliases"]),
            "name occurrences": (py["name_occurrences"], counts["name_occurrences"]),
            "names linked": (py["names_linked"], spark_linked),
        }
        check = "; ".join(f"{what} {here:,} here, {there:,} in Spark" for what, (here, there) in pairs.items())
        print(f"\ncheck ({master}): {check}")
        if any(here != there for here, there in pairs.values()):
            failed.append(f"{master}: {check}")
    return failed


def machine(load_before: tuple[float, float, float]) -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
    }


def write(result: dict[str, Any], path: str) -> Path:
    out = Path(path) if Path(path).is_absolute() else REPO / path
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    return out


def language_pages(language: str, english: list[DumpPage]) -> list[DumpPage]:
    """The pages of ``language`` (module docstring): ``en`` the dump sample's, a language of the
    shared data its real pages, ``<code>:generated`` the English sample made in it."""
    if language == "en":
        return english
    code = language.removesuffix(":generated")
    if code == language:
        if code not in (real := real_languages()):
            raise SystemExit(f"--languages: no real pages of {language!r}; {LANGUAGES.format(real=', '.join(real))}")
        return real_pages(code)
    if code not in spacy_languages():
        raise SystemExit(f"--languages: {code!r} is not a spaCy language ({', '.join(spacy_languages())})")
    return translated(english, language, english_words(p.text for p in english))


def main_languages(args: argparse.Namespace) -> None:
    """``--languages``: each language's pure-Python stages, one table, English the reference, and
    English of each language's size (:func:`english_of_its_size`)."""
    logging.basicConfig(level=logging.ERROR, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    (dump,) = expand_paths([str(REPO / args.dump)])
    load_before = os.getloadavg()
    started = time.perf_counter()
    english = list(iter_dump_pages(dump))
    pages = {language: language_pages(language, english) for language in dict.fromkeys(["en", *args.languages])}
    spark = get_spark("local[1]", shuffle_partitions=1, java_options=SMALL_JOBS)
    samples = [
        link_inputs(spark, language, sample, dump_site(dump) if language == "en" else None)
        for language, sample in pages.items()
    ]
    spark.stop()  # no JVM work while the clock runs
    samples += [english_of_its_size(samples[0], sample) for sample in samples[1:]]
    profiled = len(pages)  # the languages' samples, not English of their sizes
    settle()
    rounds: list[list[dict[str, Any]]] = []
    for round_ in range(args.rounds):  # every language once a round: a change of load hits them all
        rounds.append([stages(s, args.repeats, 8 if i < profiled and not round_ else 0) for i, s in enumerate(samples)])
        for result in rounds[-1]:
            cpu = ", ".join(f"{k} {v:.4f} s" for k, v in result["cpu_s"].items())
            print(f"round {round_ + 1}, {result['language']}: {cpu}", flush=True)
    results = []
    for first, *others in zip(*rounds):
        runs = [r["cpu_s"] for r in (first, *others)]
        first["cpu_s_rounds"] = runs
        first["cpu_s"] = {stage: round(statistics.median(run[stage] for run in runs), 6) for stage in first["cpu_s"]}
        results.append(first)
    text = languages_report(results[:profiled], results[profiled:])
    result = {
        "dump": args.dump,
        "repeats": args.repeats,
        "rounds": args.rounds,
        "machine": machine(load_before),
        "languages": results[:profiled],
        "english_of_their_sizes": results[profiled:],
        "seconds": round(time.perf_counter() - started, 1),
    }
    out = write(result, args.out or "results/benchmarks/corpus_throughput_languages.json")
    print(text)
    print(f"load average before {result['machine']['loadavg_before']}, after {result['machine']['loadavg_after']}")
    print(f"written {out} ({result['seconds']} s)")


def pure_python(dump: str, repeats: int) -> dict[str, Any]:
    """The English stages on the dump sample, ``read`` included, the pruning made in Spark first."""
    cpu_read, runs, pages = cpu_seconds(lambda: list(iter_dump_pages(dump)), repeats)
    spark = get_spark("local[1]", shuffle_partitions=1, java_options=SMALL_JOBS)
    sample = link_inputs(spark, "en", pages, dump_site(dump))
    spark.stop()
    settle()
    py = stages(sample, repeats, 12, tokenize_alone=True)
    py["cpu_s"]["read"] = round(cpu_read, 6)
    py["read_runs_s"] = [round(t, 3) for t in runs]
    return py


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dump", default=DUMP, help="one dump file or glob, relative to the repo root")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3, help="--languages: rounds over all languages (median)")
    parser.add_argument("--masters", nargs="+", default=["local[1]", "local[2]"])
    parser.add_argument("--out", default=None, help="default results/benchmarks/corpus_throughput[_languages].json")
    parser.add_argument(
        "--languages",
        nargs="+",
        help="instead of the English stages and Spark: the pure-Python stages on the pages of each language "
        f"(language_sample.py): {LANGUAGES.format(real=', '.join(real_languages()))}",
    )
    args = parser.parse_args()
    if args.languages:
        main_languages(args)
        return
    for master in args.masters:
        if not re.fullmatch(r"local\[\d+\]", master):
            parser.error(f"--masters takes local[N] masters (per-core rates need N), got {master!r}")
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    (dump,) = expand_paths([str(REPO / args.dump)])
    load_before = os.getloadavg()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pelt-throughput-") as tmp:
        spark = spark_stages(dump, args.masters, args.repeats, Path(tmp))
    py = pure_python(dump, args.repeats)
    text, derived = report(py, spark)
    met = {unit: derived[f"pipeline_{unit}_chars_per_s_core"] >= TARGET for unit in ("wikitext", "plain")}
    result = {
        "dump": args.dump,
        "repeats": args.repeats,
        "machine": machine(load_before),
        "pure_python": py,
        "spark": spark,
        "derived": derived,
        "target_met": met,
        "seconds": round(time.perf_counter() - started, 1),
    }
    out = write(result, args.out or "results/benchmarks/corpus_throughput.json")
    print(text)
    failed = disagreements(py, spark)
    print(
        f"\nparse+split+link: {derived['pipeline_wikitext_chars_per_s_core']:,} wikitext chars/s/core, "
        f"{derived['pipeline_plain_chars_per_s_core']:,} plain chars/s/core "
        f"({derived['with_read_wikitext_chars_per_s_core']:,} wikitext chars/s/core with the dump read); "
        f"target {TARGET:,}: {'met' if met['wikitext'] else 'NOT met'} in wikitext chars, "
        f"{'met' if met['plain'] else 'NOT met'} in plain chars (pure Python, CPU time)"
    )
    print(f"load average before {result['machine']['loadavg_before']}, after {result['machine']['loadavg_after']}")
    print(f"written {out} ({result['seconds']} s)")
    if failed:  # its per-stage figures would measure other work than the pipeline's
        raise SystemExit(
            "FAILED: the pure-Python reproduction disagrees with Spark, its stage figures are not the "
            "pipeline's: " + "; ".join(failed)
        )


if __name__ == "__main__":
    main()
