"""Build an entity table from your own sentences, without the workflow: sentences -> ``build_table`` ->
``write_table`` (metadata read from the model) -> ``EntityTable.open``.

The input is JSON lines, one mention each: ``{"entity": "Marie Curie", "sentence": "...", "qid":
"Q7186"}`` with the mention's character span as ``"start"`` / ``"end"``, or, without them, the first
occurrence of ``"mention"`` (default: the entity itself) in the sentence.  ``qid`` and ``aliases``
(a list of other names) are optional; with them the table finds the entity by those too
(``pelt table ids``).  Lines whose mention cannot be placed are an error naming the line.

    python examples/build_a_table.py --model results/models/demo --sentences mine.jsonl \\
        --out my_table/table.parquet
"""

from __future__ import annotations

import argparse
import json
import sys

from pelt.encoding.encode import build_table, table_metadata
from pelt.encoding.models import load_masked_lm
from pelt.table import EntityTable, write_table


def read_mentions(path: str) -> tuple[list[str], list[str], list[tuple[int, int]], dict[str, dict]]:
    """Entity, sentence and span of each line, and each entity's qid and aliases (first line's wins)."""
    entities, sentences, spans, ids = [], [], [], {}
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            entity, sentence = row["entity"], row["sentence"]
            if "start" in row:
                start, end = row["start"], row["end"]
            else:
                start = sentence.find(row.get("mention", entity))
                end = start + len(row.get("mention", entity))
            if not 0 <= start < end <= len(sentence):
                raise ValueError(f"{path}:{lineno}: the mention of {entity!r} is not in the sentence")
            entities.append(entity)
            sentences.append(sentence)
            spans.append((start, end))
            ids.setdefault(entity, {"qid": row.get("qid"), "aliases": row.get("aliases", [])})
    return entities, sentences, spans, ids


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="a masked LM (local folder or hub name)")
    parser.add_argument("--sentences", required=True, help="JSON lines: entity, sentence, start/end or mention")
    parser.add_argument("--out", required=True, help="table.parquet to write")
    parser.add_argument("--max-seq-len", type=int, default=128)
    parser.add_argument("--device", default="auto")
    args = parser.parse_args(argv)

    model, tokenizer = load_masked_lm(args.model, device=args.device)
    entities, sentences, spans, ids = read_mentions(args.sentences)
    entity_ids, sums, counts = build_table(model, tokenizer, entities, sentences, spans, max_seq_len=args.max_seq_len)
    write_table(
        args.out,
        entity_ids,
        sums,
        counts,
        counts,  # frequency: here every mention was encoded
        table_metadata(model, args.model, max_seq_len=args.max_seq_len),
        qids=[ids[e]["qid"] for e in entity_ids],
        aliases=[ids[e]["aliases"] for e in entity_ids],
    )
    table = EntityTable.open(args.out)
    print(f"{table!r}: {len(sentences)} sentences, built for {table.metadata['model']}, default L = {table.norm:g}")
    for entity_id, qid, aliases in table.id_rows():
        print(f"{entity_id}\t{qid or '-'}\t{', '.join(aliases)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
