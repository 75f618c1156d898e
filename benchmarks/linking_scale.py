"""Linking at growing corpus sizes: is the cost of the corpus and linking stages linear?

The real dump sample is replicated 1x, 4x, 16x (``--scales``) into one bz2 dump each. Copy 0 is
the sample itself; copy k > 0 gets new page ids and, by ``--rename``:

* ``titles``: every title gets " (copy k)" and every link target with it ([[Paris]] becomes
  [[Paris (copy k)|Paris]]), so the text reads the same and every name gains one entity per copy:
  the worst case for ambiguity (each name of the sample names ``scale`` entities, all of the same
  prior), and the replication the issue measured. Every link the corpus stage finds is rewritten:
  targets with a colon that are articles ("Star Trek: Voyager") and links made by templates
  ({{HMS|Ajax|22}}, {{ill|...}}: replaced by the explicit links they render). The first version
  left those 39 of the 22,761 links a copy has (in 21 of its 106 articles) pointing at one entity
  shared by all copies, and through it a document reached every other copy's pages, whose names
  it contains, so its candidates grew with the number of copies (2.06x linear from 4x to 16x);
* ``words``: every capitalised word of title and text, and every other word that is part of an
  anchor text or link target anywhere in the sample (stop words apart), gets a suffix of copy k
  ("Paris" becomes "Parisqb", "[[Organism|organism]]" becomes "[[Organismqb|organismqb]]", and so
  does every plain "organism" of the copy), so each copy is a world of its own names and a name
  stays as ambiguous as in the sample, as it does when a real corpus grows. Renaming capitalised
  words only (the first version) left lower-case and all-capitals anchor texts ("organism", "US")
  shared by all copies while their targets were renamed: each such name gained one entity per
  copy, which is the ``titles`` worst case again for those names. What stays shared: names made
  of stop words only ("the who"), and words that only ever occur outside links.

Each stage (``build_wikipedia_corpus``, then ``link_wikipedia`` with the default pruning) runs in a
fresh Python process with its own Spark session at ``--master``, and reports: CPU seconds of the
JVM, of the Python workers (the JVM's descendants, reaped ones included) and of the driver's
Python, the JVM's CPU spent starting the session (apart), Spark jobs, stages and tasks, shuffle
bytes written (Spark's REST API), the peak resident memory of one Python worker (``VmHWM``), and
the linking counts (candidate pairs: the (document, name, entity) rows of the heuristic's joins).

``--kind multistream`` writes each replicated dump as Wikimedia's multistream files (100 pages per
bz2 stream, with the index beside it), which the corpus stage reads in byte ranges; the default is
one bz2 stream. ``--conf KEY=VALUE`` adds a Spark setting to both stages, and the shuffle bytes are
also reported per call site.

    nice -n 10 python benchmarks/linking_scale.py --scales 1 4 16 --out results/benchmarks/linking_scale.json
"""

from __future__ import annotations

import argparse
import bz2
import html
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterable
from functools import cache
from itertools import islice
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

REPO = Path(__file__).resolve().parents[1]
DUMP = REPO.parent / "shared" / "data" / "wikipedia_dump_sample"
PAGES_PER_STREAM = 100  # Wikimedia's multistream dumps: 100 pages per bz2 stream
ID_OFFSET = 10**9  # page ids of copy k: id + k * ID_OFFSET (real ids stay below 10^8)

