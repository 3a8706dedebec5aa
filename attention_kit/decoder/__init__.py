"""Notebooks 06-09: the decoder, written once, and the models built from it.

It sits above the pieces it assembles (attention from ``mechanism``, the layers and the backward
passes from ``learn``, the KV cache, grouped-query attention and sliding windows from ``scale``,
RoPE and ALiBi from ``relative``), so none of them imports it.

* ``block`` - the one decoder block and the decoder stacked from it, forward and backward (notebook 06)
* ``tiny_lm`` - the word-level decoder-only language model (notebook 06)
* ``lm_training`` - training it on the nursery rhymes (notebook 06)
* ``tiny_decoder`` - a random-weight causal decoder that generates with and without a KV cache (notebook 07)
* ``training`` - one training loop for any decoder of ``block`` (notebooks 08 and 09)
"""
