"""Wikipedia, the corpus kind with pages: a dump's pages to ``documents/`` and ``pages/``.

``dump`` streams a dump's pages (``pages`` reads each ``<page>`` element of the decoded text,
``bz2_blocks`` splits any bz2 file at its blocks for it, ``multistream`` reads the index of a
multistream dump), ``site`` holds a wiki's namespaces, redirect words and link trail (``site_languages``
the built-in languages' facts), ``wikitext`` turns markup into plain text with anchors (``templates`` cuts and
renders the templates, ``titles`` says what a title or link target means), and ``build`` is the
Spark job that runs them over the dump's files or byte ranges.
"""
