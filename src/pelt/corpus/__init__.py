"""Corpus stage: raw corpora into ``documents/`` (text with links) and ``pages/`` Parquet.

One module or package per corpus kind: ``wikipedia`` (dumps: pages, markup, links, redirects) and
``s2orc`` (S2ORC's JSON lines, documents without pages); ``documents`` is the output format they
share and later stages read.
"""
