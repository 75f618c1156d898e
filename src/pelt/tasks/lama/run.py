"""LAMA knowledge probing (Petroni et al. 2019) with and without an entity table.

Protocol, as in LAMA and the paper:

- each relation's template (``relations.jsonl``) is filled with the subject's label for ``[X]`` and
  the model's mask token for ``[Y]``;
- the model predicts among the **candidates**: the LAMA common vocabulary restricted to words the
  model can produce as one token, so that models with different vocabularies compete on the same
  words.  A word ``w`` is a candidate when ``" " + w`` tokenizes (no special tokens) to exactly one
  token that is not the unknown token.  The leading space matters because the mask follows a space
  in every template: byte-level BPE (RoBERTa, BART) needs the ``Ġw`` form, SentencePiece (XLM-R)
  the ``▁w`` form, and WordPiece (BERT) ignores the space (an uncased BERT maps ``Paris`` and
  ``paris`` to one id; the first spelling in the vocabulary file names the prediction);
- facts whose object is not a candidate are dropped and counted, per relation;
- P@1 = share of facts whose object is the candidate with the highest logit at the mask; the
  headline number is the macro average over relations (relations left without facts are excluded),
  the micro average is reported too.

With a table (the PELT variant), each subject is resolved to a corpus entity id through the
``task_entities.parquet`` written by the sampling stage, by QID when the fact has one and else by
name, and the subject mention becomes ``subject ( E )`` via :func:`pelt.encoding.injection.inject`.  Facts whose
subject is not in the table are evaluated on the plain prompt, and counted.  The subject's corpus
frequency (the table's ``frequency`` column: its mentions in the corpus the table was built from; 0
when it has none) puts each T-REx fact into a bucket, to show where the table helps: the paper's
Table 5. A bucket's ``p_at_1`` is per fact (correct answers over the bucket's facts), as the authors'
code counts (``run_experiments.py`` sums correct answers and facts per subject over all relations);
``macro_p_at_1``, the mean over the bucket's relations, is ours, kept beside it (there a relation
with many facts in the bucket does not drown the others). Google-RE facts are not bucketed
(the paper's table is T-REx only), and facts whose subject resolved to no entity are reported apart
as ``unresolved``: their frequency is unknown, not 0.

Both variants go through :func:`pelt.encoding.injection.inject`, so baseline and PELT share tokenization.

The norm L of the injected vectors is chosen here, as in the paper: :func:`sweep_norm` scores the
pelt variant for each L of 1..10 on one loaded model and keeps the best macro P@1 (ties: the
smallest L); the fine-tuning tasks then use that L.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pelt.encoding.injection import inject
from pelt.encoding.models import default_norm, forward_mlm, load_masked_lm
from pelt.eval.buckets import UNRESOLVED, bucket_names, frequency_bucket
from pelt.eval.controls import CONTROLS
from pelt.eval.settings import TableInputs
from pelt.eval.variants import resolve_norm, resolve_variant
from pelt.linking.task_entities import resolve_entities
from pelt.logs import progress
from pelt.table import EntityTable
from pelt.tasks.lama import NORM_SWEEP_TASK
from pelt.tasks.lama.data import GOOGLE_RE_TEMPLATES, Fact, FactCounts, load_facts, load_templates, read_vocab
from pelt.tasks.lama.settings import LamaSettings
from pelt.tasks.lama.uhn import read_uhn

logger = logging.getLogger(__name__)


def is_uncased(tokenizer: PreTrainedTokenizerBase) -> bool:
    """Whether the tokenizer folds case (an uncased BERT); LAMA probes such models with lower-cased facts."""
    text = "Paris Berlin Q"
    return (
        tokenizer(text, add_special_tokens=False)["input_ids"]
        == tokenizer(text.lower(), add_special_tokens=False)["input_ids"]
    )


def lowercase_facts(facts: Sequence[Fact]) -> tuple[list[Fact], int]:
    """LAMA's ``--lowercase`` for uncased models: objects lower-cased (subjects need not be: the tokenizer
    folds them, and resolution keeps their spelling); pairs of a relation that then coincide scored once.
    Returns the facts and how many coincided."""
    seen: set[tuple[str, str, str]] = set()
    out = []
    for fact in facts:
        key = (fact.relation, fact.subject.lower(), fact.object.lower())
        if key not in seen:
            seen.add(key)
            out.append(replace(fact, object=key[2]))
    return out, len(facts) - len(out)


def common_words(
    cased_path: str | os.PathLike[str], lowercased_path: str | os.PathLike[str] | None, uncased: bool
) -> list[str]:
    """The candidate words: the cased common vocabulary, or for an uncased model LAMA's lower-cased one
    (``lowercased_path``), derived from the cased file (lower-cased, first spelling kept) when not given."""
    if not uncased:
        return read_vocab(cased_path)
    if lowercased_path:
        return read_vocab(lowercased_path)
    words = list(dict.fromkeys(word.lower() for word in read_vocab(cased_path)))
    logger.info(
        "LAMA: uncased model and no lower-cased common vocabulary given: derived %d words from %s",
        len(words),
        cased_path,
    )
    return words


def candidate_vocabulary(tokenizer: PreTrainedTokenizerBase, words: Iterable[str]) -> dict[str, int]:
    """Word -> token id for the words the model can predict as one token (rule in the module docstring)."""
    out: dict[str, int] = {}
    for word in words:
        ids = tokenizer(" " + word, add_special_tokens=False)["input_ids"]
        if len(ids) == 1 and ids[0] != tokenizer.unk_token_id:
            out[word] = ids[0]
    return out


def fill_template(template: str, subject: str, mask_token: str) -> tuple[str, int, int]:
    """The prompt, and the character span of the subject in it (where the entity slot goes)."""
    parts = re.split(r"(\[X\]|\[Y\])", template)
    text, span = "", (0, 0)
    for part in parts:
        if part == "[X]":
            span = (len(text), len(text) + len(subject))
            text += subject
        else:
            text += mask_token if part == "[Y]" else part
    return text, span[0], span[1]


def resolve_subjects(facts: Sequence[Fact], task_entities_path: str | os.PathLike[str]) -> list[str | None]:
    """Entity id of each fact's subject (see :func:`resolve_entities`)."""
    return resolve_entities([(f.subject, f.subject_qid) for f in facts], task_entities_path)


