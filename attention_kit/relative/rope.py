"""Notebook 09, *Positions for long texts*: rotary position embeddings (RoPE, Su et al. 2021).

Notebook 04 showed that the sinusoidal encoding of position ``m + k`` is that of ``m`` rotated,
pair of features by pair of features, by the angles ``k * theta_i``. RoPE puts that rotation
where the positions are needed: instead of adding a vector to the token, it *rotates* each pair
``(x[2i], x[2i+1])`` of a query or key at position ``m`` by the angle ``m * theta_i``, with
``theta_i = base^(-2i / d_head)`` and ``base = 10000``::

    x'[2i]     = x[2i] cos(m theta_i) - x[2i+1] sin(m theta_i)
    x'[2i + 1] = x[2i] sin(m theta_i) + x[2i+1] cos(m theta_i)

A rotation keeps lengths and dot products, so ``rope(q, m) . rope(k, n) = q . R((n - m) theta) k``:
the score depends on the two positions only through their difference ``m - n``. Nothing is added
to the tokens, and a key rotated once at its absolute position stays right however far the text
goes on, which is what lets a KV cache slide (:class:`attention_kit.scale.kvcache.KVCache`).

Pairs are the neighbouring features ``(0, 1), (2, 3), ...``, as in the RoFormer paper and Meta's
reference code for Llama (which turns each pair as one complex number). GPT-NeoX and Hugging Face's
``transformers`` pair feature ``i`` with ``i + d_head / 2`` instead (``rotate_half``): the same
rotation with the features permuted. With ``perm = [0, 2, 4, ..., 1, 3, 5, ...]`` the half-split
rotation of ``x[..., perm]`` is ``rope(x)[..., perm]``, and a checkpoint moves from one layout to
the other by permuting the columns of ``W_q`` and ``W_k`` within each head (Hugging Face's script
that converts Meta's Llama weights does this); notebook 09 shows it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError, ShapeError, as_float_array, check_finite
from ..i18n import _
from ..mechanism.positions import position_frequencies

__all__ = ["rope_frequencies", "rope", "rope_backward", "RopeRotation", "rope_rotation"]


def rope_frequencies(d_head: int, *, base: float = 10000.0) -> np.ndarray:
    """The angle per position of each pair, ``theta_i = base^(-2i / d_head)``, shape (d_head // 2,).

    The same frequencies as notebook 04's sinusoidal encoding, over the width of one head.
    """
    return position_frequencies(d_head, base=base)


def _positions(positions, n: int) -> np.ndarray:
    if positions is None:
        return np.arange(n, dtype=float)
    try:
        p = np.asarray(positions, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(_("positions must be numbers, one per token, got {positions!r}").format(positions=positions)) from None
    if p.ndim == 0:
        p = p.reshape(1)
    if p.shape != (n,):
        raise ShapeError(_("positions has shape {p_shape} but ({n},) was expected: one position per token "
                         "(the second-to-last axis of x); for one token at position m pass [m]").format(p_shape=p.shape, n=n))
    if not np.isfinite(p).all():
        raise ParameterError(_("positions hold NaN or inf; give each token's index in the text (0, 1, 2, ...)"))
    return p


def _rotate(x: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Rotate pair i of row m of ``x (..., n, d)`` by ``angles[m, i]`` (n, d/2); no validation."""
    c, s = np.cos(angles), np.sin(angles)  # (n, d/2) each
    x0, x1 = x[..., 0::2], x[..., 1::2]  # (..., n, d/2): the two features of each pair
    out = np.empty(np.broadcast_shapes(x.shape), dtype=np.result_type(x, 0.0))
    out[..., 0::2] = x0 * c - x1 * s
    out[..., 1::2] = x0 * s + x1 * c
    return out


def _check(x, name: str) -> np.ndarray:
    x = as_float_array(x, name)
    if x.ndim < 2:
        raise ShapeError(_("{name} has shape {shape} but (..., n, d_head) was expected: one row per "
                         "token; for one vector use {name}[None]").format(name=name, shape=x.shape))
    if x.shape[-1] % 2:
        raise ShapeError(_("{name} has {x_shape_1} features per head, an odd number; RoPE rotates the "
                         "features in pairs, so d_head must be even").format(name=name, x_shape_1=x.shape[-1]))
    if x.shape[-2] == 0:
        raise ShapeError(_("{name} holds no tokens (shape {shape}); give at least one row").format(name=name, shape=x.shape))
    check_finite(x, name)
    return x


def rope(x, positions=None, *, base: float = 10000.0) -> np.ndarray:
    """Rotate every pair of features of every row by ``position * theta_i``.

    Parameters
    ----------
    x : ndarray, shape (..., n, d_head)
        Queries or keys, one row per token (per head); ``d_head`` even.
    positions : array of n numbers, optional
        Each row's position in the text; ``0, 1, ..., n - 1`` when None. A KV cache passes the
        absolute position of the one new token, ``[m]``.
    base : float
        10000 in the RoFormer paper (and Llama 2).

    Notes
    -----
    Neighbouring features are paired (RoFormer, Meta's Llama code); see the module's docstring for
    the half-split layout of GPT-NeoX and Hugging Face.

    Returns
    -------
    ndarray, shape of x
    """
    x = _check(x, "x")
    p = _positions(positions, x.shape[-2])
    theta = rope_frequencies(x.shape[-1], base=base)  # (d/2,)
    return _rotate(x, p[:, None] * theta[None, :])


def rope_backward(grad, positions=None, *, base: float = 10000.0) -> np.ndarray:
    """``dL/dx`` from ``dL/d rope(x)``: the rotation is orthogonal, so its transpose is the rotation
    by the opposite angles."""
    g = _check(grad, "grad")
    p = _positions(positions, g.shape[-2])
    theta = rope_frequencies(g.shape[-1], base=base)
    return _rotate(g, -p[:, None] * theta[None, :])


@dataclass(frozen=True)
class RopeRotation:
    """RoPE as the one multi-head forward takes it: ``multi_head_forward(..., rotation=...)`` turns
    every head's queries at ``positions_q`` and keys at ``positions_k`` (None: 0, 1, ..., n - 1), and
    its backward turns their gradients back. Make one with :func:`rope_rotation`."""

    positions_q: np.ndarray | None = None
    positions_k: np.ndarray | None = None
    base: float = 10000.0

    def forward(self, Q, K):
        """``(rope(Q, positions_q), rope(K, positions_k))``, Q and K of shape (..., h, n, d_head)."""
        return rope(Q, self.positions_q, base=self.base), rope(K, self.positions_k, base=self.base)

    def backward(self, dQ, dK):
        """The gradients of the unrotated queries and keys, from those of the rotated ones."""
        return rope_backward(dQ, self.positions_q, base=self.base), rope_backward(dK, self.positions_k, base=self.base)


def rope_rotation(positions=None, positions_k=None, *, base: float = 10000.0) -> RopeRotation:
    """RoPE for :func:`attention_kit.multi_head_forward`'s ``rotation=``: the queries at ``positions``
    and the keys at ``positions_k`` (the same positions when None, as in self-attention)."""
    return RopeRotation(positions, positions if positions_k is None else positions_k, base)
