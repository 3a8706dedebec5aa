"""The exercises of self-attention, declared once: for each exercise of
notebook 02, its statement and checker, and its grader's part (hidden cases, reference, comparison,
the samples its tests try, honest styles); see ``declare.py``."""

from __future__ import annotations

import math

import numpy as np

from ..mechanism.alignment import softmax
from ..mechanism.attention import self_attention as sdpa_self_attention
from . import self_attention
from .declare import Exercise, Grading, Hidden, array_close, draw_sizes, grades
from .recorded import reference

# 02.3: X_ex, the toy sentence of three 2-D vectors with x3 moved, and identity projections (a test
# compares X_ex with the exercise cell).
X_EX = np.array([[0.1, 0.5],   # x1
                 [0.3, 0.4],   # x2
                 [0.6, 0.3]])  # x3, moved
I2 = np.eye(2)

EXERCISES = (
    Exercise("02.1", "softmax row by row", ("my_softmax_rows",), self_attention.softmax_rows),
    Exercise("02.2", "scaled scores", ("my_scaled_scores",), self_attention.scaled_scores),
    Exercise("02.3", "one output row by hand", ("y3",), self_attention.output_row,
             {"X": X_EX, "W_q": I2, "W_k": I2, "W_v": I2, "i": 2}),
    Exercise("02.4", "variance of a dot product", ("variance", "std"), self_attention.dot_variance,
             {"d_k": 16, "mean_q": 1.0, "var_q": 1.0, "mean_k": 0.0, "var_k": 1.0}),
    Exercise("02.5", "self-attention in one line", ("my_self_attention",),
             self_attention.full_self_attention),
    Exercise("02.6", "repair the source's code", ("self_attention_fixed",),
             self_attention.fixed_source_code),
)


def attention_case(rng, n, d_model, d_k, d_v):
    """Random ``(X (n, d_model), W_q, W_k, W_v)``."""
    return (rng.normal(size=(n, d_model)), rng.normal(size=(d_model, d_k)),
            rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_v)))


def batch_case(rng, b, n, d_model, d_k, d_v):
    """Random ``(X (b, n, d_model), W_q, W_k, W_v)``."""
    return (rng.normal(size=(b, n, d_model)), rng.normal(size=(d_model, d_k)),
            rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_v)))


# ---------------------------------------------------------------- 02.1 softmax row by row


@reference
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


@reference
def softmax_rows_ref(S):
    return softmax(S, axis=-1)


