"""The hidden cases of notebooks 05-08 (how attention learns, the tiny language model, attention at
scale, trained heads): inputs, references and comparisons; see ``hidden_refs.py``.

The functions ``grad_*`` are the gradient check's test functions: module-level functions of the
package, so the grader can send them to the learner's kernel by name (``wire``).
"""

from __future__ import annotations

import math

import numpy as np

from .. import kv_cache_bytes, softmax, tile_counts
from ..check import close
from ..heads.diagnostics import prefix_matching_score
from ..learn.backward import relative_error, softmax_backward
from ..learn.layers import layer_norm
from ..scale.sliding_window import sliding_window_mask
from .hidden_refs import draw_sizes, one_float

# ---------------------------------------------------------------- 05: how attention learns


def general_cases(rng):
    n_q, n_k, d_q, d_k = draw_sizes(rng, 2, 8, 4)
    m = int(rng.integers(4, 7))
    out = []
    for a, b, c, e in ((n_q, n_k, d_q, d_k), (m, m, m, m)):
        out.append((rng.normal(size=(a, c)), rng.normal(size=(b, e)), rng.normal(size=(c, e)),
                    rng.normal(size=(a, b))))
    return out


def general_ref(Q, K, W, dS):
    return np.einsum("ij,jb,ab->ia", dS, K, W), np.einsum("ij,ia,ab->jb", dS, Q, W)


def bias_cases(rng):
    """(Q, K, dS): a dS from a softmax's backward (rows summing to 0) and any dS."""
    out = []
    for n, d_k in (draw_sizes(rng, 2, 8, 2, avoid=(3, 4)), (int(rng.integers(5, 9)), 2)):
        Q, K = rng.normal(size=(n, d_k)), rng.normal(size=(n, d_k))
        out.append((Q, K, rng.normal(size=(n, n))))
    Q, K, _ = out[0]
    a = softmax(Q @ K.T / math.sqrt(Q.shape[1]))
    out.insert(0, (Q, K, softmax_backward(a, rng.normal(size=a.shape))))
    return out


def bias_ref(Q, K, dS):
    scale = math.sqrt(Q.shape[1])
    return dS.sum(axis=0) @ K / scale, dS.sum(axis=1) @ Q / scale


def grad_wavy(z):
    return float(np.sum(np.exp(0.5 * z) * np.cos(2.0 * z)))


def grad_quartic(z):
    return 1e-8 * float(np.sum(z ** 4))


def grad_big(z):
    return 1e5 * float(np.sum(np.sin(z) * z))


def grad_exp(z):
    """Every entry's central difference is off by the same factor, sinh(eps) / eps, so any relative
    error that treats both gradients alike (by norms or entry by entry) gives the same number."""
    return float(np.sum(np.exp(z)))


_EPS = 1e-4


def _d_wavy(x):
    return np.exp(0.5 * x) * (0.5 * np.cos(2 * x) - 2 * np.sin(2 * x))


def _d_big(x):
    return 1e5 * (np.cos(x) * x + np.sin(x))


def _away_from_zeros(rng, shape, low, high, grad, least):
    """Points where ``|grad| >= least``: an error taken entry by entry, |a - n| / (|a| + |n|), is
    then as small as the norms' (right answers may use either)."""
    x = rng.uniform(low, high, size=shape)
    for _ in range(100):
        small = np.abs(grad(x)) < least
        if not small.any():
            break
        x[small] = rng.uniform(low, high, size=int(small.sum()))
    return x


def gradient_cases(rng):
    """(f, x, analytic, eps): a correct gradient, one three times too large and of the wrong sign
    (relative error 1; an unbounded ``|a - n| / |a + n|`` gives 2) of size 1e-8, a correct one of
    size 1e5, and a correct one with a large eps (0.05 to 0.2), whose central difference's error
    shows: an answer that uses a step of its own fails it."""
    x1 = _away_from_zeros(rng, tuple(int(v) for v in rng.integers(2, 5, size=2)), -1.5, 1.5, _d_wavy, 0.3)
    x2 = rng.uniform(0.5, 1.5, size=int(rng.integers(3, 7))) * rng.choice([-1.0, 1.0], size=1)
    x3 = _away_from_zeros(rng, (int(rng.integers(2, 4)), int(rng.integers(4, 6))), -2.0, 2.0, _d_big, 3e4)
    x4 = rng.uniform(-1.5, 1.5, size=int(rng.integers(3, 7)))
    return [(grad_wavy, x1, _d_wavy(x1), _EPS),
            # three times too large and of the wrong sign: relative error 1, where |a - n| / |a + n| gives 2
            (grad_quartic, x2, -3 * 4e-8 * x2 ** 3, _EPS),
            (grad_big, x3, _d_big(x3), _EPS),
            (grad_exp, x4, np.exp(x4), float(rng.choice([0.05, 0.1, 0.2])))]


