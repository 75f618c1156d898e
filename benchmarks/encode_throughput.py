"""Encoding throughput: pelt's path against the naive one, in one run, on real sentences with entity mentions.

pelt (:func:`pelt.encoding.encode.build_table`): length-sorted batches under a token budget, bf16 + SDPA on
GPU (fp32 on CPU), sums on the device, tokenization in a background thread (each distinct sentence
of a pool once: a FewRel sentence holds two mentions), or in ``--host-workers`` processes (default
none; ``auto``: up to 8 on CUDA, none on CPU).  Naive (the paper's
code): batches of 32 in input order, every sentence padded to a fixed ``--max-seq-len`` (64, the
paper's length), fp16 on GPU (fp32 on CPU), tokenization inline, each vector copied to the host and
added to a per-entity numpy sum.  Both window long sentences the same way, so their tables must
agree up to precision: the largest relative error ||pelt - naive|| / ||naive|| over entities is
reported beside sentences/s, real tokens/s (the tokens of the sentences) and padded tokens/s (what
the model computed, padding included), counted by a hook on the model itself.  On CUDA, model-FLOPs
utilisation is reported too (2 x non-embedding parameters per real token, against the GPU's dense
bf16/fp16 peak).  The paths run interleaved ``--repeats`` times and the fastest run of each is
kept; process CPU time is reported beside wall time because on a shared CPU machine other
processes' load stretches the latter.

Sentences: FewRel 1.0 val (``../shared/data/fewrel/val_wiki.json``), head and tail mentions, real
Wikipedia text, tokens joined by spaces.  The model defaults to a randomly initialised RoBERTa of
``--layers`` x ``--hidden`` (default 12 x 768, roberta-base's shape) with a BPE tokenizer trained on
those sentences (speed does not depend on the weights; no hub is needed); pass ``--model PATH`` for
a real checkpoint.

    python benchmarks/encode_throughput.py --sentences 512 --tokens-per-batch 2048 --repeats 2   # CPU, base shape
    python benchmarks/encode_throughput.py --sentences 4096 --layers 4 --hidden 256 --repeats 2  # CPU, small model
    python benchmarks/encode_throughput.py --sentences 22400 --repeats 3                         # GPU
    python benchmarks/encode_throughput.py --sentences 22400 --repeats 5 --host-only             # host half alone

``--host-only`` times pelt's host preparation alone (tokenize, mask, window, pack) with the random
model's tokenizer and builds no model; with ``PYTHONPATH`` set to another checkout's ``src`` it
times that checkout's pelt, so two versions are compared on one machine.  ``--breakdown`` reports
the same split of the host half beside the device's time.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import tokenizers
import torch
from transformers import (
    AutoTokenizer,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    RobertaConfig,
    RobertaForMaskedLM,
)

from pelt.encoding import host
from pelt.encoding.demo_model import train_bpe_tokenizer
from pelt.encoding.encode import (
    _POOL_ROWS,
    EncodingSettings,
    _Accumulator,
    _Preparer,
    build_table,
    resolve_host_workers,
    resolve_tokens_per_batch,
)
from pelt.encoding.host import Rows, mask_mention, mention_token_span
from pelt.encoding.models import (
    encoder_mask,
    family,
    load_masked_lm,
    mask_representation,
    resolve_device,
    short_sequence_attention,
    tokenize_with_offsets,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "fewrel" / "val_wiki.json"
NAIVE_BATCH = 32
# Dense bf16/fp16 tensor-core peaks (TFLOP/s), most specific name first.
PEAK_TFLOPS = {"H100 PCIe": 756.0, "H100": 989.0, "H200": 989.0, "A100": 312.0, "L40S": 362.0, "V100": 125.0}
# What changes the tokenizer's speed from outside pelt: its thread pool, and the allocator, a third of
# its CPU time (benchmarks/README.md, "The host half alone"); --host-only reports them with its figures.
TOKENIZER_ENVIRONMENT = ("TOKENIZERS_PARALLELISM", "RAYON_NUM_THREADS", "LD_PRELOAD")


def fewrel_mentions(path: Path) -> tuple[list[str], list[str], list[tuple[int, int]]]:
    """(entity id, sentence, char span) for head and tail of each FewRel instance, tokens joined by spaces."""
    ids, sentences, spans = [], [], []
    for instances in json.loads(path.read_text()).values():
        for inst in instances:
            starts = np.cumsum([0] + [len(t) + 1 for t in inst["tokens"]])
            sentence = " ".join(inst["tokens"])
            for _name, qid, positions in (inst["h"], inst["t"]):
                first, last = positions[0][0], positions[0][-1]
                ids.append(qid)
                sentences.append(sentence)
                spans.append((int(starts[first]), int(starts[last] + len(inst["tokens"][last]))))
    return ids, sentences, spans


def fewrel_tokenizer(sentences: list[str]) -> PreTrainedTokenizerBase:
    """The random model's tokenizer: a byte-level BPE of 30,000 tokens trained on ``sentences``.

    It sees every FewRel sentence whatever ``--sentences`` is, so token counts per sentence do not
    depend on how many are encoded.
    """
    return train_bpe_tokenizer(sentences, 30_000)


def random_model(sentences: list[str], out: Path, layers: int, hidden: int) -> str:
    """A random RoBERTa of ``layers`` x ``hidden`` (heads of 64, FFN 4 x hidden), tokenizer
    (:func:`fewrel_tokenizer`) trained on ``sentences``."""
    tokenizer = fewrel_tokenizer(sentences)
    config = RobertaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=max(1, hidden // 64),
        intermediate_size=4 * hidden,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        max_position_embeddings=514,
    )
    RobertaForMaskedLM(config).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return str(out)


class TokenCounter:
    """Counts the tokens the backbone is given: real (attention mask) and computed (padding included).

    A hook on the model rather than a recount of the inputs, so both paths are measured the same way
    and what is counted is exactly what ran.  Real counts stay on the device (no sync per batch).
    """

    def __init__(self, model: PreTrainedModel):
        self.padded = 0
        self._real: list[torch.Tensor] = []
        self._handle = model.base_model.register_forward_pre_hook(self._count, with_kwargs=True)

    def _count(self, _module: torch.nn.Module, _args: tuple, kwargs: dict) -> None:
        ids, mask = kwargs["input_ids"], kwargs["attention_mask"]
        self.padded += ids.numel()
        if mask is None:  # pelt's batches without padding
            self._real.append(torch.tensor(ids.numel(), device=ids.device))
        elif mask.dim() == 4:  # pelt's additive mask (pelt.encoding.models.encoder_mask): 0 where a token is real
            self._real.append((mask[:, 0, 0, :] == 0).sum())
        else:
            self._real.append(mask.sum())

    def reset(self) -> None:
        self.padded = 0
        self._real.clear()

    @property
    def real(self) -> int:
        return int(torch.stack(self._real).sum()) if self._real else 0

    def remove(self) -> None:
        self._handle.remove()


def naive_encode(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    ids: list[str],
    sentences: list[str],
    spans: list[tuple[int, int]],
    length: int,
) -> dict[str, np.ndarray]:
    """The paper-style loop: fixed-length padding, inline tokenization, per-row sums on the host."""
    device = next(model.parameters()).device
    sums: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(model.config.hidden_size, np.float32))
    with torch.inference_mode():
        for lo in range(0, len(sentences), NAIVE_BATCH):
            enc = tokenize_with_offsets(tokenizer, sentences[lo : lo + NAIVE_BATCH])
            batch = torch.full((len(enc["input_ids"]), length), tokenizer.pad_token_id)
            attention = torch.zeros_like(batch)
            mask_positions = []
            for j, span in enumerate(spans[lo : lo + NAIVE_BATCH]):
                special = enc["special_tokens_mask"][j]
                tokens = mention_token_span(enc["offset_mapping"][j], special, *span)
                seq, pos = mask_mention(enc["input_ids"][j], special, tokens, tokenizer.mask_token_id, length)
                batch[j, : len(seq)] = torch.tensor(seq)
                attention[j, : len(seq)] = 1
                mask_positions.append(pos)
            r = mask_representation(
                model, batch.to(device), attention.to(device), torch.tensor(mask_positions, device=device)
            )
            for owner, vector in zip(ids[lo : lo + NAIVE_BATCH], r.float().cpu().numpy()):
                sums[owner] += vector
    return sums


def flops_per_token(model: PreTrainedModel) -> float:
    """2 x non-embedding parameters: the usual forward estimate (attention scores ignored at <= 64 tokens)."""
    embedding = model.get_input_embeddings().weight.numel()
    return 2.0 * (sum(p.numel() for p in model.parameters()) - embedding)


def timed(run: Callable[[], None], device: torch.device) -> tuple[float, float]:
    """Wall and process CPU seconds of ``run()``, the device's queue drained before and after.

    CPU time (all threads of this process) is the figure to trust on a shared CPU machine: other
    processes' load stretches wall time but not the work this process does.
    """
    if device.type == "cuda":
        torch.cuda.synchronize()
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - wall, time.process_time() - cpu


def compare(
    paths: dict[str, tuple[PreTrainedModel, Callable[[int], None]]],
    n_sentences: int,
    repeats: int,
    device: torch.device,
    peak: float | None,
) -> dict[str, dict]:
    """Time each path (a model and a run taking a sentence limit) ``repeats`` times, interleaved.

    Interleaving exposes the paths to the same background load; the fastest repeat of each is
    reported.  Each path is warmed up first (kernels, allocator, thread pools).
    """
    counters = {name: TokenCounter(model) for name, (model, _) in paths.items()}
    walls: dict[str, list[float]] = {name: [] for name in paths}
    cpus: dict[str, list[float]] = {name: [] for name in paths}
    try:
        for _, run in paths.values():
            run(min(64, n_sentences))
        for _ in range(repeats):
            for name, (_, run) in paths.items():
                counters[name].reset()
                wall, cpu = timed(partial(run, n_sentences), device)
                walls[name].append(wall)
                cpus[name].append(cpu)
        tokens = {name: (c.real, c.padded) for name, c in counters.items()}
    finally:
        for counter in counters.values():
            counter.remove()
    results = {}
    for name, (model, _) in paths.items():
        seconds, (real, padded) = min(walls[name]), tokens[name]
        results[name] = {
            "dtype": str(model.dtype).removeprefix("torch."),
            "attention": getattr(model.config, "_attn_implementation", "?"),
            "seconds": seconds,
            "all_seconds": walls[name],
            "cpu_seconds": min(cpus[name]),
            "sentences_per_s": n_sentences / seconds,
            "real_tokens": real,
            "padded_tokens": padded,
            "real_tokens_per_s": real / seconds,
            "padded_tokens_per_s": padded / seconds,
        }
        if peak:
            results[name]["mfu"] = flops_per_token(model) * real / seconds / (peak * 1e12)
    return results


@contextmanager
def timed_tokenizer() -> Iterator[dict[str, float]]:
    """Wall and process CPU seconds spent in pelt's calls to the tokenizer's backend in this
    process, and the texts it was given, summed while the context is open.

    ``pelt.encoding.host._encode_batch`` is where pool preparation calls the tokenizer, in this
    version of pelt as in earlier ones, so the same timer measures both sides of a change.  While
    pool preparation runs in its thread, the consumer's thread makes the tensors of the pool
    before, and its CPU time during a call is counted with the tokenizer's: at most what making
    every pool's tensors costs, 0.15 ms per 1,000 sentences on the 2-core VM.  Freeing the
    tokenizer's encodings, once pelt has read them, counts as pelt's own time.
    """
    spent = {"seconds": 0.0, "cpu_seconds": 0.0, "texts": 0}
    original = host._encode_batch

    def timing(backend: tokenizers.Tokenizer, texts: list[str]) -> list[tokenizers.Encoding]:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return original(backend, texts)
        finally:
            spent["seconds"] += time.perf_counter() - wall
            spent["cpu_seconds"] += time.process_time() - cpu
            spent["texts"] += len(texts)

    host._encode_batch = timing
    try:
        yield spent
    finally:
        host._encode_batch = original


def host_half(
    tokenizer: PreTrainedTokenizerBase, mentions: Rows, encoding: EncodingSettings, device: torch.device
) -> tuple[list, dict[str, float | int]]:
    """pelt's host preparation of ``mentions`` alone, as ``_encode`` runs it, timed; returns its batches.

    Without worker processes, the tokenizer's calls are timed too (:func:`timed_tokenizer`): the
    host's time less the tokenizer's is pelt's own Python (validating, masking, windowing,
    packing, making tensors).  Wall and process CPU seconds; CPU seconds are the figure to read on
    a loaded machine, wall seconds on an idle one, where the tokenizer's threads run beside pelt's.
    """
    workers = resolve_host_workers(encoding.host_workers, device, len(mentions.sentences))
    preparer = _Preparer(
        tokenizer, encoding.max_seq_len, encoding.tokens_per_batch, None, device.type == "cuda", workers
    )
    with timed_tokenizer() as spent:
        wall, cpu = time.perf_counter(), time.process_time()
        batches = [b for b in preparer.batches(mentions.chunks(_POOL_ROWS)) if not isinstance(b, int)]
        result: dict[str, float | int] = {
            "host_seconds": time.perf_counter() - wall,
            "host_cpu_seconds": time.process_time() - cpu,
            "host_workers": workers,
            "sentences": int(preparer.stats["sentences"]),
            "real_tokens": int(preparer.stats["tokens"]),
        }
    if not workers:
        result["tokenizer_seconds"] = spent["seconds"]
        result["tokenizer_cpu_seconds"] = spent["cpu_seconds"]
        result["tokenized_texts"] = spent["texts"]
    return batches, result


def per_thousand(timing: dict[str, float | int]) -> dict[str, float]:
    """Milliseconds per 1,000 sentences: the host, the tokenizer and pelt's own Python (their
    difference), in process CPU time and in wall time."""
    scale = 1e6 / timing["sentences"]
    out = {"host_cpu_ms": timing["host_cpu_seconds"] * scale, "host_wall_ms": timing["host_seconds"] * scale}
    if "tokenizer_cpu_seconds" in timing:
        out["tokenizer_cpu_ms"] = timing["tokenizer_cpu_seconds"] * scale
        out["own_cpu_ms"] = out["host_cpu_ms"] - out["tokenizer_cpu_ms"]
        out["tokenizer_wall_ms"] = timing["tokenizer_seconds"] * scale
        out["own_wall_ms"] = out["host_wall_ms"] - out["tokenizer_wall_ms"]
    return out


def host_only(
    tokenizer: PreTrainedTokenizerBase, mentions: Rows, encoding: EncodingSettings, repeats: int, device: torch.device
) -> dict:
    """The host half alone (:func:`host_half`), after one untimed run, ``repeats`` times: each
    run's figures per 1,000 sentences and their median.  No model is built."""
    host_half(tokenizer, mentions, encoding, device)  # warm-up: the tokenizer's caches, numpy, allocator
    runs = [host_half(tokenizer, mentions, encoding, device)[1] for _ in range(repeats)]
    figures = [per_thousand(run) for run in runs]
    return {
        "sentences": runs[0]["sentences"],
        "tokenized_texts": runs[0].get("tokenized_texts"),
        "real_tokens": runs[0]["real_tokens"],
        "median_ms_per_1000_sentences": {k: statistics.median(f[k] for f in figures) for k in figures[0]},
        "runs_ms_per_1000_sentences": figures,
    }


