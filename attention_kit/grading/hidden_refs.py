"""The hidden cases' inputs, references and comparisons, one group per exercise (``hidden.py``
lists them in :data:`~attention_kit.grading.hidden.HIDDEN`).

Each ``*_cases(rng)`` draws new inputs whose sizes and values differ from the in-class checker's
(non-square, other ``n``, ``d``, heads, blocks); each reference computes the expected result on
its own (with ``attention_kit`` where it has the function, else plain numpy); each ``*_ok(got,
expected)`` accepts what the in-class checker accepts as right, with its tolerance, and never
raises (``got`` is whatever the learner's function returned, as data). Where an exercise asks for
a numpy array, a list or a tuple is refused, as in class (``array_close``).

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


def array_close(got, expected) -> bool:
    """A numpy array (not a list, not the tuple ``(output, weights)``), close to ``expected``."""
    return isinstance(got, np.ndarray) and close(got, expected)


def pair_close(got, expected) -> bool:
    """Two numpy arrays ``(a, b)`` (in a tuple or a list), each close to ``expected``'s (a list of
    numbers is not an array: the in-class checkers say so too)."""
    return isinstance(got, (tuple, list)) and len(got) == 2 and all(
        isinstance(g, np.ndarray) and close(g, e) for g, e in zip(got, expected, strict=True))


def exact_count(got, expected) -> bool:
    """A whole number of type int (Python's or numpy's, not a bool, not a float such as 6.0),
    equal to ``expected``."""
    return is_number(got) and isinstance(got, (int, np.integer)) and got == expected


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
    """(C (n, d_v), W_c (d_y, d_v), b_c (d_y,)): n, d_v, d_y all different; all equal (W_c against
    W_c.T, rows against columns); one context whose logits are all large."""
    n, d_v, d_y = draw_sizes(rng, 4, 10, 3)
    m = int(rng.integers(4, 7))
    k, e = draw_sizes(rng, 2, 7, 2)
    return [(rng.normal(size=(n, d_v)), rng.normal(size=(d_y, d_v)), rng.normal(size=d_y)),
            (rng.normal(size=(m, m)), rng.normal(size=(m, m)), rng.normal(size=m)),
            (rng.normal(size=(1, k)), rng.normal(size=(e, k)), rng.normal(size=e) + 50.0)]


def output_ref(C, W_c, b_c):
    return softmax(np.einsum("yv,nv->ny", W_c, C) + b_c, axis=-1)


# ---------------------------------------------------------------- 02: self-attention


def softmax_rows_cases(rng):
    """Stacks (h, n_q, n_k) of two depths, neither the in-class 2, with n_q != n_k; one matrix
    (n_q, n_k); a stack whose rows sit near +800 or -800 (exp overflows, and the maximum of a whole
    matrix or stack leaves a row 0/0); a matrix whose every row holds scores near +800 and near -800
    (a shift by the row's minimum or mean overflows)."""
    h1, h2 = draw_sizes(rng, 1, 7, 2, avoid=(2,))
    n_q, n_k = draw_sizes(rng, 2, 8, 2)
    a, b = draw_sizes(rng, 2, 8, 2, avoid=(3,))
    k = int(rng.integers(3, 7))
    sign = rng.permutation(np.resize([-1.0, 1.0], 2 * h2)).reshape(h2, 2, 1)  # both signs in the stack
    cases = [(np.round(rng.normal(scale=3.0, size=(h1, n_q, n_k)), 3),),
             (np.round(rng.normal(scale=3.0, size=(a, b)), 3),),
             (rng.normal(size=(h2, 2, k)) + 800.0 * sign,)]
    # rows whose scores lie far apart (+-800 in one row): a shift by the row's minimum or mean overflows
    n_s, k_s = int(rng.integers(2, 5)), int(rng.integers(3, 7))
    spread = rng.normal(size=(n_s, k_s)) + 800.0 * rng.choice([-1.0, 1.0], size=(n_s, k_s))
    spread[:, 0], spread[:, 1] = 800.0 + rng.normal(size=n_s), -800.0 + rng.normal(size=n_s)
    return cases + [(spread,)]


def softmax_rows_ref(S):
    return softmax(S, axis=-1)


def scores_cases(rng):
    """(Q, K): one pair of matrices of widths other than the in-class 9 and 4, another, and a stack
    of heads (h, n, d_k) with h = d_k (where ``K.T`` runs and gives wrong numbers)."""
    n_q, n_k, d_k = draw_sizes(rng, 2, 9, 3, avoid=(9, 4))
    d2 = int(rng.choice([16, 25]))
    h = int(rng.choice([2, 5]))
    return [(rng.normal(size=(n_q, d_k)), rng.normal(size=(n_k, d_k))),
            (rng.normal(size=(3, d2)), rng.normal(size=(6, d2))),
            (rng.normal(size=(h, 3, h)), rng.normal(size=(h, h, h)))]


def scores_ref(Q, K):
    return np.einsum("...id,...jd->...ij", Q, K) / math.sqrt(Q.shape[-1])


def _attention_case(rng, n, d_model, d_k, d_v):
    return (rng.normal(size=(n, d_model)), rng.normal(size=(d_model, d_k)),
            rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_v)))


