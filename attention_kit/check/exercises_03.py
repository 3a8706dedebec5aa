"""The exercises of multi-head attention, declared once: for each exercise of
notebook 03, its statement and checker, and its grader's part (hidden cases, reference, comparison,
the samples its tests try); see ``declare.py``."""

from __future__ import annotations

import numpy as np

from ..mechanism.attention import scaled_dot_product_attention
from ..mechanism.multi_head_attention import merge_heads, split_heads
from . import multi_head
from .declare import Exercise, Grading, Hidden, array_close, draw_sizes, grades
from .exercises_02 import attention_case, batch_case
from .recorded import reference

EXERCISES = (
    Exercise("03.1", "split and merge heads", ("my_split", "my_merge"), multi_head.split_merge),
    Exercise("03.2", "one head", ("my_head",), multi_head.one_head),
    Exercise("03.3", "concatenate and project", ("my_combine",), multi_head.concat_project),
    Exercise("03.4", "count the parameters", ("answer",), multi_head.n_parameters,
             {"d_model": 1024, "n_heads": 128, "d_head": 128}),
)


# ---------------------------------------------------------------- 03.1 split and merge heads

SPLIT_PUBLIC = {(2, 4, 2, 3), (3, 2, 4, 1), (2, 3, 3, 2)}  # the in-class (b, n, h, d_head)


def batch_heads(rng, k: int) -> list[tuple[int, int, int, int]]:
    """``k`` shapes (b, n, h, d_head) with b, n, h >= 2 (a reshape without the transpose then moves
    entries) that differ from one another in b and h; the last has n == h, where that reshape keeps
    the shape. None is an in-class shape."""
    out: list[tuple[int, int, int, int]] = []
    while len(out) < k:
        b, n, h, d = (int(v) for v in rng.integers(2, 7, size=4))
        if len(out) == k - 1:
            n = h
        if (b, n, h, d) not in SPLIT_PUBLIC and all((b, h) != (o[0], o[2]) for o in out):
            out.append((b, n, h, d))
    return out


@reference
def split_cases(rng):
    """(X (b, n, h*d_head), h)."""
    return [(rng.normal(size=(b, n, h * d)), h) for b, n, h, d in batch_heads(rng, 3)]


@reference
def split_ref(X, h):
    return split_heads(X, h)  # (..., n, h*d_head) -> (..., h, n, d_head)


@reference
def merge_cases(rng):
    """(Xh (b, h, n, d_head),)."""
    return [(rng.normal(size=(b, h, n, d)),) for b, n, h, d in batch_heads(rng, 3)]


@reference
def merge_ref(Xh):
    return merge_heads(Xh)  # (..., h, n, d_head) -> (..., n, h*d_head)


@grades("03.1")
def grading_split_merge():
    return Grading(
        task='`my_split(X, h)` and `my_merge(Xh)` for a batch, `(b, n, h·d_head)` ↔ `(b, h, n, d_head)`, '
             "with `reshape` and `transpose` only (section 4's one-sequence lines do not pass)",
        catches='the reshape without the transpose `X.reshape(b, h, n, d_head)`; the head axis left after the '
                'token axis; `(d_head, h)` instead of `(h, d_head)` (interleaved columns); the head axis '
                'moved in front of the batch axis; a transpose that forgets the batch axis; for merge, gluing '
                'heads in memory order, or interleaved columns; a list; hints name the idea, not the code',
        hidden=(Hidden(split_cases, split_ref, array_close),
                Hidden(merge_cases, merge_ref, array_close, answer=1)),
        wrong={0: "def f(X, h):\n    b, n, hd = X.shape\n    return X.reshape(b, h, n, hd // h)",
               1: "def f(Xh):\n    b, h, n, d = Xh.shape\n    return Xh.reshape(b, n, h * d)"},
        other_right={0: "def f(X, h):\n    return np.stack(np.split(X, h, axis=-1), axis=1)",
                     1: "def f(Xh):\n    return np.concatenate([Xh[:, i] for i in range(Xh.shape[1])], axis=-1)"},
    )


# ---------------------------------------------------------------- 03.2 one head


@reference
def head_cases(rng):
    """(X, W_q, W_k, W_v): one sequence of sizes all different; one with d_k = 1; a batch
    (b, n, d_model) with b = n = d_k, where a transpose of every axis of K runs and gives other
    numbers (the exercise asks for one sequence or a batch); a batch whose b, n, d_model, d_k, d_v all
    differ (a scale read from axis 1, n for a batch, fails)."""
    n, d_model, d_k, d_v = draw_sizes(rng, 2, 10, 4)
    m = int(rng.choice([2, 4, 6]))
    cases = [attention_case(rng, n, d_model, d_k, d_v),
             attention_case(rng, int(rng.integers(5, 9)), 3, 1, 2),
             batch_case(rng, m, m, int(rng.integers(2, 8)), m, int(rng.integers(1, 5)))]
    return cases + [batch_case(rng, *draw_sizes(rng, 2, 10, 5))]


