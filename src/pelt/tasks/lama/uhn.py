"""LAMA-UHN (Poerner et al. 2020): the LAMA facts a model can guess from the subject's name alone,
removed by a string filter (the object in the name) and a person-name filter (what a model
associates with each part of a person's name); written once per fact set, read by every run.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from collections.abc import Mapping, Sequence

import torch

from pelt.encoding.models import forward_mlm, load_masked_lm
from pelt.logs import progress
from pelt.tasks.lama.data import Fact, load_facts

logger = logging.getLogger(__name__)


# LAMA-UHN's person-name filter (E-BERT): relations whose subject is a person, and what is asked of
# each part of the name ("[X] is a common name in the following <kind>: [MASK] .").
PERSON_NAME_QUERIES = {
    "P19": "city",
    "P20": "city",
    "P27": "country",
    "P103": "language",
    "P1412": "language",
    "place_of_birth": "city",
    "place_of_death": "city",
}
# How many of the filter model's guesses for a part of the name a fact's object may be among: the
# default of the config's `tasks.lama.uhn.top_k` too (tests/unit/test_registry.py compares them).
TOP_K = 3


def object_in_subject(fact: Fact) -> bool:
    """LAMA-UHN's first filter (Poerner et al. 2020): the object is a case-insensitive substring of
    the subject's name (``Apple Watch`` is produced by ``Apple``), so the name alone gives it away."""
    return fact.object.lower() in fact.subject.lower()


def person_name_prompts(fact: Fact, kind: str, mask_token: str) -> list[str]:
    """LAMA-UHN's second filter asks, for each whitespace token of a person's name, which
    ``kind`` (language, country, city) it is a common name in: the model's name associations."""
    return [f"{part} is a common name in the following {kind}: {mask_token} ." for part in fact.subject.split()]


@torch.inference_mode()
def person_name_hits(
    facts: Sequence[Fact],
    model_name_or_path: str,
    queries: Mapping[str, str] = PERSON_NAME_QUERIES,
    top_k: int = TOP_K,
    batch_size: int = 32,
) -> set[str]:
    """The uuids of facts that LAMA-UHN's person-name filter removes.

    A fact of a relation in ``queries`` (relation -> the word asked for) goes when its object is
    among the filter model's ``top_k`` predictions (whole vocabulary, as E-BERT does with
    bert-base-cased) for any part of the subject's name: a correct answer may then come from
    the name ("Jean Marais" is French by his first name), not from knowledge of the person.
    """
    asked = [f for f in facts if f.relation in queries]
    if not asked:
        return set()
    model, tokenizer = load_masked_lm(model_name_or_path)
    prompts = [
        (f.uuid, text) for f in asked for text in person_name_prompts(f, queries[f.relation], tokenizer.mask_token)
    ]
    guesses: dict[str, set[str]] = {}
    for lo in progress(range(0, len(prompts), batch_size), "LAMA-UHN person names", unit="batches"):
        chunk = prompts[lo : lo + batch_size]
        batch = tokenizer([text for _, text in chunk], return_tensors="pt", padding=True).to(model.device)
        logits = forward_mlm(model, None, batch["attention_mask"], batch["input_ids"])
        rows, cols = (batch["input_ids"] == tokenizer.mask_token_id).nonzero(as_tuple=True)
        top = logits[rows, cols].float().topk(top_k, dim=-1).indices.tolist()
        for row, ids in zip(rows.tolist(), top):
            words = {tokenizer.decode([token_id]).strip().lower() for token_id in ids}
            guesses.setdefault(chunk[row][0], set()).update(words)
    return {f.uuid for f in asked if f.object.lower() in guesses.get(f.uuid, set())}


def build_uhn(
    facts: list[str],
    out_json: str,
    *,
    person_model: str | None = None,
    queries: Mapping[str, str] = PERSON_NAME_QUERIES,
    top_k: int = TOP_K,
    batch_size: int = 32,
) -> dict:
    """Which LAMA facts LAMA-UHN removes, and why: written once per fact set, read by every model's run.

    ``person_model`` None applies the string filter only (logged), since the person-name filter
    needs a model's guesses; E-BERT used bert-base-cased.
    """
    all_facts, _ = load_facts(facts)
    dropped = {f.uuid: "object_in_subject" for f in all_facts if object_in_subject(f)}
    if person_model:
        rest = [f for f in all_facts if f.uuid not in dropped]
        dropped.update(
            dict.fromkeys(sorted(person_name_hits(rest, person_model, queries, top_k, batch_size)), "person_name")
        )
    else:
        logger.warning("LAMA-UHN: no person_model configured, the person-name filter is not applied")
    counts = {
        "facts": len(all_facts),
        "kept": len(all_facts) - len(dropped),
        **{f"dropped_{reason}": n for reason, n in sorted(Counter(dropped.values()).items())},
    }
    uhn = {
        "person_model": person_model,
        "queries": dict(queries) if person_model else None,
        "top_k": top_k if person_model else None,
        "counts": counts,
        "dropped": dropped,
    }
    with open(out_json, "w", encoding="utf-8") as fh:
        json.dump(uhn, fh, indent=2)
    logger.info("LAMA-UHN: %s", ", ".join(f"{k} = {v}" for k, v in counts.items()))
    return uhn


def read_uhn(path: str | os.PathLike[str]) -> set[str]:
    """The uuids of the facts LAMA-UHN removes (see :func:`build_uhn`)."""
    with open(path, encoding="utf-8") as fh:
        return set(json.load(fh)["dropped"])
