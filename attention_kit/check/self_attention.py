"""Exercise checkers for notebook 02 (self-attention): ``softmax_rows``, ``scaled_scores``,
``output_row``, ``full_self_attention``, ``dot_variance`` and ``fixed_source_code``.

Each runs the learner's answer on small inputs chosen so that the usual mistakes give *different*
numbers (non-square matrices, a batch), compares with ``attention_kit``, and prints one line, ``✓``
or ``✗`` with a hint aimed at the mistake it recognised; it returns True or False and never lets the
learner's exception escape. ``quietly()`` silences them (the worked solutions use it).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..mechanism.alignment import softmax
from ..mechanism.attention import self_attention
from . import close, not_attempted, not_done, quietly, report, report_failure, shape_of, try_call
from .general import array_answer
from .plain import plain_numpy

__all__ = ["quietly", "softmax_rows", "scaled_scores", "output_row", "full_self_attention", "dot_variance",
           "fixed_source_code"]

NOT_DONE = "not answered yet: replace the `...` with your code, then run this cell again"


def _sm(x, axis=-1):
    """Plain softmax along ``axis`` (the reference for wrong-axis candidates)."""
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _call(fn: Callable, *args) -> tuple[object, str | None]:
    """``try_call``, plus: a function that still returns ``...`` (the exercise stub) is not done."""
    out, err = try_call(fn, *args)
    if err is None and out is Ellipsis:
        return None, NOT_DONE
    return out, err


def _first_match(out, candidates) -> str | None:
    """The hint of the first candidate ``(array or function, hint)`` that ``out`` equals (a function that
    raises ValueError, say a product that only fits square inputs, is skipped), else None."""
    for arr, hint in candidates:
        if callable(arr):
            try:
                arr = arr()
            except ValueError:
                continue
        if close(out, arr):
            return hint
    return None


# ---------------- Exercise: softmax row by row

def _softmax_cases() -> list[np.ndarray]:
    rng = np.random.default_rng(2)
    wide = np.round(rng.normal(size=(3, 4)), 2)  # (n_q, n_k) = (3, 4): rows and columns differ
    square = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0], [2.0, 2.0, 2.0]])  # (3, 3)
    big = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1002.0, -1001.0]])  # overflow, and 0/0 for a global max
    stack = np.round(rng.normal(size=(2, 3, 4)), 2)  # (h, n_q, n_k): a stack of score matrices, one per head
    return [wide, square, big, stack]


def _softmax_hint(S: np.ndarray, out) -> str | None:
    """The hint for the usual wrong softmax that ``out`` equals (None when none does)."""
    if close(out, softmax(S)):
        return None
    e = np.exp(S - S.max())
    cands = [
        (_sm(S, axis=0), "each COLUMN sums to 1, not each row: you took the softmax over the queries' axis. "
         "Row i holds query i's scores over the keys, so normalise along the keys' axis, the last one"),
        (_sm(S, axis=0).T, "wrong axis and transposed: normalise along the keys' axis and keep the shape "
         "(n_q, n_k)"),
        (np.swapaxes(softmax(S), -1, -2), f"the numbers are right but the result is transposed: shape "
         f"{np.swapaxes(S, -1, -2).shape} instead of {S.shape}. Do not transpose; rows are queries"),
        (e / e.sum(), "the whole matrix sums to 1, but each ROW must: one probability "
         "distribution per query, so sum each row separately"),
        (lambda: np.exp(S) / np.exp(S).sum(axis=-1)[None, :], "you divided column j by the sum of row j: "
         "the row sums lost their axis and broadcast as a row vector; keep them as a column"),
        (S / S.sum(axis=-1, keepdims=True), "you normalised the raw scores without the exponential: weights "
         "can then be negative. Exponentiate first"),
        (np.exp(S - S.max(axis=-1, keepdims=True)), "the rows do not sum to 1: divide each row by its sum"),
        (np.exp(S), "the rows do not sum to 1: divide each row by its sum"),
    ]
    if S.ndim == 3:
        cands = [
            (_sm(S, axis=1), "for a stack of score matrices (h, n_q, n_k) you normalised along axis 1, the "
             "queries: a row is the LAST axis, whatever comes in front of it"),
            (_sm(S, axis=0), "for a stack (h, n_q, n_k) you normalised along the first axis, across the "
             "stack: a row is the LAST axis"),
        ] + cands
    return _first_match(out, cands)


@plain_numpy()
def softmax_rows(fn: Callable) -> bool:
    """Check ``fn(S)``: the softmax of each row (the last axis) of ``S`` (n_q, n_k) or (h, n_q, n_k).

    Recognises: the wrong axis, the whole matrix, a transposed result, no ``keepdims``, no ``exp``, no
    normalisation, overflow, 0/0 from a global maximum, a list, and ``S`` changed in place.
    """
    if not_done(fn):
        return not_attempted(NOT_DONE)
    for S in _softmax_cases():
        S_before = S.copy()
        with np.errstate(all="ignore"):
            out, err = _call(fn, S)
        if err is not None:
            if "broadcast" in err:
                return report(False, f"{err}. Dividing a (3, 4) matrix by its (3,) row sums needs "
                              "the sums kept as a column, one per row, so that they broadcast along the row")
            if S.ndim == 3 and ("axis" in err or "reshape" in err or "size" in err):
                return report(False, f"for a stack of score matrices of shape {S.shape}: {err}. A row is the "
                              "last axis, whatever comes in front of it: take the max and the sum over that axis")
            return report_failure(err, stub=NOT_DONE)
        if not np.array_equal(S, S_before):
            return report(False, "your function changed its input S in place (an in-place subtraction "
                          "writes into the caller's array); compute into a new array instead")
        if (msg := array_answer(out)):
            return report(False, msg)
        with np.errstate(all="ignore"):
            hint = _softmax_hint(S, out)
        if hint is not None:
            return report(False, hint)
        if not close(out, softmax(S)):
            arr = np.asarray(out, dtype=float) if shape_of(out) == S.shape else None
            if arr is not None and np.abs(S).max() >= 1000 and not np.isfinite(arr).all():
                with np.errstate(all="ignore"):
                    g = np.exp(S - S.max())  # the global maximum: a row far below it is 0/0
                if np.array_equal(np.isfinite(arr), np.isfinite(g / g.sum(axis=-1, keepdims=True))):
                    return report(False, "a row of scores near -1000 gives NaN: you subtracted the maximum of the "
                                  "whole matrix, so every exp in that row underflows to 0 and the row is 0/0. "
                                  "Subtract each row's own maximum (the result does not change)")
                return report(False, "scores near 1000 give NaN or inf: the exponential of 1000 overflows. "
                              "Subtract each row's maximum first (the result does not change)")
            shape = shape_of(out)
            if shape != S.shape:
                return report(False, f"for S of shape {S.shape} your result has shape {shape}; "
                              f"it must keep the shape (n_q, n_k) = {S.shape}")
            return report(False, f"wrong values for S =\n{S}\nexpected\n{np.round(softmax(S), 4)}\n"
                          f"got\n{np.round(np.asarray(out, dtype=float), 4)}")
    return report(True, "softmax row by row: every row is a probability distribution over the keys, "
                  "and large scores are handled")


# ---------------- Exercise: scaled scores

def _scores_case():
    rng = np.random.default_rng(3)
    Q = np.round(rng.normal(size=(2, 9)), 2)  # (n_q, d_k) = (2, 9): sqrt(d_k) = 3
    K = np.round(rng.normal(size=(4, 9)), 2)  # (n_k, d_k) = (4, 9)
    return Q, K


@plain_numpy()
def scaled_scores(fn: Callable) -> bool:
    """Check ``fn(Q, K)`` -> ``Q K^T / sqrt(d_k)`` (n_q, n_k): no scaling, by d_k, sqrt(n), times sqrt(d_k),
    transposed, ``Q @ K`` without the transpose."""
    if not_done(fn):
        return not_attempted(NOT_DONE)
    Q, K = _scores_case()
    out, err = _call(fn, Q.copy(), K.copy())
    if err is not None:
        if "matmul" in err or "aligned" in err or "mismatch" in err:
            return report(False, f"{err}. Q is (n_q, d_k) = {Q.shape} and K is (n_k, d_k) = {K.shape}: "
                          "the product must pair the d_k axis of Q with the d_k axis of K")
        return report_failure(err, stub=NOT_DONE)
    if (msg := array_answer(out)):
        return report(False, msg)
    dots = Q @ K.T  # (2, 4)
    want = dots / np.sqrt(9)
    hint = _first_match(out, [
        (want, None),
        (dots, "forgot the scaling: divide the dot products by sqrt(d_k), the width of the queries (9 here)"),
        (dots / 9, "you divided by d_k = 9; divide by its square root, sqrt(d_k) = 3. The variance of a "
         "dot product grows like d_k, so its standard deviation grows like sqrt(d_k)"),
        (dots / np.sqrt(4), "you divided by sqrt(n_k), the number of keys; divide by sqrt(d_k), the "
         "width of the vectors"),
        (dots / np.sqrt(2), "you divided by sqrt(n_q), the number of queries; divide by sqrt(d_k), the "
         "width of the vectors"),
        (dots * 3.0, "you multiplied by sqrt(d_k); divide by it instead"),
        (want.T, "transposed layout: row i must be query i and column j key j "
         f"(shape (n_q, n_k) = {want.shape})"),
        (dots.T, "transposed layout (rows must be queries) and no scaling by sqrt(d_k)"),
    ])
    if hint is not None:
        return report(False, hint)
    if close(out, want):
        return report(True, f"scaled scores Q K^T / sqrt(d_k), shape {want.shape}")
    shape = shape_of(out)
    if shape != want.shape:
        return report(False, f"for Q {Q.shape} and K {K.shape} the scores must have shape "
                      f"(n_q, n_k) = {want.shape}, yours has {shape}")
    return report(False, "wrong values: score (i, j) is the dot product of query i and key j, divided by sqrt(d_k)")


# ---------------- Exercise: one output row by hand

def output_row(answer, *, X, W_q, W_k, W_v, i: int) -> bool:
    """Check one output row ``y_i`` of ``self_attention(X, W_q, W_k, W_v)`` computed by hand: no scaling,
    no softmax, the wrong axis, another token's row, the weights, the input row itself."""
    if not_done(answer):
        return not_attempted(NOT_DONE)
    X = np.asarray(X, dtype=float)
    W_q, W_k, W_v = (np.asarray(W, dtype=float) for W in (W_q, W_k, W_v))
    Q, K, V = X @ W_q, X @ W_k, X @ W_v  # (n, d_k), (n, d_k), (n, d_v)
    dots = Q @ K.T  # (n, n)
    S = dots / np.sqrt(Q.shape[-1])
    out, A = self_attention(X, W_q, W_k, W_v)
    want = out[i]
    if close(answer, want, atol=1e-3):
        return report(True, f"y_{i + 1} = {np.array2string(np.asarray(want), precision=3)}")
    cands = [
        (_sm(dots)[i] @ V, "forgot the scaling: divide the scores by sqrt(d_k) before the softmax"),
        ((dots @ V)[i], "no softmax: turn the scores into weights with softmax before mixing the values"),
        ((S @ V)[i], "no softmax: the scaled scores must go through softmax to become weights"),
        ((_sm(S, axis=0) @ V)[i], "softmax over the wrong axis: y_i uses row i of the weights, a "
         "softmax over query i's scores against every key"),
        (A[i], "that is the weight row a_i, not the output: multiply it with V, y_i = a_i V"),
        (X[i], "that is the input x_i itself; the output mixes all the value rows"),
        (V[i], "that is the value row v_i; the output is the weighted sum of ALL value rows"),
    ]
    for j in range(len(X)):
        if j != i:
            cands.append((out[j], f"that is the output of token {j + 1} (row {j}); Python counts from 0, "
                          f"so token {i + 1} is row {i}"))
    for arr, hint in cands:
        if close(answer, arr, atol=1e-3):
            return report(False, hint)
    if shape_of(answer) != want.shape:
        return report(False, f"y_i must be a vector of shape {want.shape} (d_v,), yours has "
                      f"shape {shape_of(answer)}")
    return report(False, "not the expected row: scores q_i . k_j / sqrt(d_k), softmax over j, then "
                  "sum_j a_ij v_j (values are compared to 3 decimals)")


