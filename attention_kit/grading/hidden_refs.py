"""The hidden cases' inputs, references and comparisons, one group per exercise (``hidden.py``
lists them in :data:`~attention_kit.grading.hidden.HIDDEN`).

Each ``*_cases(rng)`` draws new inputs whose sizes and values differ from the in-class checker's
(non-square, other ``n``, ``d``, heads, blocks); each reference computes the expected result on
its own (with ``attention_kit`` where it has the function, else plain numpy); each ``*_ok(got,
expected)`` accepts what the in-class checker accepts as right, with its tolerance, and never
raises (``got`` is whatever the learner's function returned, as data).

This module: the shared helpers and notebooks 01-04; ``hidden_refs_learn.py``: notebooks 05-08.
"""

from __future__ import annotations

import math

import numpy as np

from .. import (
    merge_heads,
    scaled_dot_product_attention,
    self_attention,
    sinusoidal_positions,
    softmax,
    split_heads,
)
from ..check import as_floats, close


def draw_sizes(rng, low: int, high: int, k: int, *, avoid=()) -> list[int]:
    """``k`` different whole numbers in ``low .. high - 1``, none in ``avoid``."""
    pool = [v for v in range(low, high) if v not in avoid]
    return [int(v) for v in rng.choice(pool, size=k, replace=False)]


def is_number(x) -> bool:
    return not isinstance(x, (bool, np.bool_)) and isinstance(x, (int, float, np.integer, np.floating))


def one_float(got) -> float | None:
    g = as_floats(got)
    if g is None or g.size != 1:
        return None
    return float(g.reshape(()))


def not_tuple_close(got, expected) -> bool:
    """One array (not the tuple ``(output, weights)``), close to ``expected``."""
    return not isinstance(got, tuple) and close(got, expected)


def pair_close(got, expected) -> bool:
    """Two arrays ``(a, b)`` (a tuple or a list), each close to ``expected``'s."""
    return isinstance(got, (tuple, list)) and len(got) == 2 and all(
        close(g, e) for g, e in zip(got, expected, strict=True))


def exact_count(got, expected) -> bool:
    """A number (not a bool), equal to ``expected``."""
    return is_number(got) and got == expected


# ---------------------------------------------------------------- 01: the general attention model


def dot_cases(rng):
    d, n_k = draw_sizes(rng, 5, 9, 2)  # n_k != d: a transposed K fails
    m = int(rng.integers(5, 8))  # square: a transposed K runs and gives other numbers
    return [(rng.normal(size=d), rng.normal(size=(n_k, d))),
            (rng.normal(size=m), rng.normal(size=(m, m))),
            (rng.normal(size=2), rng.normal(size=(6, 2)))]


def dot_ref(q, K):
    return np.einsum("ld,d->l", K, q)


def context_cases(rng):
    n_k, d_v = draw_sizes(rng, 5, 9, 2)
    n_q = int(rng.integers(2, 5))
    m = int(rng.integers(4, 7))
    return [(softmax(rng.normal(size=n_k)), rng.normal(size=(n_k, d_v))),
            (softmax(rng.normal(size=(n_q, n_k))), rng.normal(size=(n_k, d_v))),
            (softmax(rng.normal(size=(m, m))), rng.normal(size=(m, m)))]


def context_ref(a, V):
    return np.einsum("...l,lv->...v", a, V)


def output_cases(rng):
    d_v, d_y = draw_sizes(rng, 4, 9, 2)
    m = int(rng.integers(3, 6))
    return [(rng.normal(size=d_v), rng.normal(size=(d_y, d_v)), rng.normal(size=d_y)),
            (rng.normal(size=m), rng.normal(size=(m, m)), rng.normal(size=m))]


def output_ref(c, W_c, b_c):
    return softmax(np.einsum("yv,v->y", W_c, c) + b_c)


# ---------------------------------------------------------------- 02: self-attention


def softmax_rows_cases(rng):
    out = []
    for _ in range(2):
        n_q, n_k = rng.integers(2, 7, size=2)
        out.append((np.round(rng.normal(scale=3.0, size=(n_q, n_k)), 3),))
    n_k = int(rng.integers(2, 7))
    out.append((rng.normal(size=(2, n_k)) + 800.0 * rng.choice([-1.0, 1.0], size=(2, 1)),))  # exp overflows
    return out


def softmax_rows_ref(S):
    return softmax(S, axis=-1)


def scores_cases(rng):
    n_q, n_k, d_k = draw_sizes(rng, 2, 9, 3, avoid=(9,))  # the in-class case has d_k = 9
    d2 = int(rng.choice([4, 16, 25]))
    return [(rng.normal(size=(n_q, d_k)), rng.normal(size=(n_k, d_k))),
            (rng.normal(size=(3, d2)), rng.normal(size=(6, d2)))]


def scores_ref(Q, K):
    return np.einsum("id,jd->ij", Q, K) / math.sqrt(Q.shape[-1])


def _attention_case(rng, n, d_model, d_k, d_v):
    return (rng.normal(size=(n, d_model)), rng.normal(size=(d_model, d_k)),
            rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_v)))