@reference
def head_ref(X, W_q, W_k, W_v):
    return scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)[0]  # attends over the last two axes


@grades("03.2")
def grading_one_head():
    return Grading(
        task='`my_head(X, W_q, W_k, W_v)`, one head in plain numpy, for one sequence `(n, d_model)` or a '
             "batch `(b, n, d_model)` (section 2's loop is for one sequence), one array (a tuple `(A @ V, "
             'A)` fails); the checker tries keys of three sizes d_k, so a scale typed in (`np.sqrt(2)`) '
             'fails in class',
        catches="the scores unscaled; scaled by d_k, or by the tokens' size d_model instead of the keys'; a "
                'number typed in as the scale, named as such on a case its value does not explain (a `2.0` is '
                'd_k itself on the first case, right on the batch); softmax over the queries instead of the '
                'keys, over the whole matrix, or with row sums that lost their axis; transposed scores (`K @ '
                'Q.T`); the softmax forgotten; the rows of `X` averaged instead of the values; the weights '
                'returned instead of the output; a transpose of the keys that moves the batch axis too (`K.T` '
                'on a batch); scaled by the number of tokens n (read from the second axis, which is n for a '
                'batch); scaled by the values\' size d_v; shape errors explained in the row convention; hints '
                'name the idea, not the formula',
        hidden=(Hidden(head_cases, head_ref, array_close),),
        wrong={0: "def f(X, W_q, W_k, W_v):\n    Q, K, V = X @ W_q, X @ W_k, X @ W_v\n"
                  "    return ak.softmax(Q @ K.T / np.sqrt(K.shape[1]), axis=0) @ V"},
        refused={0: "def f(X, W_q, W_k, W_v):\n    Q, K, V = X @ W_q, X @ W_k, X @ W_v\n"
                    "    A = ak.softmax(Q @ K.T / np.sqrt(K.shape[1]))\n    return A @ V, A"},
    )


# ---------------------------------------------------------------- 03.3 concatenate and project


@reference
def combine_cases(rng):
    """(heads (b, h, n, d_v), W_o (h*d_v, d_model)): two batches of other shapes than the in-class
    (3, 2, 5, 3) and (2, 3, 3, 2) (no 3 heads, no batch of 3); the second with n == h, where gluing
    the heads without moving the token axis keeps the shape."""
    b, h, n, d_v, d_model = draw_sizes(rng, 2, 9, 5, avoid=(3,))
    b2, h2 = draw_sizes(rng, 1, 7, 2, avoid=(b, h, 3))
    return [(rng.normal(size=(b, h, n, d_v)), rng.normal(size=(h * d_v, d_model))),
            (rng.normal(size=(b2, h2, h2, 2)), rng.normal(size=(2 * h2, 5)))]


@reference
def combine_ref(heads, W_o):
    b, h, n, d_v = heads.shape
    return np.einsum("bhnv,hvm->bnm", heads, W_o.reshape(h, d_v, -1))  # each head's rows of W_o, summed


@grades("03.3")
def grading_concat_project():
    return Grading(
        task='`my_combine(heads, W_o)` for a batch `(b, h, n, d_v)`: concatenate, then W_O (two batch '
             'shapes, so no shape typed in passes; section 4 merges one sequence with `ak.merge_heads`)',
        catches='the output projection forgotten; the reshape without the transpose or interleaved columns '
                'when concatenating; heads added or averaged instead of concatenated; a one-sequence merge; '
                '`W_o.T`',
        hidden=(Hidden(combine_cases, combine_ref, array_close),),
        wrong={0: "def f(heads, W_o):\n    b, h, n, d = heads.shape\n    return heads.reshape(b, n, h * d) @ W_o"},
        other_right={0: "def f(heads, W_o):\n    b, h, n, d = heads.shape\n"
                        "    return np.swapaxes(heads, 1, 2).reshape(b, n, h * d) @ W_o"},
    )


# ---------------------------------------------------------------- 03.4 count the parameters


@grades("03.4")
def guide_count_the_parameters():
    return Grading(
        task='count the parameters of a T5-11B attention layer (d_model = 1024, h = 128 heads of d_head = '
             '128, so h·d_head ≠ d_model; no biases): 67,108,864',
        catches="section 5's 4·d_model² (with or without 4·d_model) applied where it does not hold; W_O "
                'forgotten; W_O counted once per head; only one head counted; a number that is not whole '
                '(`2362368.4`), a bool or a string; the fallback hint says to count each matrix from its '
                'shape without giving the shapes',
    )
