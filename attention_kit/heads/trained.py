"""Notebook 08, *What trained heads do*.

The four models of notebook 08, each a recipe (sizes, task, steps, seed) and the weights trained
from it, shipped in ``attention_kit/data/heads_<name>.npz`` (written by a training script of the
course's repository, not shipped in a student edition):

* ``"induction"``: two attention-only layers of two heads, repeated sequences of a varying period;
* ``"one_layer"``: the same with one layer (it cannot form an induction head);
* ``"fixed_period"``: two layers, every sequence of period 8 (the position shortcut);
* ``"sinks"``: one layer of one head on Bigram-Backcopy (the attention sink).

:func:`train_recipe` trains any of them from its seed (the notebook runs the first steps live and
compares them with the shipped log); :func:`load_trained` reads the shipped weights and their log;
:func:`held_out` is the fixed evaluation set of each task.
"""

from __future__ import annotations

from importlib import resources

import numpy as np

from ..decoder.training import TrainingLog, train_decoder
from ..errors import ParameterError
from ..i18n import _
from ..learn.params import load_params
from .model import AttnOnlyConfig, init_attention_only
from .tasks import bigram_backcopy, repeated_sequences

__all__ = ["RECIPES", "batch_function", "held_out", "train_recipe", "load_trained"]

#: name -> the model's heads per layer, its task, the task's periods, and its training steps.
RECIPES = {
    "induction": {"n_heads": (2, 2), "task": "repeated", "periods": (4, 12), "steps": 800},
    "one_layer": {"n_heads": (2,), "task": "repeated", "periods": (4, 12), "steps": 800},
    "fixed_period": {"n_heads": (2, 2), "task": "repeated", "periods": (8, 8), "steps": 800},
    "sinks": {"n_heads": (1,), "task": "backcopy", "periods": None, "steps": 500},
}
BATCH, LENGTH, VOCAB, LR, SEED, HELD_OUT_SEED = 64, 24, 16, 3e-3, 0, 1000


def _recipe(name: str) -> dict:
    if name not in RECIPES:
        raise ParameterError(_("no model called {name!r}; choose one of {join_RECIPES}").format(name=name, join_RECIPES=', '.join(RECIPES)))
    return RECIPES[name]


def batch_function(name: str, batch: int = BATCH):
    """``rng -> (ids, targets)``: the training batches of model ``name``."""
    r = _recipe(name)
    if r["task"] == "repeated":
        return lambda rng: repeated_sequences(rng, batch, length=LENGTH, vocab=VOCAB, periods=r["periods"])[:2]
    return lambda rng: bigram_backcopy(rng, batch, length=LENGTH)[:2]


def held_out(name: str, n: int = 512):
    """The fixed evaluation set of model ``name``'s task: ``(ids, targets, counts)`` (see :mod:`.tasks`)."""
    r = _recipe(name)
    rng = np.random.default_rng(HELD_OUT_SEED)
    if r["task"] == "repeated":
        return repeated_sequences(rng, n, length=LENGTH, vocab=VOCAB, periods=r["periods"])
    return bigram_backcopy(rng, n, length=LENGTH)


def train_recipe(name: str, *, steps: int | None = None, seed: int = SEED, **train) -> tuple[dict, AttnOnlyConfig, TrainingLog]:
    """Train model ``name`` from its recipe; ``train`` goes to :func:`~attention_kit.decoder.training.train_decoder`."""
    r = _recipe(name)
    config = AttnOnlyConfig(vocab=VOCAB, n_heads=r["n_heads"], max_len=LENGTH)
    params = init_attention_only(config, rng=np.random.default_rng(seed))
    log = train_decoder(params, batch_function(name), steps=r["steps"] if steps is None else steps,
                        lr=LR, seed=seed, positions="learned", **train)
    return params, config, log


def load_trained(name: str) -> tuple[dict, AttnOnlyConfig, dict]:
    """The shipped weights of model ``name``: ``(params, config, meta)``; ``meta["losses"]`` is its log."""
    _recipe(name)
    with resources.as_file(resources.files("attention_kit") / "data" / f"heads_{name}.npz") as path:
        return load_params(path, AttnOnlyConfig)
