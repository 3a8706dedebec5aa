"""The exercises of how attention learns, declared once: for each exercise of
notebook 05, its statement and checker, and its grader's part (hidden cases, reference, comparison,
the samples its tests try); see ``declare.py``.

The functions ``grad_*`` are the gradient check's test functions: module-level functions of the
package, so the grader can send them to the learner's kernel by name.
"""

from __future__ import annotations

import math

import numpy as np

from ..learn.backward import relative_error, softmax_backward
from ..mechanism.alignment import softmax
from . import backprop
from .declare import Exercise, Grading, Hidden, draw_sizes, grades, gradient_ok, pair_close
from .recorded import reference

EXERCISES = (
    Exercise("05.1", "gradients of a general score", ("my_general_score_grads",), backprop.general_score_grads),
    Exercise("05.2", "why the key bias learns nothing", ("my_bias_grads", "why"), backprop.key_bias),
    Exercise("05.3", "gradient check", ("my_gradient_check",), backprop.gradient_check),
    Exercise("05.4", "where each query looks", ("answer",), backprop.rotate_pattern),
)


# ---------------------------------------------------------------- 05.1 gradients of a general score


@reference
def general_cases(rng):
    n_q, n_k, d_q, d_k = draw_sizes(rng, 2, 8, 4)
    m = int(rng.integers(4, 7))
    out = []
    for a, b, c, e in ((n_q, n_k, d_q, d_k), (m, m, m, m)):
        out.append((rng.normal(size=(a, c)), rng.normal(size=(b, e)), rng.normal(size=(c, e)),
                    rng.normal(size=(a, b))))
    return out


@reference
def general_ref(Q, K, W, dS):
    return np.einsum("ij,jb,ab->ia", dS, K, W), np.einsum("ij,ia,ab->jb", dS, Q, W)


@grades("05.1")
def grading_general_score_grads():
    return Grading(
        task='`my_general_score_grads(Q, K, W, dS)` → `(dQ, dK)` for the general score S = Q W Kᵀ (not '
             'shown in the notebook: section 2 does the case W = I/√d_k)',
        catches='W where Wᵀ belongs and the reverse (on square sizes; on the others a shape error, with a '
                "hint to write each factor's shape); W left out; a division by √d_k that the general score "
                'does not have; dS where dSᵀ belongs; the sign; the two swapped. The hints diagnose and never '
                'print the answer',
        hidden=(Hidden(general_cases, general_ref, pair_close),),
        wrong={0: "def f(Q, K, W, dS):\n    return dS @ K @ W, dS.T @ Q @ W"},
        other_right={0: "def f(Q, K, W, dS):\n    return [dS @ (K @ W.T), (dS.T @ Q) @ W]"},
    )


# ---------------------------------------------------------------- 05.2 why the key bias learns nothing


@reference
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


@reference
def bias_ref(Q, K, dS):
    scale = math.sqrt(Q.shape[1])
    return dS.sum(axis=0) @ K / scale, dS.sum(axis=1) @ Q / scale


@grades("05.2")
def grading_key_bias():
    return Grading(
        task='`my_bias_grads(Q, K, dS)` → `(db_q, db_k)`, and `why`: the letter of the reason db_k = 0 '
             '(the exercise states the fact itself, so it needs only the core part of section 2; the '
             'optional "many heads, batches, masks and biases" measures it, and no longer says how a '
             "bias's gradient is formed)",
        catches='a db_k written down as 0 (the checker also passes a dS whose rows do not sum to 0, where '
                'db_k is not 0); one row per token instead of the sum over tokens; the mean over tokens '
                'instead of the sum; the wrong axis; the missing 1/√d_k; a fixed width written in (the two '
                'cases have d_k = 3 and d_k = 2); each wrong reason (the bias starts at 0; the √d_k cancels '
                'it; it is added after the softmax)',
        hidden=(Hidden(bias_cases, bias_ref, pair_close),),
        wrong={0: "def f(Q, K, dS):\n    d = Q.shape[1]\n    return (dS @ K).sum(axis=0) / np.sqrt(d), np.zeros(d)"},
    )


# ---------------------------------------------------------------- 05.3 gradient check


def grad_wavy(z):
    """Not a sum over entries: every pair of entries interacts through the square of their sum, so a
    copy of x whose entries are never put back (each left at x - eps after its turn) is off by a
    multiple of eps (learner trial 3: with sums over entries only, that drift could not show)."""
    return float(np.sum(np.exp(0.5 * z) * np.cos(2.0 * z)) + 0.5 * np.sum(z) ** 2)


def grad_quartic(z):
    return 1e-8 * float(np.sum(z ** 4))


def grad_big(z):
    return 1e5 * float(np.sum(np.sin(z) * z))


def grad_exp(z):
    """Every entry's central difference is off by the same factor, sinh(eps) / eps, so any relative
    error that treats both gradients alike (by norms or entry by entry) gives the same number."""
    return float(np.sum(np.exp(z)))


EPS = 1e-4


@reference
def d_wavy(x):
    return np.exp(0.5 * x) * (0.5 * np.cos(2 * x) - 2 * np.sin(2 * x)) + np.sum(x)


@reference
def d_big(x):
    return 1e5 * (np.cos(x) * x + np.sin(x))