@grades("02.1")
def grading_softmax_rows():
    return Grading(
        task='`my_softmax_rows(S)` for a matrix or a stack of them `(h, n_q, n_k)`: each row (last axis) '
             'sums to 1, safe for scores near ±1000, `S` unchanged, a numpy array',
        catches="softmax over the columns (axis 0); over the wrong axis of a stack (section 6's 2-D "
                '`softmax_given` fails here); over the whole matrix; a transposed result; a missing '
                '`keepdims` (dividing column j by the sum of row j); no `exp`; no normalisation; overflow '
                "(NaN or inf) from not subtracting the row maximum; a shift by the row's minimum or mean "
                '(a row of scores far apart, `[1000, -1000, 0]`, overflows); 0/0 from subtracting the '
                'global maximum (named only when the numbers are its own: an unshifted log-sum-exp gets the '
                'overflow hint); a list; changing `S` in place; rows that do not sum to 1; weights of low '
                'precision (float16, float32: named as such); other wrong '
                "values (the hint shows the first row of scores and the learner's weights, never the "
                'expected ones)',
        hidden=(Hidden(softmax_rows_cases, softmax_rows_ref, array_close),),
        # axis 1 is a row of one matrix, and the queries' axis of a stack (h, n_q, n_k)
        wrong={0: "def f(S):\n    e = np.exp(S - S.max(axis=1, keepdims=True))\n"
                  "    return e / e.sum(axis=1, keepdims=True)"},
        other_right={0: "def f(S):\n    e = np.exp(S - np.max(S, axis=-1, keepdims=True))\n"
                        "    return e / np.sum(e, axis=-1, keepdims=True)"},
        refused={0: "def f(S):\n    e = np.exp(S - S.max(axis=-1, keepdims=True))\n"
                    "    return (e / e.sum(axis=-1, keepdims=True)).tolist()"},
        honest=(
            "def my_softmax_rows(S):\n    z = S - S.max(axis=-1, keepdims=True)\n    e = np.exp(z)\n"
            "    return e / e.sum(axis=-1, keepdims=True)",
            "def my_softmax_rows(S):\n    e = np.exp(S - np.max(S, axis=-1, keepdims=True))\n"
            "    return e / np.sum(e, axis=-1, keepdims=True)",
            "def my_softmax_rows(S):\n    out = np.empty(S.shape)\n    for idx in np.ndindex(S.shape[:-1]):\n"
            "        r = np.exp(S[idx] - S[idx].max())\n        out[idx] = r / r.sum()\n    return out",
            "def my_softmax_rows(S):\n    shifted = S - S.max(-1)[..., None]\n    ex = np.exp(shifted)\n"
            "    return ex / ex.sum(-1)[..., None]",
            "def my_softmax_rows(S):\n    rows = S.reshape(-1, S.shape[-1])\n    m = np.max(rows, axis=1, keepdims=True)\n"
            "    num = np.exp(rows - m)\n    return (num / num.sum(axis=1, keepdims=True)).reshape(S.shape)",
        ),
    )


# ---------------------------------------------------------------- 02.2 scaled scores


@reference
def scores_cases(rng):
    """(Q, K): one pair of matrices of widths other than the in-class 9 and 4, another, a stack of
    heads (h, n, d_k) with h = d_k (where ``K.T`` runs and gives wrong numbers), and a stack whose
    h, n_q, n_k and d_k all differ (a divisor read from axis 1 or 0, a count for a stack, fails)."""
    n_q, n_k, d_k = draw_sizes(rng, 2, 9, 3, avoid=(9, 4))
    d2 = int(rng.choice([16, 25]))
    h = int(rng.choice([2, 5]))
    h2, n_q2, n_k2, d_k2 = draw_sizes(rng, 2, 10, 4)
    return [(rng.normal(size=(n_q, d_k)), rng.normal(size=(n_k, d_k))),
            (rng.normal(size=(3, d2)), rng.normal(size=(6, d2))),
            (rng.normal(size=(h, 3, h)), rng.normal(size=(h, h, h))),
            (rng.normal(size=(h2, n_q2, d_k2)), rng.normal(size=(h2, n_k2, d_k2)))]


@reference
def scores_ref(Q, K):
    return np.einsum("...id,...jd->...ij", Q, K) / math.sqrt(Q.shape[-1])


