"""The exercises of the general attention model, declared once: for each exercise of
notebook 01, its statement and checker, and its grader's part (hidden cases drawn with sizes the
notebook never shows, the reference, the comparison, the samples its tests try). ``declare.py`` says
how; the student edition keeps the statements and leaves the grader's parts out."""

from __future__ import annotations

import numpy as np

from ..mechanism.alignment import softmax
from . import general
from .declare import Exercise, Grading, Hidden, array_close, draw_sizes, grades
from .recorded import reference

EXERCISES = (
    Exercise("01.1", "softmax by hand", ("my_weights",), general.softmax_by_hand),
    Exercise("01.2", "dot scores", ("my_dot_scores",), general.dot_scores),
    Exercise("01.3", "dot and cosine winners", ("dot_winner", "cosine_winner"), general.predict_winners),
    Exercise("01.4", "context vector", ("my_context",), general.context_vector),
    Exercise("01.5", "output model", ("my_output_model",), general.output_model),
)


# ---------------------------------------------------------------- 01.1 softmax by hand


@grades("01.1")
def guide_softmax_by_hand():
    return Grading(
        task='softmax of `e = (2, 1, 0)` by hand',
        catches='`exp(e)` not yet weights; the raw scores divided by their sum (no exponential); `exp(-e)` '
                '(largest weight on the smallest score); right numbers in the wrong order; weights that do '
                'not sum to 1 (to rounding: 1.01 does not); the right weights rounded too coarsely (one '
                'decimal); NaN or inf; complex numbers; a dict or another object that is not a list',
    )


# ---------------------------------------------------------------- 01.2 dot scores


@reference
def dot_cases(rng):
    d, n_k = draw_sizes(rng, 5, 9, 2)  # n_k != d: a transposed K fails
    m = int(rng.integers(5, 8))  # square: a transposed K runs and gives other numbers
    return [(rng.normal(size=d), rng.normal(size=(n_k, d))),
            (rng.normal(size=m), rng.normal(size=(m, m))),
            (rng.normal(size=2), rng.normal(size=(6, 2)))]


@reference
def dot_ref(q, K):
    return np.einsum("ld,d->l", K, q)


@grades("01.2")
def grading_dot_scores():
    return Grading(
        task="`my_dot_scores(q, K)` without a loop (section 2 computes the row form's scores with "
             '`ak.dot_score`, not with a product)',
        catches='element-wise products not summed; everything summed into one number; summed over the wrong '
                'axis (one number per feature); keys used as columns (`K.T @ q`); scaled by √d; softmax '
                'applied; divided by the lengths (cosine); shape errors (the hint names the axis to contract, '
                'not the code); a list instead of an array; other wrong numbers (the hint asks to work the '
                'first score out by hand; it does not print it)',
        hidden=(Hidden(dot_cases, dot_ref, array_close),),
        wrong={0: "def f(q, K):\n    return (K * q).sum()"},
        other_right={0: "def f(q, K):\n    return np.array([float(k @ q) for k in K])"},
        refused={0: "def f(q, K):\n    return [float(k @ q) for k in K]"},
    )


# ---------------------------------------------------------------- 01.3 dot and cosine winners


@grades("01.3")
def guide_dot_and_cosine_winners():
    return Grading(
        task="predict the `dot` winner and the cosine winner (keys ordered unlike section 3's, so its "
             'answer cannot be copied)',
        catches='the two answers swapped; the same key for both; a wrong key for one of them; a number (`1`) '
                "instead of a label (`'k1'`); labels that are not keys",
    )


# ---------------------------------------------------------------- 01.4 context vector


@reference
def context_cases(rng):
    n_k, d_v = draw_sizes(rng, 5, 9, 2)
    n_q = int(rng.integers(2, 5))
    m = int(rng.integers(4, 7))
    return [(softmax(rng.normal(size=n_k)), rng.normal(size=(n_k, d_v))),
            (softmax(rng.normal(size=(n_q, n_k))), rng.normal(size=(n_k, d_v))),
            (softmax(rng.normal(size=(m, m))), rng.normal(size=(m, m)))]


@reference
def context_ref(a, V):
    return np.einsum("...l,lv->...v", a, V)


@grades("01.4")
def grading_context_vector():
    return Grading(
        task="`my_context(a, V)` as one matrix product, for one query and for a batch (section 2's table "
             'leaves the row form of the context to this exercise; section 5 writes the weighted sum out)',
        catches="weighted values not summed; summed over the value's components; the plain average of the "
                'values; transposed layout or transposed weights for a batch of queries; shape errors (the '
                'hint names the shared axis); a list instead of an array',
        hidden=(Hidden(context_cases, context_ref, array_close),),
        wrong={0: "def f(a, V):\n    return V.mean(axis=0)"},
    )


# ---------------------------------------------------------------- 01.5 output model


@reference
def output_cases(rng):
    """(C (n, d_v), W_c (d_y, d_v), b_c (d_y,)): n, d_v, d_y all different; all equal (W_c against
    W_c.T, rows against columns); one context whose logits are all large."""
    n, d_v, d_y = draw_sizes(rng, 4, 10, 3)
    m = int(rng.integers(4, 7))
    k, e = draw_sizes(rng, 2, 7, 2)
    return [(rng.normal(size=(n, d_v)), rng.normal(size=(d_y, d_v)), rng.normal(size=d_y)),
            (rng.normal(size=(m, m)), rng.normal(size=(m, m)), rng.normal(size=m)),
            (rng.normal(size=(1, k)), rng.normal(size=(e, k)), rng.normal(size=e) + 50.0)]


@reference
def output_ref(C, W_c, b_c):
    return softmax(np.einsum("yv,nv->ny", W_c, C) + b_c, axis=-1)


@grades("01.5")
def grading_output_model():
    return Grading(
        task='the output model `softmax(W_c c + b_c)` for a stack of contexts `C` (n, d_v) in rows, `W_c` '
             "in the survey's layout",
        catches='the logits without the softmax; the bias forgotten; the softmax down the columns; `W_c` in '
                "its column form (the hint points at section 2's table, not at the code); transposed result; "
                'wrong output shape; the softmax on the contexts; the one-context answer of section 1 copied '
                "(a shape error pointing at section 2's table); the bias subtracted, added after the softmax or "
                'added to `W_c`; a sigmoid; scaled logits; a log-softmax; a one-hot argmax; another base than '
                'e; rows that do not sum to 1; other wrong numbers (the hint asks to work the first context '
                'out step by step)',
        hidden=(Hidden(output_cases, output_ref, array_close),),
        wrong={0: "def f(C, W_c, b_c):\n    return ak.softmax(C @ W_c.T)"},  # the bias forgotten
        other_right={0: "def f(C, W_c, b_c):\n    Z = np.einsum('yv,nv->ny', W_c, C) + b_c\n"
                        "    E = np.exp(Z - Z.max(axis=1, keepdims=True))\n    return E / E.sum(axis=1, keepdims=True)"},
    )
