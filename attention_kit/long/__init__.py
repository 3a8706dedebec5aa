"""Notebook 09: positions for long texts, the experiments.

* ``streaming`` - a text longer than the window, read through KV caches that slide (with sinks)
* ``extrapolation`` - a task whose answer depends on relative position, trained at one length and
  evaluated at longer ones

RoPE and ALiBi themselves are in :mod:`attention_kit.relative`; the decoder that takes them as
``positions="rope"`` and ``positions="alibi"`` is :mod:`attention_kit.decoder.block`, and the KV
cache that slides (with sink tokens) :class:`attention_kit.scale.kvcache.KVCache`.
"""
