"""The real data samples the tests read: which files, from where, and where a test run finds them.

The readers are tested on real FewRel, Wiki80, LAMA and S2ORC files, a real Wikipedia dump excerpt and
real wikitext pages of several languages: public files, but not the project's to commit.
``real_data.tsv`` lists each file the tests read with its size and full sha256 and, where the very
file is public, a URL pinned to a commit, so that any machine that can reach those sources gets the
bytes the tests were written against. ``locate`` takes, in order:

1. the folder ``$PELT_TEST_DATA`` names, as it is (never fetched into: a prepared copy is what runs);
2. ``../shared/data`` beside the clone when it holds every file with a public source (as in CI:
   nothing fetched and nothing hashed, a stat per file, so that CI's time stays what it was);
3. the user's cache, ``$XDG_CACHE_HOME/pelt/test-data`` (``~/.cache/pelt/test-data``), fetching what it
   lacks with ``pelt.download`` (the workflow's own downloads: resumable, and a file gets its name only
   once its sha256 matches, so a file in the cache is a verified one).

Where the folder lacks a file that has a public source, it raises one line that says what is missing
and how to get it, and the fixture fails every test that needs the data with it (not a skip: a skipped
test of a reader is a reader nobody checked). A file without a public copy (text taken out of a public
file) comes only from the first two; where it is absent, ``guard`` fails just the tests that read it,
with that line, and the others run.

``.venv/bin/python tests/real_data.py`` fetches the files into the cache ahead of an offline run.
"""

from __future__ import annotations

import fcntl
import http.client
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MANIFEST = Path(__file__).with_name("real_data.tsv")
SHARED = REPO.parent / "shared" / "data"
ENV = "PELT_TEST_DATA"
COLUMNS = ["path", "bytes", "sha256", "url", "note"]
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
    """One row of the manifest; ``url`` is None for a file without a public copy (``note`` says what
    public file its text was taken from)."""

    path: str
    size: int
    sha256: str
    url: str | None
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
    """The rows of ``real_data.tsv`` (``#`` lines are comments; ``-``: no URL, no note)."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    header, *rows = (line.split("\t") for line in lines)
    if header != COLUMNS:
        raise ValueError(f"{path}: columns {header}, expected {COLUMNS}")
    return [
        DataFile(name, int(size), sha256, None if url == "-" else url, "" if note == "-" else note)
        for name, size, sha256, url, note in rows
    ]


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
    when it holds every file with a public source, else ``cache`` once what it lacks of those is
    fetched. Raises ``MissingTestData`` when the folder lacks one of them; the files without a public
    copy that it lacks are left to ``guard``, so that only the tests that read them fail."""
    files = read_manifest() if files is None else files
    if env.get(ENV):
        root = Path(env[ENV]).expanduser().resolve()
        if missing := [f for f in files if f.url and not f.present_in(root)]:
            raise MissingTestData(
                f"real test data missing: {_some(missing, files)} not in ${ENV}={root} (used as it is, never "
                f"fetched into){_unpublished(files, root)}; {HOW}"
            )
        return root
    if all(f.present_in(shared) for f in files if f.url):
        return shared
    reason = "fetching is off"
    if fetch and any(f.url and not f.present_in(cache) for f in files):
        reason = _fetch(files, cache, timeout)
    if missing := [f for f in files if f.url and not f.present_in(cache)]:
        raise MissingTestData(
            f"real test data missing: {_some(missing, files)} in neither {shared} nor the cache {cache}; {reason}"
            f"{_unpublished(files, cache)}; {HOW}"
        )
    for entry in files:  # a test that lists a folder of files without a public copy reaches the guard
        (cache / entry.path).parent.mkdir(parents=True, exist_ok=True)
    return cache


def _some(missing: Sequence[DataFile], files: Sequence[DataFile]) -> str:
    """``3 of 165 files (a, b, c)``: the count and the first few, to keep the message one readable line."""
    names = ", ".join(f.path for f in missing[:3]) + (", ..." if len(missing) > 3 else "")
    return f"{len(missing)} of {len(files)} files ({names})"


