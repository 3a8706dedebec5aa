"""Notebook 03, *Multi-head attention*.

Multi-head attention, vectorised over heads (rows are tokens, heads are ``(h, n, d_head)``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import (
    MaskError,
    ParameterError,
    ShapeError,
    as_float_array,
    check_finite,
    check_matrix,
)
from .attention import _sdpa_core

__all__ = ["MultiHeadParams", "init_multi_head", "split_heads", "merge_heads", "multi_head_attention"]


def _heads_arg(n_heads) -> int:
    if isinstance(n_heads, bool) or not isinstance(n_heads, (int, np.integer)) or n_heads < 1:
        raise ParameterError(f"n_heads must be a positive whole number, got {n_heads!r}")
    return int(n_heads)


def _check_divisible(d_model: int, n_heads: int, what: str = "d_model") -> None:
    if d_model % n_heads:
        ok = [h for h in range(1, d_model + 1) if d_model % h == 0]
        raise ParameterError(
            f"{what} = {d_model} is not divisible by n_heads = {n_heads}, so the heads cannot share it "
            f"equally; choose n_heads from {ok} or pass d_k / d_v explicitly"
        )


@dataclass
class MultiHeadParams:
    """Parameters of multi-head attention.

    Attributes
    ----------
    W_q, W_k : ndarray, shape (h, d_model, d_k)
    W_v : ndarray, shape (h, d_model, d_v)
    W_o : ndarray, shape (h * d_v, d_model)
    b_q, b_k : ndarray, shape (h, d_k), optional
    b_v : ndarray, shape (h, d_v), optional
    b_o : ndarray, shape (d_model,), optional
    """

    W_q: np.ndarray
    W_k: np.ndarray
    W_v: np.ndarray
    W_o: np.ndarray
    b_q: np.ndarray | None = None
    b_k: np.ndarray | None = None
    b_v: np.ndarray | None = None
    b_o: np.ndarray | None = None

    def __post_init__(self):
        for name in ("W_q", "W_k", "W_v", "W_o"):
            setattr(self, name, as_float_array(getattr(self, name), name))
        for name in ("W_q", "W_k", "W_v"):
            arr = getattr(self, name)
            if arr.ndim != 3:
                hint = "; for a single head use W[None] to add the head axis" if arr.ndim == 2 else ""
                raise ShapeError(f"{name} has shape {arr.shape} but (h, d_model, d_head) was expected{hint}")
        h, d_model, d_k = self.W_q.shape
        d_v = self.W_v.shape[2]
        expect = {"W_k": (h, d_model, d_k), "W_v": (h, d_model, d_v), "W_o": (h * d_v, d_model)}
        for name, shape in expect.items():
            got = getattr(self, name).shape
            if got != shape:
                hint = f"; did you pass it transposed? Use {name}.T" if got == shape[::-1] else ""
                raise ShapeError(f"{name} has shape {got} but {shape} was expected (h={h}, d_model={d_model}, d_k={d_k}, d_v={d_v}){hint}")
        for name, shape in {"b_q": (h, d_k), "b_k": (h, d_k), "b_v": (h, d_v), "b_o": (d_model,)}.items():
            b = getattr(self, name)
            if b is not None:
                b = as_float_array(b, name)
                if b.shape != shape:
                    raise ShapeError(f"{name} has shape {b.shape} but {shape} was expected")
                setattr(self, name, b)
        for name in ("W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o"):
            if getattr(self, name) is not None:
                check_finite(getattr(self, name), name)

    @property
    def n_heads(self) -> int:
        return self.W_q.shape[0]

    @property
    def d_model(self) -> int:
        return self.W_q.shape[1]

    @property
    def d_k(self) -> int:
        return self.W_q.shape[2]

    @property
    def d_v(self) -> int:
        return self.W_v.shape[2]

    def n_parameters(self) -> int:
        """Number of scalar parameters (weights and any biases)."""
        return sum(int(np.size(getattr(self, f))) for f in
                   ("W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o") if getattr(self, f) is not None)


def init_multi_head(d_model: int, n_heads: int, *, rng: np.random.Generator, d_k: int | None = None,
                    d_v: int | None = None, bias: bool = False, dtype=np.float64) -> MultiHeadParams:
    """Random multi-head parameters (normal, variance ``1 / fan_in``), seeded by ``rng``.

    ``d_k`` and ``d_v`` default to ``d_model // n_heads``, which must then divide evenly.
    """
    n_heads = _heads_arg(n_heads)
    if isinstance(d_model, bool) or not isinstance(d_model, (int, np.integer)) or d_model < 1:
        raise ParameterError(f"d_model must be a positive whole number, got {d_model!r}")
    if not isinstance(rng, np.random.Generator):
        raise ParameterError("rng must be a numpy Generator; make one with np.random.default_rng(seed)")
    if d_k is None or d_v is None:
        _check_divisible(d_model, n_heads)
    d_k = d_model // n_heads if d_k is None else d_k
    d_v = d_model // n_heads if d_v is None else d_v
    s_in, s_out = 1 / np.sqrt(d_model), 1 / np.sqrt(n_heads * d_v)
    p = MultiHeadParams(
        W_q=rng.normal(0, s_in, (n_heads, d_model, d_k)).astype(dtype),
        W_k=rng.normal(0, s_in, (n_heads, d_model, d_k)).astype(dtype),
        W_v=rng.normal(0, s_in, (n_heads, d_model, d_v)).astype(dtype),
        W_o=rng.normal(0, s_out, (n_heads * d_v, d_model)).astype(dtype),
    )
    if bias:
        p.b_q = np.zeros((n_heads, d_k), dtype)
        p.b_k = np.zeros((n_heads, d_k), dtype)
        p.b_v = np.zeros((n_heads, d_v), dtype)
        p.b_o = np.zeros(d_model, dtype)
    return p


def split_heads(X, n_heads: int) -> np.ndarray:
    """Split the feature axis into heads.

    Parameters
    ----------
    X : ndarray, shape (..., n, h * d_head)

    Returns
    -------
    ndarray, shape (..., h, n, d_head)
        Head ``i`` gets columns ``i * d_head`` to ``(i + 1) * d_head - 1``.
    """
    n_heads = _heads_arg(n_heads)
    X = check_matrix(X, "X", expected="(n, h * d_head)")
    *batch, n, d = X.shape
    _check_divisible(d, n_heads, what="the feature size")
    Xh = X.reshape(*batch, n, n_heads, d // n_heads)  # (..., n, h, d_head)
    return np.swapaxes(Xh, -3, -2)  # (..., h, n, d_head)


def merge_heads(Xh) -> np.ndarray:
    """Inverse of ``split_heads``: ``(..., h, n, d_head) -> (..., n, h * d_head)``."""
    Xh = as_float_array(Xh, "Xh")
    if Xh.ndim < 3:
        raise ShapeError(f"Xh has shape {Xh.shape} but (h, n, d_head) was expected")
    *batch, h, n, d = Xh.shape
    return np.swapaxes(Xh, -3, -2).reshape(*batch, n, h * d)  # (..., n, h, d_head) -> (..., n, h*d_head)


def _stack(W: np.ndarray) -> np.ndarray:
    h, d_model, d = W.shape
    return np.ascontiguousarray(W.transpose(1, 0, 2)).reshape(d_model, h * d)  # (d_model, h*d)


def _heads(Z: np.ndarray, h: int, d: int, scale: float | None = None) -> np.ndarray:
    """(..., n, h*d) -> contiguous (..., h, n, d), optionally times ``scale``; no validation (internal)."""
    *batch, n, _ = Z.shape
    view = np.swapaxes(Z.reshape(*batch, n, h, d), -3, -2)  # (..., h, n, d), strided
    if scale is None:
        return np.ascontiguousarray(view)
    return np.multiply(view, Z.dtype.type(scale), out=np.empty(view.shape, dtype=Z.dtype))


def _mask_for_heads(mask, batch: tuple, h: int):
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
            f"mask has shape {m.shape}; with a batch of shape {batch} its first {b} axis(es) must "
            f"be the batch, {batch} (or 1): (*batch, n_q, n_k) is one mask per sequence for every "
            f"head. For a mask per head, add the batch axis: (*batch, h, n_q, n_k) with h = {h},"
            f" e.g.{per_head or ' mask[None]'}")
    raise MaskError(
        f"mask has shape {m.shape} ({m.ndim} axes), which is ambiguous for tokens with batch shape "
        f"{batch} and {h} heads. Give (n_q, n_k) for every sequence and head, (*batch, n_q, n_k) "
        f"for one mask per sequence, or (*batch, h, n_q, n_k) for one per sequence and head")


def multi_head_attention(X_q, X_kv, params: MultiHeadParams, mask=None):
    """Multi-head attention: h scaled dot-product attentions in parallel, concatenated, then ``W_o``.

    For head ``l``: ``Q_l = X_q W_q[l] + b_q[l]``, ``K_l = X_kv W_k[l] + b_k[l]``,
    ``V_l = X_kv W_v[l] + b_v[l]``, ``head_l = softmax(Q_l K_l^T / sqrt(d_k)) V_l``.
    Output: ``concat(head_1, ..., head_h) W_o + b_o``. No Python loop over heads.

    Parameters
    ----------
    X_q : ndarray, shape (..., n_q, d_model)
        The tokens that ask (pass the same array as ``X_kv`` for self-attention).
    X_kv : ndarray, shape (..., n_k, d_model)
        The tokens that are looked at.
    params : MultiHeadParams
    mask : bool array, optional
        True means "may attend". ``(n_q, n_k)`` applies to every head (and every sequence);
        ``(..., n_q, n_k)`` with the tokens' batch axes (e.g. from ``padding_mask``) is one mask
        per sequence, shared by every head; ``(..., h, n_q, n_k)`` is one per sequence and head;
        without a batch, ``(h, n_q, n_k)`` is one per head.

    Returns
    -------
    output : ndarray, shape (..., n_q, d_model)
    weights : ndarray, shape (..., h, n_q, n_k)
    """
    if not isinstance(params, MultiHeadParams):
        raise ParameterError("params must be a MultiHeadParams; make one with init_multi_head(d_model, n_heads, rng=...)")
    h, d_model, d_k = params.W_q.shape
    X_q = check_matrix(X_q, "X_q", expected="(n_q, d_model)", d=d_model, d_name="d_model")
    X_kv = check_matrix(X_kv, "X_kv", expected="(n_k, d_model)", d=d_model, d_name="d_model")
    dt = np.result_type(X_q, X_kv, params.W_q)
    d_v = params.W_v.shape[2]
    scale = 1.0 / np.sqrt(d_k)
    if X_q is X_kv:  # self-attention: one product for all three projections
        W = np.empty((d_model, h * (2 * d_k + d_v)), dtype=dt)  # [W_q | W_k | W_v], heads side by side
        for j, (Wi, d) in enumerate(((params.W_q, d_k), (params.W_k, d_k), (params.W_v, d_v))):
            start = j * h * d_k
            W[:, start : start + h * d].reshape(d_model, h, d)[...] = Wi.transpose(1, 0, 2)  # (d_model, h, d)
        QKV = X_q @ W  # (..., n, h*(2 d_k + d_v))
        Q = QKV[..., : h * d_k]  # (..., n_q, h*d_k)
        K = QKV[..., h * d_k : 2 * h * d_k]  # (..., n_k, h*d_k)
        V = QKV[..., 2 * h * d_k :]  # (..., n_k, h*d_v)
    else:
        Q = X_q @ _stack(params.W_q).astype(dt, copy=False)  # (..., n_q, h*d_k)
        K = X_kv @ _stack(params.W_k).astype(dt, copy=False)  # (..., n_k, h*d_k)
        V = X_kv @ _stack(params.W_v).astype(dt, copy=False)  # (..., n_k, h*d_v)
    # The 1/sqrt(d_k) scale rides along with the copy into the head layout (cheaper than scaling
    # the big score array afterwards).
    Qh = _heads(Q, h, d_k, scale=scale)  # (..., h, n_q, d_k), contiguous, scaled
    Kh = _heads(K, h, d_k)  # (..., h, n_k, d_k)
    Vh = _heads(V, h, d_v)  # (..., h, n_k, d_v)
    if params.b_q is not None:
        Qh += (params.b_q * scale).astype(dt, copy=False)[:, None, :]  # (h, 1, d_k)
    if params.b_k is not None:
        Kh += params.b_k.astype(dt, copy=False)[:, None, :]
    if params.b_v is not None:
        Vh += params.b_v.astype(dt, copy=False)[:, None, :]
    batch = np.broadcast_shapes(X_q.shape[:-2], X_kv.shape[:-2])
    heads, weights = _sdpa_core(Qh, Kh, Vh, _mask_for_heads(mask, batch, h))  # (..., h, n_q, d_v), (..., h, n_q, n_k)
    out = merge_heads(heads) @ params.W_o.astype(dt, copy=False)  # (..., n_q, d_model)
    if params.b_o is not None:
        out += params.b_o
    if not np.isfinite(out).all():
        check_finite(out, "the output of multi_head_attention (overflow?)")
    return out, weights