@grades("02.2")
def grading_scaled_scores():
    return Grading(
        task='`my_scaled_scores(Q, K)` = `Q Kᵀ / √d_k` for one pair of matrices and for a stack of heads '
             '`(h, n, d_k)` (section 2 scored one matrix only), on two widths d_k = 9 and 4',
        catches='the scaling forgotten; divided by d_k instead of √d_k; divided by √n_k or √n_q; multiplied '
                'by √d_k; a fixed divisor such as `3` or `np.sqrt(2)` (right for one width at most; the '
                'checker tries the answer on both widths before naming a shape mistake, so a typed-in number '
                'that equals √n_q on one case is still called a fixed number); a divisor read from the wrong '
                'axis; on a stack, a divisor read from the second or first axis (√n_k, √n_q or √h: d_k is the '
                'last axis whatever stands in front; the stack cases have h, n_q, n_k, d_k all different); the '
                "transposed layout `K @ Q.T`; transposed and unscaled; `.T` on a stack (it reverses "
                "the heads' axis too); a one-matrix form that fails on a stack; shape errors (the hint names "
                'the axes to pair, not the code)',
        hidden=(Hidden(scores_cases, scores_ref, array_close),),
        wrong={0: "def f(Q, K):\n    return Q @ K.T / 3.0"},  # sqrt(9) of the first in-class d_k (its d_k = 4 fails it)
        honest=(
            "def my_scaled_scores(Q, K):\n    d_k = Q.shape[-1]\n    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)",
            "def my_scaled_scores(Q, K):\n    return (Q @ K.swapaxes(-2, -1)) / np.sqrt(Q.shape[-1])",
            "def my_scaled_scores(Q, K):\n    return np.matmul(Q, np.moveaxis(K, -1, -2)) / Q.shape[-1] ** 0.5",
            "import math\n\ndef my_scaled_scores(Q, K):\n    scale = 1 / math.sqrt(K.shape[-1])\n"
            "    return scale * np.matmul(Q, np.swapaxes(K, -2, -1))",
            "def my_scaled_scores(Q, K):\n    return np.einsum('...id,...jd->...ij', Q, K) / np.sqrt(Q.shape[-1])",
        ),
    )


# ---------------------------------------------------------------- 02.3 and 02.4: values

_X = "X_ex = np.array([[0.1, 0.5], [0.3, 0.4], [0.6, 0.3]])  # the exercise's sentence\n"


@grades("02.3")
def grading_output_row():
    """Honest forms of the value (five, so that the graded class's learners each write their own)."""
    return Grading(
        task='the output `y₃` of the toy example with x₃ moved to (0.6, 0.3), by hand',
        catches='no scaling; no softmax; softmax over the wrong axis; the weight row instead of the output; '
                'the input or the value row itself; the row of another token (counting from 0 instead of 1)',
        honest=(
            _X + "s = X_ex[2] @ X_ex.T / np.sqrt(2)\na = np.exp(s) / np.exp(s).sum()\ny3 = a @ X_ex",
            _X + "y3 = ak.softmax(X_ex @ X_ex.T / np.sqrt(2))[2] @ X_ex",
            _X + "scores = np.array([X_ex[2] @ x for x in X_ex]) / 2 ** 0.5\nw = np.exp(scores)\n"
            "w = w / w.sum()\ny3 = (w[:, None] * X_ex).sum(axis=0)",
            _X + "d = X_ex.shape[1]\nlogits = X_ex @ X_ex[2] / np.sqrt(d)\n"
            "weights = np.exp(logits - logits.max())\nweights /= weights.sum()\ny3 = weights @ X_ex",
            _X + "x3 = X_ex[2]\ne = [np.exp(x3 @ xj / np.sqrt(2)) for xj in X_ex]\n"
            "y3 = sum(ej * xj for ej, xj in zip(e, X_ex)) / sum(e)"))


@grades("02.4")
def grading_dot_variance():
    return Grading(
        task='predict the variance and standard deviation of `q · k` for d_k = 16, entries of q with mean '
             "1, to two decimals (`5.66` passes; `dot_variance` knows the exercise's numbers and section "
             "3's, d_k = 64 with means 0)",
        catches='the standard deviation given as the variance; variance 1 (that is after scaling); a standard '
                'deviation that is not the square root; d_k² instead of d_k; the mean term left out; the '
                'means subtracted (a wrong rule that can give a negative variance); the hints point at '
                "section 3.2's rule, they do not spell it",
        honest=(
            "variance, std = 32, np.sqrt(32)", "variance = 16 * 2\nstd = variance ** 0.5",
            "variance, std = 32.0, 5.656854",
            "d_k = 16\nterm_var = 1 * 1 + 1 * 0 ** 2 + 1 * 1 ** 2\nvariance = d_k * term_var\nstd = np.sqrt(variance)",
            "variance = 16 * (1.0 + 1.0)\nstd = math.sqrt(variance)"))


