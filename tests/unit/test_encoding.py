"""The method test (issue 2): table vectors equal the LM-head-transform vectors computed from the definition."""

from __future__ import annotations

import os
import shutil
import threading
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
import torch.nn.functional as F
from tiny_models import FAMILIES, MULTILINGUAL, MULTILINGUAL_CORPUS, check_mention_spans_from_the_ends
from torch.nn.attention import SDPBackend
from transformers import AutoModelForMaskedLM

import pelt.encoding.encode as encoding
import pelt.encoding.host as encoding_host
from pelt.encoding.encode import (
    EncodingSettings,
    build_table,
    encode_samples,
    mask_mention,
    resolve_host_workers,
    resolve_tokens_per_batch,
    shard_of,
)
from pelt.encoding.host import Rows
from pelt.encoding.models import load_masked_lm, mask_representation, mention_token_span, tokenize_with_offsets
from pelt.table import EntityTable, merge_tables

MAX_SEQ_LEN = 16
SETTINGS = EncodingSettings(max_seq_len=MAX_SEQ_LEN)
LONG = (
    "In the long and winding story of the city of Warsaw, which lies on the Vistula river in Poland, "
    "Marie Curie was born, and she later worked in Paris, the capital of France, a country in Europe."
)
ROWS = [
    # entity, sentence, start, end, doc
    ("Marie_Curie", "Marie Curie was born in Warsaw and worked in Paris.", 0, 11, "d1"),
    ("Marie_Curie", LONG, LONG.index("Marie Curie"), LONG.index("Marie Curie") + 11, "d2"),  # windowed, middle
    ("Warsaw", LONG, LONG.index("Warsaw"), LONG.index("Warsaw") + 6, "d2"),  # windowed, clamped at the start
    ("Europe", LONG, len(LONG) - 7, len(LONG) - 1, "d2"),  # windowed, clamped at the end
    ("Warsaw", "The city of Warsaw lies on the Vistula river in Poland.", 12, 18, "d3"),
    ("Paris", "Paris is the capital of France, a country in Europe.", 0, 5, "d4"),
    ("Paris", "Marie Curie was born in Warsaw and worked in Paris.", 45, 50, "d1"),
    ("Berlin", "Berlin is the capital of Germany (a country in Europe).", 0, 6, "d5"),
    ("Ada_Lovelace", "Ada Lovelace wrote the first program for the Analytical Engine.", 0, 12, "d6"),
    # bad rows: counted, never encoded
    ("Paris", "Paris is nice.", 3, 3, "d7"),  # empty span
    ("Paris", "Paris is nice.", 5, 40, "d7"),  # beyond the sentence
    ("Paris", "Paris  is nice.", 5, 6, "d7"),  # covers only a space: no token
    (None, "Paris is nice.", 0, 5, "d7"),
]


def _samples(path: Path, rows=ROWS) -> Path:
    columns = list(zip(*rows))
    table = pa.table(
        {
            "entity_id": pa.array(columns[0], pa.string()),
            "sentence": pa.array(columns[1], pa.string()),
            "start": pa.array(columns[2], pa.int32()),
            "end": pa.array(columns[3], pa.int32()),
            "doc_id": pa.array(columns[4], pa.string()),
        }
    )
    path.mkdir(parents=True, exist_ok=True)
    half = len(rows) // 2
    pq.write_table(table.slice(0, half), path / "part-0.parquet")  # a Spark-style directory of parts
    pq.write_table(table.slice(half), path / "part-1.parquet")
    return path


def _layer_norm(x: torch.Tensor, ln: torch.nn.LayerNorm) -> torch.Tensor:
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + ln.eps) * ln.weight + ln.bias