def attention_cases(rng):
    """(X, W_q, W_k, W_v), four different sizes each; d_k is never the in-class 3."""
    n, d_model, d_k, d_v = draw_sizes(rng, 2, 9, 4, avoid=(3,))
    n2, d_model2 = draw_sizes(rng, 4, 10, 2)
    return [_attention_case(rng, n, d_model, d_k, d_v),
            _attention_case(rng, n2, d_model2, int(rng.choice([2, 5, 6])), 1)]


def attention_ref(X, W_q, W_k, W_v):
    return self_attention(X, W_q, W_k, W_v)[0]


def fixed_cases(rng):
    """(X (n, d), W_q, W_k, W_v (d, d)), as in the broken code: square weights, n != d."""
    d1 = int(rng.integers(5, 8))
    out = []
    for n, d in ((int(rng.choice([k for k in range(2, 9) if k != d1])), d1), (int(rng.integers(5, 9)), 2)):
        out.append((rng.normal(size=(n, d)), *(rng.normal(size=(d, d)) for _ in range(3))))
    return out


# ---------------------------------------------------------------- 03: multi-head attention


def split_cases(rng):
    out = []
    for _ in range(3):
        n, h, d = draw_sizes(rng, 2, 8, 3)
        out.append((rng.normal(size=(n, h * d)), h))
    return out


def split_ref(X, h):
    return split_heads(X, h)


def merge_cases(rng):
    return [(rng.normal(size=tuple(draw_sizes(rng, 2, 8, 3))),) for _ in range(3)]


def merge_ref(Xh):
    return merge_heads(Xh)


def head_cases(rng):
    n, d_model, d_k, d_v = draw_sizes(rng, 2, 10, 4)
    return [_attention_case(rng, n, d_model, d_k, d_v),
            _attention_case(rng, int(rng.integers(5, 9)), 3, 1, 2)]


def head_ref(X, W_q, W_k, W_v):
    return scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)[0]


def head_ok(got, expected) -> bool:
    """The in-class checker takes the first item of a tuple (the output of ``(output, weights)``)."""
    if isinstance(got, tuple) and got:
        got = got[0]
    return close(got, expected)


def combine_cases(rng):
    h, n, d_v, d_model = draw_sizes(rng, 2, 8, 4)
    if (h, n, d_v) == (2, 5, 3):  # the in-class heads' shape
        h, n = n, h
    h2, n2 = draw_sizes(rng, 3, 7, 2)
    return [(rng.normal(size=(h, n, d_v)), rng.normal(size=(h * d_v, d_model))),
            (rng.normal(size=(h2, n2, 2)), rng.normal(size=(2 * h2, 5)))]


def combine_ref(heads, W_o):
    return merge_heads(heads) @ W_o


# ---------------------------------------------------------------- 04: masks and positions


def mask_cases(rng):
    return [(n,) for n in draw_sizes(rng, 2, 13, 3, avoid=(1, 4, 6))]


def mask_ref(n):
    return np.tril(np.ones((n, n), dtype=bool))


def bool_mask_equal(got, expected) -> bool:
    """A boolean array (a list of bools is one) of ``expected``'s pattern."""
    try:
        arr = np.asarray(got)
    except Exception:  # the learner's object: never raise
        return False
    return arr.dtype == np.bool_ and arr.shape == expected.shape and bool(np.array_equal(arr, expected))


def _allowed(rng, shape, p=0.6):
    mask = rng.random(shape) < p
    for i in range(shape[0]):
        if not mask[i].any():
            mask[i, rng.integers(shape[1])] = True
    return mask


def masked_cases(rng):
    """(S, mask): a random mask on non-square scores; one with a row that allows nothing; scores
    of +-1000 whose row maximum is masked (only the allowed entries' maximum keeps exp finite)."""
    n_q, n_k = draw_sizes(rng, 3, 8, 2)
    S1, m1 = rng.normal(scale=2.0, size=(n_q, n_k)), _allowed(rng, (n_q, n_k))
    S2, m2 = rng.normal(scale=2.0, size=(n_k, n_q)), _allowed(rng, (n_k, n_q))
    m2[int(rng.integers(n_k))] = False
    n3, k3 = int(rng.integers(2, 5)), int(rng.integers(4, 7))
    S3 = rng.normal(size=(n3, k3)) + 1000.0 * rng.choice([-1.0, 1.0], size=(n3, k3))
    m3 = _allowed(rng, (n3, k3), p=0.7)
    top = int(rng.integers(k3))
    S3[0] = -1000.0 + rng.uniform(0.0, 2.0, size=k3)
    S3[0, top], m3[0] = 1000.0, True
    m3[0, top] = False
    return [(S1, m1), (S2, m2), (S3, m3)]


def masked_ref(S, mask):
    return softmax(S, mask=mask), mask


def masked_ok(got, expected) -> bool:
    """Close to the masked softmax, and exactly 0 where the mask is False."""
    want, mask = expected
    if not close(got, want):
        return False
    return bool(np.all(as_floats(got)[~mask] == 0))


def positions_cases(rng):
    out = []
    for d in (int(v) for v in rng.choice([6, 10, 12, 14, 20], size=3, replace=False)):
        n = int(rng.choice([k for k in range(2, 15) if k != d]))
        out.append((n, d))
    return out


def positions_ref(n, d):
    return sinusoidal_positions(n, d)