def _p_at_1(correct: int, total: int) -> float | None:
    return correct / total if total else None


@torch.inference_mode()
def _predict(
    probe: _Probe,
    table: EntityTable | None,
    candidate_ids: torch.Tensor,
    norm: float | None,
    batch_size: int,
    max_length: int,
) -> tuple[list[int | None], list[bool]]:
    """Argmax candidate id per fact (None when truncation removed the mask) and whether an entity was injected."""
    model, tokenizer, facts, templates, entity_ids = (
        probe.model,
        probe.tokenizer,
        probe.facts,
        probe.templates,
        probe.entity_ids,
    )
    predictions: list[int | None] = []
    injected: list[bool] = []
    for lo in progress(range(0, len(facts), batch_size), "LAMA", unit="batches"):
        texts, mentions = [], []
        for fact, entity_id in zip(facts[lo : lo + batch_size], entity_ids[lo : lo + batch_size]):
            text, start, end = fill_template(templates[fact.relation], fact.subject, tokenizer.mask_token)
            texts.append(text)
            mentions.append([(start, end, entity_id)] if table is not None and entity_id else [])
        batch = inject(
            model, tokenizer, texts, mentions, table, norm=norm, max_length=max_length, missing=probe.missing
        )
        logits = forward_mlm(model, batch.inputs_embeds, batch.attention_mask, batch.input_ids)
        is_mask = batch.input_ids == tokenizer.mask_token_id
        if (is_mask.sum(dim=1) > 1).any():
            raise ValueError("a LAMA prompt holds more than one mask token: check the subject labels and templates")
        rows, cols = is_mask.nonzero(as_tuple=True)
        best = logits[rows, cols][:, candidate_ids].float().argmax(dim=-1)
        row_best = dict(zip(rows.tolist(), candidate_ids[best].tolist()))
        predictions += [row_best.get(b) for b in range(len(texts))]
        injected += [bool(p) for p in batch.entity_positions]
    return predictions, injected


