"""Notebook 02's exercises: the cases the checkers of ``attention_kit.check.self_attention`` compare with.

Each ``@recorded`` table holds a checker's public cases, their right answers and the outputs of
the usual mistakes with the hint for each; the student edition keeps the tables as data
(``attention_kit.check.recorded``) and leaves out the ``@reference`` code that computed them.
"""

from __future__ import annotations

import numpy as np

from ..i18n import N_
from ..mechanism.alignment import softmax
from ..mechanism.attention import self_attention
from .recorded import recorded, reference

__all__ = ["OUTPUT_ROW_X", "softmax_rows_table", "scores_table", "output_row_table", "variance_table",
           "full_table", "fix_table"]

#: Exercise 3's toy sentence, x3 moved (the registry passes the same numbers).
OUTPUT_ROW_X = np.array([[0.1, 0.5], [0.3, 0.4], [0.6, 0.3]])


@reference
def _sm(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@reference
def _swap(M: np.ndarray) -> np.ndarray:
    return np.swapaxes(M, -1, -2)  # transpose the last two axes only


@reference
def _attempt(make):
    """``make()``, or None when it raises (a product that only fits square inputs)."""
    try:
        with np.errstate(all="ignore"):
            return make()
    except ValueError:
        return None


# ---------------- Exercise 1: softmax row by row

@reference
def _softmax_mistakes(S: np.ndarray) -> list:
    e = np.exp(S - S.max())
    cands = [
        (_sm(S, axis=0), N_("each COLUMN sums to 1, not each row: you took the softmax over the queries' axis. "
         "Row i holds query i's scores over the keys, so normalise along the keys' axis, the last one")),
        (_sm(S, axis=0).T, N_("wrong axis and transposed: normalise along the keys' axis and keep the shape "
         "(n_q, n_k)")),
        (np.swapaxes(softmax(S), -1, -2), N_("the numbers are right but the result is transposed: shape "
         "(n_k, n_q) instead of (n_q, n_k). Do not transpose; rows are queries")),
        (e / e.sum(), N_("the whole matrix sums to 1, but each ROW must: one probability "
         "distribution per query, so sum each row separately")),
        (_attempt(lambda: np.exp(S) / np.exp(S).sum(axis=-1)[None, :]), N_("you divided column j by the sum "
         "of row j: the row sums lost their axis and broadcast as a row vector; keep them as a column")),
        (S / S.sum(axis=-1, keepdims=True), N_("you normalised the raw scores without the exponential: weights "
         "can then be negative. Exponentiate first")),
        (np.exp(S - S.max(axis=-1, keepdims=True)), N_("the rows do not sum to 1: divide each row by its sum")),
        (np.exp(S), N_("the rows do not sum to 1: divide each row by its sum")),
    ]
    if S.ndim == 3:
        cands = [
            (_sm(S, axis=1), N_("for a stack of score matrices (h, n_q, n_k) you normalised along axis 1, the "
             "queries: a row is the LAST axis, whatever comes in front of it")),
            (_sm(S, axis=0), N_("for a stack (h, n_q, n_k) you normalised along the first axis, across the "
             "stack: a row is the LAST axis")),
        ] + cands
    return cands


@recorded
def softmax_rows_table() -> list[dict]:
    """Each score matrix, its row softmax, the usual mistakes' outputs, and which entries of a
    softmax taken with the whole matrix's maximum come out finite."""
    rng = np.random.default_rng(2)
    wide = np.round(rng.normal(size=(3, 4)), 2)  # (n_q, n_k) = (3, 4): rows and columns differ
    square = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0], [2.0, 2.0, 2.0]])  # (3, 3)
    big = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1002.0, -1001.0]])  # overflow, and 0/0 for a global max
    # rows whose scores lie far apart: a shift by the row's minimum or mean still overflows
    spread = np.array([[1000.0, -1000.0, 0.0], [0.0, 800.0, -5.0]])
    stack = np.round(rng.normal(size=(2, 3, 4)), 2)  # (h, n_q, n_k): a stack of score matrices, one per head
    table = []
    for S in (wide, square, big, spread, stack):
        with np.errstate(all="ignore"):
            g = np.exp(S - S.max())
            finite = np.isfinite(g / g.sum(axis=-1, keepdims=True))
            mistakes = _softmax_mistakes(S)
        with np.errstate(all="ignore"):
            global_max = g / g.sum(axis=-1, keepdims=True)
        table.append({"S": S, "want": softmax(S), "mistakes": mistakes, "global_max_finite": finite,
                      "global_max": global_max, "spread": S is spread})
    return table


