"""The real data samples the tests read: which files, from where, and where a test run finds them.

The readers are tested on real FewRel, Wiki80, LAMA and S2ORC files, a real Wikipedia dump excerpt and
real wikitext pages of several languages: public files, but not the project's to commit.
``real_data.tsv`` lists each file the tests read with its size and full sha256 and a URL pinned to a
commit, so that any machine that can reach those sources gets the bytes the tests were written
against. Most files are the very file at the URL. The others were cut out of the public file at the
URL (a page's ``<text>`` in a compressed dump, a string in a Scala test, a member of a zip, a field of
a recorded API response): their row gives that file's own sha256 and a recipe (``tests/recipes.py``),
and the fetch downloads the source once, cuts the file out and names it only when its sha256 is the
row's. ``locate`` takes, in order:

1. the folder ``$PELT_TEST_DATA`` names, as it is (never fetched into: a prepared copy is what runs);
2. ``../shared/data`` beside the clone when it holds every file (as in CI: nothing fetched and
   nothing hashed, a stat per file, so that CI's time stays what it was);
3. the user's cache, ``$XDG_CACHE_HOME/pelt/test-data`` (``~/.cache/pelt/test-data``), fetching what it
   lacks with ``pelt.download`` (the workflow's own downloads: resumable, and a file gets its name only
   once its sha256 matches, so a file in the cache is a verified one; the sources of cut-out files
   are kept in its ``.sources/``).

Where the folder lacks a file, it raises one line that says what is missing and how to get it, and
the fixture fails every test that needs the data with it (not a skip: a skipped test of a reader is a
reader nobody checked).

``.venv/bin/python tests/real_data.py`` fetches the files into the cache ahead of an offline run;
``--verify-recipes SOURCE_DIR`` checks every recipe against the source files laid out in SOURCE_DIR as
their URLs' paths (``SOURCE_DIR/<owner>/<repo>/<commit>/<path>``), without the network.
"""

from __future__ import annotations

import fcntl
import hashlib
import http.client
import os
import sys
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from recipes import RecipeError, derive, parse

REPO = Path(__file__).resolve().parents[1]
MANIFEST = Path(__file__).with_name("real_data.tsv")
SHARED = REPO.parent / "shared" / "data"
ENV = "PELT_TEST_DATA"
COLUMNS = ["path", "bytes", "sha256", "url", "source_sha256", "recipe", "note"]
SOURCES = ".sources"  # the cache's folder of the files that others are cut out of
HOW = (
    "get them with `.venv/bin/python tests/real_data.py` where raw.githubusercontent.com can be reached, "
    f"or set {ENV} to a folder holding them (sources and sha256s: tests/real_data.tsv)"
)


def user_cache() -> Path:
    """Where fetched files are kept between runs: ``$XDG_CACHE_HOME/pelt/test-data``."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "pelt" / "test-data"


# Read once, at import: tests/conftest.py points XDG_CACHE_HOME at a temp folder for the session
# (no test leaves anything in the user's cache), but the fetched data must outlive the session.
CACHE = user_cache()


@dataclass(frozen=True)
class DataFile:
    """One row of the manifest. With a ``recipe``, ``url`` is the public file the file is cut out of
    and ``source_sha256`` that file's sha256; without, ``url`` is the file itself."""

    path: str
    size: int
    sha256: str
    url: str
    source_sha256: str | None = None
    recipe: str | None = None
    note: str = ""

    def present_in(self, root: Path) -> bool:
        """There with the listed size: a stat, no hashing, so that the check costs nothing in CI. A
        truncated copy or a Git LFS pointer has another size; the sha256 is checked on download."""
        try:
            return (root / self.path).stat().st_size == self.size
        except OSError:
            return False


class MissingTestData(RuntimeError):
    """Files of the manifest that no source gave; the message is one line: what, and how to get it."""


