"""The exercises of positions for long texts, declared once: for each exercise of
notebook 09, its statement and checker, and its grader's part; see ``declare.py``. The hidden cases'
references are written here from the definitions, independently of the checkers; the comparisons
accept what the in-class checkers accept (close to 1e-9; any array-like)."""

from __future__ import annotations

import numpy as np

from . import long_context
from .declare import Exercise, Grading, Hidden, close_1e9, grades
from .recorded import reference

EXERCISES = (
    Exercise("09.1", "RoPE's matrix of the distance", ("my_rope_matrix",), long_context.rope_matrix),
    Exercise("09.2", "how far back a sliding cache reaches", ("earliest_cached", "earliest_fresh"),
             long_context.sliding_reach),
    Exercise("09.3", "ALiBi's weights when the content is equal", ("my_alibi_weights", "my_ratio"),
             long_context.alibi_weights),
    Exercise("09.4", "what a cache with a sink keeps", ("answer",), long_context.cache_keeps),
)


# ---------------------------------------------------------------- 09.1 RoPE's matrix of the distance


@reference
def rope_matrix_cases(rng):
    """(d, delta): even sizes and distances the notebook's cases do not use (4/3, 2/1, 8/-5, 16/40)."""
    out = []
    for d in (6, 10, 12):
        delta = int(rng.integers(-60, 61))
        while delta in (3, 1, -5, 40, 0):
            delta = int(rng.integers(-60, 61))
        out.append((d, delta))
    return out


@reference
def rope_matrix_ref(d, delta):
    """M with rope(q, m) . rope(k, n) = q @ M @ k for m - n = delta: pair i of neighbouring features
    (2i, 2i + 1) turns by -delta * theta_i, theta_i = 10000^(-2i/d) (RoFormer's layout)."""
    M = np.zeros((d, d))
    for i in range(d // 2):
        a = -delta * 10000.0 ** (-2 * i / d)
        c, s = np.cos(a), np.sin(a)
        M[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, -s], [s, c]]
    return M


@grades("09.1")
def grading_rope_matrix():
    return Grading(
        task='`my_rope_matrix(d, delta)` in plain numpy: the matrix $M$ with `rope(q, m) @ rope(k, n) == q '
             '@ M @ k` for $m - n = \\delta$',
        catches='the transpose (each pair turned by $+\\delta\\theta_i$); one angle for every pair; the '
                "frequencies reversed; the halves paired (GPT-NeoX's and Hugging Face's layout) instead of "
                'neighbours; the $1/\\sqrt d$ put in; nothing turned; a wrong shape. The hints ask for one '
                'pair worked out by hand, never the angle',
        hidden=(Hidden(rope_matrix_cases, rope_matrix_ref, close_1e9),))


# ---------------------------------------------------------------- 09.2 how far back a sliding cache reaches


@grades("09.2")
def guide_how_far_back_a_sliding_cache_reaches():
    return Grading(
        task='predict the earliest position that can change the prediction at token 20 of a two-layer '
             'model, through sliding caches of window 4 (14) and through the recomputed window (17)',
        catches='the cache taken for the fresh window; off by one (the window holds the token itself), in one '
                'layer or in each; too far or not far enough back; answers that are not whole numbers',
    )


# ---------------------------------------------------------------- 09.3 ALiBi's weights


@reference
def alibi_weights_cases(rng):
    """(slopes, i): other head counts, slopes and query positions than the notebook's."""
    out = []
    for h in (3, 5):
        slopes = np.sort(rng.uniform(0.01, 1.5, size=h))[::-1].copy()
        out.append((slopes, int(rng.integers(2, 15))))
    out.append((np.array([0.25, 2.0 ** -6]), int(rng.integers(16, 30))))
    return out


@reference
def alibi_weights_ref(slopes, i):
    """Head h's weights over keys 0 .. i: the softmax of -m_h (i - j) (ALiBi's bias alone)."""
    j = np.arange(i + 1)
    logits = -np.asarray(slopes, dtype=float)[:, None] * (i - j)[None, :]  # (h, i + 1)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@grades("09.3")
def grading_alibi_weights():
    return Grading(
        task='`my_alibi_weights(slopes, i)` in plain numpy: the weights of query $i$ when every $q \\cdot '
             "k$ is equal, one row per head; then `my_ratio`: how many times more weight the paper's two "
             'heads (slopes $2^{-4}$, $2^{-8}$) give the token one back than the token ten back ($e^{9/16} '
             '\\approx 1.76$, $e^{9/256} \\approx 1.04$)',
        catches='the biases given for the weights; the softmax unnormalised or over the heads; the wrong sign '
                '(or the row reversed); the slope forgotten; one row for all heads; for the ratio: one step, '
                'or two keys another number of steps apart (the hint names theirs and asks to count again, '
                "never the count), upside down, the biases' difference without the exponential, the heads "
                'swapped, cut or rounded too coarsely (to whole numbers or one decimal), one number for both '
                'heads; text for a number (`"1.76"`, which numpy would read as one), for '
                'the ratio or the weights',
        hidden=(Hidden(alibi_weights_cases, alibi_weights_ref, close_1e9),))


# ---------------------------------------------------------------- 09.4 what a cache with a sink keeps


@grades("09.4")
def guide_what_a_cache_with_a_sink_keeps():
    return Grading(
        task='predict the positions a `KVCache(window=4, sinks=1)` holds after tokens 0–9',
        catches='the sink forgotten; the sink counted in the window; off by one; entries that are not whole '
                'numbers. Any order, as a list, tuple, set or array',
    )
