"""Notebook 08, *What trained heads do*.

Two tasks that make a fresh batch from a numpy Generator, each with what it can and cannot predict.

* **Repeated random sequences** (induction; Olsson et al. 2022): a random segment of ``period``
  distinct tokens, repeated until the sequence is ``length`` long. The first ``period`` tokens
  cannot be predicted; every later one is the token that followed the current token's earlier
  occurrence, "... A B ... A -> B". The period varies from sequence to sequence (``periods=(4,
  12)``), so no position tells the answer; a fixed period (``periods=(8, 8)``) lets a model
  read the answer off the positions instead.
* **Bigram-Backcopy** (Guo et al. 2024, "Active-Dormant Attention Heads"): a first token ``BOS``,
  then tokens drawn from a fixed bigram table, except after a *trigger* token, where the next
  token copies the token before the trigger. Only the triggers need to look back.

Each returns ``(ids, targets, counts)``: inputs (batch, n), next tokens (batch, n), and a boolean
(batch, n) of the positions whose target the task determines (the repeated part; the backcopies).
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError, check_count
from ..i18n import _

__all__ = ["repeated_sequences", "BOS", "TRIGGERS", "bigram_table", "bigram_backcopy", "LETTERS",
           "BACKCOPY_NAMES", "names"]

#: How the notebook writes the tokens of each task: letters for the repeated sequences; ``<s>``
#: (the first token), ``T1`` and ``T2`` (the triggers) and letters for Bigram-Backcopy.
LETTERS = tuple("ABCDEFGHIJKLMNOP")
BACKCOPY_NAMES = ("<s>", "T1", "T2") + tuple("cdefghijklmno")


def names(ids, task: str = "repeated") -> list[str]:
    """The tokens ``ids`` (n,) written as the notebook writes them (``task``: "repeated" or "backcopy")."""
    table = LETTERS if task == "repeated" else BACKCOPY_NAMES
    return [table[int(t)] for t in np.asarray(ids).ravel()]


def _rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ParameterError(_("rng must be a numpy Generator; make one with np.random.default_rng(seed)"))
    return rng


def repeated_sequences(rng, batch: int, *, length: int = 24, vocab: int = 16, periods=(4, 12)):
    """Random segments of distinct tokens repeated to ``length``: the induction task.

    Parameters
    ----------
    rng : numpy.random.Generator
    batch : int
    length : int
        Tokens the model reads (the sequences have ``length + 1`` tokens: inputs and next tokens).
    vocab : int
    periods : (int, int)
        The segment length of each sequence is drawn from ``lo .. hi`` (inclusive).

    Returns
    -------
    ids : int array, shape (batch, length)
    targets : int array, shape (batch, length)
        ``targets[:, i]`` is the token after ``ids[:, i]``.
    repeated : bool array, shape (batch, length)
        True where the target lies in a repeat (position ``i >= period - 1``): predictable by induction.
    """
    rng, batch = _rng(rng), check_count(batch, "batch", example="64")
    length, vocab = check_count(length, "length"), check_count(vocab, "vocab")
    lo, hi = (int(p) for p in periods)
    if not 2 <= lo <= hi <= min(vocab, length):
        raise ParameterError(_("periods must be (lo, hi) with 2 <= lo <= hi <= min(vocab, length) = "
                             "{min_vocab_length}, got {periods!r}; (4, 12) varies it, (8, 8) fixes it").format(min_vocab_length=min(vocab, length), periods=periods))
    period = rng.integers(lo, hi + 1, size=batch)  # (batch,)
    segments = np.argsort(rng.random((batch, vocab)), axis=1)  # (batch, vocab): a random order of the tokens
    pos = np.arange(length + 1)  # (length + 1,)
    seq = np.take_along_axis(segments, pos[None] % period[:, None], axis=1)  # (batch, length + 1)
    repeated = pos[None, 1:] >= period[:, None]  # (batch, length): target index i + 1 >= period
    return seq[:, :-1], seq[:, 1:], repeated


#: The first token of every Bigram-Backcopy sequence, and the two trigger tokens.
BOS = 0
TRIGGERS = (1, 2)


def bigram_table(vocab: int = 16, *, seed: int = 0, concentration: float = 0.5) -> np.ndarray:
    """A fixed random bigram table (vocab, vocab): row a is p(next | a); no row leads to BOS.

    The triggers have a small share of every row (1/20 each): they are rare, as in Guo et al.;
    a small ``concentration`` makes the other rows peaked, so a bigram model predicts them well.
    """
    vocab = check_count(vocab, "vocab", minimum=len(TRIGGERS) + 2)
    rng = np.random.default_rng(seed)
    ordinary = vocab - 1 - len(TRIGGERS)
    table = np.zeros((vocab, vocab))
    table[:, len(TRIGGERS) + 1:] = rng.dirichlet(np.full(ordinary, concentration), size=vocab) * (1 - 0.05 * len(TRIGGERS))
    table[:, list(TRIGGERS)] = 0.05
    return table


def bigram_backcopy(rng, batch: int, *, length: int = 24, table: np.ndarray | None = None):
    """Bigram-Backcopy sequences: ``BOS``, then bigram draws, and after a trigger a copy of the token before it.

    Returns
    -------
    ids : int array, shape (batch, length)
        ``ids[:, 0] == BOS``; ``ids[:, 1]`` is never a trigger.
    targets : int array, shape (batch, length)
    copies : bool array, shape (batch, length)
        True where ``ids[:, i]`` is a trigger (the target is ``ids[:, i - 1]``).
    """
    rng, batch = _rng(rng), check_count(batch, "batch", example="64")
    length = check_count(length, "length", minimum=2)
    table = bigram_table() if table is None else np.asarray(table, dtype=float)
    vocab = table.shape[0]
    cum = np.cumsum(table, axis=1)  # (vocab, vocab): inverse-CDF sampling, row by row
    seq = np.empty((batch, length + 1), dtype=np.int64)
    seq[:, 0] = BOS
    first = table[BOS].copy()
    first[list(TRIGGERS)] = 0
    seq[:, 1] = rng.choice(vocab, size=batch, p=first / first.sum())
    for i in range(2, length + 1):
        drawn = np.minimum((cum[seq[:, i - 1]] < rng.random((batch, 1))).sum(axis=1), vocab - 1)
        is_trigger = np.isin(seq[:, i - 1], TRIGGERS)
        seq[:, i] = np.where(is_trigger, seq[:, i - 2], drawn)
    ids = seq[:, :-1]
    return ids, seq[:, 1:], np.isin(ids, TRIGGERS)