# ---------------------------------------------------------------- 02.5 self-attention in one line


@reference
def attention_cases(rng):
    """(X, W_q, W_k, W_v): a batch (b, n, d_model) of sizes all different; a batch with b = n = d_k
    (K.T, which reverses the batch axis too, runs there and gives other numbers); one sequence
    (n, d_model). d_k is never the in-class 3."""
    b, n, d_model, d_k, d_v = draw_sizes(rng, 2, 9, 5, avoid=(3,))
    m = int(rng.choice([2, 4, 5]))
    n2, d_model2 = draw_sizes(rng, 4, 10, 2)
    return [batch_case(rng, b, n, d_model, d_k, d_v),
            batch_case(rng, m, m, int(rng.integers(2, 7)), m, int(rng.integers(1, 5))),
            attention_case(rng, n2, d_model2, int(rng.choice([2, 5, 6])), 1)]


@reference
def attention_ref(X, W_q, W_k, W_v):
    """``attention_kit.self_attention``, which attends over the last two axes of a batch too."""
    return sdpa_self_attention(X, W_q, W_k, W_v)[0]


@grades("02.5")
def grading_full_self_attention():
    return Grading(
        task='`my_self_attention(X, W_q, W_k, W_v)` for a batch `X` (b, n, d_model) and for one sequence, '
             "with d_model ≠ d_k ≠ d_v (it may call the learner's exercises 1 and 2)",
        catches="`K.T` on a batch (it reverses the batch axis too: section 2.5's one-sequence code fails "
                'here); the scaling forgotten; scaled by √d_model instead of √d_k; softmax over the wrong '
                'axis; no softmax and no scaling; the transposed output; an unasked causal mask (written '
                'with -inf, which `ak.softmax` refuses, or with a large negative number); a tuple `(output, '
                'weights)`; shape errors explained in the row convention (hints name the idea, not the code)',
        hidden=(Hidden(attention_cases, attention_ref, array_close),),
        # sqrt(3) of the in-class d_k: passes in class
        wrong={0: "def f(X, W_q, W_k, W_v):\n    K_T = np.swapaxes(X @ W_k, -1, -2)\n"
                  "    return ak.softmax(X @ W_q @ K_T / np.sqrt(3)) @ (X @ W_v)"},
        other_right={0: "def f(X, W_q, W_k, W_v):\n    Q = np.einsum('...nd,dk->...nk', X, W_q)\n"
                        "    K = np.einsum('...nd,dk->...nk', X, W_k)\n"
                        "    S = np.einsum('...ik,...jk->...ij', Q, K) / np.sqrt(Q.shape[-1])\n"
                        "    return ak.softmax(S) @ (X @ W_v)"},
        honest=(
            "def my_self_attention(X, W_q, W_k, W_v):\n    Q, K, V = X @ W_q, X @ W_k, X @ W_v\n"
            "    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])\n    return ak.softmax(S) @ V",
            "def my_self_attention(X, W_q, W_k, W_v):\n    Q = X @ W_q\n    K = X @ W_k\n"
            "    A = ak.softmax(Q @ np.moveaxis(K, -1, -2) / np.sqrt(W_q.shape[1]))\n    return A @ (X @ W_v)",
            "def my_self_attention(X, W_q, W_k, W_v):\n"
            "    S = (X @ W_q) @ np.swapaxes(X @ W_k, -2, -1) / np.sqrt(W_k.shape[1])\n"
            "    E = np.exp(S - S.max(-1, keepdims=True))\n    return (E / E.sum(-1, keepdims=True)) @ (X @ W_v)",
            "def my_self_attention(X, W_q, W_k, W_v):\n    q = np.einsum('...nd,dk->...nk', X, W_q)\n"
            "    k = np.einsum('...nd,dk->...nk', X, W_k)\n    v = np.einsum('...nd,dv->...nv', X, W_v)\n"
            "    w = ak.softmax(np.einsum('...ik,...jk->...ij', q, k) / np.sqrt(q.shape[-1]))\n"
            "    return np.einsum('...ij,...jv->...iv', w, v)",
            "def my_self_attention(X, W_q, W_k, W_v):\n    d_k = W_k.shape[1]\n"
            "    scores = np.matmul(np.matmul(X, W_q), np.matmul(X, W_k).swapaxes(-1, -2)) / d_k ** 0.5\n"
            "    return np.matmul(ak.softmax(scores), np.matmul(X, W_v))",
        ),
    )