_PAGE = re.compile(r"<page>.*?</page>\s*", re.S)
_TITLE = re.compile(r"(<title>)(.*?)(</title>)", re.S)
_REDIRECT = re.compile(r'(<redirect title=")([^"]*)(")')
_TEXT = re.compile(r"(<text[^>]*>)(.*?)(</text>)", re.S)
_PAGE_ID = re.compile(r"<id>(\d+)</id>")
_LINK = re.compile(r"\[\[([^\[\]|#:]+)(#[^\[\]|]*)?(\|[^\[\]]*)?\]\]")
# ``titles`` also rewrites targets with a colon that are articles, and innermost templates.
_ANY_LINK = re.compile(r"\[\[([^\[\]|#]+)(#[^\[\]|]*)?(\|[^\[\]]*)?\]\]")
_INNER_TEMPLATE = re.compile(r"\{\{[^{}]*\}\}")
# A word, not inside an XML entity ("&amp;"), after an apostrophe in a word ("Aristotle's": spaCy
# splits "'s", not "'sqb") nor before a namespace colon ("Category:").
_WORD = re.compile(r"(?<![\w&#])(?<!\w')(\w+)(?![\w:])")
_CAPITALISED = re.compile(r"[A-Z]\w*[a-z]\w*")


def copy_tag(k: int) -> str:
    """Lower-case letters unique to copy k (no digits: a digit would split spaCy's token)."""
    tag = ""
    while True:
        k, r = divmod(k, 26)
        tag += chr(ord("a") + r)
        if not k:
            return "q" + tag


def anchor_words(pages: Iterable[str]) -> frozenset[str]:
    """The words of every anchor text and link target of ``pages``, stop words apart: renamed in
    each copy like capitalised words, so that no anchor text is shared by two copies."""
    from spacy.lang.en.stop_words import STOP_WORDS

    words = set()
    for page in pages:
        for link in _LINK.finditer(page):
            for part in (link.group(1), link.group(3) or ""):
                words.update(m.group(1) for m in _WORD.finditer(part) if m.group(1).lower() not in STOP_WORDS)
    return frozenset(words)


@cache
def _is_article_link(target: str) -> bool:
    """Whether the corpus stage reads ``[[target]]`` as a link to an article (not a category, a
    file, another language's page)."""
    from pelt.corpus.wikipedia.wikitext import wikitext_to_plain

    return bool(wikitext_to_plain(f"[[{target}]]")[1])


@cache
def _template_links(template: str) -> tuple[str, tuple[tuple[int, int, str], ...]]:
    """What the corpus stage makes of one template (XML-escaped, as in the dump): its plain text
    and the (start, end, target) of the links it renders."""
    from pelt.corpus.wikipedia.wikitext import wikitext_to_plain

    plain, links = wikitext_to_plain(html.unescape(template))
    return plain, tuple((link.start, link.end, link.target) for link in links)


def _rename_links(text: str, suffix: str) -> str:
    """Every link of ``text`` (XML-escaped wikitext) to an article, ``suffix`` added to its target;
    a template that renders a link with a target not yet renamed becomes the links it renders."""

    def link(m: re.Match[str]) -> str:
        if ":" in m.group(1) and not _is_article_link(html.unescape(m.group(1))):
            return m.group(0)
        shown = m.group(3) or f"|{m.group(1)}{m.group(2) or ''}"  # the text as the link showed it
        return f"[[{m.group(1).strip()}{suffix}{m.group(2) or ''}{shown}]]"

    def template(m: re.Match[str]) -> str:
        plain, links = _template_links(m.group(0))
        if all(target.endswith(suffix) for _, _, target in links):
            return m.group(0)
        out, at = [], 0
        for start, end, target in links:
            out += [escape(plain[at:start]), f"[[{escape(target)}{suffix}|{escape(plain[start:end])}]]"]
            at = end
        return "".join(out) + escape(plain[at:])

    return _INNER_TEMPLATE.sub(template, _ANY_LINK.sub(link, text))


