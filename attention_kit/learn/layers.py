"""Notebook 06, *A tiny language model*.

The other pieces of a Transformer block, forward and backward: token embedding, layer norm, a
position-wise MLP (GELU), and the cross-entropy loss of the next-token prediction.

Every forward returns ``(output, cache)``; the matching ``*_backward(grad, cache)`` returns the
gradients in the order of the forward's inputs. Rows are tokens: activations are ``(..., n, d)``.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError, ShapeError, check_finite, check_matrix, check_positive, door
from ..i18n import N_, _

__all__ = [
    "embed", "embed_backward",
    "layer_norm", "layer_norm_backward",
    "gelu", "gelu_backward",
    "mlp", "mlp_backward",
    "IGNORE", "cross_entropy",
]


def token_ids(ids, vocab_size: int, name: str = "ids") -> np.ndarray:
    """``ids`` as an int array of token ids in ``0 .. vocab_size - 1``, else an error that says why."""
    arr = np.asarray(ids)
    if arr.dtype.kind not in "iu":
        raise ShapeError(_("{name} must hold whole-number token ids, got dtype {dtype}; "
                         "turn words into ids with the vocabulary first (e.g. vocab.encode(text))").format(name=name, dtype=arr.dtype))
    if arr.ndim == 0 or arr.size == 0:
        raise ShapeError(_("{name} has shape {shape}: give a sequence (n,) or a batch (batch, n) "
                         "of at least one token id").format(name=name, shape=arr.shape))
    if (arr < 0).any() or (arr >= vocab_size).any():
        bad = arr[(arr < 0) | (arr >= vocab_size)]
        raise ParameterError(_("{name} holds {bad_ravel_5_tolist}, outside 0..{vocab_size_1} "
                             "(the vocabulary has {vocab_size} tokens)").format(name=name, bad_ravel_5_tolist=bad.ravel()[:5].tolist(), vocab_size_1=vocab_size - 1, vocab_size=vocab_size))
    return arr


# ---------------------------------------------------------------------------------------------
# Token embedding: a table lookup
# ---------------------------------------------------------------------------------------------


def _check_embed(ids, E):
    E = check_matrix(E, "E", expected="(vocab_size, d_model)", batch=False)
    return (token_ids(ids, E.shape[0]), E), {}


@door(_check_embed)
def embed(ids, E) -> tuple[np.ndarray, tuple]:
    """Look up one row of ``E`` per token.

    Parameters
    ----------
    ids : int array, shape (..., n)
    E : ndarray, shape (vocab_size, d_model)

    Returns
    -------
    X : ndarray, shape (..., n, d_model)
    cache : tuple
    """
    return E[ids], (ids, E.shape)  # (..., n, d_model)


def embed_backward(grad, cache) -> np.ndarray:
    """``dE``: each token's gradient row added into its row of the table (repeats add up)."""
    ids, shape = cache
    dE = np.zeros(shape, dtype=np.result_type(grad, np.float64))
    np.add.at(dE, ids.reshape(-1), np.asarray(grad).reshape(-1, shape[1]))  # (vocab, d_model)
    return dE


# ---------------------------------------------------------------------------------------------
# Layer norm: each row to mean 0 and variance 1, then a learned scale and shift
# ---------------------------------------------------------------------------------------------


def _check_layer_norm(X, gamma, beta, *, eps: float = 1e-5):
    X = check_matrix(X, "X", expected="(n, d)", allow_1d=True)
    d = X.shape[-1]
    gamma, beta = np.asarray(gamma, dtype=float), np.asarray(beta, dtype=float)
    for name, p in (("gamma", gamma), ("beta", beta)):
        if p.shape != (d,):
            raise ShapeError(_("{name} has shape {p_shape} but ({d},) was expected: one number per "
                             "feature (layer norm works across the features of each row)").format(name=name, p_shape=p.shape, d=d))
    return (X, gamma, beta), {"eps": check_positive(eps, "eps", hint=N_("a small one such as 1e-5"))}


