"""The host half of encoding, one pool of rows at a time: validate, tokenize, mask and pack.

Everything here depends on one pool alone (table rows, which depend on every earlier pool, are
assigned by :mod:`pelt.encoding.encode`), so pools can be prepared in worker processes while the parent
feeds the device: on a GPU, Python's per-sentence work under one GIL was slower than the model
(benchmarks/README.md, Encoding).  The module imports neither torch nor transformers, so that a
worker starts in a fraction of a second; workers get the tokenizer as its backend's JSON.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import os
import struct
import subprocess
import sys
import traceback
from collections import Counter, deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter
from typing import BinaryIO

import numpy as np
from tokenizers import Encoding, Tokenizer


@dataclass
class Rows:
    """A chunk of sampled mentions, column-wise (as read from Parquet)."""

    entity_ids: Sequence[str | None]
    sentences: Sequence[str | None]
    starts: Sequence[int | None]
    ends: Sequence[int | None]
    doc_ids: Sequence[str | None] | None = None

    def chunks(self, size: int) -> Iterator[Rows]:
        """Consecutive chunks of at most ``size`` rows: the pools an encoding sorts by length."""
        columns = (self.entity_ids, self.sentences, self.starts, self.ends)
        for lo in range(0, len(self.sentences), size):
            doc_ids = None if self.doc_ids is None else self.doc_ids[lo : lo + size]
            yield Rows(*(c[lo : lo + size] for c in columns), doc_ids)


@dataclass
class PackedBatch:
    """One device batch as numpy arrays; its sentences are named by their index in the pool."""

    input_ids: np.ndarray  # [B, T] int64, right-padded
    lengths: np.ndarray  # [B] tokens of each sentence (the attention mask's ones)
    mask_positions: np.ndarray  # [B]
    items: np.ndarray  # [B] index into PreparedPool.entity_ids


@dataclass
class PreparedPool:
    """A pool's batches, its mentions' entities in input order (rows are assigned in that order) and counts."""

    n_rows: int  # input rows, kept or not (for the progress bar)
    entity_ids: list[str]
    batches: list[PackedBatch]
    stats: Counter[str]


def shard_of(entity_id: str, doc_id: str | None, sentence: str, start: int, n_shards: int) -> int:
    """Stable shard of a mention: a hash of its identity, independent of file layout and of the process."""
    key = "\x1f".join((entity_id, doc_id or "", sentence, str(start))).encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "little") % n_shards


def encode_with_offsets(backend: Tokenizer, texts: list[str]) -> dict[str, list]:
    """Token ids, character offsets and special-token flags of ``texts`` by a fast tokenizer's backend.

    Truncation and padding are switched off first, as transformers does before each of its own
    calls (it sets them per call), so that every copy of a tokenizer cuts text identically.
    """
    encodings = _encode_batch(backend, texts)
    return {
        "input_ids": [e.ids for e in encodings],
        "offset_mapping": [e.offsets for e in encodings],
        "special_tokens_mask": [e.special_tokens_mask for e in encodings],
    }


def _encode_batch(backend: Tokenizer, texts: list[str]) -> list[Encoding]:
    if backend.truncation is not None:
        backend.no_truncation()
    if backend.padding is not None:
        backend.no_padding()
    return backend.encode_batch(texts, add_special_tokens=True)


def encoding_mention_span(encoding: Encoding, special: Sequence[int], start: int, end: int) -> tuple[int, int] | None:
    """:func:`mention_token_span` of one encoding, asking the tokenizer for the tokens at the
    mention's two ends instead of converting every offset to Python (a third of the host's time
    per sentence).

    The answer is checked: the tokens at both ends must be ordinary, and their outer neighbours
    must not overlap the mention.  Offsets run in text order, so those checks make the two ends
    the first and last overlapping tokens.  Where a check fails (an end in a gap between tokens,
    a character split over several tokens, an added special token), every offset is read.
    """
    first, last = encoding.char_to_token(start), encoding.char_to_token(end - 1)
    if first is not None and last is not None and first <= last and not special[first] and not special[last]:
        # the outer neighbours' characters (None for a special token, whose offsets are empty), read
        # here rather than by a helper: this runs once a mention, and a call costs as much as the reads
        before = encoding.token_to_chars(first - 1) if first > 0 else None
        after = encoding.token_to_chars(last + 1) if last + 1 < len(encoding) else None
        if (before is None or before[1] <= start or before[0] >= end) and (
            after is None or after[1] <= start or after[0] >= end
        ):
            return first, last
    return mention_token_span(encoding.offsets, special, start, end)


def mention_token_span(
    offsets: Sequence[tuple[int, int]], special: Sequence[int], start: int, end: int
) -> tuple[int, int] | None:
    """First and last index of the non-special tokens whose character span overlaps [start, end).

    Tokens between them belong to the mention too, including zero-width ones (a byte-level BPE
    space token has an empty, trimmed offset).  None when no token overlaps.
    """
    first = last = -1
    for i, ((s, e), sp) in enumerate(zip(offsets, special)):
        if not sp and s < end and e > start:
            if first < 0:
                first = i
            last = i
    return None if first < 0 else (first, last)


def mask_mention(
    input_ids: Sequence[int], special: Sequence[int], span: tuple[int, int], mask_id: int, max_seq_len: int
) -> tuple[list[int], int]:
    """Replace the tokens ``span`` (first, last; see :func:`mention_token_span`) by one mask; window to ``max_seq_len``.

    A sequence that is too long keeps its special tokens and a window of the body centred on the
    mask, shifted to stay inside the body: start = clamp(mask - budget // 2, 0, body_len - budget).
    Returns the new ids and the mask position.

    The definition, one sentence at a time, as the naive path of benchmarks/encode_throughput.py
    runs it; :class:`PoolPreparer` computes the same over a whole pool at once (:class:`_Windows`),
    and the tests hold the two equal.
    """
    first, last = span
    ids = [*input_ids[:first], mask_id, *input_ids[last + 1 :]]
    mask = first
    if len(ids) > max_seq_len:
        n_prefix = next(i for i, sp in enumerate(special) if not sp)
        n_suffix = next(i for i, sp in enumerate(reversed(special)) if not sp)
        body = ids[n_prefix : len(ids) - n_suffix]
        budget = max_seq_len - n_prefix - n_suffix
        lo = min(max(mask - n_prefix - budget // 2, 0), len(body) - budget)
        ids = [*ids[:n_prefix], *body[lo : lo + budget], *ids[len(ids) - n_suffix :]]
        mask -= lo
    return ids, mask


@dataclass(frozen=True)
class _Tokens:
    """A pool's distinct sentences tokenized, end to end in one array: one numpy array a pool
    instead of a Python list a sentence, so that masking and packing run as array operations."""

    ids: np.ndarray  # [N] int64, every sentence's tokens one after the other
    starts: np.ndarray  # [S] index in ``ids`` of each sentence's first token
    lengths: np.ndarray  # [S] tokens of each sentence

    @classmethod
    def of(cls, encodings: Sequence[Encoding]) -> _Tokens:
        lengths = np.fromiter(map(len, encodings), np.int64, len(encodings))
        ids = np.fromiter(chain.from_iterable(map(attrgetter("ids"), encodings)), np.int64, int(lengths.sum()))
        return cls(ids, np.cumsum(lengths) - lengths, lengths)


@dataclass(frozen=True)
class _Windows:
    """:func:`mask_mention` of a pool's mentions as arrays over them: where each masked, windowed
    sentence takes its tokens from, so that a batch is written whole without building any sentence.

    Column ``j`` of a mention's row is token ``m`` of its masked sentence, ``m = j + shift`` in the
    window's body, ``j + shift + tail`` in its trailing special tokens and ``j`` before; token ``m``
    of the masked sentence is the mask at ``first``, else sentence token ``m``, or ``m + cut`` past
    the mask.
    """

    start: np.ndarray  # [M] the sentence's first token in _Tokens.ids
    first: np.ndarray  # [M] the mention's first token: the mask's position before windowing
    cut: np.ndarray  # [M] tokens the mask removes beside its own: last - first
    prefix: np.ndarray  # [M] leading special tokens, kept by a window (0 unless windowed)
    suffix: np.ndarray  # [M] trailing special tokens, kept by a window (0 unless windowed)
    shift: np.ndarray  # [M] masked tokens a window drops before its body (0 unless windowed)
    tail: np.ndarray  # [M] masked tokens a window drops after its body (0 unless windowed)
    lengths: np.ndarray  # [M] tokens after masking and windowing

    @classmethod
    def of(
        cls,
        tokens: _Tokens,
        specials: Sequence[Sequence[int]],
        sentences: np.ndarray,
        spans: np.ndarray,
        max_seq_len: int,
    ) -> _Windows:
        """``specials``: each sentence's special-tokens mask; ``sentences`` [M]: each mention's
        sentence; ``spans`` [M, 2]: its first and last token.

        Only a windowed mention needs the special tokens at its sentence's ends; they are counted
        in Python, for those alone (none of FewRel's 22,400 mentions at 64 tokens, a third at 32),
        rather than every sentence's mask read into an array.
        """
        first, last = spans[:, 0], spans[:, 1]
        masked = tokens.lengths[sentences] - (last - first)
        windowed = masked > max_seq_len
        prefix, suffix = np.zeros_like(first), np.zeros_like(first)
        for n in np.flatnonzero(windowed).tolist():
            special = specials[sentences[n]]
            prefix[n], suffix[n] = special.index(0), special[::-1].index(0)
        budget = max_seq_len - prefix - suffix
        centred = np.minimum(np.maximum(first - prefix - budget // 2, 0), masked - prefix - suffix - budget)
        lengths = np.minimum(masked, max_seq_len)
        shift = np.where(windowed, centred, 0)
        return cls(
            tokens.starts[sentences], first, last - first, prefix, suffix, shift, masked - lengths - shift, lengths
        )

    def rows(self, items: np.ndarray, width: int, tokens: _Tokens, mask_id: int, pad_id: int) -> np.ndarray:
        """The right-padded ids [len(items), width] of mentions ``items``."""
        j = np.arange(width)[None, :]

        def per_row(values: np.ndarray) -> np.ndarray:
            return values[items, None]

        first, lengths = per_row(self.first), per_row(self.lengths)
        m = (
            j
            + per_row(self.shift) * (j >= per_row(self.prefix))
            + per_row(self.tail) * (j >= lengths - per_row(self.suffix))
        )
        source = np.minimum(per_row(self.start) + m + per_row(self.cut) * (m > first), len(tokens.ids) - 1)
        return np.where(j < lengths, np.where(m == first, mask_id, tokens.ids[source]), pad_id)


class PoolPreparer:
    """Turns a pool of rows into packed batches; the same object runs in the parent or in a worker.

    Sent to a worker as the backend's JSON (``Tokenizer.to_str``), which a worker rebuilds in
    milliseconds and which tokenizes exactly as the original (the tests compare tables built both ways).

    A pool's Python work per sentence is reading the tokenizer's answer (its ids into one array,
    its special-tokens mask) and looking the mention's two ends up; masking, windowing and packing
    are array operations over the pool (:class:`_Windows`), equal to :func:`mask_mention` sentence
    by sentence (the tests check).  A sentence that several mentions share (a relation's head and
    tail) is tokenized once.
    """

    def __init__(
        self,
        backend: Tokenizer,
        mask_id: int,
        pad_id: int,
        max_seq_len: int,
        tokens_per_batch: int,
        shard: tuple[int, int] | None,
    ):
        self.backend = backend
        self.mask_id = mask_id
        self.pad_id = pad_id
        self.max_seq_len = max_seq_len
        self.tokens_per_batch = tokens_per_batch
        self.shard = shard

    def settings(self) -> dict:
        """What a worker needs to rebuild this object, as JSON."""
        return {
            "tokenizer": self.backend.to_str(),
            "mask_id": self.mask_id,
            "pad_id": self.pad_id,
            "max_seq_len": self.max_seq_len,
            "tokens_per_batch": self.tokens_per_batch,
            "shard": self.shard,
        }

    @classmethod
    def from_settings(cls, settings: dict) -> PoolPreparer:
        shard = settings["shard"]
        return cls(
            Tokenizer.from_str(settings["tokenizer"]),
            settings["mask_id"],
            settings["pad_id"],
            settings["max_seq_len"],
            settings["tokens_per_batch"],
            None if shard is None else (shard[0], shard[1]),
        )

    def _valid(self, rows: Rows, stats: Counter[str]) -> list[int]:
        """Indices of well-formed rows of this shard; the rest are counted (and logged at the end)."""
        keep = []
        for i, (eid, sentence, start, end) in enumerate(zip(rows.entity_ids, rows.sentences, rows.starts, rows.ends)):
            if eid is None or sentence is None or start is None or end is None:
                stats["skipped_null"] += 1
            elif not 0 <= start < end <= len(sentence):
                stats["skipped_bad_span"] += 1
            elif self.shard is not None and self.shard[0] != shard_of(
                eid, rows.doc_ids[i] if rows.doc_ids is not None else None, sentence, start, self.shard[1]
            ):
                stats["other_shard"] += 1
            else:
                keep.append(i)
        return keep

    def __call__(self, rows: Rows) -> PreparedPool:
        stats: Counter[str] = Counter()
        keep = self._valid(rows, stats)
        distinct: dict[str, int] = {}  # sentence -> its index among the pool's distinct sentences
        sentences = [distinct.setdefault(rows.sentences[i], len(distinct)) for i in keep]
        if not distinct:  # the tokenizer rejects an empty batch
            return PreparedPool(len(rows.sentences), [], [], stats)
        encodings = _encode_batch(self.backend, list(distinct))
        specials = [e.special_tokens_mask for e in encodings]
        spans = [
            encoding_mention_span(encodings[k], specials[k], rows.starts[i], rows.ends[i])
            for k, i in zip(sentences, keep)
        ]
        found = [n for n, span in enumerate(spans) if span is not None]
        if len(found) < len(spans):
            stats["skipped_no_token"] += len(spans) - len(found)
        if not found:
            return PreparedPool(len(rows.sentences), [], [], stats)
        tokens = _Tokens.of(encodings)
        ends = np.fromiter(chain.from_iterable(filter(None, spans)), np.int64, 2 * len(found)).reshape(-1, 2)
        windows = _Windows.of(tokens, specials, np.array(sentences)[found], ends, self.max_seq_len)
        stats["windowed"] += int(np.count_nonzero(windows.shift + windows.tail))  # windows that dropped tokens
        entity_ids = [rows.entity_ids[keep[n]] for n in found]
        return PreparedPool(len(rows.sentences), entity_ids, self._pack(windows, tokens, stats), stats)

    def _pack(self, windows: _Windows, tokens: _Tokens, stats: Counter[str]) -> list[PackedBatch]:
        """Longest first (an out-of-memory shows at once), each batch under the token budget.

        The sort is stable, so ties keep input order and the batches do not depend on table rows.
        """
        order = np.argsort(-windows.lengths, kind="stable")
        mask_positions = windows.first - windows.shift
        batches = []
        lo = 0
        while lo < len(order):
            width = int(windows.lengths[order[lo]])
            items = order[lo : lo + max(1, self.tokens_per_batch // width)]
            ids = windows.rows(items, width, tokens, self.mask_id, self.pad_id)
            lengths = windows.lengths[items]
            batches.append(PackedBatch(ids, lengths, mask_positions[items], items.astype(np.int64)))
            stats["sentences"] += len(items)
            stats["tokens"] += int(lengths.sum())
            lo += len(items)
        return batches


class _RemoteTraceback(Exception):
    """A worker's traceback, attached as the cause of the error it raised."""


# The workers' wire format: a JSON header (settings, rows, a pool's ids and counts) and the pool's
# arrays as raw int64 bytes, each message prefixed by the two lengths. Not pickle: nothing in pelt
# unpickles (tests/workflow/test_operations.py), and JSON and raw arrays carry all a pool holds.
_LENGTHS = struct.Struct("<QQ")


def _write(fh: BinaryIO, header: dict, arrays: Sequence[np.ndarray] = ()) -> None:
    head = json.dumps(header).encode()
    body = b"".join(np.ascontiguousarray(a, np.int64).tobytes() for a in arrays)
    fh.write(_LENGTHS.pack(len(head), len(body)) + head + body)
    fh.flush()


def _read(fh: BinaryIO) -> tuple[dict, memoryview]:
    """A message's header and its arrays' bytes; EOFError at the end of the stream."""
    lengths = fh.read(_LENGTHS.size)
    if len(lengths) < _LENGTHS.size:
        raise EOFError
    head, body = _LENGTHS.unpack(lengths)
    return json.loads(fh.read(head)), memoryview(fh.read(body))


def _pool_message(pool: PreparedPool) -> tuple[dict, list[np.ndarray]]:
    header = {
        "n_rows": pool.n_rows,
        "entity_ids": pool.entity_ids,
        "stats": dict(pool.stats),
        "shapes": [list(b.input_ids.shape) for b in pool.batches],
    }
    return header, [a for b in pool.batches for a in (b.input_ids, b.lengths, b.mask_positions, b.items)]


def _pool_from_message(header: dict, body: memoryview) -> PreparedPool:
    flat = np.frombuffer(body, np.int64)
    batches, at = [], 0
    for rows, width in header["shapes"]:
        sizes = (rows * width, rows, rows, rows)
        parts = []
        for size in sizes:
            parts.append(flat[at : at + size].copy())
            at += size
        batches.append(PackedBatch(parts[0].reshape(rows, width), *parts[1:]))
    return PreparedPool(header["n_rows"], header["entity_ids"], batches, Counter(header["stats"]))


def _error(header: dict) -> Exception:
    """The worker's exception as the built-in type it was (anything else as a RuntimeError)."""
    kind = getattr(builtins, header["kind"], None)
    if not (isinstance(kind, type) and issubclass(kind, Exception)):
        kind = RuntimeError
    return kind(header["message"])


class _Worker:
    """A Python process preparing pools for the parent, over pipes: rows in, pools out.

    A fresh interpreter (fork + exec, never a plain fork of a parent that holds a CUDA context)
    that imports this module alone: ``multiprocessing``'s spawn and forkserver would import the
    parent's main script again in each worker, torch and all, which took seconds per worker.
    """

    def __init__(self, preparer: PoolPreparer) -> None:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),  # pelt imports as in the parent
            "TOKENIZERS_PARALLELISM": "false",  # the workers are the parallelism: no thread pool each
        }
        command = [sys.executable, "-c", "from pelt.encoding.host import _serve; _serve()"]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self._send(preparer.settings())

    def _send(self, header: dict) -> None:
        try:
            _write(self.process.stdin, header)
        except BrokenPipeError:
            raise RuntimeError(f"a host worker exited with code {self.process.wait()}") from None

    def send(self, rows: Rows) -> None:
        self._send(
            {
                "entity_ids": list(rows.entity_ids),
                "sentences": list(rows.sentences),
                "starts": list(rows.starts),
                "ends": list(rows.ends),
                "doc_ids": None if rows.doc_ids is None else list(rows.doc_ids),
            }
        )

    def receive(self) -> PreparedPool:
        try:
            header, body = _read(self.process.stdout)
        except EOFError:
            raise RuntimeError(f"a host worker exited with code {self.process.wait()}") from None
        if "error" in header:
            raise _error(header["error"]) from _RemoteTraceback(header["error"]["traceback"])
        return _pool_from_message(header, body)

    def close(self, kill: bool) -> None:
        """End the process: at once after an error, else by closing its input (its loop ends)."""
        if kill:
            self.process.kill()
        for pipe in (self.process.stdin, self.process.stdout):
            try:
                pipe.close()
            except OSError:  # a dead worker's input pipe can fail to flush
                pass
        self.process.wait()