# ---------------- Exercise: full self-attention in one line

def _full_cases():
    rng = np.random.default_rng(5)
    X = np.round(rng.normal(size=(5, 4)), 2)  # (n, d_model) = (5, 4)
    W_q, W_k, W_v = (np.round(rng.normal(size=s), 2) for s in ((4, 3), (4, 3), (4, 2)))  # (d_model, d_k | d_v)
    Xb = np.round(rng.normal(size=(3, 5, 4)), 2)  # (b, n, d_model): a batch of 3 sequences
    Xc = np.round(rng.normal(size=(3, 3, 3)), 2)  # (b, n, d_model) with b = n = d_model = d_k = 3
    Wc = [np.round(rng.normal(size=(3, 3)), 2) for _ in range(3)]
    return [(Xb, W_q, W_k, W_v), (Xc, *Wc), (X, W_q, W_k, W_v)]


def _swap(M: np.ndarray) -> np.ndarray:
    return np.swapaxes(M, -1, -2)  # transpose the last two axes only


def _wrong_outputs(X, W_q, W_k, W_v) -> list[tuple[np.ndarray, str]]:
    """Outputs of the usual mistakes, each with the hint for it (X is (n, d) or (b, n, d))."""
    Q, K, V = X @ W_q, X @ W_k, X @ W_v  # (..., n, d_k), (..., n, d_k), (..., n, d_v)
    d_k, d_model = Q.shape[-1], X.shape[-1]
    dots = Q @ _swap(K)  # (..., n, n)
    right = _sm(dots / np.sqrt(d_k)) @ V
    out = [(lambda: _sm(Q @ K.T / np.sqrt(d_k)) @ V,   # K.T of (b, n, d_k) is (d_k, n, b): a ValueError, or wrong
            ".T reverses every axis of a 3-D array, the batch axis too; transpose only the last two axes of K, "
            "so each sequence's queries meet its own keys")] if X.ndim == 3 else []
    out += [
        (_sm(dots) @ V, "forgot the scaling: divide the scores by sqrt(d_k) before the softmax"),
        (_sm(dots / d_k) @ V, "you divided by d_k; divide by sqrt(d_k)"),
        (_sm(dots / np.sqrt(d_k), axis=-2) @ V, "softmax over the wrong axis: normalise each ROW, "
         "one distribution per query over the keys"),
        (dots / np.sqrt(d_k) @ V, "no softmax: the scaled scores are not weights yet"),
        (dots @ V, "no softmax and no scaling: the scores must be divided by sqrt(d_k) and turned "
         "into weights that sum to 1 before they mix the values"),
        (_sm((dots / np.sqrt(d_k)).reshape(*dots.shape[:-2], -1)).reshape(dots.shape) @ V, "softmax over "
         "the whole matrix: every ROW of the weights must sum to 1, one distribution per query"),
        (_sm(dots / np.sqrt(d_k)) @ X, "you mixed the inputs X; mix the values, the inputs projected by W_v"),
        (_swap(right), f"transposed layout: your output is (d_v, n); rows are tokens, so return "
         f"{right.shape}"),
    ]
    if d_model != d_k:
        out.append((_sm(dots / np.sqrt(d_model)) @ V, "you scaled by sqrt(d_model), the width of X; "
                    "scale by sqrt(d_k), the width of the queries and keys"))
    return out


