"""Building entity tables: the sum, per entity, of the masked LM's output vector at the masked mention.

For every sampled sentence the mention's tokens are replaced by one mask token, the sentence is
windowed around the mask if too long, and :func:`pelt.encoding.models.mask_representation` gives the vector r
whose dot product with the word embeddings is the mask's logits.  Sums are additive, so tables of
disjoint shards merge exactly (:func:`pelt.table.merge_tables`).

Speed: a background thread reads and tokenizes the next rows while the device runs the model; rows
are sorted by length inside a pool of rows and packed into batches under a token budget (no fixed
padding, so short sentences cost little); sums stay on the device in fp32 and are copied back once.
A pool's distinct sentences are tokenized once each, and its masking, windowing and packing are
array operations over the whole pool (:class:`pelt.encoding.host.PoolPreparer`).
Worker processes can prepare the pools (:mod:`pelt.encoding.host`, ``host_workers``): on an H200 one
thread of Python took longer than the device; workers took that work off the job, though not yet
off its wall time (benchmarks/README.md, Encoding on a GPU).
"""

from __future__ import annotations

import hashlib
import logging
import os
import queue
import shutil
import threading
import time
from collections import Counter
from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pelt.encoding.host import (
    PackedBatch,
    PoolPreparer,
    Rows,
    prepare_in_workers,
    shard_of,
)
from pelt.encoding.host import mask_mention as mask_mention  # re-exported: its home before the host half moved
from pelt.encoding.models import (
    default_norm,
    load_masked_lm,
    mask_representation,
    max_input_length,
    model_identity,
    representation,
    short_sequence_attention,
)
from pelt.logs import Progress
from pelt.sampling.format import SAMPLE_COLUMNS, open_samples, read_frequencies
from pelt.table import EntityTable, write_table
from pelt.table.format import sidecar_path

logger = logging.getLogger(__name__)

_POOL_ROWS = 16_384  # rows sorted together by length; larger pools pack tighter but delay the first batch
_QUEUE_DEPTH = 4  # batches prepared ahead of the device

T = TypeVar("T")


@dataclass(frozen=True)
class EncodingSettings:
    """How sampled mentions are encoded: the config's ``encoding`` block but ``shards`` (which says
    how many jobs share the work, not how one job does it). One frozen value with the defaults in one
    place, passed whole from the workflow's job to the encoder.

    ``max_seq_len`` (tokens of a window, special tokens included; capped at the model's positions)
    and ``precision`` (``auto``, ``fp32``, ``bf16``, ``fp16``: see :func:`pelt.encoding.models.resolve_dtype`)
    change the vectors; ``tokens_per_batch`` (:func:`resolve_tokens_per_batch`), ``device``
    (``auto``, ``cpu``, ``cuda``...) and ``host_workers`` (:func:`resolve_host_workers`) how fast
    they come (the first two, as other batches or another device, also a table's last bits).
    """

    max_seq_len: int = 128
    tokens_per_batch: int | str = "auto"
    precision: str = "auto"
    device: str = "auto"
    host_workers: int | str = 0


@dataclass
class _Batch:
    """One device batch, prepared on the host: right-padded ids plus what accumulation needs."""

    input_ids: torch.Tensor  # [B, T]
    attention_mask: torch.Tensor | None  # [B, T]; None when no row is padded
    mask_positions: torch.Tensor  # [B]
    unique_rows: torch.Tensor  # [U] table rows in this batch
    inverse: torch.Tensor  # [B] index into unique_rows
    row_counts: torch.Tensor  # [U] sentences per unique row
    max_row: int


# A batch's tokens by default (``tokens_per_batch: auto``): on a GPU, many, to fill it; on a CPU,
# batches whose activations stay in its caches (benchmarks/README.md, Encoding: 12 x 768 took 1.49x
# as long at 16,384 as at 2,048, 4 x 256 1.33x; 1,024 was no faster).
_TOKENS_PER_BATCH = {"cuda": 16_384, "cpu": 2_048}