def _serve() -> None:
    """A worker's loop: its settings, then rows in, pools out, until the input ends.

    Errors go back to the parent, which raises them; stdout is the results' stream, so whatever
    else writes there (a library's print) goes to stderr instead.
    """
    results = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    tasks = sys.stdin.buffer
    preparer = PoolPreparer.from_settings(_read(tasks)[0])
    while True:
        try:
            rows = Rows(**_read(tasks)[0])
        except EOFError:
            return
        try:
            header, arrays = _pool_message(preparer(rows))
        except Exception as err:  # noqa: BLE001 - raised again in the parent
            error = {"kind": type(err).__name__, "message": str(err), "traceback": traceback.format_exc()}
            header, arrays = {"error": error}, []
        _write(results, header, arrays)


def prepare_in_workers(preparer: PoolPreparer, chunks: Iterable[Rows], workers: int) -> Iterator[PreparedPool]:
    """``map(preparer, chunks)`` in ``workers`` processes, results in input order.

    Pools go to the workers in turn, one each: at most ``workers`` pools are prepared ahead of
    the one handed out.  A worker's exception is raised here with the worker's traceback as its
    cause; a worker that dies raises ``RuntimeError``.  The processes end when the iterator ends,
    fails or is closed.
    """
    if workers < 1:
        raise ValueError(f"prepare_in_workers needs at least one worker, not {workers}")
    processes = [_Worker(preparer) for _ in range(workers)]
    finished = False
    try:
        chunks = iter(chunks)
        pending: deque[_Worker] = deque()
        for worker in processes:
            rows = next(chunks, None)
            if rows is None:
                break
            worker.send(rows)
            pending.append(worker)
        while pending:
            worker = pending.popleft()
            pool = worker.receive()
            rows = next(chunks, None)
            if rows is not None:  # the worker starts on its next pool before this one is used
                worker.send(rows)
                pending.append(worker)
            yield pool
        finished = True
    finally:
        for worker in processes:
            worker.close(kill=not finished)