def _unpublished(files: Sequence[DataFile], root: Path) -> str:
    """The clause on the files without a public copy that ``root`` lacks too, if any."""
    absent = [f for f in files if not f.url and not f.present_in(root)]
    if not absent:
        return ""
    return f"; {_some(absent, files)} have no public copy: only ${ENV} or ../shared/data give them"


def _fetch(files: Sequence[DataFile], cache: Path, timeout: float) -> str:
    """Download into ``cache`` what it lacks, one process at a time (``make test``'s two workers may both
    ask); stops at the first failure, since offline every other file would fail the same way, and
    returns what happened."""
    from pelt.download import download

    cache.mkdir(parents=True, exist_ok=True)
    with (cache / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # once the other worker's fetch is done, its files are here
        for entry in [f for f in files if f.url and not f.present_in(cache)]:
            try:
                download(entry.url, cache / entry.path, checksum=entry.sha256, algorithm="sha256", timeout=timeout)
            except (OSError, RuntimeError, ValueError, http.client.HTTPException) as err:
                return f"fetching {entry.url} failed: {' '.join(str(err).split()) or type(err).__name__}"
    return "fetched"


class UnlistedTestData(AssertionError):
    """A test opened a file of the data folder that the manifest does not list."""


@dataclass(frozen=True)
class _Watch:
    """What the guard knows of one data folder: the listed files, the absent ones, their total."""

    listed: frozenset[str]
    absent: tuple[DataFile, ...]
    total: tuple[DataFile, ...]


_WATCHED: dict[str, _Watch] = {}
_EVENTS = frozenset({"open", "os.scandir", "os.listdir"})
_HOOKED = False


def _audit(event: str, args: tuple) -> None:
    """In a guarded data folder: refuse to open a file the manifest does not list (such a test would
    pass beside ../shared/data, as in CI, and fail where the data is fetched), and fail a test that
    opens, or lists the folder of, a file the folder lacks, with the one line on it."""
    if event not in _EVENTS or not _WATCHED or not args or not isinstance(args[0], str | bytes | os.PathLike):
        return
    path = os.path.abspath(os.fsdecode(args[0]))
    for root, watch in _WATCHED.items():
        if path != root and not path.startswith(root + os.sep):
            continue
        name = os.path.relpath(path, root) if path != root else ""
        if event == "open":
            absent = [f for f in watch.absent if f.path == name]
            if not absent and name not in watch.listed:
                raise UnlistedTestData(
                    f"tests/real_data.tsv does not list {name}: add its row (path, bytes, sha256, pinned URL), "
                    "so that a machine without ../shared/data fetches it too"
                )
        else:
            absent = [f for f in watch.absent if not name or f.path.startswith(name + "/")]
        if absent:
            raise MissingTestData(
                f"real test data missing: {_some(absent, watch.total)} not in {root}; they have no public copy: "
                f"only ${ENV} or ../shared/data give them (tests/real_data.tsv)"
            )


@contextmanager
def guard(root: Path, files: Sequence[DataFile]) -> Iterator[Path]:
    """While inside, a test that opens a file under ``root`` that ``files`` does not list fails
    (``UnlistedTestData``), and one that opens or lists what ``root`` lacks of ``files`` fails with the
    one line (``MissingTestData``). Python's own opens only: a Spark job's reads in the JVM are not seen."""
    global _HOOKED
    if not _HOOKED:
        sys.addaudithook(_audit)  # a hook cannot be removed: one for the process, reading _WATCHED
        _HOOKED = True
    key = os.path.abspath(root)
    absent = tuple(f for f in files if not f.present_in(root))
    _WATCHED[key] = _Watch(frozenset(f.path for f in files), absent, tuple(files))
    try:
        yield root
    finally:
        del _WATCHED[key]


def main() -> int:
    """Fetch the files into the cache (or find them) and print the folder that holds them; exit 1 when
    some are missing (the message on stderr)."""
    import logging

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    files = read_manifest()
    try:
        root = locate(files)
    except MissingTestData as err:
        print(err, file=sys.stderr)
        return 1
    print(root)
    if note := _unpublished(files, root):
        print(f"real test data missing:{note.removeprefix(';')}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
