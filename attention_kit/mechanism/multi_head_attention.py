"""Notebook 03, *Multi-head attention*.

Multi-head attention, vectorised over heads (rows are tokens, heads are ``(h, n, d_head)``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import (
    ParameterError,
    ShapeError,
    as_float_array,
    check_count,
    check_finite,
    check_mask,
    check_matrix,
    check_positive,
    door,
)
from ..i18n import N_, _
from .kernels import mask_for_heads, sdpa_core, stack_heads, to_heads

__all__ = ["MultiHeadParams", "MultiHeadCache", "init_multi_head", "split_heads", "merge_heads",
           "multi_head_attention", "multi_head_forward"]


def _check_divisible(d_model: int, n_heads: int, what: str = "d_model") -> None:
    if d_model % n_heads:
        ok = [h for h in range(1, d_model + 1) if d_model % h == 0]
        raise ParameterError(
            _("{what} = {d_model} is not divisible by n_heads = {n_heads}, so the heads cannot share it "
            "equally; choose n_heads from {ok} or pass d_k / d_v explicitly").format(what=what, d_model=d_model, n_heads=n_heads, ok=ok)
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
                hint = _("; for a single head use W[None] to add the head axis") if arr.ndim == 2 else ""
                raise ShapeError(_("{name} has shape {shape} but (h, d_model, d_head) was expected{hint}").format(name=name, shape=arr.shape, hint=hint))
        h, d_model, d_k = self.W_q.shape
        d_v = self.W_v.shape[2]
        expect = {"W_k": (h, d_model, d_k), "W_v": (h, d_model, d_v), "W_o": (h * d_v, d_model)}
        for name, shape in expect.items():
            got = getattr(self, name).shape
            if got != shape:
                hint = _("; did you pass it transposed? Use {name}.T").format(name=name) if got == shape[::-1] else ""
                raise ShapeError(_("{name} has shape {got} but {shape} was expected (h={h}, d_model={d_model}, d_k={d_k}, d_v={d_v}){hint}").format(name=name, got=got, shape=shape, h=h, d_model=d_model, d_k=d_k, d_v=d_v, hint=hint))
        for name, shape in {"b_q": (h, d_k), "b_k": (h, d_k), "b_v": (h, d_v), "b_o": (d_model,)}.items():
            b = getattr(self, name)
            if b is not None:
                b = as_float_array(b, name)
                if b.shape != shape:
                    raise ShapeError(_("{name} has shape {b_shape} but {shape} was expected").format(name=name, b_shape=b.shape, shape=shape))
                setattr(self, name, b)
        for name in ("W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o"):
            if getattr(self, name) is not None:
                check_finite(getattr(self, name), name)

    @classmethod
    def unchecked(cls, W_q, W_k, W_v, W_o, b_q=None, b_k=None, b_v=None, b_o=None) -> "MultiHeadParams":
        """The same parameters without the constructor's checks: for the package's own weights,
        already checked (the constructor is the learner's door, see ``errors.door``)."""
        self = object.__new__(cls)
        self.__dict__.update(W_q=W_q, W_k=W_k, W_v=W_v, W_o=W_o, b_q=b_q, b_k=b_k, b_v=b_v, b_o=b_o)
        return self

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
    n_heads, d_model = check_count(n_heads, "n_heads"), check_count(d_model, "d_model")
    if not isinstance(rng, np.random.Generator):
        raise ParameterError(_("rng must be a numpy Generator; make one with np.random.default_rng(seed)"))
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
    n_heads = check_count(n_heads, "n_heads")
    X = check_matrix(X, "X", expected="(n, h * d_head)")
    *batch, n, d = X.shape
    _check_divisible(d, n_heads, what="the feature size")
    Xh = X.reshape(*batch, n, n_heads, d // n_heads)  # (..., n, h, d_head)
    return np.swapaxes(Xh, -3, -2)  # (..., h, n, d_head)


def _check_merge(Xh):
    Xh = as_float_array(Xh, "Xh")
    if Xh.ndim < 3:
        raise ShapeError(_("Xh has shape {Xh_shape} but (h, n, d_head) was expected").format(Xh_shape=Xh.shape))
    return (Xh,), {}


@door(_check_merge)
def merge_heads(Xh) -> np.ndarray:
    """Inverse of ``split_heads``: ``(..., h, n, d_head) -> (..., n, h * d_head)``."""
    *batch, h, n, d = Xh.shape
    return np.swapaxes(Xh, -3, -2).reshape(*batch, n, h * d)  # (..., n, h, d_head) -> (..., n, h*d_head)


@dataclass
class MultiHeadCache:
    """What the backward pass of multi-head attention (notebook 05) needs from the forward pass.

    Attributes
    ----------
    X_q : ndarray, shape (..., n_q, d_model)
    X_kv : ndarray, shape (..., n_k, d_model)
    params : MultiHeadParams
    Q : ndarray, shape (..., h, n_q, d_k)
        Per-head queries ``X_q W_q[l] + b_q[l]``, before the 1/sqrt(d_k) scale.
    K : ndarray, shape (..., h, n_k, d_k)
    V : ndarray, shape (..., h, n_k, d_v)
    weights : ndarray, shape (..., h, n_q, n_k)
    concat : ndarray, shape (..., n_q, h * d_v)
        The heads' outputs side by side, the input of ``W_o``.
    scale : float
        The factor on the scores, ``1 / sqrt(d_k)`` by default.
    rotation : optional
        The ``rotation`` the forward pass turned the queries and keys with (RoPE, notebook 09):
        then ``Q`` and ``K`` are the turned ones, and the backward pass turns their gradients back.
    """

    X_q: np.ndarray
    X_kv: np.ndarray
    params: MultiHeadParams
    Q: np.ndarray
    K: np.ndarray
    V: np.ndarray
    weights: np.ndarray
    concat: np.ndarray
    scale: float
    rotation: object | None = None


def _scale_arg(scale, d_k: int) -> float:
    if scale is None:
        return 1.0 / np.sqrt(d_k)
    return check_positive(scale, "scale", hint=N_("leave it None for 1/sqrt(d_k)"))


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
    out, weights, _ = multi_head_forward(X_q, X_kv, params, mask)
    return out, weights


def _check_forward(X_q, X_kv, params, mask=None, *, scale=None, rotation=None, bias=None):
    """The checks of :func:`multi_head_forward`'s arguments; the mask comes back in the heads' layout."""
    if not isinstance(params, MultiHeadParams):
        raise ParameterError(_("params must be a MultiHeadParams; make one with init_multi_head(d_model, n_heads, rng=...)"))
    h, d_model, d_k = params.W_q.shape
    X_q = check_matrix(X_q, "X_q", expected="(n_q, d_model)", d=d_model, d_name="d_model")
    X_kv = check_matrix(X_kv, "X_kv", expected="(n_k, d_model)", d=d_model, d_name="d_model")
    scale = _scale_arg(scale, d_k)
    batch = np.broadcast_shapes(X_q.shape[:-2], X_kv.shape[:-2])
    scores = batch + (h, X_q.shape[-2], X_kv.shape[-2])  # (..., h, n_q, n_k)
    if rotation is not None and not (callable(getattr(rotation, "forward", None))
                                     and callable(getattr(rotation, "backward", None))):
        raise ParameterError(_("rotation must have forward(Q, K) and backward(dQ, dK), "
                             "e.g. attention_kit.rope_rotation(positions)"))
    if bias is not None:
        bias = as_float_array(bias, "bias")
        try:
            ok = np.broadcast_shapes(bias.shape, scores) == scores
        except ValueError:
            ok = False
        if not ok:
            raise ShapeError(_("bias has shape {bias_shape} but (h, n_q, n_k) = {scores_3} (or a shape that "
                             "broadcasts to the scores) was expected: one bias per head, query and key").format(bias_shape=bias.shape, scores_3=scores[-3:]))
        check_finite(bias, "bias")
    if mask is not None:
        mask = check_mask(mask_for_heads(mask, batch, h), scores)
    return (X_q, X_kv, params, mask), {"scale": scale, "rotation": rotation, "bias": bias}


@door(_check_forward)
def multi_head_forward(X_q, X_kv, params: MultiHeadParams, mask=None, *, scale: float | None = None,
                       rotation=None, bias=None):
    """:func:`multi_head_attention`, also returning what its backward pass needs (notebook 05).

    The one forward pass of multi-head attention: :func:`multi_head_attention` returns its first
    two results, ``attention_kit.learn.backward.multi_head_backward`` takes its cache.
    ``scale`` (keyword only) replaces the factor ``1 / sqrt(d_k)`` on the scores, for experiments:
    ``scale=1.0`` is attention without the scaling.

    Two ways in for a position scheme (keyword only; notebook 09 brings RoPE and ALiBi through them):

    * ``rotation``: turns every head's queries and keys, shape (..., h, n, d_k), before the scores:
      an object with ``forward(Q, K) -> (Q, K)`` and ``backward(dQ, dK) -> (dQ, dK)`` (its
      transpose, for the backward pass), e.g. ``attention_kit.rope_rotation(positions)``;
    * ``bias``: added to the scaled scores before the softmax, broadcastable to
      ``(..., h, n_q, n_k)`` (ALiBi's ``alibi_bias(slopes, n)``, shape (h, n_q, n_k)); the mask
      still blocks what it blocks.

    Returns
    -------
    output : ndarray, shape (..., n_q, d_model)
    weights : ndarray, shape (..., h, n_q, n_k)
    cache : MultiHeadCache

    ``multi_head_forward.unchecked`` is the same pass without the checks, for the package's own
    inner calls: float arrays already checked, a boolean mask already in the heads' layout
    ``(..., h, n_q, n_k)`` (or one (n_q, n_k) for all), a finite bias.
    """
    h, d_model, d_k = params.W_q.shape
    dt = np.result_type(X_q, X_kv, params.W_q)
    d_v = params.W_v.shape[2]
    scale = 1.0 / np.sqrt(d_k) if scale is None else scale
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
        Q = X_q @ stack_heads(params.W_q).astype(dt, copy=False)  # (..., n_q, h*d_k)
        K = X_kv @ stack_heads(params.W_k).astype(dt, copy=False)  # (..., n_k, h*d_k)
        V = X_kv @ stack_heads(params.W_v).astype(dt, copy=False)  # (..., n_k, h*d_v)
    Qh, Kh, Vh = to_heads(Q, h, d_k), to_heads(K, h, d_k), to_heads(V, h, d_v)  # (..., h, n, d) each
    for arr, b in ((Qh, params.b_q), (Kh, params.b_k), (Vh, params.b_v)):
        if b is not None:
            arr += b.astype(dt, copy=False)[:, None, :]  # (h, 1, d): the same bias for every token of a head
    if rotation is not None:  # e.g. RoPE: each query and key turned at its position (after the biases b_q, b_k)
        Qh, Kh = rotation.forward(Qh, Kh)
    heads, weights = sdpa_core(Qh * dt.type(scale), Kh, Vh, mask, bias)  # (..., h, n_q, d_v), (..., h, n_q, n_k)
    concat = merge_heads.unchecked(heads)  # (..., n_q, h*d_v)
    out = concat @ params.W_o.astype(dt, copy=False)  # (..., n_q, d_model)
    if params.b_o is not None:
        out += params.b_o
    if not np.isfinite(out).all():
        check_finite(out, N_("the output of multi_head_attention (overflow?)"))
    return out, weights, MultiHeadCache(X_q, X_kv, params, Qh, Kh, Vh, weights, concat, scale, rotation)
