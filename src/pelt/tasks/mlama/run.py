"""mLAMA probing (Kassner, Dufter and Schütze 2021) with and without an entity table: one language
at a time, probed as LAMA is (:mod:`pelt.tasks.lama.run`) with that language's templates and facts.

What differs from LAMA, as the authors' mLAMA code does (``scripts/batch_eval_KB_completion_mBERT_ranked.py``,
``mlama/evaluation_metrics_ranked.py`` of norakassner/mlama; mLUKE's mLAMA reader builds the same
candidates and masks):

- **candidates** are the objects of the relation in the language (every distinct ``obj_label`` of
  the relation's facts: the authors' ``*_objects/<language>.json``), not a common vocabulary, so no
  fact is dropped for its object;
- **multi-token objects** are ranked, not dropped: for each length k among the candidates' token
  counts, the prompt gets k mask tokens in place of ``[Y]``, and a candidate of k tokens scores the
  mean over its tokens of the log-probability of its i-th token at the i-th mask (one forward pass
  per length, the masks predicted independently). The prediction is the best-scoring candidate;
  P@1 is the share of facts predicted right. A candidate's tokens are those the prompt would hold:
  the object tokenized after the template's text before ``[Y]`` (its leading space kept, as the
  ``Ġ``/``▁`` forms need; a language written without spaces gets none), so a prediction is right
  when its tokens are the object's (spellings a model cannot tell apart, as an uncased one, count as
  one);
- the headline number of a language is the macro average over its relations (the authors'
  ``scripts/eval.py``), the micro average beside it.

With a table (the PELT variant) the subject resolves to an entity of the language's corpus, by QID
(T-REx facts carry ``sub_uri``) and else by name, and becomes ``subject ( E )``, as in LAMA; its
corpus frequency buckets the T-REx facts (LAMA's buckets).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pelt.encoding.injection import inject
from pelt.encoding.models import default_norm, forward_mlm, load_masked_lm
from pelt.eval.controls import CONTROLS
from pelt.eval.settings import TableInputs
from pelt.eval.variants import resolve_norm, resolve_variant
from pelt.logs import progress
from pelt.table import EntityTable
from pelt.tasks.lama.data import Fact, load_facts
from pelt.tasks.lama.run import _bucket, _buckets, _per_relation, _relation_mean, fill_template, resolve_subjects
from pelt.tasks.mlama.data import load_templates
from pelt.tasks.mlama.settings import MlamaSettings

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class MlamaFiles:
    """One language of mLAMA: its fact files and its ``templates.jsonl``."""

    language: str
    facts: Sequence[str]
    templates: str


def object_ids(tokenizer: PreTrainedTokenizerBase, template: str, obj: str) -> list[int]:
    """The token ids of ``obj`` as a prompt of ``template`` holds them in place of ``[Y]`` (module
    docstring): the tokens ``obj`` adds to the template's text before ``[Y]``, or, where the two
    merge across the boundary, ``obj`` tokenized alone with the space the template puts before it."""
    head = template.split("[Y]", 1)[0].replace("[X]", "X")
    context = head.rstrip()
    gap = " " if head != context else ""
    alone = tokenizer(gap + obj, add_special_tokens=False)["input_ids"]
    if not context:
        return alone
    before = tokenizer(context, add_special_tokens=False)["input_ids"]
    joined = tokenizer(context + gap + obj, add_special_tokens=False)["input_ids"]
    if joined[: len(before)] == before and len(joined) > len(before):
        return joined[len(before) :]
    return alone


@dataclass
class _Relation:
    """A relation's candidates: names and token ids, grouped by token count."""

    names: dict[int, list[str]]  # k -> candidates of k tokens
    ids: dict[int, torch.Tensor]  # k -> [n_k, k] token ids
    of: dict[str, tuple[int, ...]]  # candidate -> its token ids


def _candidates(tokenizer: PreTrainedTokenizerBase, template: str, objects: Sequence[str], device) -> _Relation:
    of = {obj: tuple(object_ids(tokenizer, template, obj)) for obj in sorted(set(objects))}
    names: dict[int, list[str]] = {}
    for obj, ids in of.items():
        if ids:
            names.setdefault(len(ids), []).append(obj)
    ids = {k: torch.tensor([of[o] for o in objs], device=device) for k, objs in names.items()}
    return _Relation(names, ids, of)


