"""The fast paths behind notebooks 01-03's attention (internal: a learner reads ``alignment``,
``attention`` and ``multi_head_attention`` instead).

What these do is the formula those modules teach, on arrays that the public functions have already
checked, written so that the big ``(..., n_q, n_k)`` score array is touched as few times as
possible (the course repository's benchmarks measure them against the bare matrix products):

* :func:`softmax_inplace` - the row softmax written into its own input; small scores skip
  subtracting the row maximum (:data:`SHIFT_FREE_LIMIT`);
* :func:`sdpa_core` - ``softmax(Qs K^T) V`` with an overflow bound from the small inputs instead
  of a scan of the scores;
* :func:`to_heads`, :func:`stack_heads`, :func:`mask_for_heads` - the head layouts of multi-head
  and grouped-query attention.

The course's tests check each against the plain formula.
"""

from __future__ import annotations

import numpy as np

from ..errors import MaskError, NonFiniteError, check_finite
from ..i18n import N_, _

__all__ = ["SHIFT_FREE_LIMIT", "OVERFLOW_BOUND", "softmax_inplace", "sdpa_core", "to_heads",
           "stack_heads", "mask_for_heads"]

# |score| <= this for every score: exp cannot overflow or underflow to a zero row sum, so the row
# maximum need not be subtracted (softmax is shift-invariant; exp has the same relative accuracy).
SHIFT_FREE_LIMIT = {np.dtype(np.float64): 600.0, np.dtype(np.float32): 60.0}

# |q . k| <= |q| |k|; below this bound the score matrix cannot overflow.
OVERFLOW_BOUND = 1e300


def softmax_inplace(x: np.ndarray, axis: int = -1, mask=None, *, shift: bool = True) -> np.ndarray:
    """Softmax of ``x`` along ``axis``, written into ``x`` itself (no validation, no copy).

    The caller owns ``x`` (a fresh float array) and has already checked it (or knows it is finite);
    ``mask`` is a validated boolean array broadcastable to ``x.shape``, True = may attend.
    ``shift=False`` skips subtracting the row maximum (two passes over ``x``); only pass it when
    every entry is known to satisfy ``|x| <= SHIFT_FREE_LIMIT[x.dtype]``.
    """
    if mask is not None:
        np.copyto(x, -np.inf, where=np.logical_not(mask))  # blocked keys: exp(-inf) = 0
    if shift:
        _subtract_row_max(x, axis, mask is not None)
    np.exp(x, out=x)
    s = np.sum(x, axis=axis, keepdims=True)  # (..., 1), > 0 for every live row
    if mask is not None:
        s[s == 0] = 1.0  # a fully masked row is all zeros: leave it so, never 0/0 = NaN
    np.reciprocal(s, out=s)
    x *= s
    return x


def _subtract_row_max(x: np.ndarray, axis: int, masked: bool) -> None:
    """``x -= max(x)`` row by row (a fully masked row, all -inf, is left alone); reject NaN/+inf."""
    m = np.max(x, axis=axis, keepdims=True)  # (..., 1) row maxima
    if masked:
        dead = np.isneginf(m)  # rows where every key is masked
        if dead.any():
            m[dead] = 0.0
    if not np.isfinite(m).all():
        raise NonFiniteError(
            _("the attention scores hold NaN or +inf (an overflow of q . k?); "
            "scale the inputs down or check them for NaN/inf")
        )
    x -= m


