"""Hidden cases of notebook 09's function exercises (``hidden.py``): RoPE's matrix of a distance
(09.1) and ALiBi's weights when every q . k is equal (09.3). The references are written here from
the definitions, independently of the checkers; the comparisons accept what the in-class checkers
accept (close to 1e-9; any array-like)."""

from __future__ import annotations

import numpy as np

from ..check import close

__all__ = ["rope_matrix_cases", "rope_matrix_ref", "alibi_weights_cases", "alibi_weights_ref", "close_1e9"]


def close_1e9(got, expected) -> bool:
    return close(got, expected, atol=1e-9)


def rope_matrix_cases(rng):
    """(d, delta): even sizes and distances the notebook's cases do not use (4/3, 2/1, 8/-5, 16/40)."""
    out = []
    for d in (6, 10, 12):
        delta = int(rng.integers(-60, 61))
        while delta in (3, 1, -5, 40, 0):
            delta = int(rng.integers(-60, 61))
        out.append((d, delta))
    return out


def rope_matrix_ref(d, delta):
    """M with rope(q, m) . rope(k, n) = q @ M @ k for m - n = delta: pair i of neighbouring features
    (2i, 2i + 1) turns by -delta * theta_i, theta_i = 10000^(-2i/d) (RoFormer's layout)."""
    M = np.zeros((d, d))
    for i in range(d // 2):
        a = -delta * 10000.0 ** (-2 * i / d)
        c, s = np.cos(a), np.sin(a)
        M[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, -s], [s, c]]
    return M


def alibi_weights_cases(rng):
    """(slopes, i): other head counts, slopes and query positions than the notebook's."""
    out = []
    for h in (3, 5):
        slopes = np.sort(rng.uniform(0.01, 1.5, size=h))[::-1].copy()
        out.append((slopes, int(rng.integers(2, 15))))
    out.append((np.array([0.25, 2.0 ** -6]), int(rng.integers(16, 30))))
    return out


def alibi_weights_ref(slopes, i):
    """Head h's weights over keys 0 .. i: the softmax of -m_h (i - j) (ALiBi's bias alone)."""
    j = np.arange(i + 1)
    logits = -np.asarray(slopes, dtype=float)[:, None] * (i - j)[None, :]  # (h, i + 1)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