def reference_vector(model, tokenizer, sentence: str, start: int, end: int) -> torch.Tensor:
    """r from the definition: one sentence, no padding, head transform applied by hand."""
    enc = tokenizer(sentence, return_offsets_mapping=True, return_special_tokens_mask=True)
    hit = [
        i
        for i, ((s, e), sp) in enumerate(zip(enc["offset_mapping"], enc["special_tokens_mask"]))
        if not sp and s < end and e > start
    ]
    ids = enc["input_ids"][: hit[0]] + [tokenizer.mask_token_id] + enc["input_ids"][hit[-1] + 1 :]
    pos = hit[0]
    if len(ids) > MAX_SEQ_LEN:  # one special token at each end for all three families
        body, budget = ids[1:-1], MAX_SEQ_LEN - 2
        lo = min(max(pos - 1 - budget // 2, 0), len(body) - budget)
        ids, pos = [ids[0], *body[lo : lo + budget], ids[-1]], pos - lo
    x = torch.tensor([ids])
    kind = model.config.model_type
    if kind == "bart":
        decoder_in = torch.tensor([[model.config.decoder_start_token_id, *ids[:-1]]])
        r = model.model(input_ids=x, decoder_input_ids=decoder_in).last_hidden_state[0, pos]
        weight, bias = model.lm_head.weight, model.final_logits_bias[0]
    else:
        base = model.roberta if kind == "roberta" else model.bert
        head = model.lm_head if kind == "roberta" else model.cls.predictions
        dense, ln = (
            (head.dense, head.layer_norm) if kind == "roberta" else (head.transform.dense, head.transform.LayerNorm)
        )
        h = base(input_ids=x).last_hidden_state[0, pos]
        r = _layer_norm(F.gelu(h @ dense.weight.T + dense.bias), ln)
        weight, bias = head.decoder.weight, head.bias
    # r is the vector whose dot product with the (tied) word embeddings gives the mask's logits
    assert torch.equal(weight, model.get_output_embeddings().weight)
    full = model(input_ids=x).logits[0, pos]
    torch.testing.assert_close(r @ weight.T + bias, full, rtol=1e-5, atol=1e-5)
    return r


@pytest.mark.parametrize("family", FAMILIES)
def test_table_equals_definition(family, tiny_model_dirs, tmp_path):  # noqa: F811
    model_dir = str(tiny_model_dirs[family])
    samples = _samples(tmp_path / "samples")
    freq = tmp_path / "frequencies.parquet"
    pq.write_table(
        pa.table({"entity_id": ["Marie_Curie", "Paris"], "frequency": pa.array([900, 50], pa.int64())}), freq
    )
    out = tmp_path / "table.parquet"

    stats = encode_samples(
        str(samples),
        model_dir,
        str(out),
        frequencies_path=str(freq),
        settings=EncodingSettings(max_seq_len=MAX_SEQ_LEN, tokens_per_batch=64),
    )

    assert stats["rows"] == len(ROWS)
    assert stats["sentences"] == 9
    assert (stats["skipped_bad_span"], stats["skipped_no_token"], stats["skipped_null"]) == (2, 1, 1)
    model, tokenizer = load_masked_lm(model_dir)
    too_long = [len(tokenizer(r[1])["input_ids"]) > MAX_SEQ_LEN for r in ROWS[:9]]
    assert all(too_long[1:4]) and stats["windowed"] == sum(too_long)
    expected: dict[str, torch.Tensor] = defaultdict(lambda: torch.zeros(model.config.hidden_size))
    n_expected: dict[str, int] = defaultdict(int)
    with torch.no_grad():
        for eid, sentence, start, end, _ in ROWS[:9]:
            expected[eid] += reference_vector(model, tokenizer, sentence, start, end)
            n_expected[eid] += 1
    table = pq.read_table(out)
    assert table.schema.field("vector_sum").type == pa.list_(pa.float32(), model.config.hidden_size)
    got = {row["entity_id"]: row for row in table.to_pylist()}
    assert sorted(got) == sorted(expected) and table.column("entity_id").to_pylist() == sorted(expected)
    for eid, ref in expected.items():
        vec = np.array(got[eid]["vector_sum"], np.float64)
        ref = ref.numpy().astype(np.float64)
        assert np.linalg.norm(vec - ref) / np.linalg.norm(ref) < 1e-5, eid
        assert got[eid]["n_sentences"] == n_expected[eid]
    assert got["Marie_Curie"]["frequency"] == 900
    assert got["Warsaw"]["frequency"] == 2  # absent from the frequencies file: falls back to its sample size
    meta = EntityTable.open(out).metadata
    assert meta["model"] == model_dir and meta["max_seq_len"] == MAX_SEQ_LEN
    assert meta["hidden_size"] == model.config.hidden_size
    assert meta["norm"] == {"roberta": 7.0, "bert": 10.0, "bart": 3.0}[family]


@pytest.mark.parametrize("family", FAMILIES)
def test_padding_does_not_change_vectors(family, tiny_model_dirs):  # noqa: F811
    model, tokenizer = load_masked_lm(str(tiny_model_dirs[family]))
    sentences = ["Paris is nice.", "Marie Curie was born in Warsaw and worked in Paris."]
    enc = tokenizer(sentences, padding=True, return_tensors="pt")
    ids = enc["input_ids"].clone()
    ids[:, 1] = tokenizer.mask_token_id
    positions = torch.tensor([1, 1])
    with torch.no_grad():
        batched = mask_representation(model, ids, enc["attention_mask"], positions)
        for i in range(2):
            n = int(enc["attention_mask"][i].sum())
            alone = mask_representation(
                model, ids[i : i + 1, :n], enc["attention_mask"][i : i + 1, :n], positions[i : i + 1]
            )
            torch.testing.assert_close(batched[i : i + 1], alone, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("family", FAMILIES)
def test_tokenize_with_offsets_matches_the_tokenizers_own_call(family, tiny_model_dirs):  # noqa: F811
    """The backend is called directly for speed; its tokens must be exactly transformers' own, also
    after a padded, truncated call has left padding and truncation set on the shared backend."""
    _, tokenizer = load_masked_lm(str(tiny_model_dirs[family]))
    texts = [
        "Paris is nice.",
        "Marie Curie was born in Warsaw and worked in Paris, France.",
        "  odd  spacing \u00e9t\u00e9",
    ]
    tokenizer(texts, padding="max_length", truncation=True, max_length=5)
    ours = tokenize_with_offsets(tokenizer, texts)
    theirs = tokenizer(texts, return_offsets_mapping=True, return_special_tokens_mask=True)
    assert len(ours["input_ids"][1]) > 5  # neither truncated nor padded
    for key in ("input_ids", "offset_mapping", "special_tokens_mask"):
        assert [list(map(tuple, x)) if key == "offset_mapping" else list(x) for x in ours[key]] == [
            list(map(tuple, x)) if key == "offset_mapping" else list(x) for x in theirs[key]
        ]


@pytest.mark.parametrize("family", FAMILIES)
def test_the_mention_span_from_the_ends_is_the_span_from_every_offset(family, tiny_model_dirs):  # noqa: F811
    """Every character span of sentences with gaps, characters split over several byte-level
    tokens, accents, CJK, an emoji and literal special tokens: the two-end lookup of pool
    preparation gives what reading every offset gives."""
    _, tokenizer = load_masked_lm(str(tiny_model_dirs[family]))
    sentences = [
        "Zürich's  東京 🙂 café , Ødegaard-Lee (born 1815) .",
        f"A {tokenizer.mask_token} and {tokenizer.sep_token or tokenizer.eos_token} in text , then Paris .",
        "  leading spaces and trailing   ",
    ]
    assert check_mention_spans_from_the_ends(tokenizer, sentences) > 1500


class _Encoding:
    """An encoding whose character lookup answers with the last (or first) token holding a
    character: no tokenizer here answers with the last, none is bound not to."""

    def __init__(self, offsets: list[tuple[int, int]], pick: Callable = max):
        self.offsets = offsets
        self.pick = pick

    def __len__(self) -> int:
        return len(self.offsets)

    def char_to_token(self, char: int) -> int | None:
        return self.pick((i for i, (s, e) in enumerate(self.offsets) if s <= char < e), default=None)

    def token_to_chars(self, token: int) -> tuple[int, int] | None:
        return self.offsets[token] if self.offsets[token] != (0, 0) else None


def test_the_mention_span_from_the_ends_reads_every_offset_when_an_end_is_unsure():
    offsets = [(0, 0), (0, 2), (2, 5), (3, 5), (5, 8), (0, 0)]  # characters 3 and 4 in two tokens
    special = [1, 0, 0, 0, 0, 1]
    span = encoding_host.encoding_mention_span
    assert span(_Encoding(offsets, max), special, 3, 5) == (2, 3)  # the lookup said 3 at the start
    assert span(_Encoding(offsets, min), special, 1, 4) == (1, 3)  # the lookup said 2 at the end
    assert span(_Encoding(offsets), special, 0, 2) == (1, 1)
    assert span(_Encoding(offsets), [1, 1, 0, 0, 0, 1], 0, 3) == (2, 2)  # an added special token
    plain = _Encoding([(0, 0), (0, 2), (2, 5), (5, 8), (0, 0)])
    assert span(plain, [1, 0, 0, 1, 1], 2, 8) == (2, 2)  # one at the end


def test_mention_tokens_are_masked_and_windowed():
    # <s> a b c d e f g h </s>; token k of the body covers chars [2k, 2k+1); the mention "d e" is [6, 9)
    ids = [0, 10, 11, 12, 13, 14, 15, 16, 17, 2]
    offsets = [(0, 0)] + [(2 * i, 2 * i + 1) for i in range(8)] + [(0, 0)]
    special = [1] + [0] * 8 + [1]
    assert mention_token_span(offsets, special, 6, 9) == (4, 5)
    assert mention_token_span(offsets, special, 1, 2) is None  # a gap between tokens
    assert mention_token_span(offsets, special, 0, 99) == (1, 8)  # never the special tokens
    zero_width = [(0, 0), (0, 3), (4, 4), (4, 8), (0, 0)]  # a trimmed space token inside the mention
    assert mention_token_span(zero_width, [1, 0, 0, 0, 1], 0, 8) == (1, 3)
    assert mask_mention(ids, special, (4, 5), 99, 100) == ([0, 10, 11, 12, 99, 15, 16, 17, 2], 4)
    # masked body a b c M f g h, budget 4: the window starts at clamp(3 - 2, 0, 3) = 1
    assert mask_mention(ids, special, (4, 5), 99, 6) == ([0, 11, 12, 99, 15, 2], 3)
    assert mask_mention(ids, special, (1, 1), 99, 6) == ([0, 99, 11, 12, 13, 2], 1)  # clamped at the start
    assert mask_mention(ids, special, (8, 8), 99, 6) == ([0, 14, 15, 16, 99, 2], 4)  # clamped at the end


def _each_sentence_alone(preparer: encoding_host.PoolPreparer, rows: Rows) -> tuple[list, list, Counter]:
    """The pool path as it was before it ran over whole pools (git 41a2da7): each row tokenized
    alone, its mention found by reading every offset, masked and windowed by :func:`mask_mention`;
    the masked sentences sorted by length, stably, and cut into batches under the token budget.
    Returns the kept entities, the batches as (row ids, mask positions, items) and the counts."""
    stats: Counter[str] = Counter()
    masked, entity_ids = [], []
    for eid, sentence, start, end in zip(rows.entity_ids, rows.sentences, rows.starts, rows.ends):
        if eid is None or sentence is None or start is None or end is None:
            stats["skipped_null"] += 1
            continue
        if not 0 <= start < end <= len(sentence):
            stats["skipped_bad_span"] += 1
            continue
        encoded = preparer.backend.encode(sentence)
        span = mention_token_span(encoded.offsets, encoded.special_tokens_mask, start, end)
        if span is None:
            stats["skipped_no_token"] += 1
            continue
        stats["windowed"] += len(encoded.ids) - (span[1] - span[0]) > preparer.max_seq_len
        masked.append(
            mask_mention(encoded.ids, encoded.special_tokens_mask, span, preparer.mask_id, preparer.max_seq_len)
        )
        entity_ids.append(eid)
    order = sorted(range(len(masked)), key=lambda k: -len(masked[k][0]))
    batches, lo = [], 0
    while lo < len(order):
        items = order[lo : lo + max(1, preparer.tokens_per_batch // len(masked[order[lo]][0]))]
        batches.append(([masked[k][0] for k in items], [masked[k][1] for k in items], items))
        stats["sentences"] += len(items)
        stats["tokens"] += sum(len(masked[k][0]) for k in items)
        lo += len(items)
    return entity_ids, batches, stats


def _pools_against_each_sentence_alone(tokenizer, mentions: list[tuple[str, int, int]]) -> dict[int, Counter]:
    """Prepares ``mentions`` (sentence, start, end; and a null row) as one pool at several window
    lengths and token budgets, asserts the batches are those of :func:`_each_sentence_alone`, to
    the token, and returns the counts at each window length."""
    rows = Rows(
        [f"e{i % 5}" for i in range(len(mentions))] + [None],
        [m[0] for m in mentions] + ["Rome ."],
        [m[1] for m in mentions] + [0],
        [m[2] for m in mentions] + [4],
    )
    counts = {}
    for max_seq_len in (6, 9, 16, 64, 128):
        for tokens_per_batch in (max_seq_len, 3 * max_seq_len, 10_000):
            preparer = encoding._Preparer(tokenizer, max_seq_len, tokens_per_batch, None, False).preparer
            pool = preparer(rows)
            entity_ids, batches, stats = _each_sentence_alone(preparer, rows)
            assert pool.entity_ids == entity_ids and pool.stats == stats and pool.n_rows == len(rows.sentences)
            assert len(pool.batches) == len(batches)
            for got, (ids, positions, items) in zip(pool.batches, batches):
                width = len(ids[0])
                padded = [row + [tokenizer.pad_token_id] * (width - len(row)) for row in ids]
                assert got.input_ids.dtype == np.int64 and got.input_ids.tolist() == padded
                assert got.lengths.tolist() == [len(row) for row in ids]
                assert got.mask_positions.tolist() == positions and got.items.tolist() == items
        counts[max_seq_len] = stats
    return counts


@pytest.mark.parametrize("family", FAMILIES)
def test_pools_are_masked_and_packed_as_each_sentence_alone(family, tiny_model_dirs):  # noqa: F811
    """Masking, windowing and packing run over a pool's flat token array, each distinct sentence
    tokenized once; the batches must be those of masking each sentence alone, to the token: mentions
    at both ends of a long sentence and in its middle, windows clamped at both ends, characters of
    several bytes (split over byte-level tokens, or inside a word), a literal special token, a
    mention of whitespace (no token), a mention of a whole sentence, one sentence shared by several
    mentions, bad rows, and token budgets from one sentence a batch to all."""
    _, tokenizer = load_masked_lm(str(tiny_model_dirs[family]))
    accented = "Zürich's 東京 🙂 café, near Ødegaard-Lee (born 1815), is ünïcödé all the way through 東京 ."
    literal = f"A {tokenizer.mask_token} stands for Paris in this text ."
    counts = _pools_against_each_sentence_alone(
        tokenizer,
        [
            (LONG, 0, 2),  # the first word of a long sentence: the window clamped at the start
            (LONG, len(LONG) - 7, len(LONG) - 1),  # its last word: clamped at the end
            (LONG, len(LONG) - 1, len(LONG)),  # its final full stop
            (LONG, LONG.index("Marie"), LONG.index("Marie") + 11),  # its middle: a centred window
            (LONG, 0, len(LONG)),  # all of it
            (accented, 0, 6),  # "Zürich"
            (accented, accented.index("東"), accented.index("東") + 1),  # one character of three bytes
            (accented, accented.index("🙂"), accented.index("🙂") + 1),  # four bytes
            (accented, accented.index("é"), accented.index("é") + 1),  # the end of a word
            (accented, accented.rindex("東"), len(accented)),  # the end of a sentence windowed at small lengths
            (literal, 2, 2 + len(tokenizer.mask_token)),  # the literal special token
            (literal, literal.index("Paris"), literal.index("Paris") + 5),
            ("Paris  is nice .", 5, 6),  # whitespace: no token
            ("Paris  is nice .", 0, 16),  # the whole sentence
            ("Paris is nice .", 3, 3),  # empty: a bad span
            ("Rome .", 0, 4),
        ],
    )
    assert all(c["skipped_no_token"] == c["skipped_bad_span"] == c["skipped_null"] == 1 for c in counts.values())
    assert counts[6]["windowed"] > 0 and counts[128]["windowed"] == 0  # windows of every kind, and none


@pytest.mark.parametrize("name", MULTILINGUAL)
def test_pools_are_masked_and_packed_as_each_sentence_alone_in_every_script(name, multilingual_model_dirs):
    """The same on multilingual tokenizers (unigram's bare "▁" tokens, WordPiece's CJK characters,
    right to left): each sentence's first and last character, a middle pair, and all of it."""
    _, tokenizer = load_masked_lm(str(multilingual_model_dirs[name]))
    mentions = [
        span
        for sentence in MULTILINGUAL_CORPUS
        for span in (
            (sentence, 0, 1),
            (sentence, len(sentence) - 1, len(sentence)),
            (sentence, len(sentence) // 2, len(sentence) // 2 + 2),
            (sentence, 0, len(sentence)),
        )
    ]
    counts = _pools_against_each_sentence_alone(tokenizer, mentions)
    assert counts[6]["windowed"] > 0 and counts[6]["sentences"] > len(MULTILINGUAL_CORPUS)


@pytest.mark.parametrize("host_workers", [0, 2])
def test_errors_in_the_tokenizing_thread_reach_the_caller(host_workers, tiny_model_dirs):  # noqa: F811
    """A worker process's error too, and its processes are gone once the error is raised (the
    children this process had before, a Spark session's JVM in a full run, are not its)."""
    model, tokenizer = load_masked_lm(str(tiny_model_dirs["roberta"]))
    before = set(_children())
    with pytest.raises(TypeError):
        build_table(model, tokenizer, ["a"], [5], [(0, 1)], host_workers=host_workers)
    assert set(_children()) <= before


def test_the_next_pool_is_prepared_while_the_device_works(tiny_model_dirs):  # noqa: F811
    """Pool k+1 is tokenized while pool k's batches are still on the device.  Preparing a pool only
    once the previous one's batches were all handed out made an encoding's wall time the host's
    plus the device's (measured on an H200, benchmarks/README.md)."""
    _, tokenizer = load_masked_lm(str(tiny_model_dirs["roberta"]))
    preparer = encoding._Preparer(tokenizer, 8, 8, None, False)  # a budget of one sentence per batch
    second_started = threading.Event()
    prepare = preparer.preparer

    def recording(rows: Rows):
        if rows.entity_ids[0] == "second":
            second_started.set()
        return prepare(rows)

    preparer.preparer = recording
    sentence = "Paris is the capital and largest city of France ."
    first = Rows([f"e{i}" for i in range(4 * encoding._QUEUE_DEPTH)], [sentence] * 16, [0] * 16, [5] * 16)
    batches = encoding._in_background(preparer.batches([first, Rows(["second"], ["Rome ."], [0], [4])]))
    device_batches = (b for b in batches if not isinstance(b, int))
    next(device_batches)  # the device holds the first pool's first batch
    assert second_started.wait(timeout=60), "the second pool waited for the first pool's batches to be taken"
    assert len(list(device_batches)) == 16  # one sentence per batch: 15 more of the first pool, 1 of the second


def test_encoding_asks_for_the_memory_efficient_attention_kernel_first(tiny_model_dirs, monkeypatch):  # noqa: F811
    """At FewRel's lengths (about 28 tokens) the memory-efficient kernel ran the device's share of
    encoding 16 % faster than the cuDNN one torch prefers on an H200 (benchmarks/README.md, run 7);
    encoding asks for it first, and torch's own order is back once the table is built."""
    model, tokenizer = load_masked_lm(str(tiny_model_dirs["roberta"]))
    orders = []

    def recording(*args, **kwargs):
        orders.append(torch._C._get_sdp_priority_order())
        return mask_representation(*args, **kwargs)

    monkeypatch.setattr(encoding, "mask_representation", recording)
    before = torch._C._get_sdp_priority_order()
    build_table(model, tokenizer, ["Paris", "Rome"], ["Paris is nice .", "Rome is old ."], [(0, 5), (0, 4)])
    assert orders and all(order[0] == SDPBackend.EFFICIENT_ATTENTION.value for order in orders)
    assert torch._C._get_sdp_priority_order() == before


def _children() -> list[str]:
    """Process ids of this process's children (Linux's /proc; none found elsewhere)."""
    tasks = Path("/proc", str(os.getpid()), "task")
    children = []
    for task in tasks.glob("*") if tasks.exists() else []:
        try:
            children += (task / "children").read_text().split()
        except FileNotFoundError:  # a thread that ended since the listing: its children are gone too
            pass
    return children


@pytest.mark.parametrize(("family", "shard"), [("roberta", None), ("bert", (0, 2)), ("bart", None)])
def test_host_workers_give_the_same_table(family, shard, tiny_model_dirs, monkeypatch):  # noqa: F811
    """Pools prepared in worker processes give the same table, bit for bit, and the same counts:
    rows are assigned in input order across pools, skipped rows are counted alike."""
    monkeypatch.setattr(encoding, "_POOL_ROWS", 4)  # several pools, more than the workers hold in flight
    model, tokenizer = load_masked_lm(str(tiny_model_dirs[family]))
    # bad spans, a mention covering no token, a null; entities recurring across pools and new ones in late pools
    rows = ROWS + [(e and f"{e}_{i % 2}", *rest) for i, (e, *rest) in enumerate(ROWS[::-1])]
    pools = [Rows(*zip(*rows[lo : lo + 4])) for lo in range(0, len(rows), 4)]
    results = [
        encoding._encode(
            model,
            tokenizer,
            iter(pools),
            EncodingSettings(max_seq_len=MAX_SEQ_LEN, tokens_per_batch=48, host_workers=workers),
            total_rows=len(rows),
            shard=shard,
        )
        for workers in (0, 2)
    ]
    (ids, sums, counts, stats), (ids2, sums2, counts2, stats2) = results
    assert ids == ids2 and np.array_equal(sums, sums2) and np.array_equal(counts, counts2)
    assert dict(stats) == dict(stats2)
    assert stats["skipped_bad_span"] == 4 and stats["sentences"] > 0
    assert all(stats[k] > 0 for k in (("windowed", "skipped_no_token") if shard is None else ("other_shard",)))


def test_host_workers_setting():
    cpu, cuda = torch.device("cpu"), torch.device("cuda")  # a device object needs no GPU
    assert resolve_host_workers("auto", cpu, 10**6) == 0  # the model needs the cores
    assert resolve_host_workers("auto", cuda, 100) == 0  # one pool: nothing to split
    assert 0 <= resolve_host_workers("auto", cuda, 10**6) <= 8
    assert resolve_host_workers(3, cpu) == 3
    for bad in (-1, "4", 2.0, True):
        with pytest.raises(ValueError, match="host_workers"):
            resolve_host_workers(bad, cpu)


def test_tokens_per_batch_setting(tiny_model_dirs, monkeypatch):  # noqa: F811
    """``auto``: a GPU's batches large, a CPU's small enough for its caches, never below one window;
    a count as given. The encoder packs by the resolved budget."""
    cpu, cuda = torch.device("cpu"), torch.device("cuda")  # a device object needs no GPU
    assert resolve_tokens_per_batch("auto", cuda, 128) == 16_384
    assert resolve_tokens_per_batch("auto", cpu, 128) == 2_048
    assert resolve_tokens_per_batch("auto", cpu, 4_096) == 4_096  # one long window still fits
    assert resolve_tokens_per_batch(512, cuda, 128) == 512
    for bad in (0, "2048", 2.0, True):
        with pytest.raises(ValueError, match="tokens_per_batch"):
            resolve_tokens_per_batch(bad, cpu, 128)
    budgets = []
    real = encoding_host.PoolPreparer.__init__

    def spy(self, *args, **kwargs):
        budgets.append(args[4])  # (backend, mask id, pad id, max_seq_len, tokens_per_batch, shard)
        real(self, *args, **kwargs)

    monkeypatch.setattr(encoding_host.PoolPreparer, "__init__", spy)
    model, tokenizer = load_masked_lm(str(tiny_model_dirs["roberta"]))
    build_table(model, tokenizer, [ROWS[0][0]], [ROWS[0][1]], [ROWS[0][2:4]])
    assert budgets == [2_048]  # the default, on this CPU


def test_build_table_matches_encode_samples(tiny_model_dirs, tmp_path):  # noqa: F811
    model, tokenizer = load_masked_lm(str(tiny_model_dirs["roberta"]))
    good = ROWS[:9]
    ids, sums, counts = build_table(
        model,
        tokenizer,
        [r[0] for r in good],
        [r[1] for r in good],
        [(r[2], r[3]) for r in good],
        max_seq_len=MAX_SEQ_LEN,
        tokens_per_batch=MAX_SEQ_LEN,  # one padded row per batch at most
    )
    assert ids == ["Marie_Curie", "Warsaw", "Europe", "Paris", "Berlin", "Ada_Lovelace"]  # first appearance
    assert sums.dtype == np.float32 and counts.tolist() == [2, 2, 1, 2, 1, 1]
    encode_samples(
        str(_samples(tmp_path / "s")),
        str(tiny_model_dirs["roberta"]),
        str(tmp_path / "t.parquet"),
        settings=EncodingSettings(max_seq_len=MAX_SEQ_LEN, tokens_per_batch=4096),
    )
    np.testing.assert_allclose(EntityTable.open(tmp_path / "t.parquet").vector_sums(ids), sums, rtol=1e-5, atol=1e-6)


def test_shards_merge_into_the_full_table(tiny_model_dirs, tmp_path):  # noqa: F811
    samples, model = str(_samples(tmp_path / "s")), str(tiny_model_dirs["bert"])
    encode_samples(samples, model, str(tmp_path / "full.parquet"), settings=SETTINGS)
    shard_stats = [
        encode_samples(
            samples,
            model,
            str(tmp_path / f"shard{i}.parquet"),
            settings=SETTINGS,
            shard=(i, 3),
        )
        for i in range(3)
    ]
    assert sum(s["sentences"] for s in shard_stats) == 9
    assert all(0 < s["sentences"] < 9 for s in shard_stats)  # the hash really splits the rows
    encode_samples(samples, model, str(tmp_path / "again.parquet"), settings=SETTINGS)
    for name in ("parquet", "arrow"):  # a rerun gives the same bytes
        assert (tmp_path / f"again.{name}").read_bytes() == (tmp_path / f"full.{name}").read_bytes()
    merged = merge_tables(
        [tmp_path / f"shard{i}.parquet" for i in range(3)], tmp_path / "merged.parquet", sum_overlap=True
    )
    full = EntityTable.open(tmp_path / "full.parquet")
    ids = list(full.ids())
    assert list(merged.ids()) == ids
    np.testing.assert_allclose(merged.vector_sums(ids), full.vector_sums(ids), rtol=1e-5, atol=1e-6)
    assert merged.counts(ids)[0].tolist() == full.counts(ids)[0].tolist()
    assert shard_of("Paris", "d4", "Paris is nice.", 0, 1000) == shard_of("Paris", "d4", "Paris is nice.", 0, 1000)
    assert shard_of("Paris", "d4", "Paris is nice.", 0, 1000) != shard_of("Paris", "d4", "Paris is nice.", 1, 1000)


def test_cache_encodes_only_new_or_changed_entities(tiny_model_dirs, tmp_path):  # noqa: F811
    """A task gains an entity and another entity's sample changes: only those two are encoded again,
    the others' sums come from the cache, and the table equals a full encoding of the new samples."""
    model, cache = str(tiny_model_dirs["roberta"]), str(tmp_path / "cache")
    first = encode_samples(
        str(_samples(tmp_path / "s1")),
        model,
        str(tmp_path / "t1.parquet"),
        settings=SETTINGS,
        cache_dir=cache,
        shard=(0, 1),
    )
    entities = {row[0] for row in ROWS if row[0]}
    assert (first["entities_reused"], first["entities_encoded"]) == (0, len(entities))
    changed = "Marie_Curie"  # two sentences, of which it keeps one
    new_rows = [row for row in ROWS if row[0] != changed] + [row for row in ROWS if row[0] == changed][:1]
    new_rows += [("Q_new", "Ulm is small.", 0, 3, "d9")]
    samples = str(_samples(tmp_path / "s2", new_rows))
    second = encode_samples(
        samples,
        model,
        str(tmp_path / "t2.parquet"),
        settings=SETTINGS,
        cache_dir=cache,
        shard=(0, 1),
    )
    assert (second["entities_reused"], second["entities_encoded"]) == (len(entities) - 1, 2)
    assert second["sentences"] == 2  # the changed entity's one sentence and the new entity's
    encode_samples(samples, model, str(tmp_path / "full.parquet"), settings=SETTINGS, shard=(0, 1))
    full, cached = EntityTable.open(tmp_path / "full.parquet"), EntityTable.open(tmp_path / "t2.parquet")
    ids = list(full.ids())
    assert list(cached.ids()) == ids and len(ids) == len(entities) + 1
    np.testing.assert_allclose(cached.vector_sums(ids), full.vector_sums(ids), rtol=1e-5, atol=1e-6)
    assert cached.counts(ids)[0].tolist() == full.counts(ids)[0].tolist()
    other = encode_samples(
        samples,
        model,
        str(tmp_path / "t3.parquet"),
        settings=EncodingSettings(max_seq_len=MAX_SEQ_LEN + 8),
        cache_dir=cache,
        shard=(0, 1),
    )
    assert other["entities_reused"] == 0  # other encoding settings: the cache is not used
    # The same folder retrained (the demo model, after its corpus changed): the weights decide.
    local, cache2 = tmp_path / "model", str(tmp_path / "cache2")
    shutil.copytree(model, local)
    runs = [
        encode_samples(
            samples,
            str(local),
            str(tmp_path / f"w{i}.parquet"),
            settings=SETTINGS,
            cache_dir=cache2,
            shard=(0, 1),
        )
        for i in range(2)
    ]
    assert runs[1]["entities_reused"] == len(entities) + 1 and runs[1].get("sentences", 0) == 0
    weights = AutoModelForMaskedLM.from_pretrained(local)
    with torch.no_grad():
        weights.get_input_embeddings().weight[5] += 1.0
    weights.save_pretrained(local)
    retrained = encode_samples(
        samples,
        str(local),
        str(tmp_path / "w2.parquet"),
        settings=SETTINGS,
        cache_dir=cache2,
        shard=(0, 1),
    )
    assert retrained["entities_reused"] == 0


def test_encode_samples_rejects_bad_input(tiny_model_dirs, tmp_path):  # noqa: F811
    pq.write_table(pa.table({"entity_id": ["a"], "sentence": ["a b"]}), tmp_path / "bad.parquet")
    with pytest.raises(ValueError, match=r"lack columns \['start', 'end', 'doc_id'\]"):
        encode_samples(str(tmp_path / "bad.parquet"), str(tiny_model_dirs["roberta"]), str(tmp_path / "t.parquet"))
    with pytest.raises(ValueError, match="cannot load masked LM"):
        encode_samples(str(_samples(tmp_path / "s")), str(tmp_path / "no-model"), str(tmp_path / "t.parquet"))
    assert not (tmp_path / "t.parquet").exists()
