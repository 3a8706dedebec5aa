"""The exercises of masks and positions, declared once: for each exercise of
notebook 04, its statement and checker, and its grader's part (hidden cases, reference, comparison,
the samples its tests try, honest styles); see ``declare.py``."""

from __future__ import annotations

import numpy as np

from ..mechanism.alignment import softmax
from ..mechanism.positions import sinusoidal_positions
from . import masks_positions
from .declare import (
    Exercise,
    Grading,
    Hidden,
    array_close,
    bool_array_equal,
    draw_sizes,
    grades,
    masked_ok,
)
from .recorded import reference

EXERCISES = (
    Exercise("04.1", "causal mask", ("my_causal_mask",), masks_positions.causal_mask),
    Exercise("04.2", "masked softmax", ("my_masked_softmax",), masks_positions.masked_softmax),
    Exercise("04.3", "sinusoidal positions", ("my_positions",), masks_positions.positions),
    Exercise("04.4", "which rows change", ("answer",), masks_positions.future_unchanged),
)


# ---------------------------------------------------------------- 04.1 causal mask


@reference
def mask_cases(rng):
    """(n,): one small size, and two from 14 to 60, beyond a table of the masks a learner could
    type out (a lookup of n = 1..13 is not an answer); a 60 x 60 mask still costs nothing."""
    return [(n,) for n in draw_sizes(rng, 2, 13, 1, avoid=(1, 4, 6)) + draw_sizes(rng, 14, 61, 2)]


@reference
def mask_ref(n):
    return np.tril(np.ones((n, n), dtype=bool))


@grades("04.1")
def grading_causal_mask():
    return Grading(
        task='`my_causal_mask(n)`, a numpy array of dtype bool, `(n, n)`',
        catches='the opposite polarity (the mask of the future, as in `nn.MultiheadAttention`); the upper '
                'triangle; the diagonal left out; the right pattern as 0/1 floats or ints instead of '
                'booleans; a list (even of bools); the wrong shape; hints name the idea, not `np.tril`',
        hidden=(Hidden(mask_cases, mask_ref, bool_array_equal),),
        wrong={0: "def f(n):\n    return np.tril(np.ones((n, n)))"},  # floats, not bools
        other_right={0: "def f(n):\n    return np.array([[j <= i for j in range(n)] for i in range(n)])"},
        refused={0: "def f(n):\n    return [[j <= i for j in range(n)] for i in range(n)]"},
        honest=(
            "def my_causal_mask(n):\n    return np.tril(np.ones((n, n), dtype=bool))",
            "def my_causal_mask(n):\n    i = np.arange(n)\n    return i[:, None] >= i[None, :]",
            "def my_causal_mask(n):\n    return ~np.triu(np.ones((n, n), dtype=bool), k=1)",
            "def my_causal_mask(n):\n    return np.tri(n, dtype=bool)",
            "def my_causal_mask(n):\n    rows = np.arange(n).reshape(-1, 1)\n    cols = np.arange(n).reshape(1, -1)\n"
            "    return cols <= rows",
        ),
    )


# ---------------------------------------------------------------- 04.2 masked softmax


def allowed(rng, shape, p=0.6):
    """A random mask of ``shape`` that allows at least one key in every row."""
    mask = rng.random(shape) < p
    for i in range(shape[0]):
        if not mask[i].any():
            mask[i, rng.integers(shape[1])] = True
    return mask