def resolve_tokens_per_batch(tokens_per_batch: int | str, device: torch.device, max_seq_len: int) -> int:
    """A batch's budget of tokens: ``auto`` is :data:`_TOKENS_PER_BATCH`'s for the device's kind (a
    CPU's for any other) and at least one window of ``max_seq_len``; a count is used as given."""
    if tokens_per_batch == "auto":
        return max(_TOKENS_PER_BATCH.get(device.type, _TOKENS_PER_BATCH["cpu"]), max_seq_len)
    if isinstance(tokens_per_batch, bool) or not isinstance(tokens_per_batch, int) or tokens_per_batch < 1:
        raise ValueError(f"tokens_per_batch {tokens_per_batch!r} is neither an integer >= 1 nor 'auto'")
    return tokens_per_batch


def resolve_host_workers(host_workers: int | str, device: torch.device, total_rows: int | None = None) -> int:
    """How many processes prepare pools of rows beside the device (0: one thread of this process).

    ``auto``: on CUDA, one per spare core up to 8 (the GPU outran one host thread; see
    :mod:`pelt.encoding.host`), and none for input that fits one pool, which no worker could
    split; on CPU none, as the model needs the cores itself.  An explicit count is used as given.
    """
    if host_workers == "auto":
        if device.type != "cuda" or (total_rows is not None and total_rows <= _POOL_ROWS):
            return 0
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        return max(0, min(8, cores - 1))
    if isinstance(host_workers, bool) or not isinstance(host_workers, int) or host_workers < 0:
        raise ValueError(f"host_workers {host_workers!r} is neither an integer >= 0 nor 'auto'")
    return host_workers


class _Preparer:
    """Host side of encoding: prepares pools (here or in ``host_workers`` processes), assigns table
    rows and makes tensors; runs in a background thread.

    Rows are assigned here, in the order of the pools' input, so a table is the same bit for bit
    whichever number of workers prepared it.
    """

    def __init__(
        self,
        tokenizer: PreTrainedTokenizerBase,
        max_seq_len: int,
        tokens_per_batch: int,
        shard: tuple[int, int] | None,
        pin_memory: bool,
        host_workers: int = 0,
    ):
        self.preparer = PoolPreparer(
            tokenizer.backend_tokenizer,
            tokenizer.mask_token_id,
            tokenizer.pad_token_id,
            max_seq_len,
            tokens_per_batch,
            shard,
        )
        self.pin_memory = pin_memory
        self.host_workers = host_workers
        self.rows: dict[str, int] = {}  # entity id -> table row, in order of first appearance
        self.stats: Counter[str] = Counter()

    def batches(self, chunks: Iterable[Rows]) -> Iterator[_Batch | int]:
        """Device batches, interleaved with ints: input rows accounted for (for the progress bar)."""
        if self.host_workers:
            pools = prepare_in_workers(self.preparer, chunks, self.host_workers)
        else:  # the next pool is tokenized while the device works through this one's batches
            pools = _in_background(map(self.preparer, chunks), depth=1, name="pelt-pools")
        for pool in pools:
            self.stats.update(pool.stats)
            rows = np.array([self.rows.setdefault(e, len(self.rows)) for e in pool.entity_ids], np.int64)
            yield pool.n_rows - len(pool.entity_ids)
            for batch in pool.batches:
                yield self._tensors(batch, rows[batch.items])

    def _tensors(self, batch: PackedBatch, rows: np.ndarray) -> _Batch:
        width = batch.input_ids.shape[1]
        padded = batch.lengths.min() < width
        attention = (np.arange(width) < batch.lengths[:, None]).astype(np.int64) if padded else None
        unique, inverse, counts = np.unique(rows, return_inverse=True, return_counts=True)
        tensors = [
            None if a is None else torch.from_numpy(a)
            for a in (batch.input_ids, attention, batch.mask_positions, unique, inverse, counts)
        ]
        if self.pin_memory:
            tensors = [None if t is None else t.pin_memory() for t in tensors]
        return _Batch(*tensors, max_row=int(unique[-1]))