def away_from_zeros(rng, shape, low, high, grad, least):
    """Points where ``|grad| >= least``: an error taken entry by entry, |a - n| / (|a| + |n|), is
    then as small as the norms' (right answers may use either)."""
    x = rng.uniform(low, high, size=shape)
    for _ in range(100):
        small = np.abs(grad(x)) < least
        if not small.any():
            break
        x[small] = rng.uniform(low, high, size=int(small.sum()))
    return x


@reference
def gradient_cases(rng):
    """(f, x, analytic, eps): a correct gradient (of a function whose entries interact, on which a copy
    of x that is never put back fails), one three times too large and of the wrong sign
    (relative error 1; an unbounded ``|a - n| / |a + n|`` gives 2) of size 1e-8, a correct one of
    size 1e5, and a correct one with a large eps (0.05 to 0.2), whose central difference's error
    shows: an answer that uses a step of its own fails it."""
    x1 = away_from_zeros(rng, tuple(int(v) for v in rng.integers(2, 5, size=2)), -1.5, 1.5, d_wavy, 0.3)
    x2 = rng.uniform(0.5, 1.5, size=int(rng.integers(3, 7))) * rng.choice([-1.0, 1.0], size=1)
    x3 = away_from_zeros(rng, (int(rng.integers(2, 4)), int(rng.integers(4, 6))), -2.0, 2.0, d_big, 3e4)
    x4 = rng.uniform(-1.5, 1.5, size=int(rng.integers(3, 7)))
    return [(grad_wavy, x1, d_wavy(x1), EPS),
            # three times too large and of the wrong sign: relative error 1, where |a - n| / |a + n| gives 2
            (grad_quartic, x2, -3 * 4e-8 * x2 ** 3, EPS),
            (grad_big, x3, d_big(x3), EPS),
            (grad_exp, x4, np.exp(x4), float(rng.choice([0.05, 0.1, 0.2])))]


@reference
def gradient_ref(f, x, analytic, eps):
    numeric = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        numeric[i] = (f(up) - f(down)) / (2 * eps)
    return relative_error(analytic, numeric)


@grades("05.3")
def grading_gradient_check():
    return Grading(
        task='`my_gradient_check(f, x, analytic, eps)` → relative error (section 2 gives the central '
             "difference for one number and calls the package's `numerical_gradient` and `relative_error`; "
             'it describes the relative error in words, without its formula: the learner writes both, for '
             'an `x` of any shape)',
        catches="an absolute error (the checker's wrong gradient of size 1e-9 and right gradient of size "
                '1e6 expose it); an error measured against one gradient alone (it treats the two unlike '
                'and can exceed 1: the wrong gradient, a multiple of the right one, must give the relative '
                'error itself); an error against the larger of the two gradients (it treats them alike but '
                'can reach 2; a second analytic gradient, smaller than the numerical one, tells it from '
                'the analytic-only one); a one-sided difference; a division by eps instead of 2 eps (the '
                'hint asks how far apart the two points are; no hint gives the formula); a step of its own '
                'instead of the eps passed (a case with eps = 0.1); an error that is not bounded by 1, '
                'such as `norm(a - n) / norm(a + n)` (a case whose gradient points the wrong way); `x` '
                'perturbed in place, whether or not it is put back (the task says to perturb a copy; the '
                'checker watches the array `f` is called with); a copy of `x` whose entries are never put '
                'back after their turn (a case whose function\'s entries interact: on a sum over entries the '
                'drift cannot show; the hint says to restore each entry); an error that sees only the '
                "gradients' directions, such as 1 − cosine similarity (the wrong gradient, twice the right "
                'one, gives 0); a numerical gradient of the wrong sign (the hint asks which value of f comes '
                'first); a negative or non-scalar result',
        hidden=(Hidden(gradient_cases, gradient_ref, gradient_ok),),
        wrong={0: "def f(fn, x, analytic, eps=1e-4):\n    num = np.zeros_like(x)\n"
                  "    for i in np.ndindex(x.shape):\n        up = x.copy()\n        up[i] += eps\n"
                  "        num[i] = (fn(up) - fn(x)) / eps\n"
                  "    return np.linalg.norm(analytic - num) / (np.linalg.norm(analytic) + np.linalg.norm(num))"},
        other_right={0: "def f(fn, x, analytic, eps=1e-4):\n    num = np.zeros_like(x)\n"
                        "    for i in np.ndindex(x.shape):\n        up, down = x.copy(), x.copy()\n"
                        "        up[i] += eps\n        down[i] -= eps\n        num[i] = (fn(up) - fn(down)) / (2 * eps)\n"
                        "    return float(np.max(np.abs(analytic - num) / (np.abs(analytic) + np.abs(num))))"},
    )


# ---------------------------------------------------------------- 05.4 where each query looks


@grades("05.4")
def guide_where_each_query_looks():
    return Grading(
        task='predict which key each query attends to after training on *rotate* (whole numbers only; a '
             'list, tuple or array: the order is the answer, so a set is refused with its own hint)',
        catches='the shift the wrong way (for each key, the query that reads it); the diagonal; the reverse '
                'pattern; the wrap-around of the last query (the hint asks, it does not give the key). The '
                'cell after the solution trains *rotate* and prints the learned pattern',
    )