@dataclass
class _Probe:
    """What a LAMA evaluation needs that depends neither on the variant nor on L: built once, scored many times."""

    model_name_or_path: str
    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    templates: dict[str, str]
    facts: list[Fact]  # kept: object is a candidate
    dropped: Counter  # relation -> facts dropped because the object is not a candidate
    candidates: dict[str, int]
    n_read: int
    read_counts: FactCounts
    lowercased: bool  # an uncased model: lower-cased objects and vocabulary, as LAMA's --lowercase
    missing: str  # what a subject without a vector becomes (pelt.encoding.injection.MISSING)
    uhn_dropped: set[str] | None  # uuids LAMA-UHN removes; None: no LAMA-UHN scores
    table_path: str | None
    table: EntityTable | None
    entity_ids: list[str | None]
    frequencies: list[int]


@dataclass(frozen=True)
class LamaFiles:
    """A LAMA run's data: the fact files, the relation templates, the candidate vocabulary (and its
    lowercased form for an uncased model, as LAMA's ``--lowercase``), and ``uhn``, the fact ids
    LAMA-UHN keeps (:func:`pelt.tasks.lama.uhn.build_uhn`), to score LAMA-UHN beside LAMA."""

    facts: Sequence[str]
    relations: str
    common_vocab: str
    common_vocab_lowercased: str | None = None
    uhn: str | None = None

    @classmethod
    def of_job(cls, inputs: Any) -> LamaFiles:
        """The files a LAMA job's named inputs hold (``snakemake.input``; ``uhn`` where the job has it)."""
        return cls(
            list(inputs.facts),
            inputs.relations,
            inputs.common_vocab,
            inputs.get("common_vocab_lowercased"),
            inputs.get("uhn"),
        )


def _prepare(model_name_or_path: str, files: LamaFiles, tables: TableInputs, missing: str) -> _Probe:
    """Read facts and templates, load the model, pick candidates, resolve subjects (see the module docstring)."""
    relations_path, common_vocab_path = files.relations, files.common_vocab
    templates = load_templates(relations_path)
    all_facts, read_counts = load_facts(list(files.facts))
    unknown = sorted({f.relation for f in all_facts} - set(templates))
    if unknown:
        raise ValueError(f"no template for relations {unknown} in {relations_path}")

    model, tokenizer = load_masked_lm(model_name_or_path)
    uncased = is_uncased(tokenizer)
    if uncased:
        all_facts, merged = lowercase_facts(all_facts)
        read_counts = replace(read_counts, duplicates=read_counts.duplicates + merged)
    candidates = candidate_vocabulary(
        tokenizer, common_words(common_vocab_path, files.common_vocab_lowercased, uncased)
    )
    if not candidates:
        raise ValueError(f"no word of {common_vocab_path} is a single token of {model_name_or_path}")
    kept = [f for f in all_facts if f.object in candidates]
    dropped = Counter(f.relation for f in all_facts if f.object not in candidates)
    logger.info(
        "LAMA: %d candidates; %d facts kept, %d dropped (object not a candidate)",
        len(candidates),
        len(kept),
        sum(dropped.values()),
    )

    table = EntityTable.open(tables.table) if tables.table else None
    entity_ids: list[str | None] = [None] * len(kept)
    frequencies = [0] * len(kept)
    if table is not None:
        entity_ids = resolve_subjects(kept, tables.task_entities)
        known = sorted({e for e in entity_ids if e})
        freq = dict(zip(known, table.counts(known, missing="zero")[1].tolist()))
        frequencies = [freq.get(e, 0) if e else 0 for e in entity_ids]
    return _Probe(
        model_name_or_path=model_name_or_path,
        model=model,
        tokenizer=tokenizer,
        templates=templates,
        facts=kept,
        dropped=dropped,
        candidates=candidates,
        n_read=len(all_facts) + read_counts.malformed + read_counts.duplicates,
        read_counts=read_counts,
        lowercased=uncased,
        missing=missing,
        uhn_dropped=read_uhn(files.uhn) if files.uhn else None,
        table_path=tables.table,
        table=table,
        entity_ids=entity_ids,
        frequencies=frequencies,
    )