class _Accumulator:
    """Per-entity sums and counts on the device, grown as new entities appear.

    Rows of one batch are first reduced with a one-hot matrix product, then added with ``index_add_``
    at distinct rows only: CUDA's ``index_add_`` with repeated indices sums in a nondeterministic order
    (atomics), which would make reruns differ in the last bits.  The product runs in float64, which
    no TF32 setting (``torch.backends.cuda.matmul.allow_tf32``) can silently downgrade.
    """

    def __init__(self, hidden_size: int, device: torch.device):
        self.device = device
        self.sums = torch.zeros(1024, hidden_size, dtype=torch.float32, device=device)
        self.counts = torch.zeros(1024, dtype=torch.int64, device=device)

    def add(self, batch: _Batch, vectors: torch.Tensor) -> None:
        if batch.max_row >= len(self.sums):
            size = max(2 * len(self.sums), batch.max_row + 1)
            self.sums = torch.cat([self.sums, self.sums.new_zeros(size - len(self.sums), self.sums.shape[1])])
            self.counts = torch.cat([self.counts, self.counts.new_zeros(size - len(self.counts))])
        unique = batch.unique_rows.to(self.device, non_blocking=True)
        inverse = batch.inverse.to(self.device, non_blocking=True)
        # scatter_, not one_hot[inverse, arange] = 1: CUDA's index_put_ waits for the device
        one_hot = torch.zeros(len(unique), len(inverse), dtype=torch.float64, device=self.device)
        one_hot.scatter_(0, inverse[None, :], 1.0)
        self.sums.index_add_(0, unique, (one_hot @ vectors.double()).float())
        self.counts.index_add_(0, unique, batch.row_counts.to(self.device, non_blocking=True))


class _Failure:
    def __init__(self, error: BaseException):
        self.error = error


def _in_background(items: Iterator[T], depth: int = _QUEUE_DEPTH, name: str = "pelt-batches") -> Iterator[T]:
    """Run ``items`` in a thread, ``depth`` ahead of the consumer; its errors are re-raised here.

    The fast tokenizer and torch's kernels release the GIL, so preparation really overlaps the
    device's work.  ``items`` is closed when the consumer stops (worker processes end with it).
    """
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = object()

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in items:
                if not put(item):
                    return
            put(done)
        except BaseException as err:  # noqa: BLE001 - handed to the consumer, which re-raises it
            put(_Failure(err))
        finally:
            if isinstance(items, Generator):
                items.close()

    thread = threading.Thread(target=work, name=name, daemon=True)
    thread.start()
    try:
        while (item := q.get()) is not done:
            if isinstance(item, _Failure):
                raise item.error
            yield item
    finally:
        stop.set()
        thread.join()