@dataclass
class _Probe:
    """One language's probe: the model, the facts with a template, each relation's candidates, and
    each fact's subject entity and corpus frequency (None and 0 without a table)."""

    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    facts: list[Fact]
    templates: dict[str, str]
    relations: dict[str, _Relation]
    entity_ids: list[str | None]
    frequencies: list[int]


def _prepare(
    model_name_or_path: str,
    facts: list[Fact],
    templates: dict[str, str],
    tables: TableInputs,
    table: EntityTable | None,
) -> _Probe:
    """Load the model, tokenize each relation's candidates, resolve the subjects through the table's
    task entities."""
    model, tokenizer = load_masked_lm(model_name_or_path)
    objects: dict[str, list[str]] = {}
    for fact in facts:
        objects.setdefault(fact.relation, []).append(fact.object)
    relations = {r: _candidates(tokenizer, templates[r], objs, model.device) for r, objs in objects.items()}
    entity_ids: list[str | None] = [None] * len(facts)
    frequencies = [0] * len(facts)
    if table is not None:
        entity_ids = resolve_subjects(facts, tables.task_entities)
        known = sorted({e for e in entity_ids if e})
        freq = dict(zip(known, table.counts(known, missing="zero")[1].tolist()))
        frequencies = [freq.get(e, 0) if e else 0 for e in entity_ids]
    return _Probe(model, tokenizer, facts, templates, relations, entity_ids, frequencies)


@torch.inference_mode()
def _predict(probe: _Probe, table: EntityTable | None, norm: float | None, settings: MlamaSettings) -> list[str | None]:
    """The best candidate per fact (None when max_length cut a mask off one of its prompts)."""
    tokenizer, facts = probe.tokenizer, probe.facts
    prompts = [(i, k) for i, fact in enumerate(facts) for k in sorted(probe.relations[fact.relation].names)]
    best: dict[int, tuple[float, str]] = {}
    cut: set[int] = set()
    for lo in progress(range(0, len(prompts), settings.batch_size), "mLAMA", unit="batches"):
        chunk = prompts[lo : lo + settings.batch_size]
        texts, mentions = [], []
        for i, k in chunk:
            template = probe.templates[facts[i].relation]
            text, start, end = fill_template(template, facts[i].subject, tokenizer.mask_token * k)
            texts.append(text)
            entity_id = probe.entity_ids[i]
            mentions.append([(start, end, entity_id)] if table is not None and entity_id else [])
        batch = inject(
            probe.model,
            tokenizer,
            texts,
            mentions,
            table,
            norm=norm,
            max_length=settings.max_length,
            missing=settings.missing,
        )
        logits = forward_mlm(probe.model, batch.inputs_embeds, batch.attention_mask, batch.input_ids)
        is_mask = batch.input_ids == tokenizer.mask_token_id
        for row, (i, k) in enumerate(chunk):
            positions = is_mask[row].nonzero(as_tuple=True)[0]
            if len(positions) != k:
                cut.add(i)
                continue
            log_probs = logits[row, positions].float().log_softmax(dim=-1)  # [k, V]
            relation = probe.relations[facts[i].relation]
            scores = log_probs[torch.arange(k, device=log_probs.device), relation.ids[k]].mean(dim=1)
            top = int(scores.argmax())
            if i not in best or float(scores[top]) > best[i][0]:
                best[i] = (float(scores[top]), relation.names[k][top])
    return [None if i in cut or i not in best else best[i][1] for i in range(len(facts))]