def rename_page(page: str, k: int, rename: str, anchored: frozenset[str] = frozenset()) -> str:
    """Page XML of copy ``k``: a new page id, and titles and names renamed (module docstring);
    ``anchored``: the words of anchor texts (:func:`anchor_words`), renamed by ``words``."""
    page = _PAGE_ID.sub(lambda m: f"<id>{int(m.group(1)) + k * ID_OFFSET}</id>", page, count=1)
    if rename == "titles":
        suffix = f" (copy {k})"
        for field in (_TITLE, _REDIRECT):
            page = field.sub(lambda m: m.group(1) + m.group(2) + suffix + m.group(3), page, count=1)
        return _TEXT.sub(lambda m: m.group(1) + _rename_links(m.group(2), suffix) + m.group(3), page, count=1)
    tag = copy_tag(k)

    def word(w: re.Match[str]) -> str:
        renamed = _CAPITALISED.fullmatch(w.group(1)) or w.group(1) in anchored
        return w.group(1) + tag if renamed else w.group(1)

    def words(m: re.Match[str]) -> str:
        return m.group(1) + _WORD.sub(word, m.group(2)) + m.group(3)

    for field in (_TITLE, _REDIRECT, _TEXT):
        page = field.sub(words, page, count=1)
    return page


def replicate(source: Path, out: Path, copies: int, rename: str, kind: str = "single") -> dict[str, int]:
    """Write ``copies`` copies of the pages of ``source`` (a bz2 dump) into one bz2 dump ``out``:
    one bz2 stream (``single``), or Wikimedia's ``multistream`` layout, a stream per
    :data:`PAGES_PER_STREAM` pages with its ``-index.txt.bz2`` beside it (``out`` must then be
    named ``...multistream.xml.bz2``), which the corpus stage reads in byte ranges."""
    xml = bz2.decompress(source.read_bytes()).decode("utf-8")
    pages = list(_PAGE.finditer(xml))
    head, tail = xml[: pages[0].start()], xml[pages[-1].end() :]
    anchored = anchor_words(page.group(0) for page in pages) if rename == "words" else frozenset()
    # Written as they are renamed: at 16x the copies are hundreds of MB of text.
    copied = (
        page.group(0) if k == 0 else rename_page(page.group(0), k, rename, anchored)
        for k in range(copies)
        for page in pages
    )
    written = {"pages": len(pages) * copies}
    if kind == "single":
        with bz2.open(out, "wt", encoding="utf-8") as fh:
            fh.write(head)
            fh.writelines(copied)
            fh.write(tail)
        return {**written, "bytes_bz2": out.stat().st_size}
    index, streams = [], 2  # the header's and the tail's, around the pages'
    with open(out, "wb") as fh:
        offset = fh.write(bz2.compress(head.encode()))
        while group := list(islice(copied, PAGES_PER_STREAM)):
            for page in group:
                index.append(f"{offset}:{_PAGE_ID.search(page).group(1)}:{_TITLE.search(page).group(2)}\n")
            offset += fh.write(bz2.compress("".join(group).encode()))
            streams += 1
        fh.write(bz2.compress(tail.encode()))
    index_path = out.with_name(out.name.replace("multistream.xml", "multistream-index.txt"))
    index_path.write_bytes(bz2.compress("".join(index).encode()))
    return {**written, "bytes_bz2": out.stat().st_size, "streams": streams}


# --- one stage, in its own process ----------------------------------------------------------------------


def _stat(pid: int) -> list[str]:
    """Fields of /proc/<pid>/stat after the command name (psutil is not a dependency)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def descendants(pid: int) -> list[int]:
    """Every live process under ``pid`` (the JVM: Python daemons and their workers)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                children.setdefault(int(_stat(int(entry.name))[1]), []).append(int(entry.name))
            except (OSError, IndexError):
                continue
    found, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def _seconds(pid: int, own: bool = True, reaped: bool = True) -> float:
    """CPU seconds of ``pid`` itself (utime + stime) and of its reaped children (cutime + cstime)."""
    fields = _stat(pid)
    ticks = (int(fields[11]) + int(fields[12])) * own + (int(fields[13]) + int(fields[14])) * reaped
    return ticks / os.sysconf("SC_CLK_TCK")


class WorkerMemory:
    """Peak resident memory (``VmHWM``) of any one Python process under the JVM, sampled."""

    def __init__(self, jvm: int, every_s: float = 0.2) -> None:
        self.jvm, self.every_s, self.peak_kb = jvm, every_s, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            for pid in descendants(self.jvm):
                try:
                    status = Path(f"/proc/{pid}/status").read_text()
                except OSError:
                    continue
                found = re.search(r"VmHWM:\s+(\d+) kB", status)
                self.peak_kb = max(self.peak_kb, int(found.group(1)) if found else 0)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak_kb