@door(_check_layer_norm)
def layer_norm(X, gamma, beta, *, eps: float = 1e-5) -> tuple[np.ndarray, tuple]:
    """``gamma * (x - mean(x)) / sqrt(var(x) + eps) + beta``, over the features of each row.

    Parameters
    ----------
    X : ndarray, shape (..., n, d)
    gamma, beta : ndarray, shape (d,)
    eps : float
        Keeps the division finite for a constant row.

    Returns
    -------
    Y : ndarray, shape (..., n, d)
    cache : tuple
    """
    mu = X.mean(axis=-1, keepdims=True)  # (..., n, 1)
    Xc = X - mu  # (..., n, d)
    inv = 1.0 / np.sqrt((Xc * Xc).mean(axis=-1, keepdims=True) + eps)  # (..., n, 1)
    Xhat = Xc * inv  # (..., n, d)
    return Xhat * gamma + beta, (Xhat, inv, gamma)


def layer_norm_backward(grad, cache) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients ``(dX, dgamma, dbeta)`` of layer norm.

    With ``g = grad * gamma``: ``dX = inv * (g - mean(g) - xhat * mean(g * xhat))``, row by row.
    """
    Xhat, inv, gamma = cache
    grad = np.asarray(grad, dtype=float)
    axes = tuple(range(grad.ndim - 1))
    dgamma = (grad * Xhat).sum(axis=axes)  # (d,)
    dbeta = grad.sum(axis=axes)  # (d,)
    g = grad * gamma  # (..., n, d)
    dX = inv * (g - g.mean(axis=-1, keepdims=True)
                - Xhat * (g * Xhat).mean(axis=-1, keepdims=True))  # (..., n, d)
    return dX, dgamma, dbeta


# ---------------------------------------------------------------------------------------------
# GELU and the position-wise MLP
# ---------------------------------------------------------------------------------------------

_C = np.sqrt(2.0 / np.pi)


def _gelu_tanh(x: np.ndarray) -> np.ndarray:
    """``tanh(sqrt(2/pi) (x + 0.044715 x^3))``, the part of GELU that its derivative reuses."""
    return np.tanh(_C * x * (1.0 + 0.044715 * (x * x)))


def gelu(x) -> np.ndarray:
    """GELU, tanh form: ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""
    x = np.asarray(x, dtype=float)
    return 0.5 * x * (1.0 + _gelu_tanh(x))


def gelu_backward(grad, x, *, t: np.ndarray | None = None) -> np.ndarray:
    """``grad * gelu'(x)``; ``t``, if given, is ``tanh(...)`` of the forward pass (not computed again)."""
    x = np.asarray(x, dtype=float)
    t = _gelu_tanh(x) if t is None else t
    dt = (1.0 - t * t) * _C * (1.0 + 3 * 0.044715 * (x * x))
    return grad * (0.5 * (1.0 + t) + 0.5 * x * dt)


def _check_mlp(X, W1, b1, W2, b2):
    W1 = check_matrix(W1, "W1", expected="(d_model, d_ff)", batch=False)
    d_model, d_ff = W1.shape
    X = check_matrix(X, "X", expected="(n, d_model)", d=d_model, d_name="d_model")
    W2 = check_matrix(W2, "W2", expected="(d_ff, d_model)", batch=False, n=d_ff, d=d_model,
                      n_name="d_ff", d_name="d_model")
    return (X, W1, b1, W2, b2), {}


@door(_check_mlp)
def mlp(X, W1, b1, W2, b2) -> tuple[np.ndarray, tuple]:
    """The position-wise MLP ``gelu(X W1 + b1) W2 + b2``: the same two layers for every token.

    Parameters
    ----------
    X : ndarray, shape (..., n, d_model)
    W1 : ndarray, shape (d_model, d_ff)
    b1 : ndarray, shape (d_ff,)
    W2 : ndarray, shape (d_ff, d_model)
    b2 : ndarray, shape (d_model,)

    Returns
    -------
    Y : ndarray, shape (..., n, d_model)
    cache : tuple
    """
    H = X @ W1 + b1  # (..., n, d_ff)
    T = _gelu_tanh(H)  # (..., n, d_ff), kept for the backward pass
    A = 0.5 * H * (1.0 + T)  # gelu(H)
    Y = A @ W2 + b2  # (..., n, d_model)
    if not np.isfinite(Y).all():
        check_finite(Y, "the MLP's output")
    return Y, (X, H, T, A, W1, W2)


