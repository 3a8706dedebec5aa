"""Notebooks 08 and 09: one training loop for any decoder of :mod:`attention_kit.decoder.block`.

Notebook 06 trains its language model with :func:`~attention_kit.decoder.lm_training.train_lm`, on
windows of the rhymes. From notebook 08 on, models are trained on tasks that make a fresh batch at
every step (repeated random sequences, a bigram task, long-range copies), so the loop takes a
**batch function** instead of a data set::

    def batch(rng):                   # a numpy Generator, seeded by the loop
        ids = ...                     # (batch, n) token ids
        return ids, targets           # targets (batch, n): the next token, -1 where none counts

    log = train_decoder(params, batch, steps=400, lr=3e-3, seed=0, positions="learned")

Each step is one forward through :func:`~attention_kit.decoder.block.decoder_forward` (the keyword
arguments the loop does not know go to it: ``positions=``, ``window=``, ...), the cross-entropy,
:func:`~attention_kit.decoder.block.decoder_backward` and an Adam step, in place on ``params``.
The loop records the loss of every step and, if asked, copies of the parameters along the way
(snapshots: how a mechanism appears during training, without training again).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

from ..errors import ParameterError, check_count
from ..i18n import _
from ..learn.layers import cross_entropy
from ..learn.optim import Adam
from .block import decoder_backward, decoder_forward

__all__ = ["TrainingLog", "decoder_loss_and_grads", "train_decoder"]


@dataclass
class TrainingLog:
    """What :func:`train_decoder` recorded.

    Attributes
    ----------
    losses : ndarray, shape (steps,)
        The training loss of every step (on that step's batch, before its update).
    snapshots : dict
        ``{step: copy of the parameters after that step}`` (step 0: before training).
    """

    losses: np.ndarray
    snapshots: dict = field(default_factory=dict)

    def smoothed(self, width: int = 20) -> np.ndarray:
        """The losses averaged over windows of ``width`` steps, shape (steps // width,)."""
        width = check_count(width, "width", example="20")
        k = len(self.losses) // width
        return self.losses[:k * width].reshape(k, width).mean(axis=1)


def decoder_loss_and_grads(params: dict, ids, targets, **forward) -> tuple[float, dict]:
    """Mean cross-entropy of the next token and the gradient of every parameter.

    ``targets`` (batch, n) holds the next token at each position, ``-1`` where nothing counts;
    ``forward`` goes to :func:`~attention_kit.decoder.block.decoder_forward`.
    """
    logits, saved = decoder_forward(params, ids, **forward)  # (B, n, V)
    loss, dlogits = cross_entropy(logits, targets)
    return loss, decoder_backward(params, saved, dlogits)


def train_decoder(params: dict, batch, *, steps: int, lr: float = 3e-3, seed: int = 0,
                  weight_decay: float = 0.0, snapshot_every: int | None = None, callback=None,
                  callback_every: int = 10, optimizer: Adam | None = None, **forward) -> TrainingLog:
    """Adam on fresh batches from ``batch(rng)``; updates ``params`` in place.

    Parameters
    ----------
    params : dict
        A decoder's parameters (:mod:`attention_kit.decoder.block`'s names).
    batch : callable
        ``batch(rng) -> (ids, targets)``, both int arrays of shape (batch, n); ``rng`` is a numpy
        Generator made from ``seed``, so the same seed gives the same batches.
    steps : int
    lr : float
        Adam's learning rate.
    seed : int
    weight_decay : float
        Decoupled weight decay (AdamW): every weight shrinks by ``lr * weight_decay`` of itself per step.
    snapshot_every : int, optional
        Keep a copy of the parameters every that many steps (and at step 0).
    callback : callable, optional
        ``callback(step, loss)`` every ``callback_every`` steps and at the last (a progress bar).
    optimizer : Adam, optional
        To continue a run with its moments; by default a fresh ``Adam(lr)``.
    **forward
        Passed to :func:`~attention_kit.decoder.block.decoder_forward` (``positions="learned"``, ...).

    Returns
    -------
    TrainingLog
    """
    steps = check_count(steps, "steps", example="400")
    if not callable(batch):
        raise ParameterError(_("batch must be a function rng -> (ids, targets), e.g. "
                             "lambda rng: repeated_sequences(rng, 64)[:2]"))
    if not (isinstance(weight_decay, (int, float)) and 0 <= weight_decay < 1 / lr):
        raise ParameterError(_("weight_decay must be a number >= 0 (and below 1 / lr), got {weight_decay!r}; "
                             "0 switches it off, 0.01 to 0.1 are usual").format(weight_decay=weight_decay))
    if snapshot_every is not None:
        snapshot_every = check_count(snapshot_every, "snapshot_every", example="50")
    rng = np.random.default_rng(seed)
    opt = optimizer if optimizer is not None else Adam(lr=lr)
    losses = np.empty(steps)
    snapshots = {0: {k: v.copy() for k, v in params.items()}} if snapshot_every else {}
    with threadpool_limits(limits=1, user_api="blas"):  # small matrices: threads only cost
        for step in range(1, steps + 1):
            ids, targets = batch(rng)
            losses[step - 1], grads = decoder_loss_and_grads(params, ids, targets, **forward)
            opt.step(params, grads)
            if weight_decay:
                for w in params.values():
                    w *= 1 - opt.lr * weight_decay
            if snapshot_every and step % snapshot_every == 0:
                snapshots[step] = {k: v.copy() for k, v in params.items()}
            if callback is not None and (step % callback_every == 0 or step == steps):
                callback(step, float(losses[step - 1]))
    return TrainingLog(losses, snapshots)