def _batch_case(rng, b, n, d_model, d_k, d_v):
    return (rng.normal(size=(b, n, d_model)), rng.normal(size=(d_model, d_k)),
            rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_v)))


def attention_cases(rng):
    """(X, W_q, W_k, W_v): a batch (b, n, d_model) of sizes all different; a batch with b = n = d_k
    (K.T, which reverses the batch axis too, runs there and gives other numbers); one sequence
    (n, d_model). d_k is never the in-class 3."""
    b, n, d_model, d_k, d_v = draw_sizes(rng, 2, 9, 5, avoid=(3,))
    m = int(rng.choice([2, 4, 5]))
    n2, d_model2 = draw_sizes(rng, 4, 10, 2)
    return [_batch_case(rng, b, n, d_model, d_k, d_v),
            _batch_case(rng, m, m, int(rng.integers(2, 7)), m, int(rng.integers(1, 5))),
            _attention_case(rng, n2, d_model2, int(rng.choice([2, 5, 6])), 1)]


def attention_ref(X, W_q, W_k, W_v):
    """``attention_kit.self_attention``, which attends over the last two axes of a batch too."""
    return self_attention(X, W_q, W_k, W_v)[0]


def fixed_cases(rng):
    """(X (n, d), W_q, W_k, W_v (d, d)), as in the broken code: square weights, n != d."""
    d1 = int(rng.integers(5, 8))
    out = []
    for n, d in ((int(rng.choice([k for k in range(2, 9) if k != d1])), d1), (int(rng.integers(5, 9)), 2)):
        out.append((rng.normal(size=(n, d)), *(rng.normal(size=(d, d)) for _ in range(3))))
    return out


# ---------------------------------------------------------------- 03: multi-head attention


_SPLIT_PUBLIC = {(2, 4, 2, 3), (3, 2, 4, 1), (2, 3, 3, 2)}  # the in-class (b, n, h, d_head)


def _batch_heads(rng, k: int) -> list[tuple[int, int, int, int]]:
    """``k`` shapes (b, n, h, d_head) with b, n, h >= 2 (a reshape without the transpose then moves
    entries) that differ from one another in b and h; the last has n == h, where that reshape keeps
    the shape. None is an in-class shape."""
    out: list[tuple[int, int, int, int]] = []
    while len(out) < k:
        b, n, h, d = (int(v) for v in rng.integers(2, 7, size=4))
        if len(out) == k - 1:
            n = h
        if (b, n, h, d) not in _SPLIT_PUBLIC and all((b, h) != (o[0], o[2]) for o in out):
            out.append((b, n, h, d))
    return out


def split_cases(rng):
    """(X (b, n, h*d_head), h)."""
    return [(rng.normal(size=(b, n, h * d)), h) for b, n, h, d in _batch_heads(rng, 3)]


def split_ref(X, h):
    return split_heads(X, h)  # (..., n, h*d_head) -> (..., h, n, d_head)


def merge_cases(rng):
    """(Xh (b, h, n, d_head),)."""
    return [(rng.normal(size=(b, h, n, d)),) for b, n, h, d in _batch_heads(rng, 3)]


def merge_ref(Xh):
    return merge_heads(Xh)  # (..., h, n, d_head) -> (..., n, h*d_head)


def head_cases(rng):
    """(X, W_q, W_k, W_v): one sequence of sizes all different; one with d_k = 1; a batch
    (b, n, d_model) with b = n = d_k, where a transpose of every axis of K runs and gives other
    numbers (the exercise asks for one sequence or a batch)."""
    n, d_model, d_k, d_v = draw_sizes(rng, 2, 10, 4)
    m = int(rng.choice([2, 4, 6]))
    return [_attention_case(rng, n, d_model, d_k, d_v),
            _attention_case(rng, int(rng.integers(5, 9)), 3, 1, 2),
            _batch_case(rng, m, m, int(rng.integers(2, 8)), m, int(rng.integers(1, 5)))]


