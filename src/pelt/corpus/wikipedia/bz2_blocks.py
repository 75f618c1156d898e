"""The blocks of any bz2 file, found at any bit offset and decoded one by one, so that many tasks
can read one dump in parallel without an index and without recompressing it.

A bz2 stream is a 4-byte header ("BZh" and the block size) and blocks, each opened by a 48-bit
magic and its CRC and NOT aligned to bytes, then a 48-bit end magic and the CRC of the stream.
Every block decodes alone (bzip2 resets its state at each one; pbzip2 and Hadoop read them so),
so a task can take the blocks that start in its byte range of the file: it finds them by their
magic at any bit offset and decodes each as a one-block stream of its own, with a header before
it and the end magic and CRC after it. No index and no recompression are needed, and the same
works for multistream dumps without their index. Which pages the blocks hold is
:mod:`pelt.corpus.wikipedia.dump`'s business.
"""

from __future__ import annotations

import bz2
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

logger = logging.getLogger(__name__)

CHUNK = 1 << 20  # bytes read/decompressed at a time: memory stays flat whatever the dump size
BZ2_PIECE = 1 << 16  # compressed bytes per decompress call: an error loses what this piece had decompressed


@dataclass(frozen=True)
class Gap:
    """Compressed bytes ``[start, end)`` that did not decode and were skipped: the pages they held are
    lost, the readers go on at the next block and count the loss."""

    start: int
    end: int
    reason: str


_BLOCK_MAGIC = 0x314159265359  # pi
_END_MAGIC = 0x177245385090  # sqrt(pi)
_MAGIC_MASK = (1 << 48) - 1


def _magic_keys() -> list[tuple[bytes, int, int]]:
    """(the 5 bytes that any copy of the magic at bit shift ``s`` fully covers, s, magic) per magic and shift.

    A magic at bit ``s`` of a byte fills bytes 1-5 of the 7-byte window from that byte: those 5 bytes
    are searched with ``bytes.find`` (C speed), the window's remaining bits checked after.
    """
    return [
        ((magic << (8 - shift)).to_bytes(7, "big")[1:6], shift, magic)
        for magic in (_BLOCK_MAGIC, _END_MAGIC)
        for shift in range(8)
    ]


_MAGIC_KEYS = _magic_keys()