def mlp_backward(grad, cache) -> tuple[np.ndarray, ...]:
    """Gradients ``(dX, dW1, db1, dW2, db2)`` of :func:`mlp`."""
    X, H, T, A, W1, W2 = cache
    grad = np.asarray(grad, dtype=float)
    d_model, d_ff = W1.shape
    dW2 = A.reshape(-1, d_ff).T @ grad.reshape(-1, d_model)  # (d_ff, d_model): sum over tokens
    db2 = grad.reshape(-1, d_model).sum(axis=0)  # (d_model,)
    dH = gelu_backward(grad @ W2.T, H, t=T)  # (..., n, d_ff)
    dW1 = X.reshape(-1, d_model).T @ dH.reshape(-1, d_ff)  # (d_model, d_ff)
    db1 = dH.reshape(-1, d_ff).sum(axis=0)  # (d_ff,)
    dX = dH @ W1.T  # (..., n, d_model)
    return dX, dW1, db1, dW2, db2


# ---------------------------------------------------------------------------------------------
# Cross-entropy of the next token
# ---------------------------------------------------------------------------------------------


#: A target of -1: this position has nothing to predict (notebook 05's tasks leave some out).
IGNORE = -1


def check_targets(targets, logits_shape: tuple) -> np.ndarray:
    """``targets`` as int class ids (or :data:`IGNORE`), one per row of logits of ``logits_shape``."""
    targets = np.asarray(targets)
    if targets.shape != tuple(logits_shape[:-1]):
        raise ShapeError(_("targets has shape {targets_shape} but {tuple_logits_shape_1} was expected: "
                         "one target id per row of logits").format(targets_shape=targets.shape, tuple_logits_shape_1=tuple(logits_shape[:-1])))
    token_ids(np.where(targets != IGNORE, targets, 0), logits_shape[-1], "targets")
    return targets


def _check_cross_entropy(logits, targets):
    logits = check_matrix(logits, "logits", expected="(n, n_classes)")
    return (logits, check_targets(targets, logits.shape)), {}


@door(_check_cross_entropy)
def cross_entropy(logits, targets) -> tuple[float, np.ndarray]:
    """Mean of ``-log softmax(logits)[target]`` over the positions that have a target, and its gradient.

    Parameters
    ----------
    logits : ndarray, shape (..., n, n_classes)
        One row of unnormalised scores per position.
    targets : int array, shape (..., n)
        The class (the token that really comes next) at each position; ``-1`` means "no target
        here" (:data:`IGNORE`): that position adds nothing to the loss.

    Returns
    -------
    loss : float
    dlogits : ndarray, shape of logits
        ``dL/dlogits = (softmax(logits) - onehot(target)) / count`` on the positions with a
        target (``count`` of them), 0 elsewhere.
    """
    has = targets != IGNORE  # (..., n)
    t = np.where(has, targets, 0)[..., None]  # (..., n, 1)
    count = max(int(has.sum()), 1)
    z = logits - logits.max(axis=-1, keepdims=True)  # (..., n, C), shifted: exp cannot overflow
    dlogits = np.exp(z)  # (..., n, C)
    total = dlogits.sum(axis=-1, keepdims=True)  # (..., n, 1)
    logp_t = np.take_along_axis(z, t, axis=-1)[..., 0] - np.log(total[..., 0])  # (..., n): log p(target)
    loss = -float(np.sum(logp_t * has)) / count
    dlogits *= (has[..., None] / count) / total  # softmax, times 1 / count where there is a target
    np.put_along_axis(dlogits, t, np.take_along_axis(dlogits, t, axis=-1) - (has[..., None] / count), axis=-1)
    return loss, dlogits
