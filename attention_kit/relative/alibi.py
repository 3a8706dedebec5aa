"""Notebook 09, *Positions for long texts*: attention with linear biases (ALiBi, Press et al. 2022).

ALiBi adds no position to the tokens and rotates nothing. It adds a penalty to each score, linear
in the distance between the query at position ``i`` and the key at position ``j``::

    score[h, i, j] = q_i . k_j / sqrt(d_k) - m_h * |i - j|

one slope ``m_h`` per head. Under the causal mask only ``j <= i`` is ever used, where the penalty
is the paper's ``-m_h (i - j)``. A head with a large slope looks only at its neighbours; a small
slope lets a head look far back; a slope of 0 leaves the head without any sense of order. The
paper's slopes are the geometric sequence ``2^(-8/h), 2^(-16/h), ..., 2^(-8)`` for ``h`` heads
(section 3; for 8 heads 1/2, 1/4, ..., 1/256), fixed, not learned.

The bias is a constant added to the scores, so the backward pass is that of attention itself:
the gradient reaching the scores passes by it unchanged.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ParameterError, ShapeError, as_float_array, check_count, check_finite
from ..i18n import _

__all__ = ["alibi_slopes", "alibi_bias"]


def alibi_slopes(n_heads: int) -> np.ndarray:
    """The paper's slopes for ``n_heads`` heads, shape (n_heads,).

    A power of two ``h``: ``2^(-8 k / h)`` for ``k = 1 .. h``. Otherwise, as in the paper's code:
    the slopes of the largest power of two below ``h``, then every other slope of twice that many.
    """
    h = check_count(n_heads, "n_heads")

    def power_of_2(n: int) -> list[float]:
        return [2.0 ** (-8.0 * k / n) for k in range(1, n + 1)]

    if h & (h - 1) == 0:
        return np.array(power_of_2(h))
    below = 2 ** math.floor(math.log2(h))
    return np.array(power_of_2(below) + list(alibi_slopes(2 * below)[0::2][: h - below]))


def alibi_bias(slopes, n_q: int, n_k: int | None = None, *, positions_q=None, positions_k=None) -> np.ndarray:
    """The biases ``-m_h |i - j|`` to add to the scores, shape (h, n_q, n_k).

    Parameters
    ----------
    slopes : array of h numbers
        One per head (:func:`alibi_slopes` for the paper's; any non-negative numbers).
    n_q, n_k : int
        Number of queries and keys (``n_k = n_q`` when None).
    positions_q, positions_k : arrays of n_q and n_k numbers, optional
        The tokens' positions in the text; ``0 .. n - 1`` when None. A KV cache passes the new
        token's position and the positions of the keys it still holds.
    """
    m = as_float_array(slopes, "slopes")
    if m.ndim != 1 or m.size == 0:
        raise ShapeError(_("slopes has shape {m_shape} but (h,) was expected: one slope per head").format(m_shape=m.shape))
    check_finite(m, "slopes")
    if (m < 0).any():
        raise ParameterError(_("slopes must be >= 0: a negative slope would reward distance; "
                             "use alibi_slopes(h) for the paper's"))
    n_q = check_count(n_q, "n_q")
    n_k = n_q if n_k is None else check_count(n_k, "n_k")
    pq = _positions(positions_q, n_q, "positions_q")
    pk = _positions(positions_k, n_k, "positions_k")
    dist = np.abs(pq[:, None] - pk[None, :])  # (n_q, n_k)
    return 0.0 - m[:, None, None] * dist[None]  # (h, n_q, n_k); 0.0 - keeps -0.0 out of the diagonal


def _positions(p, n: int, name: str) -> np.ndarray:
    if p is None:
        return np.arange(n, dtype=float)
    a = as_float_array(np.atleast_1d(p), name)
    if a.shape != (n,):
        raise ShapeError(_("{name} has shape {shape} but ({n},) was expected: one position per token").format(name=name, shape=a.shape, n=n))
    check_finite(a, name)
    return a