def cpu(jvm: int) -> dict[str, float]:
    """CPU seconds so far of the JVM, of the Python workers under it, and of this process."""
    workers = _seconds(jvm, own=False)
    for pid in descendants(jvm):
        try:
            workers += _seconds(pid)
        except OSError:
            continue
    return {
        "jvm": _seconds(jvm, reaped=False),
        "python_workers": workers,
        "driver_python": _seconds(os.getpid(), reaped=False),
    }


def rest(spark: Any, path: str) -> list[dict[str, Any]]:
    url = f"{spark.sparkContext.uiWebUrl}/api/v1/applications/{spark.sparkContext.applicationId}/{path}"
    with urllib.request.urlopen(url, timeout=60) as response:
        return json.load(response)


def shuffle_by_site(stages: list[dict[str, Any]]) -> dict[str, int]:
    """Shuffle bytes written per call site (a Spark stage's name, "join at link.py:612"), so that
    a total that grows faster than the input can be traced to the pass that makes it."""
    sites: dict[str, int] = {}
    for s in stages:
        sites[s["name"]] = sites.get(s["name"], 0) + s["shuffleWriteBytes"]
    return {site: b for site, b in sorted(sites.items(), key=lambda item: -item[1]) if b}


def run_stage(stage: str, work: Path, master: str, conf: dict[str, str] | None = None) -> dict[str, Any]:
    """Run one stage on ``work``'s dump or corpus in this process, ``conf`` added to the Spark
    session's; the measurements."""
    from pelt.corpus.wikipedia.build import build_wikipedia_corpus
    from pelt.linking.link import link_wikipedia
    from pelt.spark import get_spark

    spark = get_spark(master, app_name=f"linking-scale-{stage}", conf={**(conf or {}), "spark.ui.enabled": "true"})
    jvm = int(spark._jvm.java.lang.ProcessHandle.current().pid())
    start_cpu, start = cpu(jvm), time.perf_counter()
    memory = WorkerMemory(jvm)
    if stage == "corpus":
        counts = build_wikipedia_corpus(
            spark, [str(next(work.glob("dump*.xml.bz2")))], str(work / "documents"), str(work / "pages")
        )
    else:
        counts = link_wikipedia(
            spark, str(work / "documents"), str(work / "pages"), str(work / "aliases"), str(work / "mentions")
        )
    wall = time.perf_counter() - start
    peak_kb = memory.stop()
    end_cpu = cpu(jvm)
    stages = [s for s in rest(spark, "stages") if s["status"] == "COMPLETE"]
    result = {
        "wall_s": round(wall, 1),
        "cpu_s": {key: round(end_cpu[key] - start_cpu[key], 2) for key in end_cpu},
        "jvm_startup_cpu_s": round(start_cpu["jvm"], 2),
        "jobs": len(rest(spark, "jobs")),
        "stages": len(stages),
        "tasks": sum(s["numCompleteTasks"] for s in stages),
        "shuffle_write_bytes": sum(s["shuffleWriteBytes"] for s in stages),
        "shuffle_write_bytes_by_site": shuffle_by_site(stages),
        "executor_cpu_s": round(sum(s["executorCpuTime"] for s in stages) / 1e9, 2),
        "peak_worker_rss_mb": round(peak_kb / 1024, 1),
        "counts": counts,
    }
    spark.stop()
    return result


# --- the benchmark ---------------------------------------------------------------------------------------


def growth(results: dict[int, dict[str, Any]], stage: str, key: str) -> float | None:
    """(value at the largest scale / value at the one before) / (scale ratio): 1.0 is linear."""
    scales = sorted(results)
    if len(scales) < 2:
        return None
    small, large = scales[-2], scales[-1]
    a, b = _metric(results[small][stage], key), _metric(results[large][stage], key)
    return round(b / a / (large / small), 2) if a else None


