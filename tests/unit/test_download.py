"""Downloads of the paper's data (issue 16 item 5): resumable with HTTP Range, checksummed, never
appending a second copy; tested against an HTTP server on loopback (no network)."""

from __future__ import annotations

import glob
import hashlib
import zipfile
from pathlib import Path

import pytest
import yaml
from demo_run import REPO, snakemake, write_config
from loopback import serve

from pelt.download import download, dump_checksum, extract_zip
from pelt.tasks.mlama.data import fact_files

DATA = bytes(range(256)) * 4096  # 1 MiB
SHA1 = hashlib.sha1(DATA).hexdigest()


@pytest.fixture
def server():
    with serve({"dump.bz2": DATA}) as httpd:
        yield httpd


def test_download_verifies_and_names_the_file_when_complete(server, tmp_path):
    out = tmp_path / "d" / "dump.bz2"
    stats = download(f"{server.url}/dump.bz2", out, checksum=SHA1)
    assert out.read_bytes() == DATA and stats == {"bytes": len(DATA), "resumed_from": 0, "sha1": SHA1}
    assert not (tmp_path / "d" / "dump.bz2.part").exists()


def test_an_interrupted_download_resumes_where_it_stopped(server, tmp_path):
    out = tmp_path / "dump.bz2"
    server.cut = 300_000
    with pytest.raises(RuntimeError, match="connection closed at 300000 of 1048576 bytes"):
        download(f"{server.url}/dump.bz2", out, checksum=SHA1)
    assert not out.exists() and (tmp_path / "dump.bz2.part").stat().st_size == 300_000
    server.cut = None
    stats = download(f"{server.url}/dump.bz2", out, checksum=SHA1)
    assert server.requests[-1] == ("/dump.bz2", "bytes=300000-")
    assert stats["resumed_from"] == 300_000 and out.read_bytes() == DATA


def test_a_server_ignoring_the_range_gives_a_fresh_copy(server, tmp_path, caplog):
    out = tmp_path / "dump.bz2"
    (tmp_path / "dump.bz2.part").write_bytes(DATA[:1000])
    server.ignore_range = True
    stats = download(f"{server.url}/dump.bz2", out, checksum=SHA1)
    assert out.read_bytes() == DATA and stats["resumed_from"] == 0  # not 1000 bytes twice
    assert "ignored the range request" in caplog.text


def test_a_complete_part_file_is_verified_without_downloading(server, tmp_path):
    out = tmp_path / "dump.bz2"
    (tmp_path / "dump.bz2.part").write_bytes(DATA)
    download(f"{server.url}/dump.bz2", out, checksum=SHA1)  # the server answers 416
    assert out.read_bytes() == DATA


def test_a_wrong_checksum_or_a_missing_file_fails_and_leaves_nothing(server, tmp_path, caplog):
    out = tmp_path / "dump.bz2"
    with pytest.raises(ValueError, match=f"sha1 {SHA1} != expected 0000"):
        download(f"{server.url}/dump.bz2", out, checksum="0" * 40)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(RuntimeError, match="HTTP 404"):
        download(f"{server.url}/nothing.bz2", out)
    stats = download(f"{server.url}/dump.bz2", out)  # no checksum: kept, its sha256 logged for pinning
    assert stats["sha256"] == hashlib.sha256(DATA).hexdigest() and stats["sha256"] in caplog.text


def test_dump_checksum_reads_a_wikimedia_sums_file(tmp_path: Path):
    sums = tmp_path / "enwiki-20261101-sha1sums.txt"
    sums.write_text(f"{'a' * 40}  enwiki-20261101-page_props.sql.gz\n{SHA1}  enwiki-20261101-pages-articles.xml.bz2\n")
    assert dump_checksum(sums, "enwiki-20261101-pages-articles.xml.bz2") == SHA1
    with pytest.raises(ValueError, match="lists no checksum for x.bz2"):
        dump_checksum(sums, "x.bz2")