@plain_numpy(allow=('softmax',))
def full_self_attention(fn: Callable) -> bool:
    """Check ``fn(X, W_q, W_k, W_v)`` -> self-attention's output, for a batch (b, n, d_model) -> (b, n, d_v)
    and for one sequence. ``d_model = 4 != d_k = 3 != d_v = 2``, and a batch with ``b = n = d_k = 3``
    where ``K.T`` (which reverses the batch axis too) runs but gives wrong numbers."""
    if not_done(fn):
        return not_attempted(NOT_DONE)
    for X, W_q, W_k, W_v in _full_cases():
        out, err = _call(fn, X.copy(), W_q.copy(), W_k.copy(), W_v.copy())
        what = f"for X of shape {X.shape}" + (" (a batch of sequences)" if X.ndim == 3 else " (one sequence)")
        if err is not None:
            if "matmul" in err or "aligned" in err or "mismatch" in err:
                return report(False, f"{what}: {err}. Rows are tokens: the projections act on the last axis of X, "
                              "and the scores pair the d_k axis of the queries with that of the keys" + (
                                  "; in a batch, a transpose must swap only the last two axes (.T reverses every "
                                  "axis, the batch axis too)" if X.ndim == 3 else ""))
            return report_failure(err, stub=NOT_DONE)
        if isinstance(out, tuple):
            return report(False, "your function returned a tuple; return only the output (n, d_v). "
                          "(ak.self_attention returns (output, weights): take [0])")
        if (msg := array_answer(out)):
            return report(False, msg)
        want = np.stack([self_attention(x, W_q, W_k, W_v)[0] for x in X]) if X.ndim == 3 else \
            self_attention(X, W_q, W_k, W_v)[0]  # (b, n, d_v) or (n, d_v)
        if close(out, want):
            continue
        hint = _first_match(out, _wrong_outputs(X, W_q, W_k, W_v))
        if hint is not None:
            return report(False, f"{what}: {hint}")
        if shape_of(out) != want.shape:
            return report(False, f"{what} the output must have shape {want.shape}, yours has {shape_of(out)}")
        return report(False, f"{what}: wrong values. Each sequence is attended on its own: its queries, keys "
                      "and values are its rows projected by W_q, W_k, W_v")
    return report(True, "self-attention for a batch of sequences and for one: matches "
                  "attention_kit.self_attention on each sequence")