# ---------------- Exercise 2: scaled scores

@recorded
def scores_table() -> list[dict]:
    """Two widths (d_k = 9, then 4: a constant divisor passes at most one), then two stacks of heads
    (h, n_q, n_k, d_k): one with h, n_q, n_k, d_k all different (a divisor read from axis 1 or 0,
    n or h for a stack, shows; ``K.T`` fails loudly), one with h = n_k = d_k = 3, where ``K.T`` (it
    reverses the head axis too) runs but gives wrong numbers."""
    rng = np.random.default_rng(3)
    table = []
    for lead, n_q, n_k, d_k in (((), 2, 4, 9), ((), 3, 5, 4), ((2,), 3, 5, 6), ((3,), 2, 3, 3)):
        Q = np.round(rng.normal(size=(*lead, n_q, d_k)), 2)
        K = np.round(rng.normal(size=(*lead, n_k, d_k)), 2)
        dots = Q @ _swap(K)
        want = dots / np.sqrt(d_k)
        stack = [(_attempt(lambda Q=Q, K=K, d_k=d_k: Q @ K.T / np.sqrt(d_k)),
                  N_(".T reverses every axis of a 3-D array, the heads' axis too; transpose only the last two "
                     "axes of K, so that each head's queries meet its own keys"))] if lead else []
        if lead and n_k != d_k:
            stack.append((dots / np.sqrt(n_k), N_("you divided by the square root of n_k, the number of keys: "
                          "in a stack (h, n_k, d_k) the second axis counts the keys, and the width d_k is the "
                          "last axis, whatever stands in front of it")))
        if lead and n_q != d_k:
            stack.append((dots / np.sqrt(n_q), N_("you divided by the square root of n_q, the number of queries: "
                          "in a stack (h, n_q, d_k) the second axis counts the queries, and the width d_k is the "
                          "last axis, whatever stands in front of it")))
        if lead and lead[0] != d_k:
            stack.append((dots / np.sqrt(lead[0]), N_("you divided by the square root of h, the number of heads: "
                          "the width d_k is the last axis, whatever stands in front of it")))
        table.append({"Q": Q, "K": K, "want": want, "dots": dots, "d_k": d_k, "mistakes": stack + [
            (dots, N_("forgot the scaling: the scores of this exercise are divided by the square root of "
             "d_k, the width of the queries and keys")),
            (dots / d_k, N_("you divided by d_k; divide by its square root. The variance of a "
             "dot product grows like d_k, so its standard deviation grows like sqrt(d_k)")),
            (dots / np.sqrt(n_k) if n_k != d_k else None, N_("you divided by sqrt(n_k), the number of keys; "
             "divide by sqrt(d_k), the width of the vectors")),
            (dots / np.sqrt(n_q), N_("you divided by sqrt(n_q), the number of queries; divide by sqrt(d_k), the "
             "width of the vectors")),
            (dots * np.sqrt(d_k), N_("you multiplied by sqrt(d_k); divide by it instead")),
            (_swap(want), N_("transposed layout: row i must be query i and column j key j, shape (n_q, n_k)")),
            (_swap(dots), N_("transposed layout (rows must be queries) and no scaling by sqrt(d_k)")),
        ]})
    return table


# ---------------- Exercise 3: one output row by hand

