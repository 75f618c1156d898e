"""Sampling stage (Spark): the sentences that represent each entity, up to 256 (the paper's).

``sample`` ranks every linked mention by a seeded hash and keeps each entity's first, so that the
sample does not depend on the partitioning; ``format`` is the stage's output, the ``sentences/``
and ``frequencies/`` Parquet folders that encoding reads.
"""