# ---------------- Exercise: predict a number (the variance of a dot product)

def dot_variance(variance, std, *, d_k: int = 64, mean_q: float = 0.0, var_q: float = 1.0,
                 mean_k: float = 0.0, var_k: float = 1.0) -> bool:
    """Check the predicted variance and standard deviation (to two decimals) of ``q . k``, whose ``d_k``
    independent terms have variance ``Var(q)Var(k) + Var(q)E(k)^2 + Var(k)E(q)^2`` each (the defaults: 64
    and 8). Recognises: the std as the variance, the variance after scaling, squared, the means wrong."""
    if not_done(variance) or not_done(std):
        return not_attempted(NOT_DONE)
    try:
        v, s = float(variance), float(std)
    except (TypeError, ValueError):
        return report(False, "give two numbers: the variance and the standard deviation")
    term = var_q * var_k + var_q * mean_k**2 + var_k * mean_q**2  # Var(q_m k_m), independent q_m, k_m
    want = d_k * term
    # the task asks for two decimals: 5.66 for sqrt(32) = 5.657 is right, 5.65 or 5.7 is not
    v_ok, s_ok = abs(v - want) <= 0.005, abs(s - np.sqrt(want)) <= 0.005 + 1e-9
    if v_ok and s_ok:
        return report(True, f"variance {want:g} = {d_k} terms x {term:g}, standard deviation "
                      f"{np.sqrt(want):.3f}; dividing by {np.sqrt(want):.3f} brings the variance back to 1")
    if abs(v - np.sqrt(want)) <= 0.006:
        return report(False, f"{np.sqrt(want):.3f} is the standard deviation, not the variance (a common "
                      f"slip): q.k is a sum of {d_k} independent terms, so the variances add up",
                      graded="you gave the standard deviation where the variance is asked (a common "
                             "slip): q.k is a sum of independent terms, so their variances add up")
    if abs(v - 1) < 1e-6:
        return report(False, "variance 1 is what the scaling aims for AFTER dividing; before, the "
                      f"{d_k} terms' variances add up")
    if v_ok:
        return report(False, f"the variance is right; the standard deviation is its square root, to two "
                      f"decimals (you gave {s:g})")
    if abs(v - d_k**2 * term) < 1e-3 and d_k > 1:
        return report(False, f"variances of independent terms add: {d_k} terms of variance {term:g} "
                      f"give {want:g}, not {d_k}^2 x {term:g}",
                      graded="variances of independent terms add: the number of terms multiplies "
                             "one term's variance once, it is not squared")
    without_means = d_k * var_q * var_k
    subtracted = d_k * (var_q * var_k - mean_q * mean_k)
    if term != var_q * var_k and abs(v - without_means) < 1e-3:
        return report(False, "with a non-zero mean the product's variance is not just Var(q)Var(k): "
                      "add Var(q)E(k)^2 + Var(k)E(q)^2 for each term")
    if mean_q * mean_k != 0 and abs(v - subtracted) < 1e-3:
        return report(False, "subtracting E(q)E(k) is a wrong rule that can even give a negative "
                      "variance; for independent factors add Var(q)E(k)^2 + Var(k)E(q)^2")
    return report(False, f"each term q_m k_m has variance Var(q)Var(k) + Var(q)E(k)^2 + Var(k)E(q)^2 "
                  f"= {term:g}, and the {d_k} terms are independent, so their variances add",
                  graded="work out the variance of one term q_m k_m from the means and variances "
                         "of q and k (mind the means), then use that independent terms' variances add")


