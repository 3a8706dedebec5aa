"""Notebook 07: attention at scale.

* ``online`` - the softmax's normaliser in one pass (running maximum and sum)
* ``tiled`` - FlashAttention-style tiled attention that never holds the n x n scores
* ``kvcache`` - the KV cache and its size for real model shapes
* ``grouped_query`` - multi-query and grouped-query attention
* ``sliding_window`` - sliding-window masks and the receptive field of stacked layers

The random-weight decoder that generates with and without a KV cache is
:mod:`attention_kit.decoder.tiny_decoder`.
"""
