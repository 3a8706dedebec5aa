"""Notebook 07, *Attention at scale*.

Sliding-window attention: each query sees only the last ``window`` keys.

A causal model with a sliding window (Beltagy et al. 2020, Longformer; Mistral 7B uses 4096) lets
query ``i`` attend to keys ``i - window + 1 .. i``. It is the local alignment of the survey (a
window ``[p - D, p + D]`` around ``p = i``) cut to its past half, ``D = window - 1``. Per layer,
the work and the KV cache stop growing with ``n``; across layers the window compounds: after
``L`` layers, output ``i`` can depend on inputs ``i - L (window - 1) .. i``.
"""

from __future__ import annotations

import numpy as np

from ..errors import MaskDtypeError, MaskError, check_count
from ..i18n import _
from ..mechanism.masks import causal_mask, window_mask

__all__ = ["sliding_window_mask", "receptive_field"]


def sliding_window_mask(n: int, window: int, *, sinks: int = 0) -> np.ndarray:
    """Causal sliding-window mask: query i may attend to keys ``max(0, i - window + 1) .. i``.

    With ``sinks = k`` the first k keys stay visible to every later query as well: StreamingLLM's
    attention sinks (Xiao et al. 2023; notebook 08), kept because trained heads park weight there.

    Returns
    -------
    mask : ndarray of bool, shape (n, n)
        The causal mask and the local window of half-width ``D = window - 1`` around ``p = i``
        (and the columns ``0 .. sinks - 1`` below the diagonal).
    """
    n, window = check_count(n, "n"), check_count(window, "window", example="4096")
    sinks = check_count(sinks, "sinks", minimum=0, example="1 (keep the first token)")
    causal = causal_mask(n)
    mask = causal & window_mask(n, n, center=np.arange(n), D=window - 1)
    mask[:, :sinks] |= causal[:, :sinks]  # the sinks: visible to every query at or after them
    return mask


def receptive_field(mask, n_layers: int) -> np.ndarray:
    """Which inputs can influence which outputs after ``n_layers`` layers with the same mask.

    Output ``i`` of one layer mixes the inputs ``j`` with ``mask[i, j]``; through a residual
    connection it also keeps input ``i`` itself. Composing layers is a boolean matrix product.

    Parameters
    ----------
    mask : ndarray of bool, shape (n, n)
        True means "may attend".
    n_layers : int >= 1

    Returns
    -------
    reach : ndarray of bool, shape (n, n)
        ``reach[i, j]`` is True when input token j can change output token i after ``n_layers``.
    """
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        raise MaskDtypeError(_("mask must be boolean (True = may attend), got dtype {m_dtype}; use mask.astype(bool)").format(m_dtype=m.dtype))
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise MaskError(_("mask has shape {m_shape} but a square (n, n) self-attention mask was expected").format(m_shape=m.shape))
    n_layers = check_count(n_layers, "n_layers")
    step = m | np.eye(m.shape[0], dtype=bool)  # the residual connection keeps token i in row i
    reach = step.copy()
    for _layer in range(n_layers - 1):
        reach = (reach.astype(np.int64) @ step.astype(np.int64)) > 0  # (n, n): a path i <- k <- j
    return reach