# ---------------- Exercise: repair a broken numpy implementation

def _fix_cases():
    rng = np.random.default_rng(7)
    X = np.round(rng.normal(size=(4, 3)), 2)  # (n, d) = (4, 3): n != d
    Ws = [np.round(rng.normal(size=(3, 3)), 2) for _ in range(3)]  # (d, d) each, as in the broken code
    return X, *Ws


@plain_numpy()
def fixed_source_code(fn: Callable) -> bool:
    """Check the repaired tutorial code (flat random ``W``, ``np.matmul(W, X)``): ``fn(X, W_q, W_k, W_v)``
    -> Y (n, d). Recognises: the column convention, no scaling, the wrong axis, new random matrices inside."""
    if not_done(fn):
        return not_attempted(NOT_DONE)
    X, W_q, W_k, W_v = _fix_cases()
    out, err = _call(fn, X.copy(), W_q.copy(), W_k.copy(), W_v.copy())
    if err is not None:
        if "matmul" in err or "aligned" in err or "mismatch" in err:
            return report(False, f"{err}. X is (n, d) = {X.shape} with one token per row, and W_q is "
                          f"(d, d) = {W_q.shape}: a projection acts on the features, the last axis of X, "
                          "not on the tokens")
        return report_failure(err, stub=NOT_DONE)
    if isinstance(out, tuple):
        return report(False, "return only Y, the output of shape (n, d)")
    if (msg := array_answer(out)):
        return report(False, msg)
    want, _ = self_attention(X, W_q, W_k, W_v)
    if close(out, want):
        return report(True, "the repaired code matches attention_kit.self_attention "
                      f"(Y has shape {want.shape}, one row per token)")
    col, _ = self_attention(X, W_q.T, W_k.T, W_v.T)
    if close(out, col):
        return report(False, "column convention: your projections use the transposes of W_q, W_k, W_v. "
                      "With tokens as rows, each row of X multiplies W_q (shape (d_model, d_k)) from the left")
    hint = _first_match(out, _wrong_outputs(X, W_q, W_k, W_v))
    if hint is not None:
        return report(False, hint)
    out2, err2 = _call(fn, X.copy(), W_q.copy(), W_k.copy(), W_v.copy())
    if err2 is None and not close(out, out2):
        return report(False, "two calls with the same inputs gave different outputs: use the W_q, W_k, "
                      "W_v passed in, do not draw new random matrices inside the function")
    if shape_of(out) != want.shape:
        return report(False, f"Y must have shape (n, d) = {want.shape}, yours has {shape_of(out)}")
    return report(False, "wrong values: project X into queries, keys and values (rows are tokens), "
                  "scale the scores by sqrt(d), softmax each row, then mix the values")
