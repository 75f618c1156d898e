"""Linking stage: sentences and entity mentions in the corpus documents.

``sentences`` tokenizes and splits text, ``names`` finds candidate names, ``link`` links anchors,
names and strings to entities (Spark), ``entities`` resolves the entities tasks ask about to the
corpus's ids, and ``evaluation`` measures the linker against held-out anchors.
"""
