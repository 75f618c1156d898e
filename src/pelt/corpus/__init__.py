"""Corpus stage: raw corpora into ``documents/`` (text with links) and ``pages/`` Parquet.

``dump`` streams a Wikipedia dump's pages (``bz2_blocks`` splits any bz2 file at its blocks for it),
``wikitext`` turns their markup into plain text with anchors (``templates`` cuts and renders the
templates, ``titles`` says what a title or link target means), ``wikipedia`` and ``s2orc`` are the
Spark jobs of the two corpus kinds, and ``documents`` is the output format they share and later
stages read.
"""
