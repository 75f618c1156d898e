"""Linking stage: sentences and entity mentions in the corpus documents.

``sentences`` tokenizes and splits text, ``names`` finds candidate names, ``segmentation`` splits
each document and places its anchors and names, ``redirects`` resolves titles through redirects,
``candidates`` prunes the heuristic's names and entities, ``heuristic`` runs the paper's
Algorithm 1, ``link`` links anchors, names and strings to entities (the Spark jobs), ``entities``
resolves the entities tasks ask about to the corpus's ids, written in ``task_entities``' format,
and ``evaluation`` measures the linker against held-out anchors.
"""
