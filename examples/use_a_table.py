"""Use an entity table in your own code: look an entity up, plug it into the masked LM, compare predictions.

Opens a table built by pelt (``table.parquet``) and the model it was built for, prints what the
table holds for one entity (its counts and E(e) = L * sum / ||sum||), then predicts the word at
``[MASK]`` in ``--text`` twice: from the plain text, and with ``( E(e) )`` inserted after the
entity's mention, which is how PELT gives the model knowledge it lacks.  Works with RoBERTa-, BERT-
and BART-style masked LMs, on CPU or GPU; nothing is downloaded.  ``--entity`` is read as ``pelt table``
reads an entity (its id, QID or alias; ``--ignore-case``), and a wrong input is one line, as there.

    python examples/use_a_table.py --model results/models/demo \\
        --table results/tables/wikipedia/demo/table.parquet \\
        --text "Heireith was born in [MASK] ." --entity "Heireith" --norm 1
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np
import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pelt.cli import EXPECTED_ERRORS, error_line, positive_int, positive_number
from pelt.encoding.injection import Mention, inject
from pelt.encoding.models import forward_mlm, load_masked_lm
from pelt.table import EntityTable
from pelt.table.resolve import resolve

MASK = "[MASK]"  # placeholder in --text for the model's own mask token (<mask> for RoBERTa and BART)


def predict(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    text: str,
    mentions: list[Mention],
    table: EntityTable | None,
    norm: float | None,
    top_k: int,
) -> tuple[list[tuple[str, float]], int]:
    """The ``top_k`` words at the mask with their probabilities, and how many entity slots were filled.

    ``table=None`` runs the same code on the plain text, so the two predictions differ only by the
    injected vectors.
    """
    with torch.inference_mode():
        batch = inject(model, tokenizer, [text], [mentions], table, norm=norm)
        logits = forward_mlm(model, batch.inputs_embeds, batch.attention_mask)
    at_mask = (batch.input_ids[0] == tokenizer.mask_token_id).nonzero().flatten()
    if len(at_mask) != 1:
        raise ValueError(f"expected one mask in the model's input, found {len(at_mask)}: {text!r}")
    probs = logits[0, at_mask[0]].float().softmax(-1)
    top = probs.topk(min(top_k, len(probs)))  # a --top-k past the vocabulary: every word
    words = [tokenizer.decode([int(i)]).strip() for i in top.indices]
    return list(zip(words, top.values.tolist())), batch.n_injected


def main(argv: list[str] | None = None) -> int:
    """Exit status 0, or 1 with one line saying what was wrong (a model or table path, an entity)."""
    args = _parser().parse_args(argv)
    try:
        return run(args)
    except EXPECTED_ERRORS as err:
        print(error_line(err), file=sys.stderr)
        return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="the model the table was built for (a local directory)")
    parser.add_argument(
        "--table", required=True, help="table.parquet, a folder holding one, or a Hugging Face Hub dataset repo id"
    )
    parser.add_argument(
        "--allow-other-weights",
        action="store_true",
        help="use the table with weights other than those it was built with (a fine-tuned model); logged",
    )
    parser.add_argument("--text", required=True, help=f"a sentence with one {MASK} and a mention of --entity")
    parser.add_argument("--entity", required=True, help="the entity: its id (Wikipedia: the page title), QID or alias")
    parser.add_argument("--ignore-case", action="store_true", help="find --entity case-folded")
    parser.add_argument("--mention", help="the entity's words in --text (default: --entity)")
    parser.add_argument("--norm", type=positive_number, help="L, the length of E(e) (default: the table's)")
    parser.add_argument("--top-k", type=positive_int, default=5)
    parser.add_argument("--device", default="auto", help="auto (CUDA if present), cpu, cuda, ...")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def run(args: argparse.Namespace) -> int:
    """The lookup and the two predictions; wrong inputs raise (main says them in one line)."""
    table = EntityTable.load(args.table, allow_other_weights=args.allow_other_weights)
    (entity,) = resolve(table, [args.entity], ignore_case=args.ignore_case)  # KeyError names the closest
    mention = args.mention or args.entity
    if args.text.count(MASK) != 1 or mention not in args.text:
        print(f"error: --text needs one {MASK} and the mention {mention!r}", file=sys.stderr)
        return 1
    model, tokenizer = load_masked_lm(args.model, device=args.device)

    # What the table holds: counts and the unnormalised sum, and E(e) scaled to L.
    vector = table.lookup([entity], norm=args.norm)[0]
    n_sentences, frequency = (int(c[0]) for c in table.counts([entity]))

    text = args.text.replace(MASK, tokenizer.mask_token)
    start = text.index(mention)
    mentions = [(start, start + len(mention), entity)]
    without, _ = predict(model, tokenizer, text, mentions, None, args.norm, args.top_k)
    with_table, n_injected = predict(model, tokenizer, text, mentions, table, args.norm, args.top_k)

    result = {
        "table": {"path": args.table, "entities": len(table), "hidden_size": table.hidden_size, "norm": table.norm},
        "entity": {
            "id": entity,
            "n_sentences": n_sentences,
            "frequency": frequency,
            "vector_norm": float(np.linalg.norm(vector)),
        },
        "text": text,
        "without_table": {"n_injected": 0, "top": without},
        "with_table": {"n_injected": n_injected, "top": with_table},
    }
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{table!r}; built for {table.metadata['model']}, default L = {table.norm:g}")
    print(
        f"{entity}: {n_sentences} sentences encoded, {frequency} mentions in the corpus, "
        f"||E|| = {result['entity']['vector_norm']:.3g}"
    )
    print(f"text: {text}")
    for label, top in (("without table", without), (f"with table ({n_injected} entity slot)", with_table)):
        print(f"{label:>28}: " + ", ".join(f"{word!r} {p:.3f}" for word, p in top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