def run_mlama(
    model_name_or_path: str,
    files: MlamaFiles,
    out_json: str,
    predictions_out: str,
    *,
    tables: TableInputs = TableInputs(),
    settings: MlamaSettings = MlamaSettings(),
) -> dict:
    """mLAMA P@1 of a model on one language, without (``baseline``) or with (``pelt``, or a control)
    its table, writing the result JSON and the per-fact predictions (JSONL); returns the result.
    Variants, L and the baseline's use of the table (frequency buckets only) are LAMA's
    (:func:`pelt.tasks.lama.run.run_lama`)."""
    variant = resolve_variant(tables.variant, tables.table, tables.task_entities, "run_mlama", ("pelt", *CONTROLS))
    templates, invalid = load_templates(files.templates)
    read, read_counts = load_facts(list(files.facts))
    table = EntityTable.open(tables.table) if tables.table else None
    probe = _prepare(model_name_or_path, [f for f in read if f.relation in templates], templates, tables, table)
    if variant != "baseline":
        table.check_model(probe.model)
    norm = None if variant == "baseline" else resolve_norm(tables.norm, tables.norm_sweep, default_norm(probe.model))
    predicted = _predict(probe, table if variant != "baseline" else None, norm, settings)
    records = _records(probe, predicted, table, injecting=variant != "baseline")
    with open(predictions_out, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    without_template = Counter(f.relation for f in read if f.relation not in templates)
    result = _result(files.language, model_name_or_path, variant, norm, tables.table, settings, records)
    result.update(table_text(table))
    result["counts"] = _counts(read_counts, read, probe, records, without_template, table)
    result["relations_without_template"] = {r: invalid.get(r, "no template") for r in sorted(without_template)}
    with open(out_json, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=2, ensure_ascii=False)
    logger.info(
        "mLAMA %s %s %s: macro P@1 %s over %d facts",
        files.language,
        model_name_or_path,
        variant,
        result["macro_p_at_1"],
        result["counts"]["facts_evaluated"],
    )
    return result


def _records(probe: _Probe, predicted: Sequence[str | None], table: EntityTable | None, injecting: bool) -> list[dict]:
    """One record per scored fact: what the predictions file holds and every score is computed from.
    A prediction is right when its tokens are the object's."""
    records = []
    for fact, pred, entity_id, frequency in zip(probe.facts, predicted, probe.entity_ids, probe.frequencies):
        if pred is None:
            continue
        of = probe.relations[fact.relation].of
        records.append(
            {
                **asdict(fact),
                "entity_id": entity_id,
                "frequency": frequency if entity_id else None,
                "bucket": _bucket(fact, entity_id, frequency) if table is not None else None,
                "prediction": pred,
                "correct": bool(of[fact.object]) and of[pred] == of[fact.object],
                "injected": injecting and entity_id is not None and entity_id in table,
            }
        )
    return records


def table_text(table: EntityTable | None) -> dict:
    """The corpus the table was built from and its languages (its metadata's ``languages`` for a merged
    domain's, else its ``language``), so that the summary shows them beside the task's language: a
    language may be probed with another language's table, or with one of several languages'."""
    if table is None:
        return {"table_corpus": None, "table_languages": []}
    meta = table.metadata
    languages = meta.get("languages") or ([meta["language"]] if meta.get("language") else [])
    return {"table_corpus": meta.get("corpus"), "table_languages": list(languages)}


def _result(language, model, variant, norm, table_path, settings, records) -> dict:
    """The scores of one run: macro and micro P@1, per relation and per frequency bucket."""
    per_relation = _per_relation(records, {})
    macro, n_relations = _relation_mean(records)
    return {
        "task": "mlama",
        "language": language,
        "model": model,
        "variant": variant,
        "norm": norm,
        "table": table_path,
        "missing": settings.missing,
        "macro_p_at_1": macro,
        "micro_p_at_1": sum(r["correct"] for r in records) / len(records) if records else None,
        "relations": n_relations,
        "per_relation": dict(sorted(per_relation.items())),
        "buckets": _buckets(records) if table_path else None,
    }


def _counts(read_counts, read, probe: _Probe, records, without_template, table) -> dict:
    """Where every fact read went, and how the subjects resolved."""
    n_injected = sum(r["injected"] for r in records)
    entity_ids, relations = probe.entity_ids, probe.relations
    return {
        "facts_read": len(read) + read_counts.malformed + read_counts.duplicates,
        "malformed": read_counts.malformed,
        "duplicates": read_counts.duplicates,
        "dropped_no_template": sum(without_template.values()),
        "dropped_truncated": len(probe.facts) - len(records),
        "facts_evaluated": len(records),
        "candidates": sum(len(r.of) for r in relations.values()),
        "multi_token_objects": sum(len(ids) > 1 for r in relations.values() for ids in r.of.values()),
        "injected": n_injected,
        "not_injected": len(records) - n_injected,
        "subject_unresolved": sum(e is None for e in entity_ids) if table is not None else None,
        "subject_not_in_table": sum(bool(e) and e not in table for e in entity_ids) if table is not None else None,
    }