def _score(
    probe: _Probe, variant: str, norm: float | None, batch_size: int, max_length: int, predictions_out: str | None
) -> dict:
    """The result dict of one evaluation at L = ``norm`` (None for the baseline), per-fact
    predictions written to ``predictions_out`` unless None."""
    table = probe.table
    candidate_ids = torch.tensor(sorted(set(probe.candidates.values())), device=probe.model.device)
    predicted, injected = _predict(
        probe, table if variant != "baseline" else None, candidate_ids, norm, batch_size, max_length
    )
    records = _records(probe, predicted, injected)
    if predictions_out is not None:
        with open(predictions_out, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    n_truncated = sum(p is None for p in predicted)
    if n_truncated:
        logger.warning("LAMA: %d prompts lost their mask to max_length %d and were skipped", n_truncated, max_length)
    per_relation = _per_relation(records, probe.dropped)
    scored = [s["p_at_1"] for s in per_relation.values() if s["p_at_1"] is not None]
    n_eval = sum(s["facts"] for s in per_relation.values())
    return {
        "task": "lama",
        "model": probe.model_name_or_path,
        "variant": variant,
        "norm": norm,
        "table": probe.table_path,
        "lowercased": probe.lowercased,
        "missing": probe.missing,
        "macro_p_at_1": sum(scored) / len(scored) if scored else None,
        "micro_p_at_1": _p_at_1(sum(s["correct"] for s in per_relation.values()), n_eval),
        "benchmarks": _benchmark_scores(records),
        "per_relation": dict(sorted(per_relation.items())),
        "buckets": _buckets(records) if table is not None else None,
        "counts": _counts(probe, records, n_eval, n_truncated),
    }


def _records(probe: _Probe, predicted: Sequence[int | None], injected: Sequence[bool]) -> list[dict]:
    """One record per scored fact (a prompt that lost its mask is not scored): what the
    predictions file holds and every score is computed from."""
    names: dict[int, str] = {}
    for word, token_id in probe.candidates.items():
        names.setdefault(token_id, word)
    records = []
    for fact, pred, inj, entity_id, frequency in zip(
        probe.facts, predicted, injected, probe.entity_ids, probe.frequencies
    ):
        if pred is None:
            continue
        records.append(
            {
                **asdict(fact),
                "entity_id": entity_id,
                "frequency": frequency if entity_id else None,
                "bucket": _bucket(fact, entity_id, frequency) if probe.table is not None else None,
                "prediction": names[pred],
                "correct": pred == probe.candidates[fact.object],
                "injected": inj,
                "uhn": None if probe.uhn_dropped is None else fact.uuid not in probe.uhn_dropped,
            }
        )
    return records


def _per_relation(records: Sequence[Mapping], dropped: Mapping[str, int]) -> dict[str, dict]:
    """Facts, correct and injected per relation, with the facts dropped (object not a candidate)."""
    per_relation: dict[str, dict] = {}
    for r in records:
        stats = per_relation.setdefault(r["relation"], {"facts": 0, "correct": 0, "injected": 0})
        stats["facts"] += 1
        stats["correct"] += r["correct"]
        stats["injected"] += r["injected"]
    for relation in sorted(set(dropped) | set(per_relation)):
        stats = per_relation.setdefault(relation, {"facts": 0, "correct": 0, "injected": 0})
        stats["dropped_not_candidate"] = dropped.get(relation, 0)
        stats["p_at_1"] = _p_at_1(stats["correct"], stats["facts"])
    return per_relation


def _buckets(records: Sequence[Mapping]) -> dict[str, dict]:
    """P@1 per subject-frequency bucket: per fact (p_at_1, as the authors' Table 5) and the mean
    over the bucket's relations (ours)."""
    buckets = {}
    for name in [*bucket_names(), UNRESOLVED]:
        members = [r for r in records if r["bucket"] == name]
        macro, n_relations = _relation_mean(members)
        correct = sum(r["correct"] for r in members)
        buckets[name] = {
            "facts": len(members),
            "correct": correct,
            "p_at_1": _p_at_1(correct, len(members)),
            "macro_p_at_1": macro,
            "relations": n_relations,
        }
    return buckets


def _counts(probe: _Probe, records: Sequence[Mapping], n_eval: int, n_truncated: int) -> dict[str, int | None]:
    """Where every fact read went: dropped (malformed, duplicate, object not a candidate, mask cut),
    evaluated, injected or not; and how the subjects resolved."""
    table, entity_ids = probe.table, probe.entity_ids
    n_injected = sum(r["injected"] for r in records)
    return {
        "facts_read": probe.n_read,
        "malformed": probe.read_counts.malformed,
        "duplicates": probe.read_counts.duplicates,
        "not_in_uhn": None if probe.uhn_dropped is None else sum(not r["uhn"] for r in records),
        "dropped_not_candidate": sum(probe.dropped.values()),
        "dropped_truncated": n_truncated,
        "facts_evaluated": n_eval,
        "candidates": len(set(probe.candidates.values())),
        "injected": n_injected,
        "not_injected": n_eval - n_injected,
        "subject_unresolved": sum(e is None for e in entity_ids) if table is not None else None,
        "subject_not_in_table": sum(bool(e) and e not in table for e in entity_ids) if table is not None else None,
    }


def _bucket(fact: Fact, entity_id: str | None, frequency: int) -> str | None:
    """The frequency bucket of a fact (see the module docstring): None for Google-RE."""
    if benchmark_of(fact.relation) != "T-REx":
        return None
    return frequency_bucket(frequency) if entity_id else UNRESOLVED


def benchmark_of(relation: str) -> str:
    """The paper's column a relation counts towards: Google-RE's three relations, or T-REx."""
    return "G-RE" if relation in GOOGLE_RE_TEMPLATES else "T-REx"


def _benchmark_scores(records: Sequence[Mapping]) -> dict[str, dict]:
    """Macro / micro P@1 per column of the paper's Table 4 (G-RE, T-REx, and their LAMA-UHN subsets
    when the records carry ``uhn``), from the per-fact records: one prediction serves both."""
    groups: dict[str, list[Mapping]] = {}
    for r in records:
        name = benchmark_of(r["relation"])
        groups.setdefault(name, []).append(r)
        if r["uhn"]:
            groups.setdefault(f"UHN {name}", []).append(r)
    out = {}
    for name in sorted(groups, key=lambda n: (n.startswith("UHN"), n)):
        macro, relations = _relation_mean(groups[name])
        out[name] = {
            "macro_p_at_1": macro,
            "micro_p_at_1": sum(r["correct"] for r in groups[name]) / len(groups[name]),
            "facts": len(groups[name]),
            "relations": relations,
        }
    return out


def _relation_mean(records: Sequence[Mapping]) -> tuple[float | None, int]:
    """Mean over relations of each relation's P@1 among ``records`` (None without records), and
    the number of relations."""
    by_relation: dict[str, list[bool]] = {}
    for r in records:
        by_relation.setdefault(r["relation"], []).append(r["correct"])
    if not by_relation:
        return None, 0
    return sum(sum(c) / len(c) for c in by_relation.values()) / len(by_relation), len(by_relation)


def run_lama(
    model_name_or_path: str,
    files: LamaFiles,
    out_json: str,
    predictions_out: str,
    *,
    tables: TableInputs = TableInputs(),
    settings: LamaSettings = LamaSettings(),
) -> dict:
    """Evaluate LAMA P@1 of a model, writing the result JSON and per-fact predictions (JSONL); returns the result.

    The variant is ``pelt`` (inject table vectors) or ``baseline`` (plain prompts); it defaults to
    ``pelt`` when a table is given. The controls (:func:`pelt.eval.controls.write_control_table`)
    inject the control table they are given, as ``pelt`` does. A baseline may still be given the
    table and task entities: they then only assign facts to frequency buckets, so that both
    variants are bucketed alike. L is :func:`pelt.eval.variants.resolve_norm`'s. With ``files.uhn``
    the LAMA-UHN scores, on the facts it keeps, stand beside the LAMA ones. An uncased model is
    probed as LAMA's ``--lowercase`` does (:func:`lowercase_facts`, :func:`common_words`).
    ``settings.missing``: what a subject resolved to an entity without a vector becomes
    (:data:`pelt.encoding.injection.MISSING`; the authors' LAMA code uses ``hidden``).
    """
    variant = resolve_variant(tables.variant, tables.table, tables.task_entities, "run_lama", ("pelt", *CONTROLS))
    probe = _prepare(model_name_or_path, files, tables, settings.missing)
    if variant != "baseline":
        probe.table.check_model(probe.model)
    norm = None if variant == "baseline" else resolve_norm(tables.norm, tables.norm_sweep, default_norm(probe.model))
    result = _score(probe, variant, norm, settings.batch_size, settings.max_length, predictions_out)
    result["model_training"] = _training_summary(model_name_or_path)
    with open(out_json, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=2)
    logger.info(
        "LAMA %s %s: macro P@1 %s over %d facts",
        model_name_or_path,
        variant,
        result["macro_p_at_1"],
        result["counts"]["facts_evaluated"],
    )
    return result


def _training_summary(model_name_or_path: str) -> dict | None:
    """How a model that pelt trained (the demo model) was trained: its ``training.json``, else None."""
    path = Path(model_name_or_path) / "training.json"
    if not path.is_file():
        return None
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def choose_norm(scores: Mapping[float, float | None]) -> float:
    """The L with the best macro P@1; ties go to the smallest L (the paper reports one L per model)."""
    scored = {norm: p for norm, p in scores.items() if p is not None}
    if not scored:
        raise ValueError("no L was scored: no fact survived candidate filtering")
    return min(scored, key=lambda norm: (-scored[norm], norm))


def _bucket_p_at_1(result: dict) -> dict[str, float | None]:
    """P@1 per fact in each subject-frequency bucket of a scored result: what L trades between
    rare subjects (the table's gain) and frequent ones (what it may cost)."""
    return {bucket: scored["p_at_1"] for bucket, scored in result["buckets"].items()}


def sweep_norm(
    model_name_or_path: str,
    files: LamaFiles,
    out_json: str,
    *,
    tables: TableInputs,
    norms: Iterable[float] = range(1, 11),
    settings: LamaSettings = LamaSettings(),
) -> dict:
    """LAMA P@1 of the pelt variant for each L in ``norms`` (paper: 1..10), and the chosen L; writes ``out_json``.

    The model, candidates and subject resolution are prepared once and only the scoring is
    repeated per L, so a sweep costs one model load.  The baseline (which does not depend on L) is
    scored once as the reference.  The chosen L is :func:`choose_norm` of the macro P@1; it is what
    the fine-tuning tasks use unless the config overrides it. Each L's P@1 per frequency bucket
    is kept beside it (the summary's second table).
    """
    norms = [float(n) for n in norms]
    if not norms or any(n <= 0 for n in norms):
        raise ValueError(f"sweep_norm: norms must be positive, got {norms}")
    probe = _prepare(model_name_or_path, replace(files, uhn=None), tables, settings.missing)
    probe.table.check_model(probe.model)
    batch_size, max_length = settings.batch_size, settings.max_length
    baseline = _score(probe, "baseline", None, batch_size, max_length, None)
    per_norm = []
    for norm in progress(norms, "LAMA norm sweep", unit="norms"):
        result = _score(probe, "pelt", norm, batch_size, max_length, None)
        per_norm.append(
            {
                "norm": norm,
                "macro_p_at_1": result["macro_p_at_1"],
                "micro_p_at_1": result["micro_p_at_1"],
                "facts_evaluated": result["counts"]["facts_evaluated"],
                "injected": result["counts"]["injected"],
                "buckets": _bucket_p_at_1(result),
            }
        )
    chosen = choose_norm({r["norm"]: r["macro_p_at_1"] for r in per_norm})
    sweep = {
        "task": NORM_SWEEP_TASK,
        "model": model_name_or_path,
        "table": tables.table,
        "table_norm": probe.table.norm,
        "baseline": {
            "macro_p_at_1": baseline["macro_p_at_1"],
            "micro_p_at_1": baseline["micro_p_at_1"],
            "facts_evaluated": baseline["counts"]["facts_evaluated"],
            "buckets": _bucket_p_at_1(baseline),
        },
        "norms": per_norm,
        "chosen_norm": chosen,
        "counts": {
            k: baseline["counts"][k]
            for k in (
                "facts_read",
                "malformed",
                "dropped_not_candidate",
                "candidates",
                "subject_unresolved",
                "subject_not_in_table",
            )
        },
    }
    with open(out_json, "w", encoding="utf-8") as fh:
        json.dump(sweep, fh, indent=2)
    logger.info("LAMA norm sweep %s: chosen L = %g", model_name_or_path, chosen)
    return sweep
