"""Notebook 08: what trained heads do - induction heads and attention sinks.

* ``model`` - attention-only decoders (learned positions) on :mod:`attention_kit.decoder.block`
* ``tasks`` - repeated random sequences (induction) and the Bigram-Backcopy task (sinks)
* ``diagnostics`` - previous-token and prefix-matching scores, sink mass, mean-ablation, composition
* ``trained`` - the four models of the notebook: recipes, and the weights shipped in ``data/``
"""
