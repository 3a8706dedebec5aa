"""Notebook 09: positions for long texts.

* ``rope`` - rotary position embeddings (Su et al. 2021): queries and keys rotated pair by pair
* ``alibi`` - attention with linear biases (Press et al. 2022): a penalty linear in the distance
* ``extrapolation`` - a task whose answer depends on relative position, trained at one length and
  evaluated at longer ones

The block (:mod:`attention_kit.learn.block`) takes them as ``positions="rope"`` and
``positions="alibi"``; the KV cache that slides (with sink tokens) is
:class:`attention_kit.scale.kvcache.KVCache`.
"""
