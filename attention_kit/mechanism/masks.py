"""Notebook 04, *Masks and positions*.

Boolean attention masks. Convention: **True means "may attend"** (as in PyTorch's
``scaled_dot_product_attention``; ``torch.nn.MultiheadAttention``'s ``attn_mask`` is the opposite)."""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError, ShapeError, check_count, door
from ..i18n import _

__all__ = ["causal_mask", "padding_mask", "window_mask"]


def _check_causal(n, n_k=None):
    n = check_count(n, "n")
    return (n, n if n_k is None else check_count(n_k, "n_k")), {}


@door(_check_causal)
def causal_mask(n: int, n_k: int | None = None) -> np.ndarray:
    """Causal mask: query i may attend to keys 0..i.

    Returns
    -------
    mask : ndarray of bool, shape (n, n_k)
        ``mask[i, j]`` is True when ``j <= i``. ``n_k`` defaults to ``n``.
    """
    return np.tril(np.ones((n, n_k), dtype=bool))


def padding_mask(lengths, n_k: int, n_q: int | None = None) -> np.ndarray:
    """Padding mask: only the first ``lengths[b]`` keys of sequence b are real tokens.

    Parameters
    ----------
    lengths : int or sequence of int, shape (batch,)
        Number of real (non-padding) tokens in each sequence.
    n_k : int
        Padded length of the key sequence.
    n_q : int, optional
        Number of queries. If given, the mask is expanded to ``(batch, n_q, n_k)``.

    Returns
    -------
    mask : ndarray of bool, shape (batch, 1, n_k) or (batch, n_q, n_k)
        True where the key is a real token. For a single int ``lengths`` the batch axis is dropped.
    """
    n_k = check_count(n_k, "n_k")
    scalar = np.ndim(lengths) == 0
    lens = np.atleast_1d(np.asarray(lengths))
    if lens.ndim != 1 or lens.dtype.kind not in "iu":
        raise ShapeError(_("lengths must be an int or a 1-D sequence of ints, got {lengths!r}").format(lengths=lengths))
    if (lens < 0).any() or (lens > n_k).any():
        raise ParameterError(_("every length must lie in 0..n_k={n_k}, got {lens_tolist}").format(n_k=n_k, lens_tolist=lens.tolist()))
    m = np.arange(n_k)[None, None, :] < lens[:, None, None]  # (batch, 1, n_k)
    if n_q is not None:
        m = np.broadcast_to(m, (len(lens), check_count(n_q, "n_q"), n_k)).copy()
    return m[0] if scalar else m


def window_mask(n_q: int, n_k: int, *, center, D: int) -> np.ndarray:
    """Mask of the local window ``[p - D, p + D]`` around each query's centre ``p``.

    Parameters
    ----------
    n_q, n_k : int
        Number of queries and of keys.
    center : float or array of shape (n_q,)
        The centre ``p`` of each query's window (in key positions, 0-based).
    D : number >= 0
        Half-width of the window.

    Returns
    -------
    mask : ndarray of bool, shape (n_q, n_k)
    """
    n_q = check_count(n_q, "n_q")
    n_k = check_count(n_k, "n_k")
    if isinstance(D, bool) or not isinstance(D, (int, float, np.integer, np.floating)) \
            or not np.isfinite(D) or D < 0:
        raise ParameterError(_("D is the window's half-width and must be a finite number >= 0, got {D!r}; "
                             "for example D=1 keeps the keys p-1, p and p+1").format(D=D))
    try:
        c = np.asarray(center, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(_("center must be a number or one number per query, got {center!r}").format(center=center)) from None
    if c.ndim > 1 or (c.ndim == 1 and c.shape[0] not in (1, n_q)):
        raise ShapeError(_("center must be a number or have shape ({n_q},) (one centre per query), "
                         "got shape {c_shape}").format(n_q=n_q, c_shape=c.shape))
    if not np.isfinite(c).all():
        raise ParameterError(_("center must be finite, got {center!r}").format(center=center))
    p = np.broadcast_to(c, (n_q,))
    s = np.arange(n_k)[None, :]
    return np.abs(s - p[:, None]) <= D
