"""Notebook 09: the two position schemes that act inside attention, on relative positions.

* ``rope`` - rotary position embeddings (Su et al. 2021): queries and keys rotated pair by pair;
  ``rope_rotation`` hands them to the one multi-head forward (``rotation=``)
* ``alibi`` - attention with linear biases (Press et al. 2022): a penalty linear in the distance,
  handed to the multi-head forward as ``bias=``

They use nothing of notebooks 05-08; the decoder (:mod:`attention_kit.decoder.block`) takes them as
``positions="rope"`` and ``positions="alibi"``.
"""
