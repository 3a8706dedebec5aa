"""Notebook 05, *How attention learns*.

A one-layer attention model that learns small sequence tasks, trained with the hand-written backward pass.

The model (rows are tokens):

    X = E[tokens] + P                      (batch, n, d_model)   fixed random embeddings
    Y, A = multi_head_attention(X, X, p)   (batch, n, d_model), (batch, h, n, n)
    logits = Y @ W_u                       (batch, n, n_classes)

with a cross-entropy loss on the positions that have a target. ``E`` (one row per word) and ``P``
(one row per position) are fixed; ``W_q``, ``W_k``, ``W_v``, ``W_o`` and the read-out ``W_u`` are
learned. There is no residual connection: whatever a position outputs, its attention had to fetch.

Tasks (``TASKS``), on sequences of ``n = 6`` words from a vocabulary of 8:

* ``reverse``: position i outputs the word at position n-1-i. The right attention is known in
  advance: query i must look at key n-1-i (the anti-diagonal).
* ``pair``: position i outputs the pair (word at i, word at n-1-i) as one of 64 classes. It needs
  two keys per query at once.
* ``rotate``: position i outputs the word at position i+1, the last one the word at 0.
* ``lookup``: positions 0..4 hold five different words, position 5 repeats one of the first four;
  the last position must output the word that *follows* the earlier copy of it. Attention would
  have to find key p+1 from the word at key p, which key p+1 does not contain: one layer of
  attention cannot do it, with one head or several.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import NonFiniteError, ParameterError
from ..i18n import N_, _
from ..mechanism.multi_head_attention import MultiHeadParams, init_multi_head, multi_head_forward
from .backward import multi_head_backward
from .layers import IGNORE, check_targets, cross_entropy
from .optim import SGD, Adam, check_learning_rate

__all__ = ["WORDS", "Task", "TASKS", "ToyConfig", "TinyAttentionModel", "init_model", "model_from_params",
           "Trainer"]

N_TOKENS, VOCAB, D_MODEL = 6, 8, 16
WORDS = ("ant", "bee", "cat", "dog", "eel", "fox", "gnu", "owl")  # names of the 8 words, for labels


@dataclass(frozen=True)
class Task:
    """A sequence task: ``make(rng, batch) -> (tokens, targets)``, both int, shape (batch, n).

    ``pattern`` is the (n, n) attention the task needs (1 where query i must look), or None.
    """

    name: str
    n_classes: int
    make: Callable[[np.random.Generator, int], tuple[np.ndarray, np.ndarray]]
    pattern: np.ndarray | None
    description: str


def _reverse(rng, batch):
    tokens = rng.integers(0, VOCAB, (batch, N_TOKENS))  # (batch, n)
    return tokens, tokens[:, ::-1].copy()  # target i = word at n-1-i


def _pair(rng, batch):
    tokens = rng.integers(0, VOCAB, (batch, N_TOKENS))
    return tokens, tokens * VOCAB + tokens[:, ::-1]  # class = (word at i) * 8 + (word at n-1-i)


def _rotate(rng, batch):
    tokens = rng.integers(0, VOCAB, (batch, N_TOKENS))
    return tokens, np.roll(tokens, -1, axis=1)  # target i = word at i+1 (the last: word 0)


def _lookup(rng, batch):
    memory = np.argsort(rng.random((batch, VOCAB)), axis=1)[:, : N_TOKENS - 1]  # 5 different words
    p = rng.integers(0, N_TOKENS - 2, batch)  # the repeated word's first position, 0..3
    rows = np.arange(batch)
    tokens = np.concatenate([memory, memory[rows, p][:, None]], axis=1)  # (batch, n)
    targets = np.full((batch, N_TOKENS), IGNORE)
    targets[:, -1] = memory[rows, p + 1]  # the word after the earlier copy
    return tokens, targets


_ANTI = np.fliplr(np.eye(N_TOKENS))
TASKS = {
    "reverse": Task("reverse", VOCAB, _reverse, _ANTI,
                    N_("position i outputs the word at position n-1-i")),
    "pair": Task("pair", VOCAB * VOCAB, _pair, np.maximum(np.eye(N_TOKENS), _ANTI),
                 N_("position i outputs (word at i, word at n-1-i)")),
    "rotate": Task("rotate", VOCAB, _rotate, np.roll(np.eye(N_TOKENS), 1, axis=1),
                   N_("position i outputs the word at position i+1 (the last: the word at 0)")),
    "lookup": Task("lookup", VOCAB, _lookup, None,
                   N_("the last word appeared before; output the word that followed it")),
}


def _task(task) -> Task:
    if isinstance(task, Task):
        return task
    if task not in TASKS:
        raise ParameterError(_("unknown task {task!r}; choose one of {sorted_TASKS}").format(task=task, sorted_TASKS=sorted(TASKS)))
    return TASKS[task]


@dataclass(frozen=True)
class ToyConfig:
    """Sizes and switches of a :class:`TinyAttentionModel` (what :func:`init_model` was given)."""

    task: str = "reverse"
    n_heads: int = 1
    d_k: int | None = None
    scaled: bool = True
    seed: int = 0


@dataclass
class TinyAttentionModel:
    """One multi-head attention layer and a linear read-out, on fixed random embeddings.

    Attributes
    ----------
    E : ndarray, shape (vocab, d_model)
        Word embeddings (fixed).
    P : ndarray, shape (n, d_model)
        Position embeddings (fixed).
    params : MultiHeadParams
        ``W_q``, ``W_k`` (h, d_model, d_k), ``W_v`` (h, d_model, d_v), ``W_o`` (h*d_v, d_model).
    W_u : ndarray, shape (d_model, n_classes)
        The read-out.
    scaled : bool
        Divide the scores by sqrt(d_k) (True, the Transformer's choice) or not.
    config : ToyConfig or None
        What :func:`init_model` was given; with :meth:`as_params` it is what ``save_params`` writes
        (:mod:`attention_kit.learn.params`), and :func:`model_from_params` reads it back.
    """

    E: np.ndarray
    P: np.ndarray
    params: MultiHeadParams
    W_u: np.ndarray
    scaled: bool = True
    config: ToyConfig | None = None

    def as_params(self) -> dict[str, np.ndarray]:
        """Every array of the model in the course's one convention, a flat dict ``{name: ndarray}``."""
        return {"E": self.E, "P": self.P, **{f"attn.{k}": v for k, v in self.trainables().items() if k != "W_u"},
                "W_u": self.W_u}

    def embed(self, tokens) -> np.ndarray:
        return self.E[tokens] + self.P  # (batch, n, d_model)

    def forward(self, tokens):
        """``(logits (batch, n, C), weights (batch, h, n, n), cache)``."""
        X = self.embed(tokens)  # the model's own finite embeddings: no check needed
        Y, weights, cache = multi_head_forward.unchecked(X, X, self.params, scale=None if self.scaled else 1.0)
        return Y @ self.W_u, weights, cache

    def loss_and_grads(self, tokens, targets):
        """The loss on a batch and the gradient of every trainable array (same names as ``trainables``)."""
        logits, _attn, cache = self.forward(tokens)
        if not np.isfinite(logits).all():
            raise NonFiniteError(_("the model's outputs overflowed (inf or NaN): training has diverged. "
                                 "Lower the learning rate and start again from fresh weights"))
        loss, dlogits = cross_entropy.unchecked(logits, check_targets(targets, logits.shape))
        Y = cache.concat @ self.params.W_o  # (batch, n, d_model): the layer's output again
        dW_u = Y.reshape(-1, Y.shape[-1]).T @ dlogits.reshape(-1, dlogits.shape[-1])  # (d_model, C)
        _dX, _dmask, g = multi_head_backward.unchecked(cache, dlogits @ self.W_u.T)  # dL/dY: (batch, n, d_model)
        return loss, {"W_q": g.W_q, "W_k": g.W_k, "W_v": g.W_v, "W_o": g.W_o, "W_u": dW_u}

    def trainables(self) -> dict:
        p = self.params
        return {"W_q": p.W_q, "W_k": p.W_k, "W_v": p.W_v, "W_o": p.W_o, "W_u": self.W_u}

    def accuracy(self, tokens, targets) -> float:
        """Fraction of target positions whose largest logit is the right class."""
        logits, _, _ = self.forward(tokens)
        has = targets != IGNORE
        return float(np.mean(logits.argmax(axis=-1)[has] == targets[has]))


def init_model(task="reverse", *, n_heads: int = 1, d_k: int | None = None, scaled: bool = True,
               seed: int = 0) -> TinyAttentionModel:
    """A fresh model for ``task``: embeddings and weights drawn from ``default_rng(seed)``.

    The embeddings have entries of variance 1/2 each, so a row of ``X = E[w] + P[i]`` has unit
    variance per entry. ``d_k`` defaults to ``d_model / n_heads``; ``d_v`` is always ``d_model / n_heads``.
    """
    task = _task(task)
    if n_heads not in (1, 2, 4, 8, 16):
        raise ParameterError(_("n_heads must divide d_model = {d_model}: choose 1, 2, 4, 8 or 16, got {n_heads!r}").format(d_model=D_MODEL, n_heads=n_heads))
    rng = np.random.default_rng(seed)
    E = rng.normal(0, np.sqrt(0.5), (VOCAB, D_MODEL))
    P = rng.normal(0, np.sqrt(0.5), (N_TOKENS, D_MODEL))
    params = init_multi_head(D_MODEL, n_heads, rng=rng, d_k=d_k or D_MODEL // n_heads, d_v=D_MODEL // n_heads)
    W_u = rng.normal(0, 1 / np.sqrt(D_MODEL), (D_MODEL, task.n_classes))
    config = ToyConfig(task.name, n_heads, d_k, bool(scaled), seed)
    return TinyAttentionModel(E, P, params, W_u, bool(scaled), config)


def model_from_params(params: dict, config: ToyConfig) -> TinyAttentionModel:
    """The model whose :meth:`~TinyAttentionModel.as_params` is ``params`` (e.g. from ``load_params``)."""
    attn = MultiHeadParams(**{w: params[f"attn.{w}"] for w in ("W_q", "W_k", "W_v", "W_o")})
    return TinyAttentionModel(params["E"], params["P"], attn, params["W_u"], config.scaled, config)


def _codes(tokens: np.ndarray) -> np.ndarray:
    return tokens @ (VOCAB ** np.arange(tokens.shape[1]))  # one integer per sequence


class Trainer:
    """Trains a ``TinyAttentionModel`` on a task, keeping the history a plot needs.

    Training batches are fresh random sequences, never one of the held-out sequences. Everything is
    seeded: the same arguments give the same numbers.

    Attributes
    ----------
    model : TinyAttentionModel
    steps : int
        Steps taken so far.
    losses : list of float
        The training loss of every step.
    checkpoints : list of (step, held-out accuracy)
        Recorded every ``eval_every`` steps (and at step 0).
    probe : int ndarray, shape (n,)
        A fixed sequence whose attention weights are drawn: six different words where the task
        allows, so that each query has exactly one right key.
    diverged : str
        Empty, or the message saying that (and when) training diverged; ``reset`` clears it.
    """

    def __init__(self, task="reverse", *, n_heads: int = 1, d_k: int | None = None, scaled: bool = True,
                 optimizer: str = "sgd", lr: float = 0.2, batch: int = 64, n_heldout: int = 500,
                 eval_every: int = 10, seed: int = 0):
        self.task = _task(task)
        if optimizer not in ("sgd", "adam"):
            raise ParameterError(_("optimizer must be 'sgd' (with momentum 0.9) or 'adam', got {optimizer!r}").format(optimizer=optimizer))
        self.config = dict(n_heads=n_heads, d_k=d_k, scaled=scaled, seed=seed)
        self.optimizer_name, self.batch, self.eval_every = optimizer, int(batch), int(eval_every)
        self.lr = lr
        self.heldout = self.task.make(np.random.default_rng(10_000 + seed), n_heldout)
        self._heldout_codes = set(_codes(self.heldout[0]).tolist())
        candidates = self.task.make(np.random.default_rng(20_000 + seed), 64)[0]  # (64, n)
        distinct = [row for row in candidates if len(set(row.tolist())) == len(row)]
        self.probe = (distinct or list(candidates))[0]  # (n,): different words, where the task allows
        self.reset()

    def reset(self) -> None:
        """Fresh weights, optimiser state, data stream and history (the same ones every time)."""
        self.model = init_model(self.task, **self.config)
        self.opt = (SGD(self.lr, momentum=0.9) if self.optimizer_name == "sgd" else Adam(self.lr))
        self.rng = np.random.default_rng(30_000 + self.config["seed"])
        self.steps, self.losses, self.checkpoints = 0, [], []
        self.diverged = ""  # the message, once training has diverged
        self._record()

    def set_lr(self, lr) -> None:
        """Change the learning rate from the next step on (ParameterError if it is not a positive number)."""
        self.lr = self.opt.lr = check_learning_rate(lr)

    def _batch(self):
        tokens, targets = self.task.make(self.rng, self.batch)
        fresh = ~np.isin(_codes(tokens), list(self._heldout_codes))
        return tokens[fresh], targets[fresh]  # (<= batch, n): held-out sequences are dropped

    def step(self, n: int = 1) -> float:
        """Take ``n`` training steps; return the last loss. Raises NonFiniteError when training diverges."""
        if self.diverged:
            raise NonFiniteError(self.diverged)
        loss = float("nan")
        for _step in range(int(n)):
            try:
                with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below
                    loss, grads = self.model.loss_and_grads(*self._batch())
                    self.opt.step(self.model.trainables(), grads)
                    if not all(np.isfinite(w).all() for w in self.model.trainables().values()):
                        raise NonFiniteError(_("the weights overflowed"))
            except NonFiniteError:
                self.diverged = _("training diverged at step {step}: the weights grew until they "
                                  "overflowed. The learning rate {lr:g} is too large for this "
                                  "model; lower it and start again (Reset)").format(step=self.steps + 1, lr=self.lr)
                raise NonFiniteError(self.diverged) from None
            self.steps += 1
            self.losses.append(loss)
            if self.steps % self.eval_every == 0:
                self._record()
        return loss

    def _record(self) -> None:
        self.checkpoints.append((self.steps, self.model.accuracy(*self.heldout)))

    @property
    def heldout_accuracy(self) -> float:
        return self.model.accuracy(*self.heldout)

    def probe_weights(self) -> np.ndarray:
        """The attention weights on the probe sequence, shape (h, n, n)."""
        return self.model.forward(self.probe[None])[1][0]

    def pattern_mass(self) -> float:
        """Mean weight that the held-out queries put on the keys the task's pattern marks (None: no pattern)."""
        if self.task.pattern is None:
            return float("nan")
        _, w, _ = self.model.forward(self.heldout[0])  # (N, h, n, n)
        return float(np.mean(np.sum(w * self.task.pattern, axis=-1)))
