"""Sampling: seeded, partition-independent top-N per entity, exact frequencies."""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from types import SimpleNamespace

import pytest

from pelt.sampling.sample import KEY_SEPARATOR, SamplingSettings, SentencePool, sample_mentions

MENTIONS_DDL = "doc_id string, sent_idx int, sentence string, start int, end int, entity_id string, method string"
CAP = 3
# "hot" has ~5 mentions per salt bucket, so the first stage really truncates.
SIZES = {"hot": 300, "mid": 5, "rare": 1, "üñí code": 4}


def mention_rows() -> list[tuple]:
    rows = []
    for entity, n in SIZES.items():
        for i in range(n):
            sentence = f"Sentence {i} about {entity}."
            start = sentence.index(entity)
            rows.append((f"doc{i % 17}", i, sentence, start, start + len(entity), entity, "anchor"))
    return rows


def python_sample(rows: list[tuple], seed: int, cap: int) -> set[tuple]:
    """The documented ranking, recomputed with hashlib."""
    by_entity = defaultdict(list)
    for doc_id, sent_idx, sentence, start, end, entity, _ in rows:
        key = hashlib.sha256(
            KEY_SEPARATOR.join(map(str, (seed, doc_id, sent_idx, start, end, entity))).encode()
        ).hexdigest()
        by_entity[entity].append((key, doc_id, sent_idx, start, end, sentence))
    chosen = set()
    for entity, ranked in by_entity.items():
        for _, doc_id, sent_idx, start, end, sentence in sorted(ranked)[:cap]:
            chosen.add((entity, sentence, start, end, doc_id, sent_idx))
    return chosen


def run(spark, tmp_path, name: str, partitions: int, seed: int, wanted=None, min_frequency: int = 1):
    mentions = tmp_path / f"{name}-mentions"
    spark.createDataFrame(mention_rows(), MENTIONS_DDL).repartition(partitions).write.parquet(str(mentions))
    counts = sample_mentions(
        spark,
        str(mentions),
        str(tmp_path / f"{name}-samples"),
        str(tmp_path / f"{name}-freq"),
        SamplingSettings(max_per_entity=CAP, seed=seed, min_frequency=min_frequency),
        wanted=wanted,
    )
    samples = [tuple(row) for row in spark.read.parquet(str(tmp_path / f"{name}-samples")).collect()]
    frequencies = {
        row["entity_id"]: row["frequency"] for row in spark.read.parquet(str(tmp_path / f"{name}-freq")).collect()
    }
    return counts, samples, frequencies


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("sampling")
    return run(spark, tmp_path, "one", 1, 42), run(spark, tmp_path, "seven", 7, 42), tmp_path


def test_same_seed_same_sample_whatever_the_partitioning(runs):
    (_, one, _), (_, seven, _), _ = runs
    assert sorted(one) == sorted(seven)


def test_sample_matches_the_documented_ranking_and_cap(runs):
    (counts, samples, _), _, _ = runs
    assert set(samples) == python_sample(mention_rows(), 42, CAP)
    assert len(samples) == len(set(samples))
    assert Counter(row[0] for row in samples) == {e: min(n, CAP) for e, n in SIZES.items()}
    assert counts["samples"] == sum(min(n, CAP) for n in SIZES.values())
    assert counts["entities_capped"] == 3


def test_frequencies_count_all_mentions_before_sampling(spark, runs):
    (_, _, frequencies), _, tmp_path = runs
    assert frequencies == SIZES
    schema = spark.read.parquet(str(tmp_path / "one-freq")).schema
    assert [(f.name, f.dataType.simpleString()) for f in schema.fields] == [
        ("entity_id", "string"),
        ("frequency", "bigint"),
    ]
    schema = spark.read.parquet(str(tmp_path / "one-samples")).schema
    assert [f.name for f in schema.fields] == ["entity_id", "sentence", "start", "end", "doc_id", "sent_idx"]