@recorded(sealed=True)  # one fixed answer: the table is that answer, sealed
def output_row_table() -> list[dict]:
    """The exercise's inputs (identity projections, the third row), its row y_3, and the rows of
    the usual mistakes."""
    X, I2, i = OUTPUT_ROW_X, np.eye(2), 2
    Q, K, V = X @ I2, X @ I2, X @ I2
    dots = Q @ K.T
    S = dots / np.sqrt(Q.shape[-1])
    out, A = self_attention(X, I2, I2, I2)
    mistakes = [
        ((_sm(dots) @ V)[i], N_("forgot the scaling: the scores are divided by sqrt(d_k) before the softmax")),
        ((_sm(dots / Q.shape[-1]) @ V)[i], N_("the scores are scaled by the wrong amount: the scaling undoes how the "
         "spread of a dot product grows with the width d_k, and it is the standard deviation, not the variance, "
         "that the scores are divided by")),
        ((dots @ V)[i], N_("no softmax: turn the scores into weights with softmax before mixing the values")),
        ((S @ V)[i], N_("no softmax: the scaled scores must go through softmax to become weights")),
        ((_sm(S, axis=0) @ V)[i], N_("softmax over the wrong axis: y_i uses row i of the weights, a "
         "softmax over query i's scores against every key")),
        (A[i], N_("that is the weight row a_i, not the output: the weights mix the value rows")),
        (X[i], N_("that is the input x_i itself; the output mixes all the value rows")),
        (V[i], N_("that is the value row v_i; the output is the weighted sum of ALL value rows")),
    ]
    mistakes += [(out[j], N_("that is the output of another token: Python counts from 0, so token 3, the one "
                             "asked for, is row 2")) for j in range(len(X)) if j != i]
    return [{"X": X, "W_q": I2, "W_k": I2, "W_v": I2, "i": i, "want": out[i], "mistakes": mistakes}]


# ---------------- Exercise 4: the variance of a dot product

@recorded(answers=True)  # a prediction's answers: sealed, withheld by PREDICTIONS=record
def variance_table() -> dict:
    """``{(d_k, mean_q, var_q, mean_k, var_k): numbers}`` for the exercise's inputs (d_k = 16,
    E(q) = 1), section 3's (d_k = 64, zero means) and both means 1."""
    table = {}
    for key in ((16, 1.0, 1.0, 0.0, 1.0), (64, 0.0, 1.0, 0.0, 1.0), (16, 1.0, 1.0, 1.0, 1.0)):
        d_k, mean_q, var_q, mean_k, var_k = key
        term = var_q * var_k + var_q * mean_k**2 + var_k * mean_q**2  # Var(q_m k_m), independent q_m, k_m
        table[key] = {"want": d_k * term, "std": float(np.sqrt(d_k * term)), "squared": d_k**2 * term,
                      "without_means": d_k * var_q * var_k, "subtracted": d_k * (var_q * var_k - mean_q * mean_k),
                      "means": mean_q * mean_k != 0, "term_has_means": term != var_q * var_k}
    return table


# ---------------- Exercises 5 and 6: self-attention in one line, and the repaired code

