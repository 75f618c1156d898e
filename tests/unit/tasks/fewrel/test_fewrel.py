"""FewRel: the episode sampler, Proto, the split that keeps validation off the test data, and run_fewrel end to end."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
from relation_data import NAMES, records, write_wiki80

from pelt.encoding.models import load_masked_lm
from pelt.eval.settings import EncoderSettings, TableInputs, parse
from pelt.table import write_table
from pelt.tasks.fewrel.data import read_instances
from pelt.tasks.fewrel.run import (
    FewRelFiles,
    _episode_logits,
    _shared_logits,
    _train,
    episode_accuracy,
    proto_logits,
    relation_pool,
    run_fewrel,
    sample_episode,
    sample_episodes,
    split_fewrel,
)
from pelt.tasks.fewrel.settings import FewRelSettings
from pelt.tasks.relation.data import Entity, Instance
from pelt.tasks.relation.encoder import (
    AdamWNoBiasCorrection,
    RelationEncoder,
    resolve_instances,
    trains_deterministically,
)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("fewrel")
    test = {r: records(r, 6) for r in ["P19", "P36", "P108", "P206"]}
    train = {r: records(r, 8, offset=3) for r in ["P800", "P30", "P47", "P17", "P131", "P150"]}
    (root / "test.json").write_text(json.dumps(test))
    # Wiki80 layout for training; it also holds a test sentence under another relation name, as the real
    # Wiki80 files hold FewRel's val sentences: that relation must not be trained on.
    write_wiki80(root / "train.jsonl", [*train.items(), ("place of birth", [test["P19"][0], *records("P19", 7, 40)])])
    return {"root": str(root), "test": str(root / "test.json"), "train": str(root / "train.jsonl")}


def _pool(n_relations: int, sizes: int) -> dict[str, list[int]]:
    return {f"R{r}": list(range(r * sizes, (r + 1) * sizes)) for r in range(n_relations)}


@pytest.mark.parametrize("n_way,k_shot,n_query", [(5, 1, 1), (5, 5, 1), (10, 1, 2), (10, 5, 5)])
def test_episode_sampler_properties(n_way, k_shot, n_query):
    pool = _pool(12, 10)
    relation_of = {i: r for r, idx in pool.items() for i in idx}
    rng = np.random.default_rng(0)
    seen_relations = set()
    for _ in range(50):
        ep = sample_episode(pool, n_way, k_shot, n_query, rng)
        assert len(ep.relations) == len(set(ep.relations)) == n_way
        assert [len(s) for s in ep.support] == [k_shot] * n_way
        supports = [i for s in ep.support for i in s]
        assert len(set(supports)) == len(supports) and not set(supports) & set(ep.query)
        assert len(ep.query) == len(set(ep.query)) == n_way * n_query
        for label, support in enumerate(ep.support):
            assert {relation_of[i] for i in support} == {ep.relations[label]}
        assert [relation_of[q] for q in ep.query] == [ep.relations[label] for label in ep.labels]
        seen_relations |= set(ep.relations)
    assert seen_relations == set(pool)  # every relation gets sampled
    again = sample_episodes(pool, 5, n_way, k_shot, n_query, seed=42, stream=2)
    assert again == sample_episodes(pool, 5, n_way, k_shot, n_query, seed=42, stream=2)
    assert again != sample_episodes(pool, 5, n_way, k_shot, n_query, seed=42, stream=1)


def _instances(sizes: dict[str, int]) -> list[Instance]:
    return [
        Instance((rel, str(i), "x"), Entity(rel, None, 0, 1), Entity(str(i), None, 1, 2), rel)
        for rel, n in sizes.items()
        for i in range(n)
    ]


def test_relation_pool_drops_small_relations():
    pool = relation_pool(_instances({"a": 3, "b": 2, "c": 5}), need=3, n_way=2, what="x")
    assert pool == {"a": [0, 1, 2], "c": [5, 6, 7, 8, 9]}
    with pytest.raises(ValueError, match="2 relations with at least 3"):
        relation_pool(_instances({"a": 3, "b": 2, "c": 5}), need=3, n_way=3, what="x")


def test_proto_logits_are_negative_squared_distances_to_support_means():
    support = torch.tensor([[[0.0, 0.0], [2.0, 0.0]], [[0.0, 4.0], [0.0, 6.0]]])  # prototypes (1, 0) and (0, 5)
    query = torch.tensor([[1.0, 1.0], [0.0, 3.0]])
    expected = torch.tensor([[-1.0, -(1 + 16.0)], [-(1 + 9.0), -4.0]])
    torch.testing.assert_close(proto_logits(support, query), expected)


def test_split_keeps_validation_off_the_test_data(data):
    train, test = read_instances([data["train"]]), read_instances([data["test"]])
    # val = test, as in the paper's scripts: validation comes from held-out training relations
    kept, val, info = split_fewrel(train, test, test, n_way=2)
    assert info["validation_source"] == "holdout"
    assert info["train_relations_dropped_overlap"] == ["place of birth"]
    train_relations, val_relations = {i.relation for i in kept}, {i.relation for i in val}
    assert len(val_relations) == 2 and not train_relations & val_relations  # max(2, ceil(6 / 4))
    assert train_relations | val_relations == {"P800", "P30", "P47", "P17", "P131", "P150"}
    keys = {i.key for i in test}
    assert not keys & {i.key for i in kept + val}
    _, val, info = split_fewrel(train, [], test, n_way=2, val_relations=3)  # no validation data: held out too
    assert info["validation_source"] == "holdout" and len(info["validation_relations"]) == 3
    assert info["validation_relations"] == sorted({i.relation for i in val})
    # a validation set disjoint from the test data is used as given, and its relations leave training
    given = [i for i in train if i.relation == "P30"]
    kept, val, info = split_fewrel(train, given, test, n_way=2)
    assert info["validation_source"] == "given" and val == given
    assert "P30" not in {i.relation for i in kept} and "P30" in info["train_relations_dropped_overlap"]
    # excluded files (val_wiki for FewRel 2.0) take their relations out of training, also when renamed
    renamed = [Instance(i.tokens, i.head, i.tail, "country") for i in given[:1]]
    kept, _, info = split_fewrel(train, [], test, n_way=2, excluded=renamed)
    assert "P30" not in {i.relation for i in kept} and "P30" in info["train_relations_dropped_overlap"]


def _frequency(entity_id: str) -> int:
    """The corpus frequency the test tables give an entity: rare (5) or frequent (15) by its name."""
    return 5 if len(entity_id) % 2 else 15


def _table(path: Path, model_dir: Path, ids: list[str], hidden: int) -> str:
    rng = np.random.default_rng(0)
    write_table(
        path,
        ids,
        rng.normal(size=(len(ids), hidden)),
        [1] * len(ids),
        [_frequency(i) for i in ids],
        {
            "model": str(model_dir),
            "revision": "local",
            "hidden_size": hidden,
            "representation": "t",
            "max_seq_len": 64,
            "norm": 7.0,
        },
    )
    return str(path)


def _task_entities(path: Path) -> str:
    # every name resolves by QID, except Bern which stays unresolved; Poland resolves but is not in the table
    rows = [(n.lower(), f"Q{i}", None if n == "Bern" else n.replace(" ", "_")) for i, n in enumerate(NAMES)]
    pq.write_table(
        pa.table(
            {
                "name": [r[0] for r in rows],
                "qid": [r[1] for r in rows],
                "entity_id": [r[2] for r in rows],
                "how": ["qid"] * len(rows),
            }
        ),
        path,
    )
    return str(path)


SMALL = FewRelSettings(
    n_way=2,
    k_shot=1,
    steps=3,
    batch_size=2,
    eval_every=2,
    val_episodes=4,
    test_episodes=12,
    train_n_query=2,
    encoder=EncoderSettings(max_length=48),
)


def test_run_fewrel_baseline_and_pelt(tiny_model_dirs, data, tmp_path):  # noqa: F811
    model_dir = tiny_model_dirs["roberta"]
    table = _table(
        tmp_path / "t.parquet", model_dir, [n.replace(" ", "_") for n in NAMES if n not in ("Bern", "Poland")], 32
    )
    entities = _task_entities(tmp_path / "e.parquet")
    runs = {}
    for variant in ("baseline", "pelt"):
        out = tmp_path / f"{variant}.json"
        runs[variant] = run_fewrel(
            str(model_dir),
            FewRelFiles([data["train"]], [data["test"]], [data["test"]]),
            str(out),
            tables=TableInputs(variant, table, entities),
            settings=SMALL,
            seed=42,
            dataset="fewrel1",
        )
        assert json.loads(out.read_text()) == runs[variant]
    base, pelt = runs["baseline"], runs["pelt"]
    assert base["setting"] == "2-1" and base["n"] == 12 and base["n_queries"] == 24
    assert 0.0 <= base["accuracy"] <= 1.0 and base["accuracy"] * 24 == round(base["accuracy"] * 24)
    assert [h["step"] for h in base["validation"]["history"]] == [2, 3]
    best = max(base["validation"]["history"], key=lambda h: (h["accuracy"], -h["step"]))
    assert base["validation"]["best_step"] == best["step"]
    assert base["data"]["validation_source"] == "holdout" and base["data"]["test_instances"] == 24
    assert base["norm"] is None and pelt["norm"] == 7.0 and base["variant"] == "baseline"
    # all 24 test instances (48 mentions) are resolved and looked up; Bern is unresolved, Poland not in the table
    test = read_instances([data["test"]])
    names = [e.name for inst in test for e in (inst.head, inst.tail)]
    counts = pelt["entities"]["test"]
    assert counts["unresolved"] == names.count("bern") > 0 and counts["not_in_table"] == names.count("poland") > 0
    assert counts["in_table"] == 48 - names.count("bern") - names.count("poland")
    # only the instances that the test episodes use are encoded, once each; the episodes depend on seed and data only
    episodes = sample_episodes(relation_pool(test, 2, 2, "t"), 12, 2, 1, 1, seed=42, stream=2)
    used = {i for ep in episodes for i in [*ep.query, *(j for s in ep.support for j in s)]}
    in_table = [sum(e.name not in ("bern", "poland") for e in (test[i].head, test[i].tail)) for i in used]
    assert counts["texts_encoded"] == len(used) and counts["injected"] == sum(in_table)
    assert counts["missing_from_table"] == sum(
        test[i].head.name == "poland" or test[i].tail.name == "poland" for i in used
    )
    assert base["entities"]["test"]["injected"] == 0 and base["entities"]["test"]["texts_encoded"] == len(used)
    # both variants split their queries by the head's frequency in the table, the baseline too
    group = {n.lower(): "rare" if _frequency(n.replace(" ", "_")) < 10 else "frequent" for n in NAMES}
    group |= {"bern": "unresolved", "poland": "rare"}  # not in the table: frequency 0
    expected = Counter(group[test[i].head.name] for ep in episodes for i in ep.query)
    assert len(expected) >= 2
    for run in (base, pelt):
        assert {g: v["n"] for g, v in run["by_head"].items()} == expected
        mean = sum(v["accuracy"] * v["n"] for v in run["by_head"].values()) / run["n_queries"]
        assert mean == pytest.approx(run["accuracy"])
    # and by the query's relation, with where its errors went
    asked = Counter(ep.relations[label] for ep in episodes for label in ep.labels)
    for run in (base, pelt):
        by_relation = run["by_relation"]
        assert {r: v["n"] for r, v in by_relation.items()} == asked
        mean = sum(v["accuracy"] * v["n"] for v in by_relation.values()) / run["n_queries"]
        assert mean == pytest.approx(run["accuracy"])
        for relation, v in by_relation.items():
            assert relation not in v["errors"] and sum(v["errors"].values()) == pytest.approx(1 - v["accuracy"])
    assert pelt["hyperparameters"]["steps"] == 3 and pelt["hyperparameters"]["markers"] == "punct"
    assert pelt["hyperparameters"]["read_at"] == "markers"
    # read at the slots the table filled: the same episodes, other encodings; an unknown place is refused
    files = FewRelFiles([data["train"]], [data["test"]], [data["test"]])
    options = dict(tables=TableInputs("pelt", table, entities), seed=42, dataset="fewrel1")

    def reading_at(place: str) -> FewRelSettings:
        return replace(SMALL, encoder=replace(SMALL.encoder, read_at=place))

    at_slots = run_fewrel(str(model_dir), files, str(tmp_path / "s.json"), settings=reading_at("slots"), **options)
    assert at_slots["hyperparameters"]["read_at"] == "slots" and at_slots["n_queries"] == pelt["n_queries"]
    assert at_slots["validation"]["history"] != pelt["validation"]["history"]
    with pytest.raises(ValueError, match="unknown read_at 'slot'"):
        run_fewrel(str(model_dir), files, str(tmp_path / "x.json"), settings=reading_at("slot"), **options)


def test_run_fewrel_is_deterministic(tiny_model_dirs, data, tmp_path):  # noqa: F811
    kwargs = dict(tables=TableInputs("baseline"), settings=SMALL, seed=7)
    files = FewRelFiles([data["train"]], [], [data["test"]])
    first = run_fewrel(str(tiny_model_dirs["bart"]), files, str(tmp_path / "a.json"), **kwargs)
    second = run_fewrel(str(tiny_model_dirs["bart"]), files, str(tmp_path / "b.json"), **kwargs)
    assert first == second
    assert first["validation"]["history"][0]["train_loss"] > 0


def test_steps_zero_tests_the_pretrained_encoder(tiny_model_dirs, data, tmp_path):  # noqa: F811
    model_dir = str(tiny_model_dirs["roberta"])
    absent = [str(tmp_path / "absent.jsonl")]  # steps 0 must not read the training or validation files
    settings = replace(SMALL, steps=0, encoder=replace(SMALL.encoder, precision="fp32"))  # the reference is fp32
    result = run_fewrel(
        model_dir,
        FewRelFiles(absent, absent, [data["test"]], exclude=absent),
        str(tmp_path / "r.json"),
        tables=TableInputs("baseline"),
        settings=settings,
        seed=3,
    )
    assert result["validation"] == {"history": [], "best_step": 0, "best_accuracy": None, "episodes": 0}
    assert result["data"]["validation_source"] == "none"
    assert result["data"]["train_instances"] == result["data"]["validation_instances"] == 0
    assert result["hyperparameters"]["precision"] == "fp32"
    # the score is that of the unchanged pre-trained encoder on the seed's test episodes
    model, tokenizer = load_masked_lm(model_dir, precision="fp32")
    encoder = RelationEncoder(model, tokenizer, None, norm=None, settings=SMALL.encoder)
    test = read_instances([data["test"]])
    episodes = sample_episodes(relation_pool(test, 2, 2, "t"), SMALL.test_episodes, 2, 1, 1, seed=3, stream=2)
    expected = episode_accuracy(encoder, encoder.mark(test, resolve_instances(test, None)), episodes, 64, "t")
    assert result["accuracy"] == expected and result["n"] == SMALL.test_episodes


def test_evaluation_encodes_once_but_scores_like_per_episode(tiny_model_dirs, data):  # noqa: F811
    model, tokenizer = load_masked_lm(str(tiny_model_dirs["roberta"]))
    encoder = RelationEncoder(model, tokenizer, None, norm=None)
    test = read_instances([data["test"]])
    marked = encoder.mark(test, resolve_instances(test, None))
    episodes = sample_episodes(relation_pool(test, 4, 3, "t"), 6, 3, 2, 2, seed=1, stream=2)
    correct = total = 0
    with torch.no_grad():
        for ep in episodes:
            predicted = _episode_logits(encoder, marked, ep).argmax(dim=-1)
            correct += int((predicted == torch.tensor(ep.labels)).sum())
            total += len(ep.query)
    assert episode_accuracy(encoder, marked, episodes, batch_size=5, desc="t") == correct / total


def test_training_keeps_the_best_validation_weights(tiny_model_dirs, data):  # noqa: F811
    model, tokenizer = load_masked_lm(str(tiny_model_dirs["roberta"]))
    encoder = RelationEncoder(model, tokenizer, None, norm=None)
    instances = read_instances([data["train"]])
    marked = {"train": encoder.mark(instances, resolve_instances(instances, None))}
    marked["validation"] = marked["train"]
    pool = relation_pool(instances, 3, 2, "t")
    val_set = sample_episodes(pool, 8, 2, 1, 2, seed=0, stream=1)
    settings = parse(
        FewRelSettings,
        {
            "n_way": 2,
            "k_shot": 1,
            "steps": 4,
            "batch_size": 1,
            "lr": 5e-3,
            "warmup": 0.0,
            "weight_decay": 0.0,
            "dropout": 0.5,
            "eval_every": 1,
            "train_n_query": 2,
            "eval_batch_size": 16,
        },
    )
    history = _train(encoder, marked, pool, val_set, settings, seed=0)
    accuracies = [h["accuracy"] for h in history["history"]]
    assert len(accuracies) == 4 and history["best_accuracy"] == max(accuracies)
    assert history["best_step"] == 1 + accuracies.index(max(accuracies))
    assert episode_accuracy(encoder, marked["validation"], val_set, 16, "t") == history["best_accuracy"]


def test_fewrel2_trains_and_validates_with_the_training_domains_table(tiny_model_dirs, data, tmp_path):  # noqa: F811
    # FewRel 2.0: Wikipedia-domain training instances resolve against the Wikipedia table, the test
    # against the biomedical one (which here knows a single entity), as the authors' loader does.
    model_dir = tiny_model_dirs["roberta"]
    known = [n.replace(" ", "_") for n in NAMES if n not in ("Bern", "Poland")]
    wiki = _table(tmp_path / "wiki.parquet", model_dir, known, 32)
    bio = _table(tmp_path / "bio.parquet", model_dir, known[:1], 32)
    entities = _task_entities(tmp_path / "e.parquet")
    runs = {}
    for name, extra in (
        ("test_table_only", {}),
        ("both", {"train_table": wiki, "train_task_entities": entities}),
    ):
        runs[name] = run_fewrel(
            str(model_dir),
            FewRelFiles([data["train"]], [data["test"]], [data["test"]]),
            str(tmp_path / f"{name}.json"),
            tables=TableInputs("pelt", bio, entities, **extra),
            settings=SMALL,
            seed=42,
            dataset="fewrel2",
        )
    alone, both = runs["test_table_only"], runs["both"]
    for split in ("train", "validation"):
        mentions = both["entities"][split]
        assert mentions["in_table"] == mentions["mentions"] - mentions["unresolved"] - mentions["not_in_table"]
        assert mentions["in_table"] > alone["entities"][split]["in_table"]
    assert both["entities"]["training_passes"]["injected"] > alone["entities"]["training_passes"]["injected"]
    assert both["entities"]["test"] == alone["entities"]["test"]  # the test uses the biomedical table either way
    assert both["train_table"] == wiki and alone["train_table"] is None and both["table"] == bio
    with pytest.raises(ValueError, match="go together"):
        TableInputs("pelt", bio, entities, train_table=wiki)


def test_adamw_without_bias_correction_follows_its_definition():
    # BERT's AdamW (transformers' correct_bias=False), the paper code's optimiser: m and v are not
    # divided by 1 - beta^t, and the decay is applied after the update
    param = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    optimizer = AdamWNoBiasCorrection([param], lr=0.1, weight_decay=0.5)
    grads = [torch.tensor([0.5, -1.0]), torch.tensor([-0.25, 2.0])]
    expected, m, v = torch.tensor([1.0, -2.0]), torch.zeros(2), torch.zeros(2)
    for grad in grads:
        param.grad = grad.clone()
        optimizer.step()
        m, v = 0.9 * m + 0.1 * grad, 0.999 * v + 0.001 * grad**2
        expected = expected - 0.1 * m / (v.sqrt() + 1e-6)
        expected = expected - 0.1 * 0.5 * expected
        torch.testing.assert_close(param.detach(), expected)


def test_proto_dropout_acts_on_the_encodings_in_training_only(tiny_model_dirs, data):  # noqa: F811
    model, tokenizer = load_masked_lm(str(tiny_model_dirs["roberta"]))
    encoder = RelationEncoder(model, tokenizer, None, norm=None).eval()  # the model's own dropout off
    instances = read_instances([data["test"]])
    marked = encoder.mark(instances, [(None, None)] * len(instances))
    episode = sample_episode(relation_pool(instances, 2, 2, "t"), 2, 1, 1, np.random.default_rng(0))
    torch.manual_seed(0)
    plain = [_episode_logits(encoder, marked, episode, 0.0) for _ in range(2)]
    dropped = [_episode_logits(encoder, marked, episode, 0.5) for _ in range(2)]
    torch.testing.assert_close(plain[0], plain[1])
    assert not torch.allclose(dropped[0], dropped[1]) and not torch.allclose(dropped[0], plain[0])


def test_a_step_encoding_each_instance_once_computes_the_per_episode_loss_and_gradient(tiny_model_dirs, data):  # noqa: F811
    model, tokenizer = load_masked_lm(str(tiny_model_dirs["roberta"]))
    encoder = RelationEncoder(model, tokenizer, None, norm=None).train()
    assert trains_deterministically(model)
    instances = read_instances([data["train"]])
    marked = encoder.mark(instances, [(None, None)] * len(instances))
    rng = np.random.default_rng(0)
    episodes = [sample_episode(relation_pool(instances, 3, 3, "t"), 3, 2, 1, rng) for _ in range(4)]
    used = [i for ep in episodes for i in [*(i for row in ep.support for i in row), *ep.query]]
    assert len(set(used)) < len(used)  # instances shared between episodes: encoded once

    def loss_and_grads(logits_of_episodes):
        model.zero_grad()
        torch.manual_seed(7)  # the encodings' dropout: drawn episode by episode in both
        logits = logits_of_episodes()
        loss = sum(torch.nn.functional.cross_entropy(lg, torch.tensor(ep.labels)) for lg, ep in zip(logits, episodes))
        loss.backward()
        return loss.detach(), [p.grad.clone() for p in model.parameters() if p.grad is not None]

    alone = loss_and_grads(lambda: [_episode_logits(encoder, marked, ep, 0.5) for ep in episodes])
    shared = loss_and_grads(lambda: _shared_logits(encoder, marked, episodes, 0.5))
    torch.testing.assert_close(shared[0], alone[0])
    assert len(shared[1]) == len(alone[1]) > 0
    for got, expected in zip(shared[1], alone[1]):
        torch.testing.assert_close(got, expected, atol=1e-6, rtol=1e-4)


def test_only_a_model_without_dropout_trains_deterministically(tiny_model_dirs):  # noqa: F811
    model, _ = load_masked_lm(str(tiny_model_dirs["roberta"]))
    assert trains_deterministically(model)
    model.config.attention_probs_dropout_prob = 0.1  # an argument of the attention call, not a module
    assert not trains_deterministically(model)
    model.config.attention_probs_dropout_prob = 0.0
    model.roberta.encoder.layer[0].output.dropout.p = 0.1
    assert not trains_deterministically(model)


def test_paper_schedule_validates_from_first_eval_without_clipping(tiny_model_dirs, data, tmp_path, monkeypatch):  # noqa: F811
    clipped = []
    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", lambda *a, **k: clipped.append(1))
    ours_settings = replace(SMALL, steps=6, eval_every=2)
    paper_settings = replace(
        ours_settings,
        warmup_steps=3,
        bias_correction=False,
        optimizer=replace(ours_settings.optimizer, max_grad_norm=None),
        first_eval=4,
    )
    files = FewRelFiles([data["train"]], [data["test"]], [data["test"]])
    options = dict(tables=TableInputs("baseline"), seed=42)
    paper = run_fewrel(
        str(tiny_model_dirs["roberta"]), files, str(tmp_path / "p.json"), settings=paper_settings, **options
    )
    assert [h["step"] for h in paper["validation"]["history"]] == [4, 6] and not clipped
    hyper = paper["hyperparameters"]
    assert (hyper["warmup_steps"], hyper["bias_correction"], hyper["max_grad_norm"], hyper["first_eval"]) == (
        3,
        False,
        None,
        4,
    )
    ours = run_fewrel(
        str(tiny_model_dirs["roberta"]), files, str(tmp_path / "o.json"), settings=ours_settings, **options
    )
    assert [h["step"] for h in ours["validation"]["history"]] == [2, 4, 6] and len(clipped) == 6
