"""Notebook 01, *The general attention model*.

Score functions ``score(q, k)`` from the table of Brauwers & Frasincar (TKDE 2023), in the row convention.

Each function maps queries ``Q`` of shape ``(..., n_q, d_q)`` and keys ``K`` of shape
``(..., n_k, d_k)`` to scores of shape ``(..., n_q, n_k)``. A single query of shape ``(d_q,)`` gives
scores of shape ``(n_k,)``.

The survey writes column vectors: ``k^T W q`` with ``W`` of shape ``(d_k, d_q)``. Here vectors are
rows, so every weight matrix maps a row on its left: ``q W k^T`` with ``W`` of shape ``(d_q, d_k)``.
The two agree when ``W_here = W_survey.T``.

=================  ============================  ===============================  ==================
name               formula (row convention)      parameters                        origin
=================  ============================  ===============================  ==================
additive           ``act(q W1 + k W2 + b) w``    W1 (d_q,d_w) W2 (d_k,d_w) b w     Bahdanau 2015
concat             ``act([q; k] W + b) w``       W (d_q+d_k, d_w), b, w (d_w,)     Luong 2015
dot                ``q k^T``                     none (d_q = d_k)                  Luong 2015
scaled_dot         ``q k^T / sqrt(d_k)``         none (d_q = d_k)                  Vaswani 2017
general            ``q W k^T``                   W (d_q, d_k)                      Luong 2015
biased_general     ``(q W + b) k^T``             W (d_q, d_k), b (d_k,)            Sordoni 2016
activated_general  ``act(q W k^T + b)``          W (d_q, d_k), b scalar            Ma 2017
similarity         ``cos(q, k)``                 none (d_q = d_k)                  Graves 2014
=================  ============================  ===============================  ==================
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..errors import (
    ParameterError,
    ShapeError,
    UnknownNameError,
    as_float_array,
    check_finite,
    check_matrix,
)
from ..i18n import _

__all__ = [
    "ACTIVATIONS",
    "SCORES",
    "ScoreSpec",
    "additive_score",
    "concat_score",
    "dot_score",
    "scaled_dot_score",
    "general_score",
    "biased_general_score",
    "activated_general_score",
    "cosine_score",
    "score",
    "default_score_params",
]

ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "tanh": np.tanh,
    "relu": lambda z: np.maximum(z, 0),
    "sigmoid": lambda z: 1.0 / (1.0 + np.exp(-z)),
    "identity": lambda z: z,
}


def _act(act) -> Callable[[np.ndarray], np.ndarray]:
    if callable(act):
        return act
    try:
        return ACTIVATIONS[act]
    except (KeyError, TypeError):
        raise UnknownNameError(_("unknown activation {act!r}; choose one of {sorted_ACTIVATIONS} or pass a function").format(act=act, sorted_ACTIVATIONS=sorted(ACTIVATIONS))) from None


def _qk(Q, K, *, same_dim: bool):
    """Validate Q (..., n_q, d_q) or (d_q,) and K (..., n_k, d_k); return (Q2, K, squeeze)."""
    Q = check_matrix(Q, "Q", expected="(n_q, d_q)", allow_1d=True)
    K = check_matrix(K, "K", expected="(n_k, d_k)")
    squeeze = Q.ndim == 1
    if squeeze:
        Q = Q[None, :]  # (1, d_q)
    if same_dim and Q.shape[-1] != K.shape[-1]:
        msg = _(
            "Q has {d_q} features per query but K has {d_k} per key "
            "(Q {Q_shape}, K {K_shape}); this score needs d_q = d_k "
            "(use 'general' or 'additive' for queries and keys of different sizes)"
        ).format(d_q=Q.shape[-1], d_k=K.shape[-1], Q_shape=Q.shape if not squeeze else Q.shape[1:], K_shape=K.shape)
        if K.shape[-2] == Q.shape[-1]:
            msg += _(". Did you pass K in the column layout (d_k, n_k)? Use K.T")
        raise ShapeError(msg)
    return Q, K, squeeze


def _param(x, name: str, shape: tuple, *, what: str) -> np.ndarray:
    arr = as_float_array(x, name)
    if arr.shape != shape:
        hint = ""
        if arr.ndim == 2 and arr.shape[::-1] == shape:
            hint = _("; did you pass the survey's column-convention matrix? Use {name}.T").format(name=name)
        raise ShapeError(_("{name} has shape {shape} but {shape2} {what} was expected{hint}").format(name=name, shape=arr.shape, shape2=shape, what=what, hint=hint))
    check_finite(arr, name)
    return arr


def _out(scores: np.ndarray, squeeze: bool) -> np.ndarray:
    return scores[..., 0, :] if squeeze else scores


def _kt(K: np.ndarray) -> np.ndarray:
    return np.swapaxes(K, -1, -2)  # (..., d_k, n_k)


def dot_score(Q, K) -> np.ndarray:
    """Dot-product (multiplicative) score ``q k^T``.

    Parameters
    ----------
    Q : ndarray, shape (..., n_q, d) or (d,)
    K : ndarray, shape (..., n_k, d)

    Returns
    -------
    scores : ndarray, shape (..., n_q, n_k) or (n_k,)
    """
    Q, K, sq = _qk(Q, K, same_dim=True)
    return _out(Q @ _kt(K), sq)


def scaled_dot_score(Q, K) -> np.ndarray:
    """Scaled dot-product score ``q k^T / sqrt(d_k)`` (Vaswani et al. 2017). Shapes as ``dot_score``."""
    Q, K, sq = _qk(Q, K, same_dim=True)
    return _out((Q @ _kt(K)) / np.sqrt(K.shape[-1]).astype(K.dtype), sq)


def general_score(Q, K, W) -> np.ndarray:
    """General (bilinear) score ``q W k^T`` (Luong et al. 2015).

    Parameters
    ----------
    Q : ndarray, shape (..., n_q, d_q) or (d_q,)
    K : ndarray, shape (..., n_k, d_k)
    W : ndarray, shape (d_q, d_k)
        The survey's ``W`` (``k^T W q``, shape ``(d_k, d_q)``) is this matrix transposed.
    """
    Q, K, sq = _qk(Q, K, same_dim=False)
    W = _param(W, "W", (Q.shape[-1], K.shape[-1]), what="(d_q, d_k)")
    return _out((Q @ W) @ _kt(K), sq)


def biased_general_score(Q, K, W, b) -> np.ndarray:
    """Biased general score ``(q W + b) k^T``; survey form ``k^T (W q + b)``.

    Parameters
    ----------
    W : ndarray, shape (d_q, d_k)
    b : ndarray, shape (d_k,)
    """
    Q, K, sq = _qk(Q, K, same_dim=False)
    W = _param(W, "W", (Q.shape[-1], K.shape[-1]), what="(d_q, d_k)")
    b = _param(b, "b", (K.shape[-1],), what="(d_k,)")
    return _out((Q @ W + b) @ _kt(K), sq)


def activated_general_score(Q, K, W, b=0.0, *, act="tanh") -> np.ndarray:
    """Activated general score ``act(q W k^T + b)``; survey form ``act(k^T W q + b)``.

    Parameters
    ----------
    W : ndarray, shape (d_q, d_k)
    b : float
        A scalar bias.
    act : str or callable
        ``"tanh"`` (default), ``"relu"``, ``"sigmoid"``, ``"identity"`` or a function.
    """
    Q, K, sq = _qk(Q, K, same_dim=False)
    W = _param(W, "W", (Q.shape[-1], K.shape[-1]), what="(d_q, d_k)")
    b = _param(b, "b", (), what="(a scalar)")
    return _out(_act(act)((Q @ W) @ _kt(K) + b), sq)


def additive_score(Q, K, W1, W2, w, b=None, *, act="tanh") -> np.ndarray:
    """Additive score ``act(q W1 + k W2 + b) w`` (Bahdanau et al. 2015); survey ``w^T act(W1 q + W2 k + b)``.

    Parameters
    ----------
    Q : ndarray, shape (..., n_q, d_q) or (d_q,)
    K : ndarray, shape (..., n_k, d_k)
    W1 : ndarray, shape (d_q, d_w)
    W2 : ndarray, shape (d_k, d_w)
    w : ndarray, shape (d_w,)
    b : ndarray, shape (d_w,), optional

    Returns
    -------
    scores : ndarray, shape (..., n_q, n_k) or (n_k,)
    """
    Q, K, sq = _qk(Q, K, same_dim=False)
    w = as_float_array(w, "w")
    if w.ndim != 1:
        raise ShapeError(_("w has shape {w_shape} but (d_w,) was expected").format(w_shape=w.shape))
    d_w = w.shape[0]
    W1 = _param(W1, "W1", (Q.shape[-1], d_w), what="(d_q, d_w)")
    W2 = _param(W2, "W2", (K.shape[-1], d_w), what="(d_k, d_w)")
    b = np.zeros(d_w, dtype=W1.dtype) if b is None else _param(b, "b", (d_w,), what="(d_w,)")
    check_finite(w, "w")
    hq = Q @ W1  # (..., n_q, d_w)
    hk = K @ W2 + b  # (..., n_k, d_w)
    h = _act(act)(hq[..., :, None, :] + hk[..., None, :, :])  # (..., n_q, n_k, d_w)
    return _out(h @ w, sq)


def concat_score(Q, K, W, w, b=None, *, act="tanh") -> np.ndarray:
    """Concatenation score ``act([q; k] W + b) w`` (Luong et al. 2015); survey ``w^T act(W [q; k] + b)``.

    It equals ``additive_score`` with ``W1 = W[:d_q]`` and ``W2 = W[d_q:]``.

    Parameters
    ----------
    W : ndarray, shape (d_q + d_k, d_w)
    w : ndarray, shape (d_w,)
    b : ndarray, shape (d_w,), optional
    """
    Q, K, sq = _qk(Q, K, same_dim=False)
    d_q, d_k = Q.shape[-1], K.shape[-1]
    w = as_float_array(w, "w")
    if w.ndim != 1:
        raise ShapeError(_("w has shape {w_shape} but (d_w,) was expected").format(w_shape=w.shape))
    W = _param(W, "W", (d_q + d_k, w.shape[0]), what="(d_q + d_k, d_w)")
    n_q, n_k = Q.shape[-2], K.shape[-2]
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2])
    Qb = np.broadcast_to(Q[..., :, None, :], batch + (n_q, n_k, d_q))  # (..., n_q, n_k, d_q)
    Kb = np.broadcast_to(K[..., None, :, :], batch + (n_q, n_k, d_k))  # (..., n_q, n_k, d_k)
    qk = np.concatenate([Qb, Kb], axis=-1)  # (..., n_q, n_k, d_q + d_k)
    z = qk @ W
    if b is not None:
        z = z + _param(b, "b", (w.shape[0],), what="(d_w,)")
    return _out(_act(act)(z) @ w, sq)


def _unit_rows(A: np.ndarray, eps: float) -> np.ndarray:
    """Each row divided by its length; rows whose largest entry is <= eps become zero rows."""
    m = np.max(np.abs(A), axis=-1, keepdims=True)  # (..., n, 1): pre-scaling avoids under/overflow
    A = np.divide(A, m, out=np.zeros_like(A), where=m > eps)
    length = np.linalg.norm(A, axis=-1, keepdims=True)  # (..., n, 1)
    return np.divide(A, length, out=np.zeros_like(A), where=length > 0)


def cosine_score(Q, K, *, eps: float = 0.0) -> np.ndarray:
    """Similarity score: cosine similarity ``q k^T / (|q| |k|)`` (Graves et al. 2014).

    A zero vector has no direction; its scores are 0 (as are those of a vector whose largest entry
    is at most ``eps``). Any non-zero vector, however short, keeps its exact direction.
    Shapes as ``dot_score``; the result lies in [-1, 1].
    """
    Q, K, sq = _qk(Q, K, same_dim=True)
    cos = _unit_rows(Q, eps) @ _kt(_unit_rows(K, eps))  # (..., n_q, n_k)
    return _out(np.clip(cos, -1.0, 1.0, out=cos), sq)


@dataclass(frozen=True)
class ScoreSpec:
    """A registry entry: the function, the parameters it needs, a formula and where it came from."""

    fn: Callable[..., np.ndarray]
    params: tuple[str, ...]
    formula: str
    survey_formula: str
    origin: str
    needs_same_dim: bool = field(default=False)


SCORES: dict[str, ScoreSpec] = {
    "additive": ScoreSpec(additive_score, ("W1", "W2", "w", "b"), "act(q W1 + k W2 + b) w",
                          "w^T act(W1 q + W2 k + b)", "Bahdanau et al. 2015"),
    "concat": ScoreSpec(concat_score, ("W", "w", "b"), "act([q; k] W + b) w",
                        "w^T act(W [q; k] + b)", "Luong et al. 2015"),
    "dot": ScoreSpec(dot_score, (), "q k^T", "q^T k", "Luong et al. 2015", True),
    "scaled_dot": ScoreSpec(scaled_dot_score, (), "q k^T / sqrt(d_k)", "q^T k / sqrt(d_k)",
                            "Vaswani et al. 2017", True),
    "general": ScoreSpec(general_score, ("W",), "q W k^T", "k^T W q", "Luong et al. 2015"),
    "biased_general": ScoreSpec(biased_general_score, ("W", "b"), "(q W + b) k^T", "k^T (W q + b)",
                                "Sordoni et al. 2016"),
    "activated_general": ScoreSpec(activated_general_score, ("W", "b"), "act(q W k^T + b)",
                                   "act(k^T W q + b)", "Ma et al. 2017"),
    "similarity": ScoreSpec(cosine_score, (), "q k^T / (|q| |k|)", "similarity(q, k)",
                            "Graves et al. 2014", True),
}


def default_score_params(name: str, d_q: int, d_k: int, *, rng: np.random.Generator | None = None,
                         d_w: int = 4) -> dict:
    """Reasonable parameters for a score function, so that every registry entry can be tried at once.

    ``general`` and its variants start from the identity (so they behave like ``dot`` when
    ``d_q = d_k``); the additive forms get small seeded random weights.
    """
    spec = _spec(name)
    rng = np.random.default_rng(0) if rng is None else rng
    eye = np.eye(d_q, d_k)
    if name == "additive":
        return {"W1": rng.normal(0, 1 / np.sqrt(d_q), (d_q, d_w)),
                "W2": rng.normal(0, 1 / np.sqrt(d_k), (d_k, d_w)),
                "w": rng.normal(0, 1, d_w), "b": np.zeros(d_w)}
    if name == "concat":
        return {"W": np.vstack([rng.normal(0, 1 / np.sqrt(d_q), (d_q, d_w)),
                                rng.normal(0, 1 / np.sqrt(d_k), (d_k, d_w))]),
                "w": rng.normal(0, 1, d_w), "b": np.zeros(d_w)}
    if name == "general":
        return {"W": eye}
    if name == "biased_general":
        return {"W": eye, "b": np.zeros(d_k)}
    if name == "activated_general":
        return {"W": eye, "b": 0.0}
    assert not spec.params
    return {}


def _spec(name: str) -> ScoreSpec:
    try:
        return SCORES[name]
    except (KeyError, TypeError):
        raise UnknownNameError(_("unknown score function {name!r}; choose one of {sorted_SCORES}").format(name=name, sorted_SCORES=sorted(SCORES))) from None


def score(name: str, Q, K, **params) -> np.ndarray:
    """Compute the score function registered under ``name`` (see ``SCORES``).

    Missing parameters are filled in by ``default_score_params`` (identity ``W``, seeded random
    additive weights). Shapes: ``Q (..., n_q, d_q)`` or ``(d_q,)``, ``K (..., n_k, d_k)`` ->
    ``(..., n_q, n_k)`` or ``(n_k,)``.
    """
    spec = _spec(name)
    unknown = set(params) - set(spec.params) - {"act", "eps"}
    if unknown:
        raise ParameterError(_("score {name!r} takes parameters {list_spec_params}, not {sorted_unknown}").format(name=name, list_spec_params=list(spec.params), sorted_unknown=sorted(unknown)))
    if set(spec.params) - set(params):
        q = np.asarray(Q)
        k = np.asarray(K)
        if q.ndim < 1 or k.ndim < 2:
            check_matrix(K, "K", expected="(n_k, d_k)")
        defaults = default_score_params(name, q.shape[-1], k.shape[-1])
        params = {**defaults, **params}
    return spec.fn(Q, K, **params)
