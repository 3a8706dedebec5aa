"""Notebook 05, *How attention learns*.

The backward pass of attention, by hand (rows are tokens, heads are ``(h, n, d_head)``).

Every function here returns the gradient of a scalar loss ``L`` with respect to the inputs of a
forward function, given ``grad_out = dL/d(output)`` of the same shape as the output. Nothing is
automatic: each gradient is one or two matrix products, written out and commented with its shape.

* ``softmax_backward(a, grad_a)``: the vector-Jacobian product of the row-wise softmax.
* ``attention_forward`` / ``attention_backward``: scaled dot-product attention with a cache of
  what the backward pass needs; ``scaled_dot_product_attention_backward`` runs both.
* ``multi_head_backward``: the same for multi-head attention (biases included), from the cache of
  the one multi-head forward, ``multi_head_forward`` (:mod:`attention_kit.mechanism.multi_head_attention`);
  ``multi_head_attention_backward`` runs both.
* ``numerical_gradient`` (central differences) and ``relative_error``, to check all of the above.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import ParameterError, ShapeError, as_float_array, check_finite, check_positive, door
from ..i18n import N_, _
from ..mechanism.attention import scaled_dot_product_attention
from ..mechanism.kernels import stack_heads, to_heads
from ..mechanism.multi_head_attention import (
    MultiHeadCache,
    MultiHeadParams,
    merge_heads,
    multi_head_forward,
)

__all__ = [
    "softmax_backward", "AttentionCache", "attention_forward", "attention_backward",
    "scaled_dot_product_attention_backward",
    "multi_head_backward", "multi_head_attention_backward", "numerical_gradient", "relative_error",
]


def _swap(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)  # (..., a, b) -> (..., b, a)


def _grad_arg(grad, shape: tuple, name: str, of: str) -> np.ndarray:
    """Validate an incoming gradient: a finite float array with exactly the shape of ``of``."""
    g = as_float_array(grad, name)
    if g.shape != tuple(shape):
        hint = _("; did you pass it transposed? Use .T") if g.shape == tuple(shape)[:-2] + tuple(shape)[-2:][::-1] else ""
        raise ShapeError(_("{name} has shape {g_shape} but it must have the shape of {of}, {tuple_shape}: "
                         "one entry dL/dy for every entry y of {of}{hint}").format(name=name, g_shape=g.shape, of=_(of), tuple_shape=tuple(shape), hint=hint))
    check_finite(g, name)
    return g


def _unbroadcast(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum ``grad`` over the axes that broadcasting added or stretched, so it gets ``shape`` back.

    An input that was broadcast (say K of shape (n_k, d_k) against a batch of queries) was used
    once per batch element, so its gradient is the sum of the per-element gradients.
    """
    extra = grad.ndim - len(shape)
    if extra:
        grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True) if stretched else grad


def _softmax_vjp(a: np.ndarray, g: np.ndarray, axis: int = -1) -> np.ndarray:
    """``a * (g - sum_j g_j a_j)`` along ``axis``; no validation (internal)."""
    return a * (g - np.sum(g * a, axis=axis, keepdims=True))


def softmax_backward(a, grad_a, *, axis: int = -1) -> np.ndarray:
    """Gradient with respect to the scores, given the softmax weights and ``dL/da``.

    With ``a = softmax(s)`` along ``axis``, ``da_i/ds_j = a_i (delta_ij - a_j)``, so
    ``dL/ds_j = sum_i dL/da_i * da_i/ds_j = a_j (g_j - sum_i g_i a_i)``.
    A masked entry (weight exactly 0) gets a gradient of exactly 0, and so does every entry of a
    fully masked row.

    Parameters
    ----------
    a : ndarray, shape (..., n_k)
        The softmax weights (the output of the forward pass, not the scores).
    grad_a : ndarray, same shape as ``a``
        ``dL/da``.
    axis : int
        The axis the softmax normalised (the keys' axis, -1, for attention weights).

    Returns
    -------
    grad_s : ndarray, same shape as ``a``
        ``dL/ds``.
    """
    a = as_float_array(a, "a")
    if a.ndim == 0:
        raise ShapeError(_("a is a scalar; give the softmax weights, shape (n_k,) or (n_q, n_k)"))
    check_finite(a, "a")
    if np.any(a < -1e-12) or np.any(a > 1 + 1e-12):  # (a rounding error of the softmax is no mistake)
        raise ParameterError(_("a must hold softmax weights, between 0 and 1; did you pass the scores s "
                             "instead of the weights a = softmax(s)?"))
    g = _grad_arg(grad_a, a.shape, "grad_a", "a")
    return _softmax_vjp(a, g, axis)