@reference
def masked_cases(rng):
    """(S, mask): a random mask on non-square scores; one with a row that allows nothing; scores
    of +-1000 whose row maximum is masked (only the allowed entries' maximum keeps exp finite), and
    a row that allows -1000, then +1000 (a shift by the first allowed score, the minimum or the mean overflows)."""
    n_q, n_k = draw_sizes(rng, 3, 8, 2)
    S1, m1 = rng.normal(scale=2.0, size=(n_q, n_k)), allowed(rng, (n_q, n_k))
    S2, m2 = rng.normal(scale=2.0, size=(n_k, n_q)), allowed(rng, (n_k, n_q))
    m2[int(rng.integers(n_k))] = False
    n3, k3 = int(rng.integers(2, 5)), int(rng.integers(4, 7))
    S3 = rng.normal(size=(n3, k3)) + 1000.0 * rng.choice([-1.0, 1.0], size=(n3, k3))
    m3 = allowed(rng, (n3, k3), p=0.7)
    top = int(rng.integers(k3))
    S3[0] = -1000.0 + rng.uniform(0.0, 2.0, size=k3)
    S3[0, top], m3[0] = 1000.0, True
    m3[0, top] = False
    # a row that allows -1000 first and +1000 next: a shift by its first allowed score, its minimum
    # or its mean overflows
    S3[1, 0], S3[1, 1], m3[1, :2] = -1000.0, 1000.0, True
    return [(S1, m1), (S2, m2), (S3, m3)]


@reference
def masked_ref(S, mask):
    return softmax(S, mask=mask), mask


@grades("04.2")
def grading_masked_softmax():
    return Grading(
        task='`my_masked_softmax(S, mask)` in plain numpy, `S` and `mask` unchanged (as 02.1)',
        catches='`S` or `mask` changed in place; a list; masked scores set to 0 instead of −∞; softmax '
                'first, then zeroing without renormalising; the polarity reversed; NaN in a row with no '
                'allowed key; overflow without subtracting the row maximum, or after a shift by the '
                'allowed first score, minimum, mean or median (a row allows −1000, then 1000); the wrong axis; the wrong shape',
        hidden=(Hidden(masked_cases, masked_ref, masked_ok),),
        wrong={0: "def f(S, mask):\n    return ak.softmax(S) * mask"},
        other_right={0: "def f(S, mask):\n    out = np.zeros(S.shape)\n    for i in range(S.shape[0]):\n"
                        "        if mask[i].any():\n            s = S[i][mask[i]]\n            e = np.exp(s - s.max())\n"
                        "            out[i][mask[i]] = e / e.sum()\n    return out"},
        honest=(
            "def my_masked_softmax(S, mask):\n    z = np.where(mask, S, -np.inf)\n    m = z.max(axis=1, keepdims=True)\n"
            "    m = np.where(np.isfinite(m), m, 0.0)\n    e = np.exp(z - m)\n    s = e.sum(axis=1, keepdims=True)\n"
            "    return e / np.where(s == 0, 1.0, s)",
            "def my_masked_softmax(S, mask):\n    out = np.zeros(S.shape)\n    for i in range(S.shape[0]):\n"
            "        keep = mask[i]\n        if keep.any():\n            z = np.exp(S[i, keep] - S[i, keep].max())\n"
            "            out[i, keep] = z / z.sum()\n    return out",
            "def my_masked_softmax(S, mask):\n    m = np.where(mask, S, -np.inf).max(axis=-1, keepdims=True)\n"
            "    m[~np.isfinite(m)] = 0.0\n    e = np.where(mask, np.exp(np.where(mask, S, m) - m), 0.0)\n"
            "    s = e.sum(axis=-1, keepdims=True)\n    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)",
            "def my_masked_softmax(S, mask):\n    big = np.max(np.where(mask, S, -np.inf), axis=1)\n"
            "    big[np.isinf(big)] = 0\n    w = np.exp(np.where(mask, S, big[:, None]) - big[:, None]) * mask\n    z = w.sum(1)\n"
            "    z[z == 0] = 1\n    return w / z[:, None]",
            "def my_masked_softmax(S, mask):\n    scores = np.where(mask, S, -np.inf)\n    result = np.zeros_like(scores)\n"
            "    live = mask.any(axis=1)\n    s = scores[live]\n    e = np.exp(s - s.max(axis=1, keepdims=True))\n"
            "    result[live] = e / e.sum(axis=1, keepdims=True)\n    return result",
        ),
    )


# ---------------------------------------------------------------- 04.3 sinusoidal positions


