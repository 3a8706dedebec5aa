"""Notebooks 01 (*The general attention model*) and 02 (*Self-attention*).

The general attention module, scaled dot-product attention and self-attention (rows are tokens)."""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError, ShapeError, check_mask, check_matrix
from ..i18n import _
from .alignment import align as _align
from .kernels import sdpa_core
from .scores import score as _score

__all__ = ["attend", "general_attention", "scaled_dot_product_attention", "self_attention"]


def _columns_hint(X: np.ndarray, xname: str, W, wname: str, dname: str) -> None:
    """Catch a feature matrix passed in the survey's column layout (d, n) before the weights are checked.

    If ``W`` (d, d_out) fits the *rows* of ``X`` but not its columns, ``X`` is almost surely
    transposed; say so, rather than blaming ``W``.
    """
    if W is None or X.ndim != 2:
        return
    w = np.asarray(W)
    if w.ndim == 2 and w.shape[0] != X.shape[-1] and w.shape[0] == X.shape[-2]:
        raise ShapeError(
            _("{xname} has shape {X_shape} but {wname} has shape {w_shape}, so ({X_shape_1}, {w_shape_0}) "
            "= (n, {dname}) was expected for {xname}: rows are tokens. Did you pass the column layout "
            "({dname}, n) of the survey? Use {xname}.T").format(xname=xname, X_shape=X.shape, wname=wname, w_shape=w.shape, X_shape_1=X.shape[-1], w_shape_0=w.shape[0], dname=dname)
        )


def general_attention(q, K, V, *, score: str = "dot", align: str = "soft", score_params: dict | None = None,
                      align_params: dict | None = None, mask=None, return_scores: bool = False):
    """Attention over given keys and values: scores, then weights, then ``c = a V``.

    Parameters
    ----------
    q : ndarray, shape (d_q,) or (n_q, d_q)
    K : ndarray, shape (n_k, d_k)
    V : ndarray, shape (n_k, d_v)
        Must hold exactly one value per key.
    score, align : str
        Names from ``SCORES`` and ``ALIGNMENTS``.
    score_params, align_params : dict, optional
        Extra parameters, for example ``{"W": W}`` or ``{"temperature": 0.5}``.
    mask : bool array, optional
        True means "may attend".

    Returns
    -------
    context : ndarray, shape (d_v,) or (n_q, d_v)
    weights : ndarray, shape (n_k,) or (n_q, n_k)
    scores : ndarray, same shape as weights (only with ``return_scores=True``)
    """
    K = check_matrix(K, "K", expected="(n_k, d_k)")
    V = check_matrix(V, "V", expected="(n_k, d_v)")
    if K.shape[-2] != V.shape[-2]:
        raise ShapeError(
            _("K has {K_shape_2} keys but V has {V_shape_2} values (K {K_shape}, V {V_shape}); "
            "every key needs exactly one value: K and V must have the same number of rows "
            "(in the survey's column layout: the same number of columns)").format(K_shape_2=K.shape[-2], V_shape_2=V.shape[-2], K_shape=K.shape, V_shape=V.shape)
        )
    e = _score(score, q, K, **(score_params or {}))
    ap = dict(align_params or {})
    if mask is not None:
        ap["mask"] = check_mask(mask, e.shape)
    a = _align(e, align, **ap)
    c = a @ V  # (n_q, d_v) or (d_v,)
    return (c, a, e) if return_scores else (c, a)


def attend(q, F, W_k=None, W_v=None, *, score: str = "dot", align: str = "soft", score_params: dict | None = None,
           align_params: dict | None = None, mask=None, return_scores: bool = False):
    """The general attention module of Brauwers & Frasincar, in the row convention.

    ``K = F W_k`` and ``V = F W_v`` (the survey's ``K = W_K F``, ``V = W_V F`` with ``F`` as columns),
    then ``e = score(q, K)``, ``a = align(e)`` and the context vector ``c = sum_l a_l v_l = a V``.

    Parameters
    ----------
    q : ndarray, shape (d_q,) or (n_q, d_q)
        The query (one or several).
    F : ndarray, shape (n_f, d_f)
        Feature vectors, one per row.
    W_k : ndarray, shape (d_f, d_k), optional
        Key projection. None means the identity: the raw features are the keys.
    W_v : ndarray, shape (d_f, d_v), optional
        Value projection. None means the identity.

    Returns
    -------
    context : ndarray, shape (d_v,) or (n_q, d_v)
    weights : ndarray, shape (n_f,) or (n_q, n_f)
    """
    F = check_matrix(F, "F", expected="(n_f, d_f)")
    d_f = F.shape[-1]
    _columns_hint(F, "F", W_k if W_k is not None else W_v, "W_k" if W_k is not None else "W_v", "d_f")
    K = F if W_k is None else F @ check_matrix(W_k, "W_k", expected="(d_f, d_k)", n=d_f, n_name="d_f", d_name="d_k")
    V = F if W_v is None else F @ check_matrix(W_v, "W_v", expected="(d_f, d_v)", n=d_f, n_name="d_f", d_name="d_v")
    return general_attention(q, K, V, score=score, align=align, score_params=score_params,
                             align_params=align_params, mask=mask, return_scores=return_scores)