def _metric(stage: dict[str, Any], key: str) -> float:
    if key == "cpu_s":
        return sum(stage["cpu_s"].values())
    if key in stage["cpu_s"]:
        return stage["cpu_s"][key]
    return stage[key] if key in stage else stage["counts"].get(key, 0)


METRICS = (
    "cpu_s",
    "jvm",
    "python_workers",
    "driver_python",
    "shuffle_write_bytes",
    "tasks",
    "peak_worker_rss_mb",
    "candidate_pairs",
)


def markdown(results: dict[int, dict[str, Any]]) -> str:
    lines = [
        "| scale | stage | wall s | CPU s: JVM / Python workers / driver | jobs | tasks | shuffle MB | "
        "peak worker MB | candidate pairs |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for scale in sorted(results):
        for stage in ("corpus", "linking"):
            r = results[scale][stage]
            c = r["cpu_s"]
            lines.append(
                f"| {scale}x | {stage} | {r['wall_s']} | {c['jvm']} / {c['python_workers']} / {c['driver_python']} | "
                f"{r['jobs']} | {r['tasks']} | {r['shuffle_write_bytes'] / 1e6:.1f} | {r['peak_worker_rss_mb']} | "
                f"{r['counts'].get('candidate_pairs', '-')} |"
            )
    lines += ["", "| stage | " + " | ".join(METRICS) + " |", "|---|" + "---|" * len(METRICS)]
    for stage in ("corpus", "linking"):
        lines.append(f"| {stage} | " + " | ".join(str(growth(results, stage, m)) for m in METRICS) + " |")
    scales = sorted(results)
    sites = results[scales[-1]]["linking"].get("shuffle_write_bytes_by_site", {})
    if sites:
        lines += ["", "| linking shuffle call site | " + " | ".join(f"{x}x MB" for x in scales) + " |"]
        lines.append("|---|" + "---|" * len(scales))
        for site in list(sites)[:10]:
            mb = [results[x]["linking"].get("shuffle_write_bytes_by_site", {}).get(site, 0) / 1e6 for x in scales]
            lines.append(f"| {site} | " + " | ".join(f"{v:.1f}" for v in mb) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dump", default=str(next(DUMP.glob("*.bz2"), DUMP)), help="the bz2 dump replicated")
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--rename", choices=("titles", "words"), default="words")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument(
        "--kind", choices=("single", "multistream"), default="single", help="the replicated dump's layout"
    )
    parser.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting for both stages, e.g. spark.sql.autoBroadcastJoinThreshold=-1 (every join a shuffle)",
    )
    parser.add_argument("--out", default="results/benchmarks/linking_scale.json")
    parser.add_argument("--stage", choices=("corpus", "linking"), help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stage:  # a child: one stage, the result as JSON on the last line of stdout
        print(json.dumps(run_stage(args.stage, Path(args.work), args.master, dict(c.split("=", 1) for c in args.conf))))
        return
    results: dict[int, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="pelt-linking-scale-") as tmp:
        for scale in args.scales:
            work = Path(tmp) / f"x{scale}"
            work.mkdir()
            dump = work / ("dump-multistream.xml.bz2" if args.kind == "multistream" else "dump.xml.bz2")
            results[scale] = {"dump": replicate(Path(args.dump), dump, scale, args.rename, args.kind)}
            for stage in ("corpus", "linking"):
                cmd = [sys.executable, __file__, "--stage", stage, "--work", str(work), "--master", args.master]
                cmd += [f"--conf={c}" for c in args.conf]
                done = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True)
                results[scale][stage] = json.loads(done.stdout.strip().splitlines()[-1])
                print(f"{scale}x {stage}: {json.dumps(results[scale][stage]['cpu_s'])}", file=sys.stderr, flush=True)
    table = markdown(results)
    print(table)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"args": vars(args), "results": results, "markdown": table}, indent=1))


if __name__ == "__main__":
    main()