def _encode(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    chunks: Iterable[Rows],
    settings: EncodingSettings,
    *,
    total_rows: int | None,
    shard: tuple[int, int] | None = None,
) -> tuple[list[str], np.ndarray, np.ndarray, Counter[str]]:
    """Stream ``chunks`` through the model; returns ids, fp32 sums [N, H], counts and skip statistics.

    ``settings.max_seq_len`` is taken as given: the callers cap it at the model's positions first
    (:func:`_effective_max_seq_len`), as the table's metadata records it.
    """
    max_seq_len = settings.max_seq_len
    n_special = tokenizer.num_special_tokens_to_add()
    if max_seq_len <= n_special:
        raise ValueError(f"max_seq_len {max_seq_len} leaves no room beside {n_special} special tokens")
    device = next(model.parameters()).device
    tokens_per_batch = resolve_tokens_per_batch(settings.tokens_per_batch, device, max_seq_len)
    if tokens_per_batch < max_seq_len:
        raise ValueError(
            f"tokens_per_batch {tokens_per_batch} < max_seq_len {max_seq_len}: a long sentence fits no batch"
        )
    workers = resolve_host_workers(settings.host_workers, device, total_rows)
    preparer = _Preparer(tokenizer, max_seq_len, tokens_per_batch, shard, device.type == "cuda", workers)
    accumulator = _Accumulator(model.config.hidden_size, device)
    began = time.perf_counter()
    with torch.inference_mode(), short_sequence_attention(), Progress("encoding", total_rows, "sentences") as bar:
        for item in _in_background(preparer.batches(chunks)):
            if isinstance(item, int):
                bar.update(item)
                continue
            vectors = mask_representation(
                model,
                item.input_ids.to(device, non_blocking=True),
                None if item.attention_mask is None else item.attention_mask.to(device, non_blocking=True),
                item.mask_positions.to(device, non_blocking=True),
            )
            accumulator.add(item, vectors)
            bar.update(len(item.inverse))
    n = len(preparer.rows)
    sums = accumulator.sums[:n].cpu().numpy()
    counts = accumulator.counts[:n].cpu().numpy()
    stats = preparer.stats
    seconds = time.perf_counter() - began
    stats["entities"] = n
    skipped = {k: v for k, v in stats.items() if k.startswith("skipped")}
    if any(skipped.values()):
        logger.warning("encoding skipped mentions: %s", skipped)
    logger.info(
        "encoded %d sentences (%d windowed) of %d entities in %.1fs: %.0f sentences/s, %.0f tokens/s",
        stats["sentences"],
        stats["windowed"],
        n,
        seconds,
        stats["sentences"] / max(seconds, 1e-9),
        stats["tokens"] / max(seconds, 1e-9),
    )
    return list(preparer.rows), sums, counts, stats


def _effective_max_seq_len(model: PreTrainedModel, max_seq_len: int) -> int:
    limit = max_input_length(model)
    if max_seq_len > limit:
        logger.warning("max_seq_len %d exceeds the model's %d positions; using %d", max_seq_len, limit, limit)
    return min(max_seq_len, limit)


def table_metadata(model: PreTrainedModel, name: str | None = None, *, max_seq_len: int = 128) -> dict[str, object]:
    """What a table must say of the model its vectors come from (:func:`pelt.table.write_table`),
    read from the model itself, so that a table built from Python is checked as the workflow's are.

    ``name``: how the model is loaded again (default: its ``name_or_path``). The table records its
    model family's L, the default of :meth:`pelt.table.EntityTable.lookup`; the L a run injects at
    is decided when it runs (:func:`pelt.eval.variants.resolve_norm`), so changing it never
    re-encodes.
    """
    name = name or model.name_or_path
    return {
        "model": name,
        **model_identity(model, name),
        "model_type": model.config.model_type,
        "hidden_size": model.config.hidden_size,
        "representation": representation(model),
        "max_seq_len": _effective_max_seq_len(model, max_seq_len),
        "norm": default_norm(model),
        "precision": str(model.dtype).removeprefix("torch."),
    }


