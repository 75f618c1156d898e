"""Corpus stage: raw corpora into ``documents/`` (text with links) and ``pages/`` Parquet.

``dump`` streams a Wikipedia dump's pages, ``wikitext`` turns their markup into plain text with
anchors, ``wikipedia`` and ``s2orc`` are the Spark jobs of the two corpus kinds, and ``documents``
is the output format they share and later stages read.
"""
