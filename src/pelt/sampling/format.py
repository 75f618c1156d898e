"""The sampling stage's output format: ``sentences/`` (one row per chosen mention) and
``frequencies/`` (mentions per entity), Parquet folders that Spark writes (:mod:`pelt.sampling.sample`)
and encoding reads with pyarrow; their columns are named here once.
"""

from __future__ import annotations

import logging

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

logger = logging.getLogger(__name__)

# Column -> Spark SQL type, in file order: what encoding reads of a sample.
SAMPLE_TYPES = {"entity_id": "string", "sentence": "string", "start": "int", "end": "int", "doc_id": "string"}
# Written after them: the mention's sentence in its document, so that a row names its mention whole
# (doc_id, sent_idx, start, end) and its rank key can be computed again (a merged domain's sample,
# pelt.sampling.merge, ranks its corpora's rows by the keys their sampling gave them).
MENTION_TYPES = {"sent_idx": "int"}
FREQUENCY_TYPES = {"entity_id": "string", "frequency": "long"}
SAMPLE_COLUMNS = tuple(SAMPLE_TYPES)
FREQUENCY_COLUMNS = tuple(FREQUENCY_TYPES)
# What a merged domain's table metadata counts per corpus under ``coverage``, beside its language
# (pelt.sampling.merge writes them, the report's per-language table reads them).
COVERAGE_COUNTS = ("entities", "sentences", "entities_without_qid", "sentences_without_qid")


def open_samples(path: str) -> ds.Dataset:
    """The samples of a domain, checked for the columns encoding reads."""
    dataset = ds.dataset(path, format="parquet")
    missing = [c for c in SAMPLE_COLUMNS if c not in dataset.schema.names]
    if missing:
        raise ValueError(f"samples {path} lack columns {missing} (have {dataset.schema.names})")
    return dataset


def read_frequencies(path: str, ids: list[str], fallback: np.ndarray) -> np.ndarray:
    """Mentions before sampling per entity; entities absent from the file fall back to their sample size."""
    table = ds.dataset(path, format="parquet").to_table(columns=list(FREQUENCY_COLUMNS))
    index = pc.index_in(pa.array(ids, table.schema.field("entity_id").type), value_set=table.column("entity_id"))
    found = index.is_valid().to_numpy(zero_copy_only=False)
    freq = fallback.copy()
    freq[found] = table.column("frequency").to_numpy()[index.to_numpy(zero_copy_only=False)[found].astype(np.int64)]
    if (~found).any():
        logger.warning("%d entities have no frequency in %s; using their sample size", int((~found).sum()), path)
    return freq
