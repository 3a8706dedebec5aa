"""Notebook 07, *Attention at scale*.

The online softmax: the normaliser of a softmax in one pass, with a running maximum and sum.

A stable softmax needs the row maximum ``m`` before it can sum ``exp(x_j - m)``: two passes over
the scores. The online form (Milakov & Gimelshein, 2018) keeps a running maximum ``m`` and a
running sum ``l = sum_j exp(x_j - m)`` of the scores seen so far. When a new block of scores
raises the maximum to ``m_new``, every old term ``exp(x_j - m_old)`` must become
``exp(x_j - m_new) = exp(x_j - m_old) * exp(m_old - m_new)``: one factor, the same for every old
term, so the old *sum* is rescaled by it exactly:

    m_new = max(m_old, max_j x_j)
    l_new = l_old * exp(m_old - m_new) + sum_j exp(x_j - m_new)

:func:`online_step` is that update (also on a block of rows at once, as tiled attention uses it);
:func:`online_softmax` runs it over the keys in blocks and equals :func:`attention_kit.softmax`;
:func:`online_trace` records ``m`` and ``l`` after every block, for the notebook's step-through.
Masked (blocked) scores are ``-inf``: they add ``exp(-inf) = 0``, and a row with nothing allowed
so far keeps ``m = -inf``, ``l = 0`` (no ``-inf - -inf = NaN`` is ever formed).
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError, check_count, check_mask
from ..i18n import _
from ..mechanism.alignment import check_scores

__all__ = ["online_step", "online_softmax", "online_trace", "check_block"]


def check_block(block, name: str = "block") -> int:
    """A block size: a whole number >= 1 (a block larger than the sequence is simply clipped)."""
    return check_count(block, name, example="64 (it need not divide the sequence length: the last "
                                             "block is shorter)")


def online_step(m, l, x):
    """One update of the running maximum and sum by a new block of scores.

    Parameters
    ----------
    m : ndarray, shape (...,)
        Running maximum of the scores seen so far (``-inf`` before the first score).
    l : ndarray, shape (...,)
        Running sum ``sum_j exp(x_j - m)`` of the scores seen so far (0 before the first).
    x : ndarray, shape (..., b)
        The new block of scores; ``-inf`` marks a blocked key.

    Returns
    -------
    m_new : ndarray, shape (...,)
    l_new : ndarray, shape (...,)
    alpha : ndarray, shape (...,)
        ``exp(m - m_new)``, the factor that rescales everything accumulated against the old maximum
        (the sum here, the partial output in tiled attention). 0 for a row whose first allowed
        score arrives now (there is nothing to rescale), 1 while a row has seen only ``-inf``.
    p : ndarray, shape (..., b)
        ``exp(x - m_new)``, the new block's terms against the new maximum.
    """
    m_new = np.maximum(m, np.max(x, axis=-1))  # (...,)
    # Rows that have seen only -inf keep m = -inf; compute against 0 there so that no
    # -inf - (-inf) = NaN appears (their alpha is 1 and their p is 0, as they should be).
    ref = np.where(np.isneginf(m_new), 0.0, m_new)  # (...,)
    alpha = np.exp(m - ref)  # (...,): exp(m_old - m_new); exp(-inf) = 0 when m_old was -inf
    alpha = np.where(np.isneginf(m_new), 1.0, alpha)
    p = np.exp(x - ref[..., None])  # (..., b)
    return m_new, l * alpha + p.sum(axis=-1), alpha, p


def _blocks(x, block, mask):
    """Validated scores (..., n_k) with -inf at blocked keys, and the block size."""
    x = check_scores(x, "x")
    block = check_block(block)
    if mask is not None:
        mask = check_mask(mask, x.shape)
        x = np.where(mask, x, -np.inf)  # (..., n_k)
    return x, block


def online_softmax(x, *, block: int = 1, mask=None) -> np.ndarray:
    """Softmax along the last axis, with the normaliser found in one pass over blocks of keys.

    Parameters
    ----------
    x : array_like, shape (..., n_k)
        Finite scores (the keys' axis last).
    block : int >= 1
        Number of keys read per step (1: one score at a time). Need not divide ``n_k``.
    mask : array_like of bool, optional
        Broadcastable to ``x.shape``; True means "may attend".

    Returns
    -------
    weights : ndarray, shape (..., n_k)
        Equal to ``softmax(x, mask=mask)``: rows sum to 1, a row with nothing allowed is all zeros.
    """
    x, block = _blocks(x, block, mask)
    m = np.full(x.shape[:-1], -np.inf, dtype=x.dtype)  # (...,)
    l = np.zeros(x.shape[:-1], dtype=x.dtype)  # (...,)
    for start in range(0, x.shape[-1], block):  # the one pass
        m, l, _, _ = online_step(m, l, x[..., start : start + block])
    return _weights(x, m, l)


def _weights(x: np.ndarray, m: np.ndarray, l: np.ndarray) -> np.ndarray:
    """``exp(x - m) / l`` row by row; a row with nothing allowed (l = 0) stays all zeros."""
    ref = np.where(np.isneginf(m), 0.0, m)[..., None]  # (..., 1)
    safe = np.where(l == 0, 1.0, l)[..., None]  # (..., 1)
    return np.exp(x - ref) / safe  # (..., n_k)


def online_trace(x, *, block: int = 1, mask=None) -> dict:
    """``m`` and ``l`` after every block of one row of scores, for stepping through by hand.

    Parameters
    ----------
    x : array_like, shape (n_k,)
        One row of scores.

    Returns
    -------
    dict with
        ``"stop"`` : list of int, the number of scores read after each step;
        ``"m"``, ``"l"``, ``"alpha"`` : ndarray, shape (steps,), after each step;
        ``"weights"`` : ndarray, shape (n_k,), the final softmax.
    """
    x, block = _blocks(x, block, mask)
    if x.ndim != 1:
        raise ParameterError(_("online_trace follows one row of scores, shape (n_k,); got shape {shape}. "
                             "Pick a row, e.g. x[0]").format(shape=x.shape))
    m, l = np.array(-np.inf), np.array(0.0)
    stops, ms, ls, alphas = [], [], [], []
    for start in range(0, x.shape[-1], block):
        m, l, alpha, _tile = online_step(m, l, x[start : start + block])
        stops.append(min(start + block, x.shape[-1]))
        ms.append(float(m))
        ls.append(float(l))
        alphas.append(float(alpha))
    return {"stop": stops, "m": np.array(ms), "l": np.array(ls), "alpha": np.array(alphas),
            "weights": _weights(x, m, l)}
