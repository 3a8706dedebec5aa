"""Notebook 06, *A tiny language model*.

Training data and the training loop of the tiny language model.

The rhymes are one stream of word ids. A training example is a window of ``context + 1`` tokens:
the model reads the first ``context`` and must predict, at every position, the token that
follows. Windows start at every offset of the stream; a seeded tenth of the start offsets is
held out, so the held-out loss measures whether the model reads its context wherever a window
starts (the words themselves are all in the training text: the corpus is tiny).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

from ..errors import ParameterError, check_count
from ..i18n import _
from ..learn.corpus import Vocab, load_rhymes, tokenize
from ..learn.layers import cross_entropy
from ..learn.optim import Adam
from .tiny_lm import TinyLMConfig, lm_forward, lm_loss_and_grads

__all__ = ["rhyme_stream", "LMData", "make_lm_data", "evaluate", "train_lm"]


def rhyme_stream() -> tuple[list[str], Vocab]:
    """All rhymes as one list of tokens (each line ends with ``/``), and their vocabulary."""
    tokens: list[str] = []
    for rhyme in load_rhymes():
        tokens += tokenize(rhyme) + ["/"]
    return tokens, Vocab(tokens)


@dataclass
class LMData:
    """Windows of the stream: inputs ``X`` and next tokens ``Y``, shape (n_windows, context)."""

    X_train: np.ndarray
    Y_train: np.ndarray
    X_held: np.ndarray
    Y_held: np.ndarray
    vocab: Vocab = field(repr=False)


def _windows(ids: np.ndarray, context: int) -> np.ndarray:
    starts = np.arange(len(ids) - context)  # every window that fits
    return ids[starts[:, None] + np.arange(context + 1)]  # (n_windows, context + 1)


def make_lm_data(context: int, *, seed: int = 0, held_out: float = 0.1,
                 held_rhyme: int | None = None) -> LMData:
    """Every window of ``context + 1`` tokens, split by start offset into training and held out.

    With ``held_rhyme`` (an index into :func:`~attention_kit.learn.corpus.load_rhymes`), that whole rhyme is
    held out instead: the training windows come from the other rhymes, the held-out windows from it
    alone (``seed`` and ``held_out`` are then unused; the vocabulary is still that of every rhyme).
    """
    tokens, vocab = rhyme_stream()
    if held_rhyme is not None:
        rhymes = [tokenize(r) + ["/"] for r in load_rhymes()]
        if isinstance(held_rhyme, bool) or not isinstance(held_rhyme, (int, np.integer)) \
                or not 0 <= held_rhyme < len(rhymes):
            raise ParameterError(_("held_rhyme must be a rhyme's index, 0 to {len_rhymes_1}; got {held_rhyme!r}").format(len_rhymes_1=len(rhymes) - 1, held_rhyme=held_rhyme))
        rest = vocab.encode([t for k, r in enumerate(rhymes) if k != held_rhyme for t in r])
        train, held = _windows(rest, context), _windows(vocab.encode(rhymes[held_rhyme]), context)
        return LMData(train[:, :-1], train[:, 1:], held[:, :-1], held[:, 1:], vocab)
    ids = vocab.encode(tokens)  # (N,)
    starts = np.arange(len(ids) - context)  # every window that fits
    win = ids[starts[:, None] + np.arange(context + 1)]  # (n_windows, context + 1)
    order = np.random.default_rng(seed).permutation(len(starts))
    k = max(1, int(round(held_out * len(starts))))
    held, train = np.sort(order[:k]), np.sort(order[k:])
    return LMData(win[train, :-1], win[train, 1:], win[held, :-1], win[held, 1:], vocab)


def evaluate(params: dict, config: TinyLMConfig, X, Y, **switches) -> tuple[float, float]:
    """Mean cross-entropy and next-token accuracy (greedy) over windows ``X``, ``Y``."""
    logits, _ = lm_forward(params, config, X, **switches)  # (k, n, V)
    loss, _ = cross_entropy(logits, Y)
    return loss, float((logits.argmax(axis=-1) == Y).mean())


def train_lm(params: dict, config: TinyLMConfig, data: LMData, *, steps: int, batch: int = 32,
             lr: float = 0.01, seed: int = 0, log_every: int = 50, callback=None,
             optimizer: Adam | None = None, **switches) -> list[tuple[int, float, float]]:
    """Adam on random batches of training windows; updates ``params`` in place.

    Every ``log_every`` steps (and at the last) the mean training loss since the last log and the
    held-out loss are recorded as ``(step, train_loss, held_out_loss)`` and passed to
    ``callback(step, train_loss, held_out_loss)`` if given. Returns the list of records.
    """
    check_count(steps, "steps")
    rng = np.random.default_rng(seed)
    opt = optimizer if optimizer is not None else Adam(lr=lr)
    history, running = [], []
    with threadpool_limits(limits=1, user_api="blas"):  # small matrices: threads only cost
        for step in range(1, steps + 1):
            _one_step(params, config, data, rng, batch, opt, running, switches)
            if step % log_every == 0 or step == steps:
                held, _ = evaluate(params, config, data.X_held, data.Y_held, **switches)
                history.append((step, float(np.mean(running)), held))
                running = []
                if callback is not None:
                    callback(*history[-1])
    return history


def _one_step(params, config, data, rng, batch, opt, running, switches) -> None:
    """One Adam step on a random batch of training windows; its loss is appended to ``running``."""
    idx = rng.integers(0, len(data.X_train), size=min(batch, len(data.X_train)))
    loss, grads = lm_loss_and_grads(params, config, data.X_train[idx], data.Y_train[idx], **switches)
    opt.step(params, grads)
    running.append(loss)
