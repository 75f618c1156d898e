"""Where the real data samples come from (tests/real_data.py, issue 55 item 1): the manifest pins each
file the tests read, or the public file it is cut out of and the recipe that cuts it (tests/recipes.py);
a run takes $PELT_TEST_DATA or ../shared/data as they are, else fetches into the cache, checksummed and
resumable (against an HTTP server on loopback: no network), and without any of them fails with one
line that says what is missing and how to get it."""

from __future__ import annotations

import bz2
import hashlib
import io
import json
import lzma
import os
import re
import socket
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from conftest import REPO
from loopback import serve
from real_data import (
    ENV,
    SOURCES,
    DataFile,
    MissingTestData,
    UnlistedTestData,
    guard,
    locate,
    main,
    read_manifest,
    verify_recipes,
)
from recipes import RecipeError, derive, parse

BODIES = {"fewrel/a.json": b"A" * 5000, "lama/TREx/b.jsonl": bytes(range(256)) * 40}


def _row(path: str, url: str) -> DataFile:
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
    """Each file with its sha256 and a URL pinned to a commit: the file itself, or the public file it is
    cut out of, with that file's sha256 and a recipe that parses. None is left without a source."""
    files = read_manifest()
    assert files and len({f.path for f in files}) == len(files)
    pinned = re.compile(r"https://raw\.githubusercontent\.com/[\w.-]+/[\w.-]+/[0-9a-f]{40}/\S+")
    assert [f.path for f in files if not pinned.fullmatch(f.url)] == []
    assert all(re.fullmatch(r"[0-9a-f]{64}", f.sha256) and f.size > 0 for f in files)
    cut = [f for f in files if f.recipe]
    assert all(re.fullmatch(r"[0-9a-f]{64}", f.source_sha256) and parse(f.recipe) for f in cut)
    assert len(cut) == 49 and {f.path.split("/")[0] for f in cut} == {"wikitext_pages_i18n"}


def test_a_row_without_a_source_or_with_a_bad_recipe_is_refused_naming_it(tmp_path: Path):
    head = "path\tbytes\tsha256\turl\tsource_sha256\trecipe\tnote\n"
    rows = {
        "a.wiki\t3\t" + "0" * 64 + "\t-\t-\t-\t-": "row a.wiki: a URL is needed",
        "b.wiki\t3\t" + "0" * 64 + "\thttp://x/b\t-\tcrlf\t-": "row b.wiki: a URL is needed, and with a recipe",
        "c.wiki\t3\t" + "0" * 64 + "\thttp://x/c\t" + "1" * 64 + "\tbz2|page:X\t-": "row c.wiki: recipe 'bz2|page:X'",
        "d.wiki\t3\t" + "0" * 64 + "\thttp://x/d\t" + "1" * 64 + "\txml-page\t-": "step 'xml-page' needs argument",
    }
    for row, error in rows.items():
        (tmp_path / "m.tsv").write_text(head + row + "\n", encoding="utf-8")
        with pytest.raises(ValueError, match=re.escape(error)):
            read_manifest(tmp_path / "m.tsv")


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
    files = [_row(path, f"{_dead_url()}/{path}") for path in BODIES]
    with pytest.raises(MissingTestData) as offline:
        locate(files, env={}, shared=tmp_path / "shared", cache=tmp_path / "cache")
    with pytest.raises(MissingTestData) as not_fetching:
        locate(files, env={}, shared=tmp_path / "shared", cache=tmp_path / "cache", fetch=False)
    for err in (offline, not_fetching):
        message = str(err.value)
        assert "\n" not in message
        assert message.startswith("real test data missing: 2 of 2 files (fewrel/a.json, lama/TREx/b.jsonl) in neither")
        assert message.endswith(
            "get them with `.venv/bin/python tests/real_data.py` where raw.githubusercontent.com can be reached, "
            "or set PELT_TEST_DATA to a folder holding them (sources and sha256s: tests/real_data.tsv)"
        )
    assert "/fewrel/a.json failed: <urlopen error [Errno 111] Connection refused>" in str(offline.value)
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
    assert line.startswith(f"real test data missing: {len(files)} of {len(files)} files (fewrel/val_pubmed.json, "), (
        line
    )


def test_a_test_opening_an_unlisted_file_of_the_folder_fails(tmp_path: Path):
    files = [_row("fewrel/a.json", "http://unused/a.json")]
    root = _write(tmp_path, [*files, _row("lama/TREx/b.jsonl", "http://unused/b.jsonl")])
    with guard(root, files):
        assert (root / "fewrel/a.json").read_bytes() == BODIES["fewrel/a.json"]
        with pytest.raises(UnlistedTestData, match="tests/real_data.tsv does not list lama/TREx/b.jsonl"):
            (root / "lama/TREx/b.jsonl").read_bytes()
    assert (root / "lama/TREx/b.jsonl").read_bytes() == BODIES["lama/TREx/b.jsonl"]  # outside: no guard


# ---------------------------------------------------------------------- files cut out of a public file