def sdpa_core(Qs, K, V, mask, bias=None):
    """``softmax(Qs K^T) V`` on validated, finite arrays; ``Qs`` already carries the 1/sqrt(d_k) scale.

    ``bias``, a validated finite array broadcastable to the scores, is added to them before the
    softmax (ALiBi's distance penalty, notebook 09); the mask still blocks what it blocks.

    Shapes: Qs (..., n_q, d_k), K (..., n_k, d_k), V (..., n_k, d_v); ``mask``, if given, a boolean
    array the caller's door checked against the scores' shape (``errors.check_mask``). The score array is computed
    once and turned into the weights in place (it is the biggest array by far, so every extra
    pass over it costs as much as a small matrix product). Instead of scanning it for inf, a cheap
    bound on ``|q . k|`` from the (small) inputs shows that it cannot overflow.
    """
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported just below
        scores = Qs @ np.swapaxes(K, -1, -2)  # (..., n_q, n_k)
    # Cauchy-Schwarz: |q . k| <= max |q| * max |k| (row norms of the small inputs, not the big scores)
    with np.errstate(over="ignore", invalid="ignore"):
        bound = float(np.sqrt(np.max(np.einsum("...i,...i->...", Qs, Qs)))
                      * np.sqrt(np.max(np.einsum("...i,...i->...", K, K))))
    if not bound < OVERFLOW_BOUND or (scores.dtype == np.float32 and not bound < 3e38):
        check_finite(scores, N_("the scores Q K^T / sqrt(d_k)"))
    if bias is not None:
        scores += bias  # (the bias may be large: the row maxima are then subtracted below)
    # small scores (the usual case): exp cannot overflow, so skip subtracting the row maxima
    shift = bias is not None or not bound <= SHIFT_FREE_LIMIT.get(scores.dtype, 0.0)
    weights = softmax_inplace(scores, mask=mask, shift=shift)  # (..., n_q, n_k), in place
    return weights @ V, weights  # (..., n_q, d_v), (..., n_q, n_k)


def stack_heads(W: np.ndarray) -> np.ndarray:
    """Per-head weights (h, d_model, d) side by side as one matrix (d_model, h * d)."""
    h, d_model, d = W.shape
    return np.ascontiguousarray(W.transpose(1, 0, 2)).reshape(d_model, h * d)  # (d_model, h*d)


def to_heads(Z: np.ndarray, h: int, d: int, scale: float | None = None) -> np.ndarray:
    """(..., n, h*d) -> contiguous (..., h, n, d), optionally times ``scale``; no validation (internal)."""
    *batch, n, _ = Z.shape
    view = np.swapaxes(Z.reshape(*batch, n, h, d), -3, -2)  # (..., h, n, d), strided
    if scale is None:
        return np.ascontiguousarray(view)
    return np.multiply(view, Z.dtype.type(scale), out=np.empty(view.shape, dtype=Z.dtype))


def mask_for_heads(mask, batch: tuple, h: int):
    """Put a mask in the layout of multi-head weights, ``(*batch, h, n_q, n_k)``.

    A mask shaped like the tokens' batch, ``(*batch, n_q, n_k)`` (or ``(*batch, 1, n_k)`` from
    ``padding_mask``), means one mask per sequence, shared by every head: the head axis is
    inserted (PyTorch users write ``mask.unsqueeze(1)``). ``(*batch, h, n_q, n_k)`` is an explicit
    per-head mask. Without a batch, ``(h, n_q, n_k)`` is per head. A 2-D mask serves every head and
    every sequence. Any other number of axes is ambiguous and rejected.
    """
    if mask is None:
        return None
    m = np.asarray(mask)
    b = len(batch)
    if m.ndim <= 2 or b == 0 or m.ndim == b + 3:
        return m  # check_mask validates the shape against the weights
    if m.ndim == b + 2:
        lead = m.shape[:b]
        if all(x in (1, y) for x, y in zip(lead, batch, strict=True)):
            return m.reshape(*lead, 1, *m.shape[b:])  # (*batch, 1, n_q, n_k): every head
        per_head = f" (1, {h}, n_q, n_k)" if b == 1 else ""
        raise MaskError(
            _("mask has shape {m_shape}; with a batch of shape {batch} its first {b} axis(es) must "
            "be the batch, {batch} (or 1): (*batch, n_q, n_k) is one mask per sequence for every "
            "head. For a mask per head, add the batch axis: (*batch, h, n_q, n_k) with h = {h},"
            " e.g.{example}").format(m_shape=m.shape, batch=batch, b=b, h=h, example=per_head or ' mask[None]'))
    raise MaskError(
        _("mask has shape {m_shape} ({m_ndim} axes), which is ambiguous for tokens with batch shape "
        "{batch} and {h} heads. Give (n_q, n_k) for every sequence and head, (*batch, n_q, n_k) "
        "for one mask per sequence, or (*batch, h, n_q, n_k) for one per sequence and head").format(m_shape=m.shape, m_ndim=m.ndim, batch=batch, h=h))