# ---------------------------------------------------------------- scaled dot-product attention

@dataclass
class AttentionCache:
    """What the backward pass of scaled dot-product attention needs from the forward pass.

    Attributes
    ----------
    Q : ndarray, shape (..., n_q, d_k)
        The queries, before scaling.
    K : ndarray, shape (..., n_k, d_k)
    V : ndarray, shape (..., n_k, d_v)
    weights : ndarray, shape (..., n_q, n_k)
        ``A = softmax(Q K^T * scale)`` (masked entries 0).
    scale : float
        The factor on the scores, ``1 / sqrt(d_k)`` by default.
    """

    Q: np.ndarray
    K: np.ndarray
    V: np.ndarray
    weights: np.ndarray
    scale: float


def _attention_grads(Q, K, V, A, g, scale: float):
    """dQ, dK, dV of ``out = softmax(Q K^T * scale) V`` given ``g = dL/d(out)`` (no validation).

    The results have the shapes of Q, K and V (summed over any broadcast batch axes).
    """
    dV = _swap(A) @ g  # (..., n_k, n_q) @ (..., n_q, d_v) -> (..., n_k, d_v)
    dA = g @ _swap(V)  # (..., n_q, d_v) @ (..., d_v, n_k) -> (..., n_q, n_k)
    dS = _softmax_vjp(A, dA)  # (..., n_q, n_k), 0 wherever A is 0 (masked)
    dQ = (dS @ K) * scale  # (..., n_q, n_k) @ (..., n_k, d_k) -> (..., n_q, d_k)
    dK = (_swap(dS) @ Q) * scale  # (..., n_k, n_q) @ (..., n_q, d_k) -> (..., n_k, d_k)
    return _unbroadcast(dQ, Q.shape), _unbroadcast(dK, K.shape), _unbroadcast(dV, V.shape)


def attention_forward(Q, K, V, mask=None, *, scale: float | None = None):
    """``scaled_dot_product_attention``, plus a cache for ``attention_backward``.

    Same arguments, checks and errors as ``scaled_dot_product_attention``.

    Returns
    -------
    output : ndarray, shape (..., n_q, d_v)
    weights : ndarray, shape (..., n_q, n_k)
    cache : AttentionCache
    """
    out, weights = scaled_dot_product_attention(Q, K, V, mask, scale=scale)  # validates everything
    Q, K, V = (as_float_array(x, name) for x, name in ((Q, "Q"), (K, "K"), (V, "V")))
    s = 1.0 / np.sqrt(Q.shape[-1]) if scale is None else float(scale)
    return out, weights, AttentionCache(Q, K, V, weights, s)


def attention_backward(cache: AttentionCache, grad_out):
    """Gradients of scaled dot-product attention from its cache and ``dL/d(output)``.

    ``dV = A^T g``, ``dA = g V^T``, ``dS = softmax_backward(A, dA)``, ``dQ = dS K * scale``,
    ``dK = dS^T Q * scale``.

    Parameters
    ----------
    cache : AttentionCache
        From ``attention_forward``.
    grad_out : ndarray, shape (..., n_q, d_v)

    Returns
    -------
    dQ, dK, dV : ndarrays with the shapes of Q, K and V
    """
    if not isinstance(cache, AttentionCache):
        raise ParameterError(_("cache must be the AttentionCache returned by attention_forward"))
    out_shape = cache.weights.shape[:-1] + cache.V.shape[-1:]  # (..., n_q, d_v)
    g = _grad_arg(grad_out, out_shape, "grad_out", N_("the attention output (..., n_q, d_v)"))
    return _attention_grads(cache.Q, cache.K, cache.V, cache.weights, g, cache.scale)


