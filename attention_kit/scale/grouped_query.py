"""Notebook 07, *Attention at scale*.

Multi-query and grouped-query attention: fewer key/value heads than query heads.

Multi-head attention gives each of its ``h`` heads its own keys and values, so a KV cache holds
``h`` key and ``h`` value vectors per token and layer. **Grouped-query attention** (GQA; Ainslie et
al. 2023) keeps ``h`` query heads but only ``h_kv`` key/value heads, ``h_kv`` dividing ``h``: query
heads ``g j .. g j + g - 1`` (``g = h / h_kv``) all read key/value head ``j``. **Multi-query
attention** (MQA; Shazeer 2019) is the case ``h_kv = 1``, and ``h_kv = h`` is multi-head attention
again. The cache shrinks by the factor ``h / h_kv``; the attention of each query head is unchanged
in form, ``softmax(Q_l K_j^T / sqrt(d_k)) V_j``.
"""

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
)
from ..i18n import _
from ..mechanism.kernels import mask_for_heads, sdpa_core, stack_heads, to_heads
from ..mechanism.multi_head_attention import (
    MultiHeadParams,
    merge_heads,
)

__all__ = ["GroupedQueryParams", "init_grouped_query", "grouped_query_attention", "from_multi_head",
           "to_multi_head"]


@dataclass
class GroupedQueryParams:
    """Parameters of grouped-query attention (no biases).

    Attributes
    ----------
    W_q : ndarray, shape (h, d_model, d_k)
    W_k : ndarray, shape (h_kv, d_model, d_k)
    W_v : ndarray, shape (h_kv, d_model, d_v)
    W_o : ndarray, shape (h * d_v, d_model)
    """

    W_q: np.ndarray
    W_k: np.ndarray
    W_v: np.ndarray
    W_o: np.ndarray

    def __post_init__(self):
        for name in ("W_q", "W_k", "W_v", "W_o"):
            arr = as_float_array(getattr(self, name), name)
            if name != "W_o" and arr.ndim != 3:
                raise ShapeError(_("{name} has shape {shape} but (heads, d_model, d_head) was expected").format(name=name, shape=arr.shape))
            check_finite(arr, name)
            setattr(self, name, arr)
        h, d_model, d_k = self.W_q.shape
        h_kv = self.W_k.shape[0]
        if h % h_kv:
            raise ParameterError(_("W_q has {h} query heads and W_k {h_kv} key/value heads, but {h_kv} does not "
                                 "divide {h}: every key/value head must serve the same number of query heads; "
                                 "choose n_kv_heads from {divisors_h}").format(h=h, h_kv=h_kv, divisors_h=_divisors(h)))
        d_v = self.W_v.shape[2]
        expect = {"W_k": (h_kv, d_model, d_k), "W_v": (h_kv, d_model, d_v), "W_o": (h * d_v, d_model)}
        for name, shape in expect.items():
            got = getattr(self, name).shape
            if got != shape:
                raise ShapeError(_("{name} has shape {got} but {shape} was expected "
                                 "(h={h}, h_kv={h_kv}, d_model={d_model}, d_k={d_k}, d_v={d_v})").format(name=name, got=got, shape=shape, h=h, h_kv=h_kv, d_model=d_model, d_k=d_k, d_v=d_v))

    @property
    def n_heads(self) -> int:
        return self.W_q.shape[0]

    @property
    def n_kv_heads(self) -> int:
        return self.W_k.shape[0]

    @property
    def group(self) -> int:
        """Query heads per key/value head, ``h / h_kv``."""
        return self.n_heads // self.n_kv_heads

    def n_parameters(self) -> int:
        return sum(int(getattr(self, f).size) for f in ("W_q", "W_k", "W_v", "W_o"))


def _divisors(h: int) -> list[int]:
    return [k for k in range(1, h + 1) if h % k == 0]


def init_grouped_query(d_model: int, n_heads: int, n_kv_heads: int, *, rng: np.random.Generator,
                       d_k: int | None = None, d_v: int | None = None, dtype=np.float64) -> GroupedQueryParams:
    """Random grouped-query parameters (normal, variance ``1 / fan_in``), seeded by ``rng``.

    ``n_kv_heads`` must divide ``n_heads``; 1 gives multi-query attention, ``n_heads`` multi-head.
    """
    n_heads, n_kv_heads = check_count(n_heads, "n_heads"), check_count(n_kv_heads, "n_kv_heads")
    if n_heads % n_kv_heads:
        raise ParameterError(_("n_kv_heads = {n_kv_heads} does not divide n_heads = {n_heads}; choose n_kv_heads "
                             "from {divisors_n_heads} (1 is multi-query, {n_heads} is multi-head attention)").format(n_kv_heads=n_kv_heads, n_heads=n_heads, divisors_n_heads=_divisors(n_heads)))
    if not isinstance(rng, np.random.Generator):
        raise ParameterError(_("rng must be a numpy Generator; make one with np.random.default_rng(seed)"))
    if d_k is None or d_v is None:
        if d_model % n_heads:
            raise ParameterError(_("d_model = {d_model} is not divisible by n_heads = {n_heads}; "
                                 "choose n_heads from {divisors_d_model} or pass d_k and d_v").format(d_model=d_model, n_heads=n_heads, divisors_d_model=_divisors(d_model)))
    d_k = d_model // n_heads if d_k is None else d_k
    d_v = d_model // n_heads if d_v is None else d_v
    s_in, s_out = 1 / np.sqrt(d_model), 1 / np.sqrt(n_heads * d_v)
    return GroupedQueryParams(
        W_q=rng.normal(0, s_in, (n_heads, d_model, d_k)).astype(dtype),
        W_k=rng.normal(0, s_in, (n_kv_heads, d_model, d_k)).astype(dtype),
        W_v=rng.normal(0, s_in, (n_kv_heads, d_model, d_v)).astype(dtype),
        W_o=rng.normal(0, s_out, (n_heads * d_v, d_model)).astype(dtype),
    )