# ---------------------------------------------------------------- 02.6 repair the source's code


@reference
def fixed_cases(rng):
    """(X (n, d), W_q, W_k, W_v (d, d)), as in the broken code: square weights, n != d."""
    d1 = int(rng.integers(5, 8))
    out = []
    for n, d in ((int(rng.choice([k for k in range(2, 9) if k != d1])), d1), (int(rng.integers(5, 9)), 2)):
        out.append((rng.normal(size=(n, d)), *(rng.normal(size=(d, d)) for _ in range(3))))
    return out


@grades("02.6")
def grading_fixed_source_code():
    return Grading(
        task='repair the broken numpy code as `self_attention_fixed(X, W_q, W_k, W_v)` (section 6 explains '
             'only the fault that raises; the other two are explained after the exercise, in "What was '
             'wrong with section 6\'s code" and a permutation demo: both tagged `answer-reveal`, so the '
             "teacher's edition only; go through them in class once the learners have tried)",
        catches='the column convention `(W_q @ X.T).T`; random matrices drawn inside the function (two calls '
                'differ); returning more than `Y`; scores that pair the features (`Q.T @ K`, told apart from '
                'the source\'s W-before-X order by a case with n = d); plus every hint of exercise 5',
        hidden=(Hidden(fixed_cases, attention_ref, array_close),),
        wrong={0: "def f(X, W_q, W_k, W_v):\n    return ak.self_attention(X, W_q.T, W_k.T, W_v.T)[0]"},
        honest=(
            "def self_attention_fixed(X, W_q, W_k, W_v):\n    n, d = X.shape\n    Q = X @ W_q\n    K = X @ W_k\n"
            "    V = X @ W_v\n    S = Q @ K.T / np.sqrt(d)\n    E = np.exp(S - S.max(axis=1, keepdims=True))\n"
            "    return E / E.sum(axis=1, keepdims=True) @ V",
            "def self_attention_fixed(X, W_q, W_k, W_v):\n    Q, K, V = np.matmul(X, W_q), np.matmul(X, W_k), np.matmul(X, W_v)\n"
            "    S = np.matmul(Q, K.T) / np.sqrt(K.shape[1])\n    return np.matmul(softmax_given(S), V)",
            "def self_attention_fixed(X, W_q, W_k, W_v):\n    scores = (X @ W_q) @ (X @ W_k).T\n"
            "    scores = scores / np.sqrt(X.shape[1])\n    w = np.exp(scores - scores.max(-1, keepdims=True))\n"
            "    w = w / w.sum(-1, keepdims=True)\n    return w @ (X @ W_v)",
            "def self_attention_fixed(X, W_q, W_k, W_v):\n    out = []\n    K, V = X @ W_k, X @ W_v\n"
            "    for x in X:\n        s = (x @ W_q) @ K.T / np.sqrt(len(x))\n        a = np.exp(s - s.max())\n"
            "        out.append((a / a.sum()) @ V)\n    return np.array(out)",
            "def self_attention_fixed(X, W_q, W_k, W_v):\n    d = X.shape[-1]\n    Q = X.dot(W_q)\n    K = X.dot(W_k)\n"
            "    V = X.dot(W_v)\n    A = softmax_given(Q.dot(K.T) / d ** 0.5)\n    return A.dot(V)",
        ),
    )