def test_wanted_entities_another_seed_and_a_min_frequency(spark, runs):
    (_, samples42, _), _, tmp_path = runs
    counts, samples, frequencies = run(spark, tmp_path, "wanted", 3, 7, wanted=["hot", "mid", "ghost"], min_frequency=6)
    assert frequencies == {"hot": SIZES["hot"], "mid": SIZES["mid"], "ghost": 0}  # below the minimum: still counted
    assert {row[0] for row in samples} == {"hot"}  # mid's 5 mentions are below 6: no sample, no table row
    assert set(samples) == {row for row in python_sample(mention_rows(), 7, CAP) if row[0] == "hot"}
    assert set(samples) != {row for row in samples42 if row[0] == "hot"}
    assert counts["wanted_without_mentions"] == 1
    assert counts["entities_below_min_frequency"] == 1
    assert counts["mentions_wanted"] == SIZES["hot"] + SIZES["mid"]


def test_sentence_pool_keeps_the_papers_lengths_for_sample_and_frequency(spark, tmp_path, tiny_model_dirs):  # noqa: F811
    # the authors' embedding generation keeps sentences of 8 to 62 subword tokens; frequencies count the same pool
    from transformers import AutoTokenizer

    tokenizer_dir = str(tiny_model_dirs["roberta"])
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    rows = []
    for i, words in enumerate([2, 6, 12, 30, 80, 12, 40]):
        sentence = "Paris " + " ".join(["the"] * words) + " ."
        rows.append((f"doc{i}", 0, sentence, 0, 5, "Paris" if i % 2 else "Warsaw", "anchor"))
        rows.append((f"doc{i}", 0, sentence, 0, 5, "Ulm", "anchor"))  # a second mention, same sentence
    lengths = {r[2]: len(tokenizer(r[2], add_special_tokens=False)["input_ids"]) for r in rows}
    pool = SentencePool(tokenizer_dir, 8, 40)
    inside = [r for r in rows if 8 <= lengths[r[2]] <= 40]
    assert 0 < len(inside) < len(rows)  # the lengths straddle both bounds
    mentions = tmp_path / "mentions"
    spark.createDataFrame(rows, MENTIONS_DDL).repartition(3).write.parquet(str(mentions))
    counts = sample_mentions(
        spark,
        str(mentions),
        str(tmp_path / "s"),
        str(tmp_path / "f"),
        SamplingSettings(max_per_entity=100, seed=1, pool=pool),
        wanted=None,
    )
    frequencies = {r["entity_id"]: r["frequency"] for r in spark.read.parquet(str(tmp_path / "f")).collect()}
    assert frequencies == dict(Counter(r[5] for r in inside))
    sampled = {(r["doc_id"], r["entity_id"]) for r in spark.read.parquet(str(tmp_path / "s")).collect()}
    assert sampled == {(r[0], r[5]) for r in inside}
    sentences = set(lengths.items())
    assert counts["pool_sentences_too_short"] == sum(n < 8 for _, n in sentences)
    assert counts["pool_sentences_too_long"] == sum(n > 40 for _, n in sentences)
    assert counts["pool_mentions"] == len(inside) and counts["mentions"] == len(rows)
    with pytest.raises(ValueError, match="min_tokens"):
        SentencePool(tokenizer_dir, 10, 5)


@pytest.mark.parametrize("bad", [{"max_per_entity": 0}, {"min_frequency": 0}])
def test_sampling_settings_refuse_a_sample_that_keeps_nothing(bad: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="must be at least 1"):
        SamplingSettings(**bad)


def test_sampling_settings_from_a_jobs_params_read_the_pool_where_the_rule_passes_one() -> None:
    """Both sampling rules' scripts read their settings one way (workflow/rules/sampling.smk's params):
    the corpus's sample with the paper's pool block, the merged sample without one."""
    params = SimpleNamespace(max_per_entity=256, seed=7, min_frequency=2)
    assert SamplingSettings.from_params(params) == SamplingSettings(256, 7, 2)
    params.pool = {"tokenizer": "roberta-base", "min": 8, "max": 62}
    assert SamplingSettings.from_params(params).pool == SentencePool("roberta-base", 8, 62)
    params.pool = None  # the config's block absent: every sentence
    assert SamplingSettings.from_params(params).pool is None