def head_ref(X, W_q, W_k, W_v):
    return scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)[0]  # attends over the last two axes


def combine_cases(rng):
    """(heads (b, h, n, d_v), W_o (h*d_v, d_model)): two batches of other shapes than the in-class
    (3, 2, 5, 3) and (2, 3, 3, 2) (no 3 heads, no batch of 3); the second with n == h, where gluing
    the heads without moving the token axis keeps the shape."""
    b, h, n, d_v, d_model = draw_sizes(rng, 2, 9, 5, avoid=(3,))
    b2, h2 = draw_sizes(rng, 1, 7, 2, avoid=(b, h, 3))
    return [(rng.normal(size=(b, h, n, d_v)), rng.normal(size=(h * d_v, d_model))),
            (rng.normal(size=(b2, h2, h2, 2)), rng.normal(size=(2 * h2, 5)))]


def combine_ref(heads, W_o):
    b, h, n, d_v = heads.shape
    return np.einsum("bhnv,hvm->bnm", heads, W_o.reshape(h, d_v, -1))  # each head's rows of W_o, summed


# ---------------------------------------------------------------- 04: masks and positions


def mask_cases(rng):
    """(n,): one small size, and two from 14 to 60, beyond a table of the masks a learner could
    type out (a lookup of n = 1..13 is not an answer); a 60 x 60 mask still costs nothing."""
    return [(n,) for n in draw_sizes(rng, 2, 13, 1, avoid=(1, 4, 6)) + draw_sizes(rng, 14, 61, 2)]


def mask_ref(n):
    return np.tril(np.ones((n, n), dtype=bool))


def bool_mask_equal(got, expected) -> bool:
    """A boolean array (a list of bools is one) of ``expected``'s pattern."""
    try:
        arr = np.asarray(got)
    except Exception:  # the learner's object: never raise
        return False
    return arr.dtype == np.bool_ and arr.shape == expected.shape and bool(np.array_equal(arr, expected))


def bool_array_equal(got, expected) -> bool:
    """A numpy array of dtype bool (not a list of bools, not 0/1) of ``expected``'s pattern."""
    return isinstance(got, np.ndarray) and bool_mask_equal(got, expected)


def _allowed(rng, shape, p=0.6):
    mask = rng.random(shape) < p
    for i in range(shape[0]):
        if not mask[i].any():
            mask[i, rng.integers(shape[1])] = True
    return mask


def masked_cases(rng):
    """(S, mask): a random mask on non-square scores; one with a row that allows nothing; scores
    of +-1000 whose row maximum is masked (only the allowed entries' maximum keeps exp finite), and
    a row that allows both +1000 and -1000 (a shift by the allowed minimum or mean overflows)."""
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
    # a row that allows scores near +1000 and near -1000: a shift by its allowed minimum or mean overflows
    S3[1, 0], S3[1, 1], m3[1, :2] = 1000.0, -1000.0, True
    return [(S1, m1), (S2, m2), (S3, m3)]


def masked_ref(S, mask):
    return softmax(S, mask=mask), mask


def masked_ok(got, expected) -> bool:
    """Close to the masked softmax, and exactly 0 where the mask is False."""
    want, mask = expected
    if not array_close(got, want):
        return False
    return bool(np.all(as_floats(got)[~mask] == 0))


def positions_cases(rng):
    """(pos (k,) ints, d): positions in any order with gaps, up to a few thousand; a run that
    continues after a cache; one position. d is never an in-class 4, 8 or 16, and len(pos) != d."""
    d1, d2, d3 = (int(v) for v in rng.choice([6, 10, 12, 14, 20], size=3, replace=False))
    k = int(rng.choice([v for v in range(3, 12) if v != d1]))
    start = int(rng.integers(9, 3000))
    return [(rng.permutation(rng.choice(4000, size=k, replace=False)), d1),
            (np.arange(start, start + int(rng.integers(2, 6))), d2),
            (np.array([int(rng.integers(1, 500))]), d3)]


def positions_ref(pos, d):
    return np.concatenate([sinusoidal_positions(1, d, start=int(p)) for p in pos])  # one row per position