NS = "http://www.mediawiki.org/xml/export-0.11/"
NOISE = "".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(400))  # xz cannot shrink it much
PAGES = [("Berlin", "'''Berlin''' &amp; [[Spree]]&lt;ref/&gt;"), ("Köln", "Dom\n== Geschichte ==\n"), ("Bonn", NOISE)]
BERLIN, KOELN = "'''Berlin''' & [[Spree]]<ref/>".encode(), "Dom\n== Geschichte ==\n".encode()  # their texts, as read


def _export(pages: list[tuple[str, str]] = PAGES) -> bytes:
    """A MediaWiki export of ``pages`` (title, text as written in the XML)."""
    body = "".join(
        f'  <page>\n    <title>{title}</title>\n    <revision>\n      <text xml:space="preserve">{text}</text>\n'
        "    </revision>\n  </page>\n"
        for title, text in pages
    )
    head = f'<mediawiki xmlns="{NS}">\n  <siteinfo>\n    <sitename>W</sitename>\n  </siteinfo>\n'
    return f"{head}{body}</mediawiki>\n".encode()


def test_xml_page_is_the_text_of_the_titled_page_as_an_xml_parser_reads_it():
    assert derive("xml-page:Berlin", _export()) == BERLIN
    assert derive("xml-page:Köln", _export()) == KOELN
    assert derive("bz2|xml-page:Köln", bz2.compress(_export())) == KOELN
    with pytest.raises(RecipeError, match="step 'xml-page:Paris': no page titled 'Paris'"):
        derive("bz2|xml-page:Paris", bz2.compress(_export()))