@reference
def positions_cases(rng):
    """(pos (k,) ints, d): positions in any order with gaps, up to a few thousand; a run that
    continues after a cache; one position. d is never an in-class 4, 8 or 16, and len(pos) != d."""
    d1, d2, d3 = (int(v) for v in rng.choice([6, 10, 12, 14, 20], size=3, replace=False))
    k = int(rng.choice([v for v in range(3, 12) if v != d1]))
    start = int(rng.integers(9, 3000))
    return [(rng.permutation(rng.choice(4000, size=k, replace=False)), d1),
            (np.arange(start, start + int(rng.integers(2, 6))), d2),
            (np.array([int(rng.integers(1, 500))]), d3)]


@reference
def positions_ref(pos, d):
    return np.concatenate([sinusoidal_positions(1, d, start=int(p)) for p in pos])  # one row per position


@grades("04.3")
def grading_positions():
    return Grading(
        task='`my_positions(pos, d)`, the sinusoidal encoding at given positions (e.g. 5, 6, 7), without a '
             "loop (the checker compares numbers only, and the text says so; section 4.1's "
             '`positions_loop(n, d)` takes a count and does not pass)',
        catches='sin and cos swapped; the exponent built from the wrong index; the halves concatenated '
                '`[sin…, cos…]` instead of interleaved; the given positions ignored (counted from 0 or 1); a '
                'count taken for the positions; a list; the wrong shape',
        hidden=(Hidden(positions_cases, positions_ref, array_close),),
        wrong={0: "def f(pos, d):\n    return ak.sinusoidal_positions(len(pos), d)"},  # the positions ignored
        other_right={0: "def f(pos, d):\n    i = np.arange(d // 2)\n"
                        "    ang = np.outer(pos, 1 / 10000 ** (2 * i / d))\n"
                        "    return np.stack([np.sin(ang), np.cos(ang)], axis=-1).reshape(len(pos), d)"},
        honest=(
            "def my_positions(pos, d):\n    omega = 10000.0 ** (-np.arange(0, d, 2) / d)\n"
            "    theta = np.asarray(pos)[:, None] * omega[None, :]\n    P = np.zeros((len(pos), d))\n"
            "    P[:, 0::2] = np.sin(theta)\n    P[:, 1::2] = np.cos(theta)\n    return P",
            "def my_positions(pos, d):\n    position = np.asarray(pos, dtype=float).reshape(-1, 1)\n"
            "    div = np.exp(np.arange(0, d, 2) * (-np.log(10000.0) / d))\n    pe = np.zeros((len(pos), d))\n"
            "    pe[:, 0::2] = np.sin(position * div)\n    pe[:, 1::2] = np.cos(position * div)\n    return pe",
            "def my_positions(pos, d):\n    i = np.arange(d // 2)\n    ang = np.outer(pos, 1 / 10000 ** (2 * i / d))\n"
            "    return np.stack([np.sin(ang), np.cos(ang)], axis=-1).reshape(len(pos), d)",
            "def my_positions(pos, d):\n    t = np.array(pos, dtype=float)[:, None]\n"
            "    freq = np.power(10000.0, -np.arange(0, d, 2, dtype=float) / d)[None, :]\n"
            "    out = np.zeros((t.shape[0], d))\n    out[:, ::2] = np.sin(t * freq)\n    out[:, 1::2] = np.cos(t * freq)\n"
            "    return out",
            "def my_positions(pos, d):\n    k = np.arange(d)\n    rates = 1.0 / 10000 ** ((k - k % 2) / d)\n"
            "    a = np.reshape(pos, (-1, 1)) * rates\n    return np.where(k % 2 == 0, np.sin(a), np.cos(a))",
        ),
    )


# ---------------------------------------------------------------- 04.4 which rows change: a value


@grades("04.4")
def grading_future_unchanged():
    return Grading(
        task='predict which output rows change when token 3 of 6 is edited under a causal mask (whole '
             'numbers only)',
        catches='the rows before the edit; row 3 itself forgotten; only row 3; every row; rows missing (the hints '
                'ask which rows have token 3 among their keys, without naming a row)',
        honest=("answer = [3, 4, 5]", "answer = list(range(3, 6))", "answer = (3, 4, 5)"))