def scaled_dot_product_attention_backward(Q, K, V, mask, grad_out, *, scale: float | None = None):
    """``(dQ, dK, dV)`` of ``softmax(Q K^T / sqrt(d_k)) V`` given ``grad_out = dL/d(output)``.

    Parameters
    ----------
    Q : ndarray, shape (..., n_q, d_k)
    K : ndarray, shape (..., n_k, d_k)
    V : ndarray, shape (..., n_k, d_v)
    mask : bool array broadcastable to (..., n_q, n_k), or None
        True means "may attend"; masked pairs pass no gradient.
    grad_out : ndarray, shape (..., n_q, d_v)
    scale : float, optional
        Defaults to ``1 / sqrt(d_k)``.

    Returns
    -------
    dQ : ndarray, shape of Q
    dK : ndarray, shape of K
    dV : ndarray, shape of V
    """
    _, _, cache = attention_forward(Q, K, V, mask, scale=scale)
    return attention_backward(cache, grad_out)


# ---------------------------------------------------------------- multi-head attention

def _sum_to_head_bias(dZ: np.ndarray) -> np.ndarray:
    """(..., h, n, d) -> (h, d): a head's bias is added to every token of every batch element."""
    return dZ.reshape(-1, *dZ.shape[-3:]).sum(axis=(0, 2))


def _weight_grad(X: np.ndarray, dZ: np.ndarray) -> np.ndarray:
    """dW of ``Z = X @ W_stacked`` summed over tokens and batch, back in the (h, d_model, d) layout."""
    h, _, d = dZ.shape[-3:]
    dZ2 = merge_heads.unchecked(dZ).reshape(-1, h * d)  # (batch*n, h*d)
    X2 = X.reshape(-1, X.shape[-1])  # (batch*n, d_model)
    return (X2.T @ dZ2).reshape(X.shape[-1], h, d).transpose(1, 0, 2)  # (d_model, h, d) -> (h, d_model, d)


def _check_multi_head_backward(cache, grad_out):
    if not isinstance(cache, MultiHeadCache):
        raise ParameterError(_("cache must be the MultiHeadCache returned by multi_head_forward"))
    out_shape = cache.concat.shape[:-1] + (cache.params.W_q.shape[1],)  # (..., n_q, d_model)
    return (cache, _grad_arg(grad_out, out_shape, "grad_out", N_("the output (..., n_q, d_model)"))), {}


@door(_check_multi_head_backward)
def multi_head_backward(cache: MultiHeadCache, grad_out):
    """Gradients of multi-head attention from its cache and ``dL/d(output)``.

    Parameters
    ----------
    cache : MultiHeadCache
        From ``multi_head_forward``.
    grad_out : ndarray, shape (..., n_q, d_model)

    Returns
    -------
    dX_q : ndarray, shape of X_q
    dX_kv : ndarray, shape of X_kv
        For self-attention (the same tokens as X_q and X_kv) the gradient of the tokens is
        ``dX_q + dX_kv``: they are used twice.
    grads : MultiHeadParams
        ``dL/dW_q`` ... ``dL/dW_o``, and ``dL/db_q`` ... ``dL/db_o`` where the parameters have biases.
    """
    p, c, g = cache.params, cache, grad_out
    h, d_model, d_k = p.W_q.shape
    g2 = g.reshape(-1, d_model)  # (batch*n_q, d_model)
    dW_o = c.concat.reshape(-1, c.concat.shape[-1]).T @ g2  # (h*d_v, batch*n_q) @ (batch*n_q, d_model)
    d_heads = to_heads(g @ p.W_o.T, h, p.d_v)  # (..., n_q, h*d_v) -> (..., h, n_q, d_v)
    dQ, dK, dV = _attention_grads(c.Q, c.K, c.V, c.weights, d_heads, c.scale)
    if c.rotation is not None:  # back through the rotation (RoPE, notebook 09): turn the gradients back
        dQ, dK = c.rotation.backward(dQ, dK)
    merge = merge_heads.unchecked
    dX_q = merge(dQ) @ stack_heads(p.W_q).T  # (..., n_q, h*d_k) @ (h*d_k, d_model)
    dX_kv = merge(dK) @ stack_heads(p.W_k).T + merge(dV) @ stack_heads(p.W_v).T  # (..., n_k, d_model)
    grads = MultiHeadParams.unchecked(  # the gradients, made here: nothing to check
        W_q=_weight_grad(c.X_q, dQ), W_k=_weight_grad(c.X_kv, dK), W_v=_weight_grad(c.X_kv, dV), W_o=dW_o,
        b_q=None if p.b_q is None else _sum_to_head_bias(dQ),
        b_k=None if p.b_k is None else _sum_to_head_bias(dK),
        b_v=None if p.b_v is None else _sum_to_head_bias(dV),
        b_o=None if p.b_o is None else g2.sum(axis=0),
    )
    return _unbroadcast(dX_q, c.X_q.shape), _unbroadcast(dX_kv, c.X_kv.shape), grads