def gradient_ref(f, x, analytic, eps):
    numeric = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        numeric[i] = (f(up) - f(down)) / (2 * eps)
    return relative_error(analytic, numeric)


def gradient_ok(got, expected) -> bool:
    """As the in-class checker: at most 1e-6 for a correct gradient; for the wrong one, a multiple of
    the right one, the relative error itself (any measure that treats both gradients alike and stays
    between 0 and 1 gives it; one against a single gradient does not)."""
    v = one_float(got)
    if v is None or not math.isfinite(v) or v < 0:
        return False
    if expected <= 1e-6:
        return v <= 1e-6
    return math.isclose(v, expected, rel_tol=0.01)


# ---------------------------------------------------------------- 06: a tiny language model


def layer_norm_cases(rng):
    """(X, gamma, beta, eps): a batch (b, n, d) with a small eps, not the in-class 1e-5; a batch with
    a large eps and a constant row (its variance is 0); one sentence (n, d). d is never the
    in-class 6, n never 4, b never 3."""
    b1, b2 = draw_sizes(rng, 1, 7, 2, avoid=(3,))
    n, n2, d = draw_sizes(rng, 2, 11, 3, avoid=(4, 6))
    d2 = int(rng.choice([3, 5, 7]))
    X1 = rng.normal(-1.0, 2.5, (b1, n, d))
    X2 = rng.normal(0.5, 4.0, (b2, int(rng.integers(2, 6)), d2))
    X2[int(rng.integers(b2)), 0] = 1.7  # a constant row: its variance is 0
    X3 = rng.normal(2.0, 0.5, (n2, d))
    eps = (float(10.0 ** rng.uniform(-7, -3)), float(rng.uniform(0.2, 2.0)), float(rng.choice([1e-6, 1e-3, 0.1])))
    return [(X, rng.normal(1.0, 0.3, X.shape[-1]), rng.normal(0.0, 0.5, X.shape[-1]), e)
            for X, e in zip((X1, X2, X3), eps, strict=True)]


def layer_norm_ref(X, gamma, beta, eps):
    return layer_norm(X, gamma, beta, eps=eps)[0]  # each row of the last axis, whatever stands in front


def same_shape_close(got, expected) -> bool:
    """A numpy array (not a list) of ``expected``'s shape (checked first, as in class), and close."""
    return isinstance(got, np.ndarray) and got.shape == expected.shape and close(got, expected)


# ---------------------------------------------------------------- 07: attention at scale


def _online_step(m, l, o, s, V):
    """One step with the output kept normalised: o is the softmax average of the values so far."""
    m_new = max(m, float(np.max(s)))
    p = np.exp(s - m_new)  # (b,) the new terms
    l_new = math.exp(m - m_new) * l + float(p.sum())
    w_old = math.exp(m - m_new) * l / l_new  # the old average's share of the new one (0 at the start)
    return m_new, l_new, w_old * o + (p / l_new) @ V


def online_cases(rng):
    """(m, l, o, s, V): the first block (m = -inf, l = 0, o = 0), a block whose maximum rises, one
    whose maximum does not."""
    b, d_v = int(rng.choice([1, 5, 6])), int(rng.choice([2, 4, 5]))
    s1, s2, s3 = (rng.normal(scale=2.0, size=b) for _ in range(3))
    s2 += s1.max() - s2.max() + rng.uniform(1.0, 3.0)  # the maximum rises
    s3 += s2.max() - s3.max() - rng.uniform(1.0, 3.0)  # it does not
    s = np.concatenate([s1, s2, s3])
    V = rng.normal(size=(3 * b, d_v))
    state = (-math.inf, 0.0, np.zeros(d_v))
    out = []
    for k in range(3):
        blk = slice(k * b, (k + 1) * b)
        out.append((state[0], state[1], state[2].copy(), s[blk].copy(), V[blk].copy()))
        state = _online_step(*state, s[blk], V[blk])
    return out