@dataclass(frozen=True)
class Breakdown:
    """How ``breakdown`` runs pelt's halves: the pipeline's batching (its window, batch budget and host
    workers; precision and device are the model's), and the device variants it times.

    ``compile_model`` also times the backbone under ``torch.compile`` (dynamic shapes: batch widths
    vary); ``graphs`` replays it from CUDA graphs (:class:`GraphedBackbone`), one launch a batch
    instead of one per kernel, to measure what the launches cost.
    """

    encoding: EncodingSettings
    compile_model: bool = False
    graphs: bool = False


def breakdown(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    mentions: Rows,
    settings: Breakdown,
    peak: float | None,
) -> dict[str, float | str]:
    """pelt's two halves timed apart: host preparation alone, then the device on the prepared batches.

    ``build_table`` overlaps them (tokenization in a thread); whichever half is slower bounds it.
    The host half (:func:`host_half`, with its tokenizer's share when no worker runs) runs as
    ``_encode`` runs it, in as many worker processes as ``settings.encoding.host_workers`` gives
    there (their start included: an encoding pays it too).
    The device half's MFU is what the GPU reaches when the host keeps up.
    """
    device = next(model.parameters()).device
    encoding = settings.encoding
    batches, host_timing = host_half(tokenizer, mentions, encoding, device)
    kind = family(model)

    def device_run(backbone: Callable[..., torch.Tensor]) -> None:
        accumulator = _Accumulator(model.config.hidden_size, device)
        with torch.inference_mode(), short_sequence_attention():  # as _encode runs it
            for b in batches:
                states = backbone(
                    input_ids=b.input_ids.to(device, non_blocking=True),
                    attention_mask=encoder_mask(
                        model, None if b.attention_mask is None else b.attention_mask.to(device, non_blocking=True)
                    ),
                ).last_hidden_state
                rows = torch.arange(states.shape[0], device=device)
                positions = b.mask_positions.to(device, non_blocking=True)
                accumulator.add(b, kind.head_transform(model, states[rows, positions]))

    real = host_timing["real_tokens"]
    result: dict[str, float | str] = {
        "tokens_per_batch": encoding.tokens_per_batch,
        **host_timing,
        "host_ms_per_1000_sentences": per_thousand(host_timing),
        "batches": len(batches),
    }
    variants = {"eager": model.base_model}
    if settings.compile_model:
        variants["compiled"] = torch.compile(model.base_model, dynamic=True)
    if settings.graphs and device.type == "cuda":
        variants["graphed"] = GraphedBackbone(model, None)
        variants["graphed_bucketed"] = GraphedBackbone(model, (32, 8))
    for name, backbone in variants.items():
        try:
            warm, _ = timed(partial(device_run, backbone), device)
            seconds, _ = timed(partial(device_run, backbone), device)
        except Exception as err:  # noqa: BLE001 - a failed variant is reported, the others still run
            result[f"{name}_error"] = repr(err)[:300]
            continue
        result[f"{name}_device_seconds"] = seconds
        result[f"{name}_warmup_seconds"] = warm
        if isinstance(backbone, GraphedBackbone):
            result[f"{name}_shapes"] = len(backbone.graphs)
            result[f"{name}_tokens_over_batches"] = backbone.computed / max(1, backbone.real)
        if peak:
            result[f"{name}_device_mfu"] = flops_per_token(model) * real / seconds / (peak * 1e12)
    return result