def bz2_markers(fh: BinaryIO, start_bit: int = 0) -> Iterator[tuple[int, bool]]:
    """``(bit offset, is_block)`` of each block magic (True) and end-of-stream magic (False) at or
    after ``start_bit``, in file order.

    The compressed bits between them can copy a magic by chance: about once in 2^47 bit offsets,
    once per 20 TB of bz2. :func:`iter_bz2_blocks` absorbs such a false marker.
    """
    base = max(start_bit // 8 - 1, 0)  # byte offset of data[0]: the window starts a byte before the key
    fh.seek(base)
    data = b""
    while chunk := fh.read(CHUNK):
        data += chunk
        found = []
        last_window = len(data) - 7
        for key, shift, magic in _MAGIC_KEYS:
            at = data.find(key, 1)
            while at != -1 and at - 1 <= last_window:
                window = int.from_bytes(data[at - 1 : at + 6], "big")
                bit = (base + at - 1) * 8 + shift
                if (window >> (8 - shift)) & _MAGIC_MASK == magic and bit >= start_bit:
                    found.append((bit, magic == _BLOCK_MAGIC))
                at = data.find(key, at + 1)
        yield from sorted(found)
        keep = min(len(data), 6)  # windows starting in the last 6 bytes are checked with the next chunk
        base += len(data) - keep
        data = data[len(data) - keep :]


def _decode_block(fh: BinaryIO, begin_bit: int, end_bit: int) -> bytes:
    """The decompressed bytes of the bz2 block in bits ``[begin_bit, end_bit)`` of ``fh``.

    The block's bits are shifted to a byte boundary behind a ``BZh9`` header (9: the largest
    block size, which any block fits) and followed by the end magic and a stream CRC, which for a
    one-block stream is the block's own CRC (the 32 bits after its magic). OSError when the bits do
    not decode (a cut or corrupt block, or a false marker).
    """
    first, last = begin_bit // 8, (end_bit + 7) // 8
    fh.seek(first)
    raw = fh.read(last - first)
    n_bits = end_bit - begin_bit
    if len(raw) < last - first or n_bits < 80:
        raise OSError(f"bz2 block at bit {begin_bit} cut short")
    block = (int.from_bytes(raw, "big") >> (last * 8 - end_bit)) & ((1 << n_bits) - 1)
    crc = (block >> (n_bits - 80)) & 0xFFFFFFFF
    total = n_bits + 80
    pad = -total % 8
    stream = ((((block << 48) | _END_MAGIC) << 32 | crc) << pad).to_bytes((total + pad) // 8, "big")
    decompressor = bz2.BZ2Decompressor()
    out = decompressor.decompress(b"BZh9" + stream)
    if not decompressor.eof:
        raise OSError(f"bz2 block at bit {begin_bit} does not end where the next marker starts")
    return out


def iter_bz2_blocks(
    path: str | os.PathLike[str], start: int, end: int, pass_over: int = 2
) -> Iterator[tuple[bool, bytes | Gap]]:
    """``(owned, decompressed bytes)`` of the bz2 blocks from the first that starts at or after byte
    ``start`` to the end of the file, and a :class:`Gap` for each block that does not decode (a
    corrupt one: the blocks after it are read); ``owned``: the block starts before byte ``end``.

    A block ends where the next marker starts; one that does not decode there is tried up to the
    marker after (the one between was false, found inside the block's bits). A range whose first
    marker starts no block that decodes passes over it (at most ``pass_over`` times: a false marker, not
    a corrupt file; 0 when ``start`` is known to be a block's). The file ending inside a block is an
    EOFError: the caller keeps what came before.
    """
    with open(path, "rb") as scan, open(path, "rb") as fh:
        file_bits = os.fstat(fh.fileno()).st_size * 8
        markers = bz2_markers(scan, start * 8)
        pending: list[tuple[int, bool]] = []  # markers read ahead and not used yet, in order

        def next_marker() -> tuple[int, bool] | None:
            return pending.pop(0) if pending else next(markers, None)

        passed_over = 0
        yielded = False
        begin = next_marker()
        while begin is not None:
            if not begin[1]:  # an end of stream: the next stream's first block follows
                begin = next_marker()
                continue
            ahead = [marker for marker in (next_marker(), next_marker()) if marker is not None]
            out = None
            for tried, stop in enumerate([bit for bit, _ in ahead] or [file_bits]):
                try:
                    out = _decode_block(fh, begin[0], stop)
                except OSError:
                    continue
                pending = ahead[tried + 1 :] + pending
                break
            if out is None:
                if not ahead:
                    raise EOFError(f"bz2 block at byte {begin[0] // 8} cut short (truncated file)")
                if not yielded and passed_over < pass_over:
                    logger.warning("bit %d: a bz2 block magic that starts no block, passed over", begin[0])
                    passed_over += 1
                    pending = ahead[1:] + pending
                    begin = ahead[0]
                    continue
                reason = f"bz2 block at byte {begin[0] // 8} does not decode (corrupt file): skipped"
                logger.error("%s: %s", path, reason)
                yield begin[0] < end * 8, Gap(begin[0] // 8, ahead[0][0] // 8, reason)
                pending, begin, yielded = ahead[1:] + pending, ahead[0], True
                continue
            yield begin[0] < end * 8, out
            yielded = True
            begin = ahead[tried] if ahead else None


def bz2_block_ranges(path: str | os.PathLike[str], target_bytes: int) -> list[tuple[int, int]]:
    """Byte ranges of about ``target_bytes`` covering a bz2 file, for
    :func:`pelt.corpus.wikipedia.dump.iter_bz2_range_pages`.

    Only the file size is needed: each task finds its own blocks, so the driver reads nothing.
    """
    size = os.path.getsize(path)
    starts = list(range(0, size, max(target_bytes, 1))) or [0]
    return [(begin, min(begin + target_bytes, size)) for begin in starts[:-1]] + [(starts[-1], size)]