def test_the_download_rules_fetch_verify_and_resume(server, tmp_path):
    """`snakemake download`: the dump's files checked against its sha1sums.txt, a release with a
    configured sha256, one without (kept, sha256 logged), the LAMA and mLAMA archives unpacked (the
    latter read as the mLAMA task reads it, config/mlama.yaml's URL and sha256 aside); a corrupt dump
    file fails its job and leaves no file; the paper's corpus glob takes split dumps."""
    date = "20990101"
    dump = {
        f"enwiki-{date}-pages-articles-multistream1.xml-p1p41242.bz2": DATA,
        f"enwiki-{date}-page_props.sql.gz": b"p",
    }
    bad = f"enwiki-{date}-pages-articles-multistream2.xml-p41243p151573.bz2"  # listed with another file's sha1
    sums = "".join(f"{hashlib.sha1(body).hexdigest()}  {name}\n" for name, body in dump.items()) + f"{SHA1}  {bad}\n"
    archive = tmp_path / "data.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("data/relations.jsonl", '{"relation": "P19"}\n')
    server.files = {f"enwiki/{date}/{name}": body for name, body in [*dump.items(), (bad, b"corrupt")]}
    server.files[f"enwiki/{date}/enwiki-{date}-sha1sums.txt"] = sums.encode()
    mlama = tmp_path / "mlama1.1.zip"  # the mLAMA release's layout: mlama1.1/<language>/
    with zipfile.ZipFile(mlama, "w") as zf:
        zf.writestr("mlama1.1/de/templates.jsonl", '{"relation": "P19", "template": "[X] wurde in [Y] geboren."}\n')
        zf.writestr("mlama1.1/de/P19.jsonl", '{"sub_label": "Ulm", "obj_label": "Ulm", "lineid": 0}\n')
    server.files["lama.zip"], server.files["val_wiki.json"] = archive.read_bytes(), b"{}"
    server.files["mlama1.1.zip"] = mlama.read_bytes()
    files = {
        "LAMA/data.zip": {"url": f"{server.url}/lama.zip", "sha256": hashlib.sha256(archive.read_bytes()).hexdigest()},
        "mLAMA/mlama1.1.zip": {
            "url": f"{server.url}/mlama1.1.zip",
            "sha256": hashlib.sha256(mlama.read_bytes()).hexdigest(),
        },
        "fewrel/val_wiki.json": {"url": f"{server.url}/val_wiki.json"},
    }
    names = [name.removeprefix(f"enwiki-{date}-") for name in [*dump, bad]]
    work = tmp_path / "work"
    write_config(
        work, download={"enwiki_date": date, "enwiki_mirror": server.url, "enwiki_files": names, "files": files}
    )
    run = snakemake(work, "--cores", "1", "--keep-going", "download")
    assert run.returncode != 0 and f"sha1 {hashlib.sha1(b'corrupt').hexdigest()} != expected {SHA1}" in run.stderr
    data = work / "data"
    assert not (data / "enwiki" / bad).exists() and not (data / "enwiki" / f"{bad}.part").exists()
    for name, body in dump.items():
        assert (data / "enwiki" / name).read_bytes() == body
    assert (data / "LAMA" / "release" / "data" / "relations.jsonl").read_text() == '{"relation": "P19"}\n'
    assert (data / "fewrel" / "val_wiki.json").read_bytes() == b"{}"
    assert fact_files(data / "mLAMA" / "release", "de") == [str(data / "mLAMA/release/mlama1.1/de/P19.jsonl")]
    log = (work / "logs" / "download" / "fewrel" / "val_wiki.json.log").read_text()
    assert hashlib.sha256(b"{}").hexdigest() in log
    paper = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())["corpora"]["wikipedia"]["path"]
    (data / "enwiki" / f"enwiki-{date}-pages-articles-multistream-index1.txt-p1p41242.bz2").touch()
    found = sorted(Path(p).name for p in glob.glob(str(work / paper)))
    assert found == [next(iter(dump))]  # the split dump file; not its index, not page_props


def test_an_archive_member_leaving_its_folder_is_refused(tmp_path):
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("data/ok.txt", "ok")
        zf.writestr("../outside.txt", "no")
    with pytest.raises(ValueError, match=r"member: '../outside.txt' is not a path inside"):
        extract_zip(archive, tmp_path / "out")
    assert not (tmp_path / "outside.txt").exists() and not (tmp_path / "out").exists()
