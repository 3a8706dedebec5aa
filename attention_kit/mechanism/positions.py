"""Notebook 04, *Masks and positions*.

Position information: the sinusoidal positional encoding of Vaswani et al. (2017).

Self-attention is blind to word order (permuting the tokens only permutes the outputs). Adding a
vector that depends on the position, ``X + P``, breaks that symmetry. The encoding of Vaswani et
al., section 3.5, gives position ``pos`` and feature pair ``i`` (``0 <= i < d_model / 2``)

    P[pos, 2i]     = sin(pos / base^(2i / d_model))
    P[pos, 2i + 1] = cos(pos / base^(2i / d_model))

with ``base = 10000``. Each pair of columns is a point on the unit circle turning at its own
angular frequency ``w_i = base^(-2i / d_model)``, so that the encoding of ``pos + k`` is the encoding
of ``pos`` rotated pair by pair by the angles ``k * w_i`` (``position_rotation``).
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError, check_count, door
from ..i18n import _

__all__ = ["sinusoidal_positions", "position_frequencies", "position_rotation"]


def _check_d_model(d_model) -> int:
    d = check_count(d_model, "d_model", minimum=2)
    if d % 2:
        raise ParameterError(
            _("d_model = {d} is odd; the sinusoidal encoding fills the features in (sin, cos) pairs, "
            "so d_model must be even: use {d_minus_1} or {d_plus_1}").format(d=d, d_minus_1=d - 1, d_plus_1=d + 1)
        )
    return d


def _check_base(base) -> float:
    try:
        b = float(base)
    except (TypeError, ValueError):
        raise ParameterError(_("base must be a number greater than 1, got {base!r}").format(base=base)) from None
    if not np.isfinite(b) or b <= 1:
        raise ParameterError(_("base must be a finite number greater than 1 (Vaswani et al. use 10000), got {base!r}").format(base=base))
    return b


def _check_frequencies(d_model, *, base=10000.0):
    return (_check_d_model(d_model),), {"base": _check_base(base)}


@door(_check_frequencies)
def position_frequencies(d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """Angular frequencies ``w_i = base^(-2i / d_model)`` of the feature pairs.

    Returns
    -------
    w : ndarray, shape (d_model // 2,)
        From 1 (pair 0, the fastest) down to ``base^(-(d_model - 2) / d_model)`` (the slowest).
    """
    return base ** (-np.arange(0, d_model, 2) / d_model)


def _check_sinusoidal(n, d_model, *, base=10000.0, start=0):
    n = check_count(n, "n", minimum=1)
    start = check_count(start, "start", minimum=0)
    (d_model,), kw = _check_frequencies(d_model, base=base)
    return (n, d_model), dict(kw, start=start)


@door(_check_sinusoidal)
def sinusoidal_positions(n: int, d_model: int, *, base: float = 10000.0, start: int = 0) -> np.ndarray:
    """The sinusoidal positional encoding of positions ``start .. start + n - 1``.

    Parameters
    ----------
    n : int
        Number of positions (tokens), at least 1.
    d_model : int
        Width of the token vectors; must be even.
    base : float
        The wavelength constant, 10000 in the Transformer paper.
    start : int
        Position of the first row (0 in the Transformer paper).

    Returns
    -------
    P : ndarray, shape (n, d_model)
        ``P[pos, 2i] = sin(pos * w_i)``, ``P[pos, 2i+1] = cos(pos * w_i)``; add it to ``X (n, d_model)``.
    """
    w = position_frequencies.unchecked(d_model, base=base)  # (d_model/2,)
    angles = np.arange(start, start + n, dtype=float)[:, None] * w[None, :]  # (n, d_model/2)
    P = np.empty((n, 2 * w.size))
    P[:, 0::2] = np.sin(angles)
    P[:, 1::2] = np.cos(angles)
    return P


def position_rotation(k, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """The matrix ``R_k`` with ``P[pos + k] = P[pos] @ R_k`` for every position (rows convention).

    Block diagonal: pair i is the 2 x 2 rotation by the angle ``k * w_i``. It depends on the offset
    ``k`` only, not on ``pos``: this is why a linear map of the encodings can find relative positions.

    Returns
    -------
    R : ndarray, shape (d_model, d_model)
    """
    try:
        k = float(k)
    except (TypeError, ValueError):
        raise ParameterError(_("k (an offset in positions) must be a number, got {k!r}").format(k=k)) from None
    if not np.isfinite(k):
        raise ParameterError(_("k (an offset in positions) must be finite, got {k!r}").format(k=k))
    w = position_frequencies(d_model, base=base)
    c, s = np.cos(k * w), np.sin(k * w)
    R = np.zeros((2 * w.size, 2 * w.size))
    # row vector [sin a, cos a] @ [[c, -s], [s, c]] = [sin a cos b + cos a sin b, -sin a sin b + cos a cos b]
    #                                              = [sin(a + b), cos(a + b)]
    R[0::2, 0::2] = np.diag(c)
    R[0::2, 1::2] = np.diag(-s)
    R[1::2, 0::2] = np.diag(s)
    R[1::2, 1::2] = np.diag(c)
    return R
