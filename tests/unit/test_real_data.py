"""Where the real data samples come from (tests/real_data.py, issue 55 item 1): the manifest pins each
file the tests read; a run takes $PELT_TEST_DATA or ../shared/data as they are, else fetches into the
cache, checksummed and resumable (against an HTTP server on loopback: no network), and without any of
them fails with one line that says what is missing and how to get it."""

from __future__ import annotations

import hashlib
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from loopback import serve
from real_data import ENV, DataFile, MissingTestData, UnlistedTestData, guard, locate, read_manifest

BODIES = {"fewrel/a.json": b"A" * 5000, "lama/TREx/b.jsonl": bytes(range(256)) * 40}


def _row(path: str, url: str | None) -> DataFile:
    body = BODIES[path]
    return DataFile(path, len(body), hashlib.sha256(body).hexdigest(), url)


def _dead_url() -> str:
    """A loopback port nobody listens on: the connection is refused at once, as offline."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _write(root: Path, files: list[DataFile]) -> Path:
    for f in files:
        (root / f.path).parent.mkdir(parents=True, exist_ok=True)
        (root / f.path).write_bytes(BODIES[f.path])
    return root


def test_the_manifest_pins_every_file_to_a_commit():
    """Each file with its sha256 and either a URL pinned to a commit or a note of what its text was
    taken from (no public copy: only $PELT_TEST_DATA or ../shared/data give it)."""
    files = read_manifest()
    assert files and len({f.path for f in files}) == len(files)
    pinned = re.compile(r"https://raw\.githubusercontent\.com/[\w.-]+/[\w.-]+/[0-9a-f]{40}/\S+")
    assert all(pinned.fullmatch(f.url) if f.url else f.note for f in files)
    assert all(re.fullmatch(r"[0-9a-f]{64}", f.sha256) and f.size > 0 for f in files)


def test_the_data_folder_holds_the_manifests_bytes(shared_data: Path):
    """Every listed file, whichever source gave the folder, is the pinned one to the byte."""
    got = {f.path: hashlib.sha256((shared_data / f.path).read_bytes()).hexdigest() for f in read_manifest()}
    assert got == {f.path: f.sha256 for f in read_manifest()}


def test_files_are_fetched_verified_and_a_partial_one_resumed(tmp_path: Path):
    cache = tmp_path / "cache"
    (cache / "lama/TREx").mkdir(parents=True)
    (cache / "lama/TREx/b.jsonl.part").write_bytes(BODIES["lama/TREx/b.jsonl"][:1000])  # a run cut short
    with serve(dict(BODIES)) as server:
        files = [_row(path, f"{server.url}/{path}") for path in BODIES]
        assert locate(files, env={}, shared=tmp_path / "none", cache=cache) == cache
        assert sorted(server.requests) == [("/fewrel/a.json", None), ("/lama/TREx/b.jsonl", "bytes=1000-")]
        assert locate(files, env={}, shared=tmp_path / "none", cache=cache) == cache
        assert len(server.requests) == 2  # found in the cache: nothing fetched again
    assert all((cache / path).read_bytes() == body for path, body in BODIES.items())
    assert not list(cache.rglob("*.part"))


def test_a_file_failing_its_checksum_is_refused(tmp_path: Path):
    cache = tmp_path / "cache"
    with serve({**BODIES, "lama/TREx/b.jsonl": b"not the pinned bytes"}) as server:
        files = [_row(path, f"{server.url}/{path}") for path in BODIES]
        with pytest.raises(MissingTestData) as err:
            locate(files, env={}, shared=tmp_path / "none", cache=cache)
    message = str(err.value)
    assert "\n" not in message and "1 of 2 files (lama/TREx/b.jsonl)" in message
    assert f"!= expected {files[1].sha256}" in message
    assert (cache / "fewrel/a.json").exists() and sorted(p.name for p in cache.rglob("*")) == [
        ".lock",
        "TREx",
        "a.json",
        "fewrel",
        "lama",
    ]  # neither b.jsonl nor its partial file


def test_without_data_or_network_one_line_says_what_is_missing_and_how_to_get_it(tmp_path: Path):
    files = [_row("fewrel/a.json", f"{_dead_url()}/a.json"), _row("lama/TREx/b.jsonl", None)]
    with pytest.raises(MissingTestData) as offline:
        locate(files, env={}, shared=tmp_path / "shared", cache=tmp_path / "cache")
    with pytest.raises(MissingTestData) as not_fetching:
        locate(files, env={}, shared=tmp_path / "shared", cache=tmp_path / "cache", fetch=False)
    for err in (offline, not_fetching):
        message = str(err.value)
        assert "\n" not in message
        assert message.startswith("real test data missing: 1 of 2 files (fewrel/a.json) in neither")
        unpublished = "; 1 of 2 files (lama/TREx/b.jsonl) have no public copy: only $PELT_TEST_DATA or ../shared/data"
        assert unpublished in message
        assert message.endswith(
            "get them with `.venv/bin/python tests/real_data.py` where raw.githubusercontent.com can be reached, "
            "or set PELT_TEST_DATA to a folder holding them (sources and sha256s: tests/real_data.tsv)"
        )
    assert "/a.json failed: <urlopen error [Errno 111] Connection refused>" in str(offline.value)
    assert "; fetching is off;" in str(not_fetching.value)


def test_pelt_test_data_and_the_shared_folder_are_used_as_they_are(tmp_path: Path):
    files = [_row(path, f"{_dead_url()}/{path}") for path in BODIES]  # a fetch would fail
    given = _write(tmp_path / "given", files)
    shared = _write(tmp_path / "shared", files)
    assert locate(files, env={ENV: str(given)}, shared=shared, cache=tmp_path / "cache") == given
    assert locate(files, env={}, shared=shared, cache=tmp_path / "cache") == shared
    assert not (tmp_path / "cache").exists()  # nothing fetched, not even the cache made
    (given / "fewrel/a.json").write_bytes(b"cut")  # another size: not the file
    with pytest.raises(MissingTestData, match=rf"1 of 2 files \(fewrel/a.json\) not in \$PELT_TEST_DATA={given} "):
        locate(files, env={ENV: str(given)}, shared=shared, cache=tmp_path / "cache")


def test_a_run_without_the_data_fails_rather_than_skips(tmp_path: Path):
    """Through the fixture: the test that needs the data errors with the one line, and the run exits 1."""
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        + [f"{Path(__file__).relative_to(REPO)}::test_the_data_folder_holds_the_manifests_bytes"],
        cwd=REPO,
        env={**os.environ, ENV: str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 1 and "1 error" in run.stdout and "skipped" not in run.stdout, run.stdout
    (line,) = [line for line in run.stdout.splitlines() if line.startswith("real test data missing")]
    files = read_manifest()
    pinned = sum(1 for f in files if f.url)
    assert line.startswith(f"real test data missing: {pinned} of {len(files)} files (fewrel/val_pubmed.json, "), line


def test_a_test_opening_an_unlisted_file_of_the_folder_fails(tmp_path: Path):
    files = [_row("fewrel/a.json", None)]
    root = _write(tmp_path, [*files, _row("lama/TREx/b.jsonl", None)])
    with guard(root, files):
        assert (root / "fewrel/a.json").read_bytes() == BODIES["fewrel/a.json"]
        with pytest.raises(UnlistedTestData, match="tests/real_data.tsv does not list lama/TREx/b.jsonl"):
            (root / "lama/TREx/b.jsonl").read_bytes()
    assert (root / "lama/TREx/b.jsonl").read_bytes() == BODIES["lama/TREx/b.jsonl"]  # outside: no guard


def test_a_file_without_a_public_copy_fails_only_the_tests_that_read_it(tmp_path: Path):
    """Fetched data lacks the files without a public copy: the run goes on, and a test that opens such a
    file, or lists its folder, fails with the one line; the fetched files read as ever."""
    with serve(dict(BODIES)) as server:
        files = [_row("fewrel/a.json", f"{server.url}/fewrel/a.json"), _row("lama/TREx/b.jsonl", None)]
        root = locate(files, env={}, shared=tmp_path / "none", cache=tmp_path / "cache")
    line = r"real test data missing: 1 of 2 files \(lama/TREx/b.jsonl\) not in .*; they have no public copy: only"
    with guard(root, files):
        assert (root / "fewrel/a.json").read_bytes() == BODIES["fewrel/a.json"]
        with pytest.raises(MissingTestData, match=line):
            (root / "lama/TREx/b.jsonl").read_bytes()
        with pytest.raises(MissingTestData, match=line):
            list((root / "lama/TREx").glob("*.jsonl"))
        assert [p.name for p in (root / "fewrel").glob("*.json")] == ["a.json"]
