"""Notebooks 05-06: how attention learns, and a tiny language model.

* ``backward`` - the backward passes of softmax and attention, the gradient check (notebook 05)
* ``optim`` - ``SGD`` and ``Adam`` (notebook 05)
* ``toy_tasks`` - one attention layer on fixed embeddings, its tasks and its ``Trainer`` (notebook 05)
* ``layers`` - the rest of a Transformer block: embedding, layer norm, GELU, MLP, cross-entropy (notebook 06)
* ``tiny_lm`` - the word-level decoder-only language model (notebook 06)
* ``corpus``, ``lm_training`` - the nursery rhymes as tokens, and training the model on them (notebook 06)
"""
