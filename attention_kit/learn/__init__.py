"""Notebooks 05-06: how attention learns, and the layers of a tiny language model.

* ``backward`` - the backward passes of softmax and attention, the gradient check (notebook 05)
* ``optim`` - ``SGD`` and ``Adam`` (notebook 05)
* ``toy_tasks`` - one attention layer on fixed embeddings, its tasks and its ``Trainer`` (notebook 05)
* ``layers`` - the rest of a Transformer block: embedding, layer norm, GELU, MLP, cross-entropy (notebook 06)
* ``corpus`` - the nursery rhymes as tokens (notebook 06)
* ``params`` - one parameter convention for every model, save and load (notebooks 05-07)

The models assembled from these pieces (the decoder block, the tiny language model) are in
:mod:`attention_kit.decoder`.
"""