def scaled_dot_product_attention(Q, K, V, mask=None, *, scale: float | None = None):
    """``softmax(Q K^T / sqrt(d_k)) V``, with the softmax taken row by row.

    Parameters
    ----------
    Q : ndarray, shape (..., n_q, d_k)
    K : ndarray, shape (..., n_k, d_k)
    V : ndarray, shape (..., n_k, d_v)
    mask : bool array, broadcastable to (..., n_q, n_k), optional
        True means "may attend". A query that may attend to nothing gets a zero output row.
    scale : float, optional
        Defaults to ``1 / sqrt(d_k)``.

    Returns
    -------
    output : ndarray, shape (..., n_q, d_v)
    weights : ndarray, shape (..., n_q, n_k)
        Each row sums to 1 (or 0 for a fully masked row).
    """
    Q, K, V = check_qkv(Q, K, V)
    if mask is not None:  # against the scores' shape (..., n_q, n_k)
        mask = check_mask(mask, np.broadcast_shapes(Q.shape[:-2], K.shape[:-2]) + (Q.shape[-2], K.shape[-2]))
    return sdpa_core(Q * Q.dtype.type(check_scale(scale, Q.shape[-1])), K, V, mask)


def check_scale(scale, d_k: int) -> float:
    """The score scale: ``1 / sqrt(d_k)`` when ``scale`` is None, else ``scale`` if it is finite."""
    s = (1.0 / np.sqrt(d_k)) if scale is None else float(scale)
    if not np.isfinite(s):
        raise ParameterError(_("scale must be a finite number, got {scale!r}; leave it None for 1/sqrt(d_k)").format(scale=scale))
    return s


def check_qkv(Q, K, V) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate queries ``(..., n_q, d_k)``, keys ``(..., n_k, d_k)`` and values ``(..., n_k, d_v)``.

    Returns them as float arrays; raises ``ShapeError`` (naming the column layout when that is the
    likely cause), ``EmptySequenceError`` or ``NonFiniteError`` otherwise.
    """
    Q = check_matrix(Q, "Q", expected="(n_q, d_k)")
    K = check_matrix(K, "K", expected="(n_k, d_k)")
    V = check_matrix(V, "V", expected="(n_k, d_v)")
    if Q.shape[-1] != K.shape[-1]:
        msg = _("Q has d_k = {Q_d_k} but K has d_k = {K_d_k} (Q {Q_shape}, K {K_shape}); queries and keys must have the same width: project them to the same d_k").format(Q_d_k=Q.shape[-1], K_d_k=K.shape[-1], Q_shape=Q.shape, K_shape=K.shape)
        if K.shape[-2] == Q.shape[-1]:
            msg += _(". Did you pass K in the column layout (d_k, n_k)? Use K.T")
        raise ShapeError(msg)
    if K.shape[-2] != V.shape[-2]:
        raise ShapeError(
            _("K has {K_shape_2} keys but V has {V_shape_2} values (K {K_shape}, V {V_shape}); "
            "V must be (n_k, d_v), one row per key. If V is in the column layout (d_v, n_k), use V.T").format(K_shape_2=K.shape[-2], V_shape_2=V.shape[-2], K_shape=K.shape, V_shape=V.shape)
        )
    return Q, K, V


def self_attention(X, W_q, W_k, W_v, mask=None):
    """Self-attention: queries, keys and values all come from the same tokens.

    ``Q = X W_q``, ``K = X W_k``, ``V = X W_v``, then ``softmax(Q K^T / sqrt(d_k)) V``.

    Parameters
    ----------
    X : ndarray, shape (..., n, d_model)
    W_q, W_k : ndarray, shape (d_model, d_k)
    W_v : ndarray, shape (d_model, d_v)
    mask : bool array, broadcastable to (..., n, n), optional

    Returns
    -------
    output : ndarray, shape (..., n, d_v)
    weights : ndarray, shape (..., n, n)
    """
    X = check_matrix(X, "X", expected="(n, d_model)")
    d = X.shape[-1]
    _columns_hint(X, "X", W_q, "W_q", "d_model")
    W_q = check_matrix(W_q, "W_q", expected="(d_model, d_k)", batch=False, n=d, n_name="d_model", d_name="d_k")
    W_k = check_matrix(W_k, "W_k", expected="(d_model, d_k)", batch=False, n=d, n_name="d_model", d_name="d_k")
    W_v = check_matrix(W_v, "W_v", expected="(d_model, d_v)", batch=False, n=d, n_name="d_model", d_name="d_v")
    if W_q.shape[1] != W_k.shape[1]:
        raise ShapeError(
            _("W_q {W_q_shape} gives d_k = {W_q_shape_1} but W_k {W_k_shape} gives d_k = {W_k_shape_1}; "
            "queries and keys must have the same width: give W_q and W_k the same number of columns").format(W_q_shape=W_q.shape, W_q_shape_1=W_q.shape[1], W_k_shape=W_k.shape, W_k_shape_1=W_k.shape[1])
        )
    return scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v, mask=mask)
