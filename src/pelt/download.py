"""Fetching the paper's data: resumable HTTP downloads with checksums.

A dump is tens of GB; a connection lost at 90 % must not restart it.  The bytes go to
``<out>.part``, and a rerun asks the server for the rest (HTTP ``Range``); a server that ignores the
range (200 instead of 206) makes the download start over, never append a second copy.  The file
gets its final name only once its checksum (from the dump's ``sha1sums.txt``, or configured)
matches; a mismatch deletes the partial file, so the next run starts clean.  Every read has a
timeout: a silent server fails the job instead of hanging it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from pelt.config import confined

logger = logging.getLogger(__name__)

ALGORITHMS = ("sha1", "md5", "sha256")
_CHUNK = 1 << 20


def dump_checksum(sums_file: str | os.PathLike[str], filename: str) -> str:
    """The checksum that a Wikimedia ``*sums.txt`` file (``<hex>  <name>`` lines) lists for ``filename``."""
    for line in Path(sums_file).read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1] == filename:
            return parts[0]
    raise ValueError(f"{sums_file} lists no checksum for {filename}")


def file_digest(path: str | os.PathLike[str], algorithm: str) -> str:
    digest = hashlib.new(algorithm)
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def download(
    url: str,
    out: str | os.PathLike[str],
    *,
    checksum: str | None = None,
    algorithm: str = "sha1",
    sums_file: str | os.PathLike[str] | None = None,
    timeout: float = 60.0,
    log_every: float = 30.0,
) -> dict[str, object]:
    """Download ``url`` to ``out``, resuming ``out.part`` if a previous run left one; verify ``checksum``
    (or the one ``sums_file``, a dump's checksum list, gives for ``out``'s file name).

    Without a checksum the file is kept and its sha256 is logged and returned, to be pinned in the
    config.  Returns ``bytes``, ``resumed_from`` and the ``sha256``/verified digest.
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"checksum algorithm {algorithm!r}: expected one of {ALGORITHMS}")
    out = Path(out)
    if sums_file is not None:
        checksum = dump_checksum(sums_file, out.name)
    part = out.with_name(out.name + ".part")
    out.parent.mkdir(parents=True, exist_ok=True)
    offset = part.stat().st_size if part.exists() else 0
    request = urllib.request.Request(url, headers={"Range": f"bytes={offset}-"} if offset else {})
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as err:
        if err.code != 416:  # 416: nothing left past ``offset``: the part file is complete
            raise RuntimeError(f"download of {url} failed: HTTP {err.code} {err.reason}") from err
        response = None
    resumed_from = offset
    if response is not None:
        with response:
            if offset and not (response.status == 206 and _range_start(response) == offset):
                logger.warning("%s ignored the range request: downloading it again from the start", url)
                offset = resumed_from = 0
            total = response.headers.get("Content-Length")
            total = int(total) + offset if total is not None else None
            _copy(response, part, offset, total, url, log_every)
    if checksum is not None:
        got = file_digest(part, algorithm)
        if got != checksum.lower():
            part.unlink()
            raise ValueError(f"{url}: {algorithm} {got} != expected {checksum}; the partial file is removed")
        logger.info("%s: %s verified", out.name, algorithm)
        digest = {algorithm: got}
    else:
        digest = {"sha256": file_digest(part, "sha256")}
        logger.warning("%s: no checksum configured; sha256 %s (pin it in the config)", out.name, digest["sha256"])
    os.replace(part, out)
    return {"bytes": out.stat().st_size, "resumed_from": resumed_from, **digest}


def _range_start(response) -> int | None:
    """Where a 206 response's body starts (``Content-Range: bytes START-END/TOTAL``)."""
    value = response.headers.get("Content-Range", "")
    try:
        return int(value.split()[1].split("-")[0])
    except (IndexError, ValueError):
        return None


def _copy(response, part: Path, offset: int, total: int | None, url: str, log_every: float) -> None:
    """Append the response body to ``part`` from ``offset``, one progress line per ``log_every`` seconds."""
    done, last = offset, time.monotonic()
    with open(part, "r+b" if offset else "wb") as fh:
        fh.seek(offset)
        fh.truncate()
        while chunk := response.read(_CHUNK):
            fh.write(chunk)
            done += len(chunk)
            if time.monotonic() - last >= log_every:
                last = time.monotonic()
                of = f" of {total / 2**20:,.0f}" if total else ""
                logger.info("%s: %s%s MiB", url, f"{done / 2**20:,.0f}", of)
    if total is not None and done != total:
        raise RuntimeError(f"{url}: connection closed at {done} of {total} bytes; rerun to resume")


def extract_zip(archive: str | os.PathLike[str], out_dir: str | os.PathLike[str]) -> int:
    """Unpack a release archive into ``out_dir`` (made complete, then renamed); returns the member count.

    A member whose path would leave ``out_dir`` (absolute, or with ``..``) is an error, not a file
    written elsewhere.
    """
    out_dir = Path(out_dir)
    tmp = out_dir.with_name(out_dir.name + ".partial")
    with zipfile.ZipFile(archive) as zf:
        for name in zf.namelist():
            confined(str(out_dir), name, f"{archive}: member")
        zf.extractall(tmp)
        count = len(zf.namelist())
    os.replace(tmp, out_dir)
    logger.info("%s: %d members unpacked into %s", archive, count, out_dir)
    return count