def build_table(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    entity_ids: Sequence[str],
    sentences: Sequence[str],
    spans: Sequence[tuple[int, int]],
    *,
    max_seq_len: int = 128,
    tokens_per_batch: int | str = "auto",
    host_workers: int | str = 0,
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Entity ids (in order of first appearance), float32 vector sums [N, H] and sentence counts.

    For use from Python on in-memory sentences; mentions with bad spans are skipped and logged.
    ``tokens_per_batch``: :func:`resolve_tokens_per_batch`; ``host_workers``: processes that
    tokenize beside the device (:func:`resolve_host_workers`).
    """
    if not len(entity_ids) == len(sentences) == len(spans):
        raise ValueError(f"build_table: {len(entity_ids)} ids, {len(sentences)} sentences, {len(spans)} spans")
    chunks = Rows(entity_ids, sentences, [s for s, _ in spans], [e for _, e in spans]).chunks(_POOL_ROWS)
    settings = EncodingSettings(
        max_seq_len=_effective_max_seq_len(model, max_seq_len),
        tokens_per_batch=tokens_per_batch,
        host_workers=host_workers,
    )
    ids, sums, counts, _ = _encode(model, tokenizer, chunks, settings, total_rows=len(sentences))
    return ids, sums, counts


# What a cached partial sum depends on besides its mentions: the same mentions encoded under other
# settings (the table's metadata), or by other weights (the digests file's), give other vectors.
_CACHE_KEYS = ("model", "revision", "representation", "max_seq_len", "precision")
_WEIGHTS_KEY = b"pelt.weights"


def mention_digests(samples_path: str, shard: tuple[int, int] | None = None) -> dict[str, str]:
    """entity_id -> a digest of the set of its sampled mentions (in ``shard``), whatever their order.

    The sum of a 128-bit hash per mention: an entity whose mentions did not change keeps its
    digest when other entities are added, and its cached vector sum can be reused.
    """
    sums: dict[str, int] = {}
    for batch in open_samples(samples_path).to_batches(columns=list(SAMPLE_COLUMNS)):
        for entity_id, sentence, start, end, doc_id in zip(*(batch.column(c).to_pylist() for c in SAMPLE_COLUMNS)):
            if entity_id is None or sentence is None or start is None:
                continue  # unusable rows: _encode counts them as skipped
            if shard is not None and shard_of(entity_id, doc_id, sentence, start, shard[1]) != shard[0]:
                continue
            key = "\x1f".join((doc_id or "", sentence, str(start), str(end))).encode()
            value = int.from_bytes(hashlib.blake2b(key, digest_size=16).digest(), "little")
            sums[entity_id] = (sums.get(entity_id, 0) + value) % (1 << 128)
    return {entity_id: f"{value:032x}" for entity_id, value in sums.items()}


def _cache_paths(cache_dir: str, shard: tuple[int, int] | None) -> tuple[Path, Path]:
    name = "all" if shard is None else f"{shard[0]}-of-{shard[1]}"
    return Path(cache_dir) / f"{name}.parquet", Path(cache_dir) / f"{name}.digests.parquet"


def _reusable(
    cache_dir: str, shard: tuple[int, int] | None, digests: dict[str, str], metadata: dict[str, object]
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Ids, sums and counts of the cached entities whose mentions and encoding settings are unchanged."""
    table_path, digests_path = _cache_paths(cache_dir, shard)
    if not (table_path.exists() and digests_path.exists()):
        return [], np.zeros((0, 0), np.float32), np.zeros(0, np.int64)
    cached, old = EntityTable.open(table_path), pq.read_table(digests_path)
    weights = (old.schema.metadata or {}).get(_WEIGHTS_KEY, b"").decode()
    if weights != metadata["weights"] or any(cached.metadata.get(k) != metadata[k] for k in _CACHE_KEYS):
        logger.info("encoding cache %s was built with other settings or weights: not used", table_path)
        return [], np.zeros((0, 0), np.float32), np.zeros(0, np.int64)
    old = old.to_pydict()
    ids = sorted(e for e, d in zip(old["entity_id"], old["digest"]) if digests.get(e) == d and e in cached)
    return ids, cached.vector_sums(ids), cached.counts(ids)[0]


def _write_cache(
    cache_dir: str, shard: tuple[int, int] | None, table_path: str, digests: dict[str, str], weights: str
) -> None:
    """The shard's table (hard links to the files just written: no second copy of the sums) and
    its entities' digests with the weights digest, for the next run; each file replaced atomically.

    A link is safe because tables are never changed in place (write_table replaces files), so
    Snakemake deleting or rewriting the output later leaves the cache's copy as it was.
    """
    cache_table, cache_digests = _cache_paths(cache_dir, shard)
    cache_table.parent.mkdir(parents=True, exist_ok=True)
    for source, target in ((Path(table_path), cache_table), (sidecar_path(table_path), sidecar_path(cache_table))):
        partial = target.with_name(target.name + ".partial")
        partial.unlink(missing_ok=True)
        try:
            os.link(source, partial)
        except OSError:  # another file system, or no hard links: copy instead
            shutil.copyfile(source, partial)
        os.replace(partial, target)
    digest_table = pa.table({"entity_id": list(digests), "digest": list(digests.values())})
    partial = cache_digests.with_name(cache_digests.name + ".partial")
    pq.write_table(digest_table.replace_schema_metadata({_WEIGHTS_KEY: weights.encode()}), partial)
    os.replace(partial, cache_digests)


def encode_samples(
    samples_path: str,
    model_name_or_path: str,
    out_path: str,
    *,
    settings: EncodingSettings = EncodingSettings(),
    frequencies_path: str | None = None,
    shard: tuple[int, int] | None = None,
    cache_dir: str | None = None,
) -> dict[str, int]:
    """Encode the sampled mentions at ``samples_path`` (Parquet file or directory) into ``out_path``,
    as ``settings`` say (:class:`EncodingSettings`).

    ``shard=(i, n)`` encodes only the mentions whose stable hash (:func:`shard_of`) is ``i`` mod ``n``;
    the ``n`` shard tables merge (:func:`pelt.table.merge_tables`) into the full table, so shards
    can run as separate GPU jobs and a rerun redoes only missing shards.  Returns counts of
    rows, sentences, tokens, entities and of each kind of skipped mention.

    ``cache_dir`` keeps each run's sums with a digest of each entity's mentions
    (:func:`mention_digests`): the next run encodes only the entities whose mentions changed or
    are new (tasks that gain entities) and reuses the others' sums, which are additive, so the
    table equals a full encoding.  ``entities_reused`` / ``entities_encoded`` count them.

    The table is the same whatever ``settings.host_workers`` and ``settings.tokens_per_batch``.
    """
    if shard is not None and not 0 <= shard[0] < shard[1]:
        raise ValueError(f"shard {shard} is not (index, count) with 0 <= index < count")
    dataset = open_samples(samples_path)
    model, tokenizer = load_masked_lm(model_name_or_path, device=settings.device, precision=settings.precision)
    settings = replace(settings, max_seq_len=_effective_max_seq_len(model, settings.max_seq_len))
    metadata = table_metadata(model, model_name_or_path, max_seq_len=settings.max_seq_len)
    digests = mention_digests(samples_path, shard) if cache_dir else {}
    weights = str(metadata["model_digest"])
    reused, reused_sums, reused_counts = (
        _reusable(cache_dir, shard, digests, {**metadata, "weights": weights}) if cache_dir else ([], None, None)
    )
    skip = frozenset(reused)
    batches = dataset.to_batches(columns=list(SAMPLE_COLUMNS), batch_size=_POOL_ROWS)
    chunks = (_without(Rows(*(b.column(c).to_pylist() for c in SAMPLE_COLUMNS)), skip) for b in batches)
    total = dataset.count_rows()
    ids, sums, counts, stats = _encode(model, tokenizer, chunks, settings, total_rows=total, shard=shard)
    if cache_dir:
        stats["entities_encoded"], stats["entities_reused"] = len(ids), len(reused)
        logger.info("encoding cache: %d entities reused, %d encoded", len(reused), len(ids))
    if reused:
        ids = ids + reused
        sums = np.concatenate([sums.reshape(-1, reused_sums.shape[1]), reused_sums])
        counts = np.concatenate([counts, reused_counts])
    frequency = counts if frequencies_path is None else read_frequencies(frequencies_path, ids, counts)
    write_table(out_path, ids, sums, counts, frequency, metadata)
    if cache_dir:
        _write_cache(cache_dir, shard, out_path, digests, weights)
    stats["rows"] = total
    return dict(stats)


def _without(rows: Rows, entities: frozenset[str]) -> Rows:
    """The chunk without the mentions of ``entities`` (whose sums come from the cache)."""
    if not entities:
        return rows
    keep = [i for i, e in enumerate(rows.entity_ids) if e not in entities]

    def pick(column: Sequence) -> list:
        return [column[i] for i in keep]

    return Rows(
        pick(rows.entity_ids),
        pick(rows.sentences),
        pick(rows.starts),
        pick(rows.ends),
        None if rows.doc_ids is None else pick(rows.doc_ids),
    )