def multi_head_attention_backward(X_q, X_kv, params: MultiHeadParams, mask, grad_out, *,
                                  scale: float | None = None):
    """``(dX_q, dX_kv, grads)`` of ``multi_head_attention`` given ``grad_out = dL/d(output)``.

    Parameters
    ----------
    X_q : ndarray, shape (..., n_q, d_model)
    X_kv : ndarray, shape (..., n_k, d_model)
    params : MultiHeadParams
    mask : bool array or None
        As in ``multi_head_attention``.
    grad_out : ndarray, shape (..., n_q, d_model)
    scale : float, optional
        As in ``multi_head_forward``; defaults to ``1 / sqrt(d_k)``.

    Returns
    -------
    dX_q, dX_kv : ndarrays with the shapes of X_q and X_kv
    grads : MultiHeadParams
        The gradient of every parameter (biases included when ``params`` has them).
    """
    _, _, cache = multi_head_forward(X_q, X_kv, params, mask, scale=scale)
    return multi_head_backward(cache, grad_out)


# ---------------------------------------------------------------- gradient checks

def numerical_gradient(f: Callable[[np.ndarray], float], x, eps: float = 1e-6) -> np.ndarray:
    """Central differences ``(f(x + eps e_i) - f(x - eps e_i)) / (2 eps)`` for every entry i of ``x``.

    The error is of order ``eps**2`` (a one-sided difference has an error of order ``eps``).

    Parameters
    ----------
    f : callable
        Takes an array shaped like ``x`` and returns a scalar. It receives a perturbed copy of ``x``;
        ``x`` itself is never modified.
    x : ndarray, any shape
    eps : float > 0

    Returns
    -------
    grad : ndarray, float64, shape of x
    """
    step = check_positive(eps, "eps", hint=N_("a small one such as 1e-6"))
    x = np.array(as_float_array(x, "x"), dtype=np.float64, copy=True)
    check_finite(x, "x")
    grad = np.empty_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + step
        f_plus = _scalar(f(x))
        x[i] = old - step
        f_minus = _scalar(f(x))
        x[i] = old
        grad[i] = (f_plus - f_minus) / (2 * step)
    return grad


def _scalar(value) -> float:
    v = np.asarray(value, dtype=float)
    if v.size != 1:
        raise ShapeError(_("f must return one number (a scalar loss), but it returned shape {v_shape}; "
                         "reduce it, e.g. with np.sum(out * R) for a fixed random R").format(v_shape=v.shape))
    if not np.isfinite(v):
        raise ParameterError(_("f returned NaN or inf; a gradient check needs a finite loss"))
    return float(v.reshape(()))


def relative_error(a, b) -> float:
    """``|a - b| / (|a| + |b|)`` with Euclidean norms; 0 when both are zero.

    Scale-free: multiplying both gradients by 1000 leaves it unchanged. In float64 a correct
    gradient checked with central differences gives about 1e-8 or less; 1e-2 means a bug.
    """
    a = as_float_array(a, "a")
    b = as_float_array(b, "b")
    if a.shape != b.shape:
        raise ShapeError(_("a has shape {shape} but b has shape {b_shape}; compare two gradients of the same array").format(shape=a.shape, b_shape=b.shape))
    den = np.linalg.norm(a) + np.linalg.norm(b)
    return 0.0 if den == 0 else float(np.linalg.norm(a - b) / den)