def from_multi_head(params: MultiHeadParams) -> GroupedQueryParams:
    """Multi-head parameters (without biases) as grouped-query parameters with ``h_kv = h``."""
    if not isinstance(params, MultiHeadParams):
        raise ParameterError(_("params must be a MultiHeadParams; make one with init_multi_head(...)"))
    if any(getattr(params, b) is not None for b in ("b_q", "b_k", "b_v", "b_o")):
        raise ParameterError(_("grouped-query attention here has no biases; use init_multi_head(..., bias=False)"))
    return GroupedQueryParams(params.W_q, params.W_k, params.W_v, params.W_o)


def to_multi_head(params: GroupedQueryParams) -> MultiHeadParams:
    """The multi-head parameters that compute the same thing: each key/value head repeated ``g`` times."""
    if not isinstance(params, GroupedQueryParams):
        raise ParameterError(_("params must be a GroupedQueryParams; make one with init_grouped_query(...)"))
    g = params.group
    return MultiHeadParams(W_q=params.W_q, W_k=np.repeat(params.W_k, g, axis=0),  # (h, d_model, d_k)
                           W_v=np.repeat(params.W_v, g, axis=0), W_o=params.W_o)  # (h, d_model, d_v)


def _grouped_mask(mask, batch: tuple, h: int, h_kv: int, n_q: int, n_k: int):
    """A mask in multi-head layout (see ``multi_head_attention``), as (..., h_kv, g, n_q, n_k) or
    (..., 1, 1, n_q, n_k), to match the grouped scores; None stays None."""
    if mask is None:
        return None
    m = check_mask(mask_for_heads(mask, batch, h), batch + (h, n_q, n_k))
    if m.ndim < 3 or m.shape[-3] == 1:  # the same mask for every head
        return m[..., None, :, :] if m.ndim >= 3 else m
    return m.reshape(m.shape[:-3] + (h_kv, h // h_kv) + m.shape[-2:])  # (..., h_kv, g, n_q, n_k)


def grouped_query_attention(X_q, X_kv, params: GroupedQueryParams, mask=None):
    """Grouped-query attention: ``h`` query heads sharing ``h_kv`` key/value heads, then ``W_o``.

    Query head ``l`` attends with key/value head ``l // g`` (``g = h / h_kv``):
    ``head_l = softmax(Q_l K_{l//g}^T / sqrt(d_k)) V_{l//g}``; output
    ``concat(head_1, ..., head_h) W_o``. The keys and values are computed once per key/value head
    and broadcast over the group (never copied).

    Parameters
    ----------
    X_q : ndarray, shape (..., n_q, d_model)
    X_kv : ndarray, shape (..., n_k, d_model)
    params : GroupedQueryParams
    mask : bool array, optional
        True means "may attend", in the layouts of ``multi_head_attention``: ``(n_q, n_k)`` for
        every head, ``(..., n_q, n_k)`` with the tokens' batch axes for one mask per sequence,
        ``(..., h, n_q, n_k)`` for one per sequence and query head.

    Returns
    -------
    output : ndarray, shape (..., n_q, d_model)
    weights : ndarray, shape (..., h, n_q, n_k)
    """
    if not isinstance(params, GroupedQueryParams):
        raise ParameterError(_("params must be a GroupedQueryParams; make one with "
                             "init_grouped_query(d_model, n_heads, n_kv_heads, rng=...)"))
    h, d_model, d_k = params.W_q.shape
    h_kv, g, d_v = params.n_kv_heads, params.group, params.W_v.shape[2]
    X_q = check_matrix(X_q, "X_q", expected="(n_q, d_model)", d=d_model, d_name="d_model")
    X_kv = check_matrix(X_kv, "X_kv", expected="(n_k, d_model)", d=d_model, d_name="d_model")
    dt = np.result_type(X_q, X_kv, params.W_q)
    Qh = to_heads(X_q @ stack_heads(params.W_q).astype(dt, copy=False), h, d_k, scale=1.0 / np.sqrt(d_k))  # (..., h, n_q, d_k)
    Kh = to_heads(X_kv @ stack_heads(params.W_k).astype(dt, copy=False), h_kv, d_k)  # (..., h_kv, n_k, d_k)
    Vh = to_heads(X_kv @ stack_heads(params.W_v).astype(dt, copy=False), h_kv, d_v)  # (..., h_kv, n_k, d_v)
    n_q, n_k = Qh.shape[-2], Kh.shape[-2]
    batch = np.broadcast_shapes(X_q.shape[:-2], X_kv.shape[:-2])
    Qg = Qh.reshape(Qh.shape[:-3] + (h_kv, g, n_q, d_k))  # (..., h_kv, g, n_q, d_k): groups side by side
    mask = _grouped_mask(mask, batch, h, h_kv, n_q, n_k)
    heads, weights = sdpa_core(Qg, Kh[..., None, :, :], Vh[..., None, :, :], mask)  # (..., h_kv, g, n_q, d_v)
    heads = heads.reshape(heads.shape[:-4] + (h, n_q, d_v))  # (..., h, n_q, d_v)
    weights = weights.reshape(weights.shape[:-4] + (h, n_q, n_k))  # (..., h, n_q, n_k)
    return merge_heads(heads) @ params.W_o.astype(dt, copy=False), weights  # (..., n_q, d_model)