def test_a_cut_off_xz_dump_gives_its_earlier_pages_and_its_head():
    whole = lzma.compress(_export())
    cut = whole[: len(whole) * 3 // 4]
    with pytest.raises(lzma.LZMAError):
        lzma.decompress(cut)  # a truncated stream indeed
    assert derive("xz|xml-page:Köln", cut) == KOELN
    head = derive("xz|xml-head:2", cut)
    assert head == _export(PAGES[:2])
    with pytest.raises(RecipeError, match="step 'xml-head:3': fewer than 3 pages"):
        derive("xz|xml-head:3", cut)


def test_scala_string_is_the_literal_after_its_one_prefix_with_newlines_decoded():
    source = b'val a = Entry("A", Option("""x\\ny \\t \xc3\xbc"""))\nval b = Entry("AB", Option("""z"""))\n'
    assert derive('scala-string:Entry("A", Option(', source) == "x\ny \\t ü".encode()
    assert derive('scala-string:Entry("AB", Option(', source) == b"z"
    with pytest.raises(RecipeError, match="'Option\\(' occurs 2 times, not once"):
        derive("scala-string:Option(", source)


def test_zip_member_then_json_path_and_yaml_path_then_json_path():
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w") as archive:
        archive.writestr("images/a.jpg", b"\xff\xd8")
        archive.writestr("content.json", json.dumps({"articles": {"Salz": {"content": "Salz ü\n", "revision": 7}}}))
    assert derive("zip:content.json|json:articles/Salz/content", packed.getvalue()) == "Salz ü\n".encode()
    with pytest.raises(RecipeError, match="'articles/Salz/revision' holds a int, not a string"):
        derive("zip:content.json|json:articles/Salz/revision", packed.getvalue())
    with pytest.raises(RecipeError, match="no member 'nothing.json' in the zip"):
        derive("zip:nothing.json", packed.getvalue())
    response = json.dumps({"query": {"pages": {"42": {"revisions": [{"*": "Argentine ü"}]}}}})
    cassette = yaml.safe_dump({"interactions": [{"body": {"string": ""}}, {"body": {"string": response}}]}).encode()
    assert (
        derive("yaml:interactions/1/body/string|json:query/pages/42/revisions/0/*", cassette) == "Argentine ü".encode()
    )
    with pytest.raises(RecipeError, match="no '2' on the path 'interactions/2/body/string'"):
        derive("yaml:interactions/2/body/string", cassette)


def test_crlf_and_recipes_that_do_not_parse():
    assert derive("crlf", b"a\r\nb\rc\n") == b"a\nb\rc\n"  # a lone CR is text, not a line end
    for recipe, error in {
        "gz": "unknown step 'gz'",
        "crlf:x": "step 'crlf' takes no argument",
        "zip": "step 'zip' needs argument",
        "xml-head:two": "xml-head takes a page count, not 'two'",
    }.items():
        with pytest.raises(RecipeError, match=re.escape(error)):
            parse(recipe)


def test_rows_of_one_source_share_its_decompressed_bytes():
    done: dict[str, bytes] = {}
    assert derive("bz2|xml-page:Berlin", bz2.compress(_export()), done) == BERLIN
    assert done == {"bz2": _export()}  # the intermediate result; the last step's is not kept
    done["bz2"] = _export([("Köln", "kept")])
    assert derive("bz2|xml-page:Köln", b"not read again", done) == b"kept"


def _cut_row(path: str, url: str, recipe: str, body: bytes, source: bytes) -> DataFile:
    return DataFile(path, len(body), hashlib.sha256(body).hexdigest(), url, hashlib.sha256(source).hexdigest(), recipe)


def test_cut_out_files_are_fetched_from_one_verified_download_of_their_source(tmp_path: Path):
    source, cache = bz2.compress(_export()), tmp_path / "cache"
    with serve({"o/r/dump.xml.bz2": source, "fewrel/a.json": BODIES["fewrel/a.json"]}) as server:
        url = f"{server.url}/o/r/dump.xml.bz2"
        files = [
            _cut_row("i18n/de/Berlin.wiki", url, "bz2|xml-page:Berlin", BERLIN, source),
            _row("fewrel/a.json", f"{server.url}/fewrel/a.json"),
            _cut_row("i18n/de/Köln.wiki", url, "bz2|xml-page:Köln", KOELN, source),
        ]
        assert locate(files, env={}, shared=tmp_path / "none", cache=cache) == cache
        assert sorted(path for path, _ in server.requests) == ["/fewrel/a.json", "/o/r/dump.xml.bz2"]
        assert locate(files, env={}, shared=tmp_path / "none", cache=cache) == cache
        assert len(server.requests) == 2  # all in the cache: nothing fetched again
    assert (cache / "i18n/de/Köln.wiki").read_text(encoding="utf-8") == "Dom\n== Geschichte ==\n"
    assert (cache / "i18n/de/Berlin.wiki").read_bytes() == BERLIN
    assert (cache / SOURCES / files[0].source_sha256 / "dump.xml.bz2").read_bytes() == source
    assert not list(cache.rglob("*.part"))


ROW = "i18n/de/Berlin.wiki"


@pytest.mark.parametrize(
    ("recipe", "served", "error"),
    [
        (
            "bz2|xml-page:Köln",
            None,
            f"{ROW}: recipe 'bz2|xml-page:Köln' on {{url}} gave sha256 {{got}} != expected {{want}}",
        ),
        (
            "bz2|xml-page:X",
            None,
            f"{ROW}: recipe 'bz2|xml-page:X' failed on {{url}}: step 'xml-page:X': no page titled 'X'",
        ),
        (
            "bz2|xml-page:Berlin",
            b"other",
            "fetching {url} failed: {url}: sha256 {served} != expected {source}; the partial",
        ),
    ],
    ids=["wrong recipe", "step finds nothing", "wrong source"],
)
def test_a_cut_out_file_is_named_only_when_its_sha256_is_the_rows(tmp_path: Path, recipe, served, error):
    source, cache = bz2.compress(_export()), tmp_path / "cache"
    body = BERLIN
    with serve({"dump.xml.bz2": served or source}) as server:
        row = _cut_row(ROW, f"{server.url}/dump.xml.bz2", recipe, body, source)
        with pytest.raises(MissingTestData) as err:
            locate([row], env={}, shared=tmp_path / "none", cache=cache)
    hashes = {
        "url": row.url,
        "got": hashlib.sha256(KOELN).hexdigest(),
        "want": row.sha256,
        "served": hashlib.sha256(served or b"").hexdigest(),
        "source": row.source_sha256,
    }
    message = str(err.value)
    assert "\n" not in message and f"; {error.format(**hashes)}" in message
    assert not (cache / "i18n").exists() or not list((cache / "i18n").rglob("*"))  # neither the file nor a part


def test_verify_recipes_checks_each_row_against_a_folder_of_sources(tmp_path: Path, capsys):
    source, commit = bz2.compress(_export()), "0123456789abcdef0123456789abcdef01234567"
    url = f"https://raw.githubusercontent.com/o/r/{commit}/d/dump%2Bold.xml.bz2"
    (tmp_path / f"o/r/{commit}/d").mkdir(parents=True)
    (tmp_path / f"o/r/{commit}/d/dump+old.xml.bz2").write_bytes(source)  # the name in the repository
    rows = [
        _cut_row("de/Berlin.wiki", url, "bz2|xml-page:Berlin", BERLIN, source),
        _cut_row("de/Köln.wiki", url, "bz2|xml-page:Köln", b"not the page", source),
        _cut_row("de/Bonn.wiki", url.replace("dump", "gone"), "bz2|xml-page:Bonn", NOISE.encode(), source),
    ]
    lines = verify_recipes(tmp_path, rows)
    assert lines[0] == "ok de/Berlin.wiki"
    assert lines[1].startswith("BAD de/Köln.wiki: recipe 'bz2|xml-page:Köln' on https://") and "!= expected" in lines[1]
    assert lines[2].startswith(f"MISSING de/Bonn.wiki: no source {tmp_path}/o/r/{commit}/d/gone+old.xml.bz2")
    assert lines[3] == "1 of 3 cut-out files byte-identical to the manifest"
    assert main(["--verify-recipes", str(tmp_path)]) == 1  # the real manifest's sources are not there
    assert capsys.readouterr().out.rstrip().endswith("\n0 of 49 cut-out files byte-identical to the manifest")