@reference
def _wrong_outputs(X, W_q, W_k, W_v) -> list[tuple[np.ndarray | None, str]]:
    """Outputs of the usual mistakes, each with the hint for it (X is (n, d) or (b, n, d))."""
    Q, K, V = X @ W_q, X @ W_k, X @ W_v  # (..., n, d_k), (..., n, d_k), (..., n, d_v)
    d_k, d_model = Q.shape[-1], X.shape[-1]
    dots = Q @ _swap(K)  # (..., n, n)
    right = _sm(dots / np.sqrt(d_k)) @ V
    out = [(_attempt(lambda: _sm(Q @ K.T / np.sqrt(d_k)) @ V),  # K.T of (b, n, d_k) is (d_k, n, b)
            N_(".T reverses every axis of a 3-D array, the batch axis too; transpose only the last two axes of K, "
               "so each sequence's queries meet its own keys"))] if X.ndim == 3 else []
    out += [
        (_sm(dots) @ V, N_("forgot the scaling: the scores are divided by sqrt(d_k) before the softmax")),
        (_sm(dots / d_k) @ V, N_("you divided by d_k; divide by sqrt(d_k)")),
        (_sm(dots / np.sqrt(d_k), axis=-2) @ V, N_("softmax over the wrong axis: normalise each ROW, "
         "one distribution per query over the keys")),
        (dots / np.sqrt(d_k) @ V, N_("no softmax: the scaled scores are not weights yet")),
        (dots @ V, N_("no softmax and no scaling: the scores must be divided by sqrt(d_k) and turned "
         "into weights that sum to 1 before they mix the values")),
        (_sm((dots / np.sqrt(d_k)).reshape(*dots.shape[:-2], -1)).reshape(dots.shape) @ V, N_("softmax over "
         "the whole matrix: every ROW of the weights must sum to 1, one distribution per query")),
        (_sm(dots / np.sqrt(d_k)) @ X, N_("you mixed the inputs X; mix the values, the inputs projected by W_v")),
        (_swap(right), N_("transposed layout: your output is (d_v, n); rows are tokens, so return "
         "(n, d_v)")),
    ]
    n = X.shape[-2]
    if n > 1:
        causal = np.tril(np.ones((n, n), dtype=bool))
        out.append((_sm(np.where(causal, dots / np.sqrt(d_k), -1e30)) @ V, N_("you masked the keys after each "
                    "query (a causal mask): this exercise has no mask, every query attends to every key of its "
                    "own sequence")))
    if d_model != d_k:
        out.append((_sm(dots / np.sqrt(d_model)) @ V, N_("you scaled by sqrt(d_model), the width of X; "
                    "scale by sqrt(d_k), the width of the queries and keys")))
    if V.shape[-1] != d_k:
        out.append((_sm(dots / np.sqrt(V.shape[-1])) @ V, N_("you scaled by the width of the values, d_v; the "
                    "scaling keeps the scores' spread in check, and a score sums over the entries of a query "
                    "and a key: scale by their width, d_k")))
    return out


@recorded
def full_table() -> list[dict]:
    """A batch (b, n, d_model) with d_model = 4 != d_k = 3 != d_v = 2, a batch with b = n = d_k = 3
    (where ``K.T`` runs but gives wrong numbers), and one sequence."""
    rng = np.random.default_rng(5)
    X = np.round(rng.normal(size=(5, 4)), 2)  # (n, d_model) = (5, 4)
    W_q, W_k, W_v = (np.round(rng.normal(size=s), 2) for s in ((4, 3), (4, 3), (4, 2)))  # (d_model, d_k | d_v)
    Xb = np.round(rng.normal(size=(3, 5, 4)), 2)  # (b, n, d_model): a batch of 3 sequences
    Xc = np.round(rng.normal(size=(3, 3, 3)), 2)  # (b, n, d_model) with b = n = d_model = d_k = 3
    Wc = [np.round(rng.normal(size=(3, 3)), 2) for _ in range(3)]
    table = []
    for args in ((Xb, W_q, W_k, W_v), (Xc, *Wc), (X, W_q, W_k, W_v)):
        x = args[0]
        want = np.stack([self_attention(s, *args[1:])[0] for s in x]) if x.ndim == 3 else \
            self_attention(*args)[0]  # (b, n, d_v) or (n, d_v)
        table.append({"args": args, "want": want, "mistakes": _wrong_outputs(*args)})
    return table


@recorded
def fix_table() -> dict:
    """The repaired code's case: X (n, d) = (4, 3) with n != d and three (d, d) projections; and,
    for an answer whose shapes fail there, a case with n = d where it runs: what the source's order
    (W before X) and scores that pair the features (d, d) give on it."""
    rng = np.random.default_rng(7)
    X = np.round(rng.normal(size=(4, 3)), 2)
    Ws = [np.round(rng.normal(size=(3, 3)), 2) for _ in range(3)]  # (d, d) each, as in the broken code
    Xs = np.round(rng.normal(size=(3, 3)), 2)  # (n, d) with n = d
    Qs, Ks, Vs = (Xs @ W for W in Ws)
    Qw, Kw, Vw = (W @ Xs for W in Ws)
    square = {"args": (Xs, *Ws), "features": _sm(Qs.T @ Ks / np.sqrt(3)) @ Vs,
              "weights_first": _sm(Qw @ Kw.T / np.sqrt(3)) @ Vw}
    return {"args": (X, *Ws), "want": self_attention(X, *Ws)[0], "square": square,
            "columns": self_attention(X, *(W.T for W in Ws))[0], "mistakes": _wrong_outputs(X, *Ws)}
