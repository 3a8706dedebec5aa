"""Notebook 01, *The general attention model*.

Alignment functions: turn scores ``e`` into attention weights ``a``.

* soft  - softmax (optionally with a temperature and a mask): rows sum to 1.
* hard  - one-hot at the argmax, or at a sample drawn from the softmax with a given ``rng``.
* local - Luong's local-p: softmax inside the window ``[p - D, p + D]``, times a Gaussian with
  ``sigma = D / 2`` centred at ``p``. Because of the Gaussian factor its rows sum to *at most* 1
  (pass ``renormalize=True`` to rescale them to 1).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import (
    EmptySequenceError,
    ParameterError,
    ShapeError,
    UnknownNameError,
    as_float_array,
    check_finite,
    check_mask,
    check_positive,
)
from ..i18n import N_, _
from .kernels import softmax_inplace

__all__ = ["softmax", "soft_align", "hard_align", "local_align", "ALIGNMENTS", "align", "check_scores"]


def check_scores(x, name: str = "scores") -> np.ndarray:
    """``x`` as a finite float array of scores with at least one key, ``(..., n_k)``, n_k >= 1."""
    arr = as_float_array(x, name)
    if arr.ndim == 0:
        raise ShapeError(_("{name} is a scalar; give at least one score per key, shape (n_k,) or (n_q, n_k)").format(name=name))
    if arr.shape[-1] == 0:
        raise EmptySequenceError(
            _("{name} has shape {shape}: there are no keys to attend to (n_k = 0); "
            "(..., n_k) with n_k >= 1 was expected").format(name=name, shape=arr.shape)
        )
    check_finite(arr, name)
    return arr


def softmax(x, axis: int = -1, mask=None) -> np.ndarray:
    """Numerically stable softmax along ``axis``.

    Parameters
    ----------
    x : array_like, shape (..., n_k)
        Finite scores. Any magnitude works: the row maximum is subtracted first, so scores of
        +-1e4 give finite weights.
    axis : int
        The axis that is normalised (the keys' axis, -1, for attention weights).
    mask : array_like of bool, optional
        Broadcastable to ``x.shape``. **True means "may attend"**; False entries get weight 0.

    Returns
    -------
    weights : ndarray, same shape and float dtype as ``x``
        Non-negative, summing to 1 along ``axis``. **A row whose mask is all False gets all-zero
        weights** (it attends to nothing) instead of the NaN that 0/0 would give.
    """
    x = check_scores(x, "x")
    if mask is not None:
        mask = check_mask(mask, x.shape)
    return softmax_inplace(np.array(x, copy=True), axis=axis, mask=mask)


def soft_align(scores, *, temperature: float = 1.0, mask=None) -> np.ndarray:
    """Soft alignment: ``softmax(scores / temperature)`` along the keys' axis.

    Parameters
    ----------
    scores : array_like, shape (..., n_k)
    temperature : float > 0
        Below 1 sharpens the weights towards one-hot; above 1 flattens them towards uniform.
    mask : bool array, optional
        True means "may attend".

    Returns
    -------
    weights : ndarray, shape (..., n_k)
    """
    t = check_positive(temperature, "temperature", hint=N_("try 1.0"))
    x = check_scores(scores)
    return softmax(x / t if t != 1.0 else x, mask=mask)


def hard_align(scores, *, mask=None, rng: np.random.Generator | None = None, temperature: float = 1.0) -> np.ndarray:
    """Hard alignment: a one-hot weight vector per query.

    Parameters
    ----------
    scores : array_like, shape (..., n_k)
    mask : bool array, optional
        True means "may attend". A row with nothing allowed gets all zeros.
    rng : numpy.random.Generator, optional
        Without it, the one is placed at the argmax (ties go to the first key). With it, the key is
        *sampled* from ``softmax(scores / temperature)``, as in stochastic hard attention.

    Returns
    -------
    weights : ndarray, shape (..., n_k)
        Exactly one 1 per row (or all zeros for a fully masked row). Not differentiable: a small
        change to the scores either changes nothing or jumps the one to another key.
    """
    x = check_scores(scores)
    p = soft_align(x, temperature=temperature, mask=mask)
    out = np.zeros_like(p)
    flat_p = p.reshape(-1, p.shape[-1])  # (rows, n_k)
    flat_out = out.reshape(-1, p.shape[-1])  # (rows, n_k)
    if rng is None:
        allowed = np.ones_like(x, dtype=bool) if mask is None else np.broadcast_to(mask, x.shape)
        xm = np.where(allowed, x, -np.inf).reshape(-1, x.shape[-1])  # (rows, n_k)
        idx = np.argmax(xm, axis=-1)
        live = np.isfinite(xm.max(axis=-1))
        flat_out[np.arange(len(idx))[live], idx[live]] = 1.0
    else:
        if not isinstance(rng, np.random.Generator):
            raise ParameterError(_("rng must be a numpy Generator; make one with np.random.default_rng(seed)"))
        for r, row in enumerate(flat_p):
            total = row.sum()
            if total > 0:
                flat_out[r, rng.choice(len(row), p=row / total)] = 1.0
    return out


def local_align(
    scores,
    *,
    p,
    D: int,
    mask=None,
    renormalize: bool = False,
    temperature: float = 1.0,
) -> np.ndarray:
    """Local alignment (Luong et al. 2015, local-p).

    ``a_s = softmax_{s in window}(e_s) * exp(-(s - p)^2 / (2 sigma^2))`` with ``sigma = D / 2`` and
    the window ``[p - D, p + D]``; keys outside the window get 0.

    Parameters
    ----------
    scores : array_like, shape (n_k,) or (..., n_q, n_k)
    p : float or array_like, shape (n_q,)
        The window's centre, a (possibly fractional) key position in ``[0, n_k - 1]``.
    D : int >= 1
        The window's half-width.
    renormalize : bool
        Rescale each row to sum to 1 after the Gaussian factor (Luong does not).

    Returns
    -------
    weights : ndarray, same shape as ``scores``
    """
    x = check_scores(scores)
    n_k = x.shape[-1]
    if isinstance(D, bool) or not isinstance(D, (int, float, np.integer, np.floating)) or not np.isfinite(D) or D < 1:
        raise ParameterError(_("local alignment needs a window half-width D >= 1, got D={D!r}").format(D=D))
    try:
        pos = np.asarray(p, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(_("p must be a number or one number per query, got {p!r}").format(p=p)) from None
    if not np.isfinite(pos).all() or (pos < 0).any() or (pos > n_k - 1).any():
        raise ParameterError(
            _("local alignment's centre p={np_round_pos_3_tolist} lies outside the sequence; "
            "it must be between 0 and n_k - 1 = {n_k_1}").format(np_round_pos_3_tolist=np.round(pos, 3).tolist(), n_k_1=n_k - 1)
        )
    s = np.arange(n_k, dtype=float)
    if pos.ndim == 0:
        dist = s - pos  # (n_k,)
    else:
        if x.ndim < 2 or pos.shape[-1] != x.shape[-2]:
            raise ShapeError(_("p has shape {pos_shape} but one centre per query, (n_q,) = ({value},), was expected").format(pos_shape=pos.shape, value=x.shape[-2] if x.ndim > 1 else 1))
        dist = s - pos[..., None]  # (n_q, n_k)
    window = np.abs(dist) <= D
    full_mask = np.broadcast_to(window, x.shape)
    if mask is not None:
        full_mask = full_mask & check_mask(mask, x.shape)
    w = soft_align(x, temperature=temperature, mask=full_mask)
    sigma = D / 2.0
    w = w * np.exp(-(dist**2) / (2 * sigma**2)).astype(x.dtype)
    if renormalize:
        tot = w.sum(axis=-1, keepdims=True)
        w = np.divide(w, tot, out=np.zeros_like(w), where=tot > 0)
    return w.astype(x.dtype, copy=False)


ALIGNMENTS: dict[str, Callable[..., np.ndarray]] = {
    "soft": soft_align,
    "hard": hard_align,
    "local": local_align,
}


def align(scores, name: str = "soft", **kwargs) -> np.ndarray:
    """Apply the alignment function registered under ``name`` (see ``ALIGNMENTS``)."""
    try:
        fn = ALIGNMENTS[name]
    except (KeyError, TypeError):
        raise UnknownNameError(
            _("unknown alignment {name!r}; choose one of {sorted_ALIGNMENTS}").format(name=name, sorted_ALIGNMENTS=sorted(ALIGNMENTS))
        ) from None
    return fn(scores, **kwargs)