def online_ref(m, l, o, s, V):
    return _online_step(m, l, o, s, V)


def online_ok(got, expected) -> bool:
    try:
        m, l, o = got
        m, l, o = float(m), float(l), np.asarray(o, dtype=float)
    except Exception:  # the learner's object: never raise
        return False
    return all(close(g, e, atol=1e-9) for g, e in zip((m, l, o), expected, strict=True))


def tiles_cases(rng):
    """(n, block_q, block_k): equal blocks that do not divide n, unequal blocks, and unequal
    blocks that divide n."""
    b = int(rng.integers(3, 7))
    n1 = int(rng.integers(3, 6)) * b + int(rng.integers(1, b))
    n1 += b if (n1, b) == (13, 4) else 0  # (13, 4, 4) is an in-class case
    bq, bk = draw_sizes(rng, 2, 7, 2)
    n2 = int(rng.integers(17, 40))
    n3 = int(rng.integers(2, 5)) * bq * bk
    return [(n1, b, b), (n2, bq, bk), (n3, bk, bq)]


def tiles_ref(n, block_q, block_k):
    return tile_counts(n, n, block_q=block_q, block_k=block_k, causal=True).skipped


def kv_cases(rng):
    """Model shapes of no real model: MHA, GQA and MQA, 1, 2 and 4 bytes per value."""
    out = []
    for ratio, b in zip((1, int(rng.choice([2, 4, 8])), None), rng.permutation([1, 2, 4]), strict=True):
        heads = int(rng.choice([6, 12, 24, 40]))
        kv_heads = 1 if ratio is None else (heads // ratio if heads % ratio == 0 else heads // 2)
        out.append((int(rng.integers(300, 60_000)), int(rng.integers(3, 61)), heads, kv_heads,
                    int(rng.choice([48, 80, 96, 256])), int(b)))
    if max(c[0] for c in out) <= 4096:  # one case past a sliding window's 4,096 tokens, so that no cap passes
        out[0] = (out[0][0] + 8192, *out[0][1:])
    return out


def kv_ref(n_tokens, layers, heads, kv_heads, d_head, bytes_per_value):
    return kv_cache_bytes(n_tokens, layers=layers, kv_heads=kv_heads, d_head=d_head,
                          bytes_per_value=bytes_per_value)


# ---------------------------------------------------------------- 08: what trained heads do


def prefix_cases(rng):
    """(w (n, n) causal weights, ids (n,)): a repeated random segment, with other tokens around."""
    out = []
    for _ in range(3):
        seg = rng.choice(20, size=int(rng.integers(3, 6)), replace=False)
        ids = np.concatenate([seg, rng.integers(0, 20, size=int(rng.integers(0, 3))), seg[: int(rng.integers(2, len(seg) + 1))]])
        n = len(ids)
        s = rng.normal(0.0, 1.5, (n, n))
        s[np.triu_indices(n, 1)] = -np.inf
        w = np.exp(s - s.max(axis=1, keepdims=True))
        out.append((w / w.sum(axis=1, keepdims=True), ids.astype(int)))
    return out


def prefix_ref(w, ids):
    return float(prefix_matching_score(w, ids)[0])


def float_close(got, expected) -> bool:
    v = one_float(got)
    return v is not None and close(v, expected)


def sink_cases(rng):
    public = {(8, 3, 1), (10, 4, 2), (6, 2, 0), (5, 8, 1)}
    out: list[tuple] = []
    while len(out) < 3:  # the later two beyond a table of small masks (n up to 40)
        n = int(rng.integers(5, 14) if not out else rng.integers(14, 41))
        case = (n, int(rng.integers(2, n)), int(rng.integers(0 if out else 1, 4)))
        if case not in public and case not in out:
            out.append(case)
    return out


def sink_ref(n, window, sinks):
    return sliding_window_mask(n, window, sinks=sinks)
