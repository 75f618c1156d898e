"""Encoding stage: the masked LM turns each entity's sampled sentences into its table row, and the
same model reads a table back.

``models`` loads a masked LM and knows each family's layers (the output representation at the mask,
the input embeddings); ``host`` prepares a pool of sentences without torch (validate, tokenize, mask,
pack), so that worker processes can feed the device; ``encode`` runs the model and sums each
entity's vectors (the table's rows); ``injection`` puts a table's vectors into the model's input
(``mention ( E )``), for every task; ``demo_model`` trains the demo world's small RoBERTa.

Kept light on purpose: importing the package imports none of its modules, so that ``host``'s workers
never load torch.
"""