class GraphedBackbone:
    """The backbone replayed from a CUDA graph per input shape: one launch a batch instead of one per kernel.

    ``bucket`` (rows, tokens) rounds each batch up to multiples of those, padding rows and tokens
    that the mask hides, so that fewer shapes are captured; None captures every exact shape.  The
    returned states are the graph's own buffer, overwritten by the next replay, which the stream
    orders after this batch's reads.
    """

    def __init__(self, model: PreTrainedModel, bucket: tuple[int, int] | None):
        self.model, self.backbone, self.bucket = model, model.base_model, bucket
        self.graphs: dict[tuple, tuple] = {}
        self.real = self.computed = 0

    def __call__(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None):
        rows, width = input_ids.shape
        if self.bucket is not None:
            (step_rows, step_width) = self.bucket
            rows_to, width_to = -(-rows // step_rows) * step_rows, -(-width // step_width) * step_width
            if (rows_to, width_to) != (rows, width) or attention_mask is not None:
                real = torch.zeros(rows_to, width_to, dtype=torch.int64, device=input_ids.device)
                if attention_mask is None:
                    real[:rows, :width] = 1
                else:  # pelt's additive mask: 0 where a token is real
                    real[:rows, :width] = (attention_mask[:, 0, 0, :] == 0).long()
                ids = input_ids.new_full((rows_to, width_to), self.model.config.pad_token_id)
                ids[:rows, :width] = input_ids
                input_ids, attention_mask = ids, encoder_mask(self.model, real)
        self.real += rows * width
        self.computed += input_ids.numel()
        key = (tuple(input_ids.shape), attention_mask is None)
        if key not in self.graphs:
            static = (input_ids.clone(), None if attention_mask is None else attention_mask.clone())
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                self.backbone(input_ids=static[0], attention_mask=static[1])
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                out = self.backbone(input_ids=static[0], attention_mask=static[1]).last_hidden_state
            self.graphs[key] = (graph, static, out)
        graph, (ids, mask), out = self.graphs[key]
        ids.copy_(input_ids)
        if mask is not None:
            mask.copy_(attention_mask)
        graph.replay()
        return SimpleNamespace(last_hidden_state=out[:rows])


def agreement(low: dict[str, np.ndarray], high: dict[str, np.ndarray], device: torch.device) -> dict[str, float]:
    """How far a bf16 table is from the fp32 one: vector error, cosine, and nearest neighbours kept.

    Neighbours are what a table is used for (the injected vector's direction; ``most_similar``), so
    the share of entities whose nearest other entity is the same in both tables is reported beside
    the elementwise error.
    """
    keys = sorted(high)
    a = torch.tensor(np.stack([low[k] for k in keys]), device=device)
    b = torch.tensor(np.stack([high[k] for k in keys]), device=device)
    relative = (a - b).norm(dim=1) / b.norm(dim=1)
    a, b = torch.nn.functional.normalize(a, dim=1), torch.nn.functional.normalize(b, dim=1)
    cosine = (a * b).sum(dim=1)
    top = {}
    for name, x in (("low", a), ("high", b)):
        sim = x @ x.T
        sim.fill_diagonal_(-2.0)
        top[name] = sim.topk(10, dim=1).indices
    same_first = (top["low"][:, 0] == top["high"][:, 0]).float().mean()
    overlap = torch.tensor(
        [len(set(x.tolist()) & set(y.tolist())) / 10 for x, y in zip(top["low"], top["high"])]
    ).mean()
    return {
        "entities": len(keys),
        "max_relative_error": float(relative.max()),
        "median_relative_error": float(relative.median()),
        "min_cosine": float(cosine.min()),
        "same_nearest_neighbour": float(same_first),
        "top10_overlap": float(overlap),
    }


def max_relative_error(ours: dict[str, np.ndarray], naive: dict[str, np.ndarray]) -> float:
    """max over entities of ||ours - naive|| / ||naive|| (the two must hold the same entities)."""
    if ours.keys() != naive.keys():
        raise AssertionError(f"the paths' tables hold different entities: {len(ours)} vs {len(naive)}")
    return max(float(np.linalg.norm(ours[e] - naive[e]) / np.linalg.norm(naive[e])) for e in ours)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="name or path (default: a random RoBERTa of --layers x --hidden)")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--sentences", type=int, default=512)
    parser.add_argument("--max-seq-len", type=int, default=64, help="both paths; the naive one pads every row to it")
    parser.add_argument(
        "--tokens-per-batch",
        type=lambda value: value if value == "auto" else int(value),
        default="auto",
        help="pelt's token budget per batch (default: the pipeline's, auto: 16384 on a GPU, 2048 on a CPU)",
    )
    parser.add_argument("--repeats", type=int, default=1, help="timed runs of each path, interleaved; best kept")
    parser.add_argument(
        "--copies",
        type=int,
        default=1,
        help="encode the sentences this many times over (a longer steady state on GPU); pelt tokenizes a pool's "
        "distinct sentences once, so keep --sentences above a pool (16,384 rows) or copies share their tokens",
    )
    parser.add_argument(
        "--breakdown",
        type=lambda v: [int(x) for x in v.split(",")],
        default=[],
        help="also time pelt's host and device halves apart, at these comma-separated token budgets",
    )
    parser.add_argument(
        "--host-workers",
        type=lambda v: v if v == "auto" else int(v),
        default=0,
        help="processes preparing pelt's batches (build_table's host_workers): auto (up to 8 on CUDA, 0 on CPU) or N",
    )
    parser.add_argument("--compile", action="store_true", help="in --breakdown, also time the backbone compiled")
    parser.add_argument(
        "--graphs",
        action="store_true",
        help="in --breakdown on CUDA, also time the backbone replayed from CUDA graphs, one per batch shape "
        "(exact shapes, and shapes rounded up to 32 rows x 8 tokens)",
    )
    parser.add_argument("--fp32-check", action="store_true", help="also build the table in fp32 and compare")
    parser.add_argument(
        "--host-only",
        action="store_true",
        help="time pelt's host preparation alone (tokenizer, and pelt's own Python beside it), --repeats times "
        "after a warm-up, at --max-seq-len and --tokens-per-batch; no model is built",
    )
    parser.add_argument(
        "--heads-only",
        action="store_true",
        help="encode only each FewRel instance's head mention (11,200 in 10,996 distinct sentences): hardly a "
        "sentence twice, as in the workflow's samples, whose pools, sorted by entity, seldom repeat one",
    )
    parser.add_argument("--device", default="auto")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    all_ids, all_sentences, all_spans = fewrel_mentions(args.data)
    chosen = (all_ids, all_sentences, all_spans)
    if args.heads_only:  # fewrel_mentions gives each instance's head mention, then its tail
        chosen = tuple(x[::2] for x in chosen)
    if not 0 < args.sentences <= len(chosen[1]):
        parser.error(f"--sentences must be in [1, {len(chosen[1])}] (the mentions chosen in {args.data})")
    ids, sentences, spans = (x[: args.sentences] * args.copies for x in chosen)
    device = resolve_device(args.device)
    args.tokens_per_batch = resolve_tokens_per_batch(args.tokens_per_batch, device, args.max_seq_len)
    name_gpu = torch.cuda.get_device_name() if device.type == "cuda" else None
    peak = next((v for k, v in PEAK_TFLOPS.items() if k in name_gpu), None) if name_gpu else None
    if args.host_only:
        tokenizer = AutoTokenizer.from_pretrained(args.model) if args.model else fewrel_tokenizer(all_sentences)
        encoding = EncodingSettings(max_seq_len=args.max_seq_len, tokens_per_batch=args.tokens_per_batch)
        result = {
            "device": name_gpu or f"cpu ({os.cpu_count()} cores)",
            "pelt": str(Path(host.__file__).parents[1]),  # which checkout's pelt ran (PYTHONPATH)
            "python": platform.python_version(),
            "tokenizers": tokenizers.__version__,
            "load_average": os.getloadavg(),
            "environment": {name: os.environ.get(name) for name in TOKENIZER_ENVIRONMENT},
            **host_only(tokenizer, Rows(ids, sentences, *zip(*spans)), encoding, args.repeats, device),
        }
        print(json.dumps(result, indent=2))
        return
    with tempfile.TemporaryDirectory() as tmp:
        name = args.model or random_model(all_sentences, Path(tmp) / "model", args.layers, args.hidden)
        model, tokenizer = load_masked_lm(name, device=str(device))  # bf16 on GPU, fp32 on CPU
        tables: dict[str, dict[str, np.ndarray]] = {}

        def pelt_run(n: int) -> None:
            out_ids, sums, _ = build_table(
                model,
                tokenizer,
                ids[:n],
                sentences[:n],
                spans[:n],
                max_seq_len=args.max_seq_len,
                tokens_per_batch=args.tokens_per_batch,
                host_workers=args.host_workers,
            )
            tables["pelt"] = dict(zip(out_ids, sums))

        naive_model, _ = load_masked_lm(name, device=str(device), precision="fp16" if device.type == "cuda" else "fp32")

        def naive_run(n: int) -> None:
            tables["naive"] = naive_encode(naive_model, tokenizer, ids[:n], sentences[:n], spans[:n], args.max_seq_len)

        timings = compare(
            {"pelt": (model, pelt_run), "naive": (naive_model, naive_run)}, len(sentences), args.repeats, device, peak
        )
        config = model.config
        extra = {}
        if args.breakdown:
            mentions = Rows(ids, sentences, *zip(*spans))
            extra["breakdown"] = [
                breakdown(
                    model,
                    tokenizer,
                    mentions,
                    Breakdown(
                        EncodingSettings(
                            max_seq_len=args.max_seq_len, tokens_per_batch=budget, host_workers=args.host_workers
                        ),
                        args.compile,
                        args.graphs,
                    ),
                    peak,
                )
                for budget in args.breakdown
            ]
        if args.fp32_check:
            fp32_model, _ = load_masked_lm(name, device=str(device), precision="fp32")
            out_ids, sums, _ = build_table(
                fp32_model,
                tokenizer,
                ids,
                sentences,
                spans,
                max_seq_len=args.max_seq_len,
                tokens_per_batch=args.tokens_per_batch,
                host_workers=args.host_workers,
            )
            extra["fp32_agreement"] = {
                "low": str(model.dtype),
                **agreement(tables["pelt"], dict(zip(out_ids, sums)), device),
            }

    result = {
        "device": name_gpu or f"cpu ({torch.get_num_threads()} threads, {os.cpu_count()} cores)",
        "torch": torch.__version__,
        "model": args.model or f"random RoBERTa {config.num_hidden_layers} x {config.hidden_size}",
        "sentences": len(sentences),
        "entities": len(tables["pelt"]),
        "max_seq_len": args.max_seq_len,
        "tokens_per_batch": args.tokens_per_batch,
        "host_workers": resolve_host_workers(args.host_workers, device, len(sentences)),
        "load_average": os.getloadavg(),
        **timings,
        "speedup": timings["naive"]["seconds"] / timings["pelt"]["seconds"],
        "speedup_cpu_time": timings["naive"]["cpu_seconds"] / timings["pelt"]["cpu_seconds"],
        "max_relative_error": max_relative_error(tables["pelt"], tables["naive"]),
        **extra,
    }
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
