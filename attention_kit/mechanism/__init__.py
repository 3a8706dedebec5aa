"""Notebooks 01-04: the attention mechanism itself.

Read in the course's order:

* ``scores`` - every score function of the survey's table, and the ``SCORES`` registry (notebook 01)
* ``alignment`` - ``softmax`` (with masks), soft / hard / local alignment, ``ALIGNMENTS`` (notebook 01)
* ``attention`` - ``attend``, ``scaled_dot_product_attention``, ``self_attention`` (notebooks 01-02)
* ``multi_head_attention`` - heads split, attended and merged (notebook 03)
* ``masks`` - causal, padding and window masks (notebook 04)
* ``positions`` - the sinusoidal positional encoding and its rotations (notebook 04)

Every public name is also ``attention_kit.<name>``.
"""