def read_manifest(path: Path = MANIFEST) -> list[DataFile]:
    """The rows of ``real_data.tsv`` (``#`` lines are comments; ``-``: none). A row without a URL, with
    a recipe but no source sha256 (or the reverse), or with a recipe that does not parse is an error
    here, naming the row, so that it fails every run rather than a fetch on some other machine."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    header, *rows = (line.split("\t") for line in lines)
    if header != COLUMNS:
        raise ValueError(f"{path}: columns {header}, expected {COLUMNS}")
    files = []
    for name, size, sha256, url, source_sha256, recipe, note in rows:
        if url == "-" or (source_sha256 == "-") != (recipe == "-"):
            raise ValueError(f"{path}: row {name}: a URL is needed, and with a recipe, the source's sha256")
        if recipe != "-":
            try:
                parse(recipe)
            except RecipeError as err:
                raise ValueError(f"{path}: row {name}: recipe {recipe!r}: {err}") from None
        optional = (None if value == "-" else value for value in (source_sha256, recipe))
        files.append(DataFile(name, int(size), sha256, url, *optional, "" if note == "-" else note))
    return files


def locate(
    files: Sequence[DataFile] | None = None,
    *,
    env: Mapping[str, str] = os.environ,
    shared: Path = SHARED,
    cache: Path = CACHE,
    fetch: bool = True,
    timeout: float = 60.0,
) -> Path:
    """The folder to read the manifest's ``files`` from: ``$PELT_TEST_DATA`` when set, else ``shared``
    when it holds every file, else ``cache`` once what it lacks is fetched. Raises ``MissingTestData``
    when the folder lacks one of them."""
    files = read_manifest() if files is None else files
    if env.get(ENV):
        root = Path(env[ENV]).expanduser().resolve()
        if missing := [f for f in files if not f.present_in(root)]:
            raise MissingTestData(
                f"real test data missing: {_some(missing, files)} not in ${ENV}={root} (used as it is, never "
                f"fetched into); {HOW}"
            )
        return root
    if all(f.present_in(shared) for f in files):
        return shared
    reason = "fetching is off"
    if fetch and any(not f.present_in(cache) for f in files):
        reason = _fetch(files, cache, timeout)
    if missing := [f for f in files if not f.present_in(cache)]:
        raise MissingTestData(
            f"real test data missing: {_some(missing, files)} in neither {shared} nor the cache {cache}; {reason}; "
            + HOW
        )
    return cache


def _some(missing: Sequence[DataFile], files: Sequence[DataFile]) -> str:
    """``3 of 165 files (a, b, c)``: the count and the first few, to keep the message one readable line."""
    names = ", ".join(f.path for f in missing[:3]) + (", ..." if len(missing) > 3 else "")
    return f"{len(missing)} of {len(files)} files ({names})"


def _fetch(files: Sequence[DataFile], cache: Path, timeout: float) -> str:
    """Download into ``cache`` what it lacks, one process at a time (``make test``'s two workers may both
    ask); stops at the first failure, since offline every other file would fail the same way, and
    returns what happened (one line)."""
    from pelt.download import download

    cache.mkdir(parents=True, exist_ok=True)
    with (cache / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # once the other worker's fetch is done, its files are here
        done: dict[str, dict[str, bytes]] = {}  # per source: its recipes' intermediate results
        for entry in [f for f in files if not f.present_in(cache)]:
            try:
                if entry.recipe is None:
                    download(entry.url, cache / entry.path, checksum=entry.sha256, algorithm="sha256", timeout=timeout)
                    continue
                source = cache / SOURCES / entry.source_sha256 / _basename(entry.url)
                if not source.exists():  # named only once verified: one download for all its rows
                    download(entry.url, source, checksum=entry.source_sha256, algorithm="sha256", timeout=timeout)
            except (OSError, RuntimeError, ValueError, http.client.HTTPException) as err:
                return f"fetching {entry.url} failed: {' '.join(str(err).split()) or type(err).__name__}"
            try:
                body = cut_out(entry, source.read_bytes(), done.setdefault(entry.source_sha256, {}))
            except ValueError as err:
                return str(err)
            part = cache / f"{entry.path}.part"
            part.parent.mkdir(parents=True, exist_ok=True)
            part.write_bytes(body)
            os.replace(part, cache / entry.path)
    return "fetched"


def _basename(url: str) -> str:
    """The file name a source URL ends in, as it is in its repository (``%3A`` there is ``%253A`` here)."""
    return urllib.parse.unquote(urllib.parse.urlsplit(url).path.rpartition("/")[2])


def cut_out(entry: DataFile, source: bytes, done: dict[str, bytes] | None = None) -> bytes:
    """The file ``entry``'s recipe cuts out of ``source`` (its sha256 already checked), once its sha256
    is the row's; else ``ValueError`` with one line naming the row, the recipe and both hashes (or
    the step that failed)."""
    try:
        body = derive(entry.recipe, source, done)
    except RecipeError as err:
        raise ValueError(f"{entry.path}: recipe {entry.recipe!r} failed on {entry.url}: {err}") from None
    got = hashlib.sha256(body).hexdigest()
    if got != entry.sha256:
        raise ValueError(
            f"{entry.path}: recipe {entry.recipe!r} on {entry.url} gave sha256 {got} != expected {entry.sha256}"
        )
    return body


def verify_recipes(sources: Path, files: Sequence[DataFile] | None = None) -> list[str]:
    """Each recipe row checked against its source file in ``sources`` (laid out as the URLs' paths:
    ``<owner>/<repo>/<commit>/<path>``, the bytes a download would give): one line per row, ``ok`` or
    what went wrong, and a last line counting the rows whose file came out byte-identical."""
    rows = [f for f in (read_manifest() if files is None else files) if f.recipe]
    lines, done, good = [], {}, 0
    for entry in rows:
        path = sources / urllib.parse.unquote(urllib.parse.urlsplit(entry.url).path.lstrip("/"))
        try:
            source = path.read_bytes()
        except OSError as err:
            lines.append(f"MISSING {entry.path}: no source {path} ({err.strerror})")
            continue
        if (got := hashlib.sha256(source).hexdigest()) != entry.source_sha256:
            lines.append(f"BAD {entry.path}: source {path} has sha256 {got} != expected {entry.source_sha256}")
            continue
        try:
            cut_out(entry, source, done.setdefault(entry.source_sha256, {}))
        except ValueError as err:
            lines.append(f"BAD {err}")
            continue
        good += 1
        lines.append(f"ok {entry.path}")
    return [*lines, f"{good} of {len(rows)} cut-out files byte-identical to the manifest"]


class UnlistedTestData(AssertionError):
    """A test opened a file of the data folder that the manifest does not list."""


_WATCHED: dict[str, frozenset[str]] = {}
_HOOKED = False


def _audit(event: str, args: tuple) -> None:
    """In a guarded data folder: refuse to open a file the manifest does not list (such a test would
    pass beside ../shared/data, as in CI, and fail where the data is fetched)."""
    if event != "open" or not _WATCHED or not args or not isinstance(args[0], str | bytes | os.PathLike):
        return
    path = os.path.abspath(os.fsdecode(args[0]))
    for root, listed in _WATCHED.items():
        if path != root and not path.startswith(root + os.sep):
            continue
        name = os.path.relpath(path, root) if path != root else ""
        if name not in listed:
            raise UnlistedTestData(
                f"tests/real_data.tsv does not list {name}: add its row (path, bytes, sha256, pinned URL), "
                "so that a machine without ../shared/data fetches it too"
            )


@contextmanager
def guard(root: Path, files: Sequence[DataFile]) -> Iterator[Path]:
    """While inside, a test that opens a file under ``root`` that ``files`` does not list fails
    (``UnlistedTestData``). Python's own opens only: a Spark job's reads in the JVM are not seen."""
    global _HOOKED
    if not _HOOKED:
        sys.addaudithook(_audit)  # a hook cannot be removed: one for the process, reading _WATCHED
        _HOOKED = True
    key = os.path.abspath(root)
    _WATCHED[key] = frozenset(f.path for f in files)
    try:
        yield root
    finally:
        del _WATCHED[key]


def main(argv: Sequence[str] | None = None) -> int:
    """Fetch the files into the cache (or find them) and print the folder that holds them; exit 1 when
    some are missing (the message on stderr). With ``--verify-recipes SOURCE_DIR``: check every
    recipe against the sources there, exit 1 unless all give their file."""
    import argparse
    import logging

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verify-recipes", metavar="SOURCE_DIR", type=Path)
    args = parser.parse_args(argv)
    if args.verify_recipes:
        lines = verify_recipes(args.verify_recipes)
        print("\n".join(lines))
        return 0 if all(line.startswith("ok ") for line in lines[:-1]) else 1
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        print(locate())
    except MissingTestData as err:
        print(err, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
