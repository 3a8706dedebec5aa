"""Exercise checkers for notebook 02 (self-attention): ``softmax_rows``, ``scaled_scores``,
``output_row``, ``full_self_attention``, ``dot_variance`` and ``fixed_source_code``.

Each runs the learner's answer on small recorded inputs chosen so that the usual mistakes give
*different* numbers (non-square matrices, a batch, two widths), compares with the recorded answers
and mistakes (``attention_kit.check.self_attention_cases``), and prints one line, ``✓`` or ``✗``
with a hint aimed at the mistake it recognised; it returns True or False and never lets the
learner's exception escape. ``quietly()`` silences them.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..i18n import N_, _
from . import (
    as_floats,
    close,
    not_attempted,
    not_done,
    prediction,
    quietly,
    report,
    report_failure,
    shape_of,
    shape_text,
    try_call,
)
from . import self_attention_cases as cases
from .general import array_answer, first_match, is_text
from .plain import plain_numpy
from .self_attention_cases import output_row_table, variance_table

__all__ = ["quietly", "softmax_rows", "scaled_scores", "output_row", "full_self_attention", "dot_variance",
           "fixed_source_code"]

NOT_DONE = N_("not answered yet: replace the `...` with your code, then run this cell again")


def _call(fn: Callable, *args) -> tuple[object, str | None]:
    """``try_call``, plus: a function that still returns ``...`` (the exercise stub) is not done."""
    out, err = try_call(fn, *args)
    if err is None and out is Ellipsis:
        return None, _(NOT_DONE)
    return out, err


def _copies(args) -> list:
    return [a.copy() for a in args]


# ---------------- Exercise: softmax row by row

def _softmax_wrong_values(S: np.ndarray, out) -> str:
    """The hint for a result of the right shape that matches no recorded mistake."""
    arr = np.asarray(out, dtype=float)
    sums = arr.sum(axis=-1)
    if (dt := getattr(out, "dtype", None)) is not None and dt.kind == "f" and dt.itemsize < 8 and np.allclose(sums, 1, atol=1e-2):
        return _("your weights are {dtype} numbers, which keep only about {digits} significant digits, so a row sums to 1 "
                 "only to within {gap:.1g} and the weights are off by as much: keep numpy's default precision, 64-bit "
                 "floats, all the way").format(dtype=dt.name, digits=int(np.finfo(dt).precision), gap=float(np.abs(sums - 1).max()))
    if not np.allclose(sums, 1.0, atol=1e-6):   # more digits where three would print 1.0
        first = sums.ravel()[:3]
        shown = first if np.all(np.round(first, 3) == 1) else np.round(first, 3)
        return _("your rows sum to {sums}...: each row of weights must sum to 1, one probability "
                 "distribution per query").format(sums=[float(f"{v:.8g}") for v in shown])
    first = tuple(0 for _i in S.shape[:-1])
    return _("wrong values: for the scores {scores} (the first row) your weights are {weights}; work that "
             "row out by hand, as in notebook 01's first exercise, and compare").format(
        scores=np.round(S[first], 2).tolist(), weights=np.round(arr[first], 3).tolist())


@plain_numpy()
def softmax_rows(fn: Callable) -> bool:
    """Check ``fn(S)``: the softmax of each row (the last axis) of ``S`` (n_q, n_k) or (h, n_q, n_k).
    Recognises: the wrong axis, the whole matrix, a transposed result, no ``keepdims``, no ``exp``, no
    normalisation, overflow, 0/0 from a global maximum, low precision, a list, ``S`` changed in place."""
    if not_done(fn):
        return not_attempted(_(NOT_DONE))
    for case in cases.softmax_rows_table():
        S, want = case["S"], case["want"]
        S_before = S.copy()
        with np.errstate(all="ignore"):
            out, err = _call(fn, S)
        if err is not None:
            if "broadcast" in err:
                return report(False, _("{error}. Dividing a (3, 4) matrix by its (3,) row sums needs the sums "
                                       "kept as a column, one per row, so that they broadcast along the row").format(error=err))
            if S.ndim == 3 and ("axis" in err or "reshape" in err or "size" in err):
                return report(False, _("for a stack of score matrices of shape {S}: {error}. A row is the last axis, "
                                       "whatever comes in front of it: take the max and the sum over that axis").format(S=S.shape, error=err))
            return report_failure(err, stub=_(NOT_DONE))
        if not np.array_equal(S, S_before):
            return report(False, _("your function changed its input S in place (an in-place subtraction "
                                   "writes into the caller's array); compute into a new array instead"))
        if (msg := array_answer(out)):
            return report(False, msg)
        if close(out, want):
            continue
        with np.errstate(all="ignore"):
            hint = first_match(out, case["mistakes"])
        if hint is not None:
            return report(False, hint)
        arr = np.asarray(out, dtype=float) if shape_of(out) == S.shape else None
        if arr is not None and np.abs(S).max() >= 1000 and not np.isfinite(arr).all():
            if case["spread"]:
                return report(False, _("rows whose scores lie far apart, such as {row}, give NaN or inf: after "
                                       "your shift an exponent is still far above 0, and exp overflows past about "
                                       "709 (or every exp of a row underflows to 0). The shift must leave every "
                                       "exponent of a row at most 0, however far apart its scores are").format(
                                           row=S[0].tolist()))
            finite = np.isfinite(arr)   # the global maximum's numbers, not only its pattern of NaN
            if np.array_equal(finite, case["global_max_finite"]) and np.allclose(arr[finite], case["global_max"][finite]):
                return report(False, _("a row of scores near -1000 gives NaN: you subtracted the maximum of the "
                                       "whole matrix, so every exp in that row underflows to 0 and the row is 0/0. "
                                       "Subtract each row's own maximum (the result does not change)"))
            return report(False, _("scores near 1000 give NaN or inf: the exponential of 1000 overflows. "
                                   "Subtract each row's maximum first (the result does not change)"))
        shape = shape_of(out)
        if shape != S.shape:
            return report(False, _("for S of shape {S} your result has shape {got}; it must keep the shape "
                                   "(n_q, n_k) = {S}").format(S=S.shape, got=shape))
        return report(False, _softmax_wrong_values(S, out))
    return report(True, _("softmax row by row: every row is a probability distribution over the keys, "
                          "and large scores are handled"))


# ---------------- Exercise: scaled scores

def _divisor(out, dots) -> float | None:
    """The number ``d`` with ``out == dots / d`` entry by entry, or None when there is none."""
    try:
        with np.errstate(all="ignore"):
            ratio = np.asarray(out, dtype=float) / dots
    except Exception:  # the learner's object: never raise
        return None
    if ratio.shape != dots.shape or not np.all(np.isfinite(ratio)) or not np.allclose(ratio, ratio.flat[0]) \
            or ratio.flat[0] == 0:
        return None
    return float(1 / ratio.flat[0])


def _fixed_divisor(fn: Callable, table: list[dict]) -> float | None:
    """The divisor, when ``fn`` scales the dot products by one and the same number for every width
    of the table's single-matrix cases (a number typed in, not one taken from the inputs), else
    None. No scaling at all (a divisor of 1) has its own hint, so it gives None too."""
    divisors = []
    for case in table:
        if case["Q"].ndim != 2:
            continue
        out, err = _call(fn, case["Q"].copy(), case["K"].copy())
        divisors.append(None if err is not None else _divisor(out, case["dots"]))
    if len(divisors) < 2 or any(d is None for d in divisors) or not np.allclose(divisors, divisors[0]):
        return None
    return None if np.isclose(divisors[0], 1.0) else divisors[0]


@plain_numpy()
def scaled_scores(fn: Callable) -> bool:
    """Check ``fn(Q, K)``, the scaled scores (n_q, n_k) of one matrix pair, on two widths d_k, and of a
    stack of them (h, n_q, n_k): no scaling, by d_k, by sqrt(n), times sqrt(d_k), a fixed divisor,
    transposed, ``K`` not transposed, ``.T`` on a stack."""
    if not_done(fn):
        return not_attempted(_(NOT_DONE))
    table = cases.scores_table()
    for case in table:
        Q, K, want, dots = case["Q"], case["K"], case["want"], case["dots"]
        out, err = _call(fn, Q.copy(), K.copy())
        if err is not None:
            if Q.ndim == 3:
                return report(False, _("for a stack of heads, Q {Q} and K {K}: {error}. Whatever stands in front, "
                                       "the scores pair the last axis of Q with the last axis of K, one head at a "
                                       "time; .T reverses every axis, the heads' axis too").format(Q=Q.shape, K=K.shape, error=err))
            if "matmul" in err or "aligned" in err or "mismatch" in err:
                return report(False, _("{error}. Q is (n_q, d_k) = {Q} and K is (n_k, d_k) = {K}: the product must "
                                       "pair the d_k axis of Q with the d_k axis of K").format(error=err, Q=Q.shape, K=K.shape))
            return report_failure(err, stub=_(NOT_DONE))
        if (msg := array_answer(out)):
            return report(False, msg)
        if close(out, want):
            continue
        # a number typed in can coincide with a shape-based mistake on one case (sqrt(2) is sqrt(n_q)
        # when n_q = 2): the same divisor for both widths tells the two apart
        fixed = _fixed_divisor(fn, table)
        if fixed is not None:
            widths = [str(c["d_k"]) for c in table if c["Q"].ndim == 2]
            widths = _("{widths} and {last}").format(widths=", ".join(widths[:-1]), last=widths[-1])
            if abs(fixed) >= 1:
                message = _("your scores are the dot products divided by {number} for every width (d_k = {widths}): "
                            "a fixed number cannot be right for every width; the divisor must follow the width "
                            "of the queries and keys, read from the inputs")
            else:
                message = _("your scores are the dot products multiplied by {number} for every width (d_k = "
                            "{widths}): a fixed number cannot be right for every width; the divisor must follow "
                            "the width of the queries and keys, read from the inputs")
            number = f"{fixed:.4g}" if abs(fixed) >= 1 else f"{1 / fixed:.4g}"
            return report(False, message.format(number=number, widths=widths))
        hint = first_match(out, case["mistakes"])
        if hint is not None:
            return report(False, hint if Q.ndim != 3 else _("for a stack of heads, Q {Q} and K {K}: {hint}").format(
                Q=Q.shape, K=K.shape, hint=hint))
        shape = shape_of(out)
        if shape != want.shape:
            message = (_("for Q {Q} and K {K} the scores must have shape {want}, yours has {got}: one (n_q, n_k) "
                         "matrix per head, each head's queries against its own keys") if Q.ndim == 3 else
                       _("for Q {Q} and K {K} the scores must have shape {want} (n_q, n_k), yours has {got}"))
            return report(False, message.format(Q=Q.shape, K=K.shape, want=want.shape, got=shape))
        divisor = _divisor(out, dots)
        if divisor is not None:
            return report(False, _("for Q {Q} and K {K} (d_k = {d_k}) your scores are the dot products divided by "
                                   "{divisor}, which is not the square root of d_k: check which axis of which "
                                   "input your divisor comes from").format(Q=Q.shape, K=K.shape, d_k=case['d_k'],
                                                                           divisor=f"{divisor:.4g}"))
        return report(False, _("wrong values: score (i, j) is the dot product of query i and key j, divided "
                               "by sqrt(d_k)"))
    return report(True, _("scaled scores right for two widths of the queries and keys (d_k = 9 and 4) "
                          "and for a stack of heads (h, n_q, n_k)"))


# ---------------- Exercise: one output row by hand

def output_row(answer, *, X, W_q, W_k, W_v, i: int) -> bool:
    """Check one output row ``y_i`` of self-attention on the exercise's inputs, computed by hand:
    no scaling, no softmax, the wrong axis, another token's row, the weights, the input row itself."""
    if not_done(answer):
        return not_attempted(_(NOT_DONE))
    given = (X, W_q, W_k, W_v)
    for case in output_row_table().open():
        names = ("X", "W_q", "W_k", "W_v")
        if case["i"] == i and all(close(a, case[k], atol=0) for a, k in zip(given, names, strict=True)):
            break
    else:
        return report(False, _("this checker knows the exercise's inputs only: call it as the exercise cell does"))
    want = case["want"]
    if is_text(answer):
        return report(False, _("give y_i as numbers, not as text: write 0.5, not \"0.5\" (quotes make a string, "
                               "and a string is not a number you can compute with)"))
    if close(answer, want, atol=1e-3):
        return report(True, f"y_{i + 1} = {np.array2string(np.asarray(want), precision=3)}")
    for arr, hint in case["mistakes"]:
        if close(answer, arr, atol=1e-3):
            return report(False, _(hint))
    if shape_of(answer) != want.shape:
        return report(False, _("y_i must be one vector of shape {want} (d_v,); got {got}").format(
            want=want.shape, got=shape_text(answer)))
    given = as_floats(answer)
    looks_rounded = given is not None and bool(np.allclose(given, np.round(given, 2), rtol=0, atol=1e-9))
    if looks_rounded and close(answer, want, atol=0.0051):
        return report(False, _("close, but rounded too coarsely: the checker compares to 3 decimals, so keep 3 "
                               "decimals at least (round only the numbers you print, not the ones you compute with)"))
    return report(False, _("not the expected row (values are compared to 3 decimals): redo it one step at a "
                           "time as section 4.1 does for \"on\", with the moved x_3, and check each intermediate number "
                           "on the way: the weights must be positive and sum to 1, and y_3 must lie inside the triangle of the "
                           "value rows it averages"))


# ---------------- Exercise: self-attention for a batch

@plain_numpy(allow=('softmax',))
def full_self_attention(fn: Callable) -> bool:
    """Check ``fn(X, W_q, W_k, W_v)`` -> self-attention's output, for a batch (b, n, d_model) -> (b, n, d_v)
    and for one sequence: ``d_model = 4 != d_k = 3 != d_v = 2``, and a batch with ``b = n = d_k = 3`` (``K.T`` runs)."""
    if not_done(fn):
        return not_attempted(_(NOT_DONE))
    for case in cases.full_table():
        X, want = case["args"][0], case["want"]
        out, err = _call(fn, *_copies(case["args"]))
        what = (_("for X of shape {X} (a batch of sequences)") if X.ndim == 3 else
                _("for X of shape {X} (one sequence)")).format(X=X.shape)
        if err is not None:
            if "matmul" in err or "aligned" in err or "mismatch" in err:
                message = (_("{what}: {error}. Rows are tokens: the projections act on the last axis of X, and the "
                             "scores pair the d_k axis of the queries with that of the keys; in a batch, a transpose "
                             "must swap only the last two axes (.T reverses every axis, the batch axis too)")
                           if X.ndim == 3 else
                           _("{what}: {error}. Rows are tokens: the projections act on the last axis of X, and the "
                             "scores pair the d_k axis of the queries with that of the keys"))
                return report(False, message.format(what=what, error=err))
            if "NonFiniteError" in err:
                return report(False, _("{what}: your scores hold inf or NaN, and ak.softmax takes finite numbers only. A "
                                       "score of -inf is one way to write a mask: this exercise has none, every query "
                                       "attends to every key of its own sequence; otherwise look for an overflow in the "
                                       "scores").format(what=what))
            if X.ndim == 2 and err != _(NOT_DONE):
                return report(False, _("{what}: {error}. The function gets a batch (b, n, d_model) and also one "
                                       "sequence (n, d_model), a 2-D array: write each step for the last axes, "
                                       "whatever stands in front of them, so that one expression takes both").format(
                                           what=what, error=err))
            return report_failure(err, stub=_(NOT_DONE))
        if isinstance(out, tuple):
            return report(False, _("your function returned a tuple (the output with the weights, say); the task "
                                   "asks for the output alone, one array of shape (n, d_v) per sequence"))
        if (msg := array_answer(out)):
            return report(False, msg)
        if close(out, want):
            continue
        hint = first_match(out, case["mistakes"])
        if hint is not None:
            return report(False, _("{what}: {hint}").format(what=what, hint=hint))
        if shape_of(out) != want.shape:
            return report(False, _("{what}: the output must have shape {want}, yours has {got}").format(
                what=what, want=want.shape, got=shape_of(out)))
        return report(False, _("{what}: wrong values. Each sequence is attended on its own: its queries, keys "
                               "and values are its rows projected by W_q, W_k, W_v").format(what=what))
    return report(True, _("self-attention for a batch of sequences and for one: matches "
                          "attention_kit.self_attention on each sequence"))


# ---------------- Exercise: predict a number (the variance of a dot product)

@prediction
def dot_variance(variance, std, *, d_k: int = 64, mean_q: float = 0.0, var_q: float = 1.0,
                 mean_k: float = 0.0, var_k: float = 1.0) -> bool:
    """Check the predicted variance and standard deviation (to two decimals) of ``q . k``, a sum of
    ``d_k`` independent terms ``q_m k_m`` whose entries have the given means and variances (the
    exercise's numbers; the defaults are section 3's). Recognises: the std as the variance, the
    variance after scaling, squared, the means left out or subtracted."""
    if not_done(variance) or not_done(std):
        return not_attempted(_(NOT_DONE))
    if is_text(variance) or is_text(std):
        return report(False, _("give the variance and the standard deviation as numbers, not as text: write 0.5, "
                               "not \"0.5\" (quotes make a string, and a string is not a number you can compute with)"))
    if isinstance(variance, (bool, np.bool_)) or isinstance(std, (bool, np.bool_)):
        return report(False, _("give two numbers, the variance and the standard deviation; True and False are "
                               "not numbers (Python reads them as 1 and 0)"))
    try:
        v, s = float(variance), float(std)
    except (TypeError, ValueError):
        return report(False, _("give two numbers: the variance and the standard deviation"))
    t = variance_table().open().get((d_k, float(mean_q), float(var_q), float(mean_k), float(var_k)))
    if t is None:
        return report(False, _("this checker knows the exercise's numbers only: call it as the exercise cell does"))
    want, root = t["want"], t["std"]
    # the task asks for two decimals: the recorded root rounded to two decimals passes, one rounded the
    # wrong way or to one decimal does not
    v_ok, s_ok = abs(v - want) <= 0.005, abs(s - root) <= 0.005 + 1e-9
    if v_ok and s_ok:
        return report(True, _("variance {variance}, standard deviation {std}; dividing by {std} brings the "
                              "variance back to 1").format(variance=f"{want:g}", std=f"{root:.3f}"))
    if abs(v - root) <= 0.006:
        return report(False, _("{std} is the standard deviation, not the variance (a common slip): q.k is a sum "
                               "of {d_k} independent terms, so the variances add up").format(std=f"{root:.3f}", d_k=d_k),
                      graded=_("you gave the standard deviation where the variance is asked (a common "
                               "slip): q.k is a sum of independent terms, so their variances add up"))
    if abs(v - 1) < 1e-6:
        return report(False, _("variance 1 is what the scaling aims for AFTER dividing; before, the {d_k} terms' variances add up").format(d_k=d_k))
    if v_ok:
        return report(False, (_("the variance is right; the standard deviation is close but not to two decimals (you gave {std}): "
                                "round only at the end") if abs(s - root) < 0.06 else _("the variance is right; the standard "
                                "deviation is not (you gave {std}): how is a standard deviation related to its variance?")).format(std=f"{s:g}"))
    if abs(v - t["squared"]) < 1e-3 and d_k > 1:
        return report(False, _("variances of independent terms add: the number of terms multiplies "
                               "one term's variance once, it is not squared"))
    if t["term_has_means"] and abs(v - t["without_means"]) < 1e-3:
        return report(False, _("you left the means out: with a non-zero mean, the variance of a product of "
                               "independent factors is not just the product of their variances (section 3.2's rule)"))
    if t["means"] and abs(v - t["subtracted"]) < 1e-3:
        return report(False, _("subtracting E(q)E(k) is a wrong rule that can even give a negative "
                               "variance; section 3.2 has the rule for a product of independent factors"))
    return report(False, _("work out the variance of one term q_m k_m from the means and variances of q and "
                           "k (section 3.2's rule: the means count), then use that independent terms' variances add"),
                  graded=_("work out the variance of one term q_m k_m from the means and variances "
                           "of q and k (mind the means), then use that independent terms' variances add"))


# ---------------- Exercise: repair a broken numpy implementation

@plain_numpy()
def fixed_source_code(fn: Callable) -> bool:
    """Check the repaired tutorial code (flat random ``W``, ``np.matmul(W, X)``): ``fn(X, W_q, W_k, W_v)``
    -> Y (n, d). Recognises: the column convention, no scaling, the wrong axis, new random matrices inside,
    scores that pair the features (a case with n = d tells, where n != d fails)."""
    if not_done(fn):
        return not_attempted(_(NOT_DONE))
    case = cases.fix_table()
    X, W_q, want = case["args"][0], case["args"][1], case["want"]
    out, err = _call(fn, *_copies(case["args"]))
    if err is not None:
        if "matmul" in err or "aligned" in err or "mismatch" in err:
            # the shapes fail here (n != d): on a case with n = d the same code runs, and its numbers
            # tell where the product went wrong
            probe, probe_err = _call(fn, *_copies(case["square"]["args"]))
            found = next((k for k in ("features", "weights_first") if probe_err is None and close(probe, case["square"][k])), "")
            return report(False, {"features": _("{error}. X is (n, d) = {X} with one token per row: your scores pair the "
                                                "features of the queries with those of the keys, a (d, d) matrix. A score "
                                                "pairs one query with one key, token with token: the weights are (n, n), "
                                                "one row per query, and they mix the n rows of V"),
                                  "weights_first": _("{error}. X is (n, d) = {X} with one token per row, and W_q is (d, d) = "
                                                     "{W_q}: a projection acts on the features, the last axis of X, not on the "
                                                     "tokens")}.get(found, _(
                "{error}. X is (n, d) = {X} with one token per row, and W_q is (d, d) = {W_q}: follow the shapes step by "
                "step. A projection acts on the features, the last axis of X, not on the tokens; a score pairs one query "
                "with one key, so the weights are (n, n) and mix the n rows of V")).format(error=err, X=X.shape, W_q=W_q.shape))
        return report_failure(err, stub=_(NOT_DONE))
    if isinstance(out, tuple):
        return report(False, _("return only Y, the output of shape (n, d)"))
    if (msg := array_answer(out)):
        return report(False, msg)
    if close(out, want):
        return report(True, _("the repaired code matches attention_kit.self_attention "
                              "(Y has shape {Y}, one row per token)").format(Y=want.shape))
    if close(out, case["columns"]):
        return report(False, _("column convention: your projections use the transposes of W_q, W_k, W_v. "
                               "With tokens as rows, a projection matrix is applied the row way round (notebook 01, "
                               "section 2's table of the two forms)"))
    hint = first_match(out, case["mistakes"])
    if hint is not None:
        return report(False, hint)
    out2, err2 = _call(fn, *_copies(case["args"]))
    if err2 is None and not close(out, out2):
        return report(False, _("two calls with the same inputs gave different outputs: use the W_q, W_k, "
                               "W_v passed in, do not draw new random matrices inside the function"))
    if shape_of(out) != want.shape:
        return report(False, _("Y must have shape (n, d) = {want}, yours has {got}").format(want=want.shape, got=shape_of(out)))
    return report(False, _("wrong values: your function runs and keeps the shape, but one of its steps is not "
                           "self-attention in rows as section 2.5 writes it. Print its intermediate arrays for a small X "
                           "and compare each with that section (or with the weights ak.self_attention returns) to find "
                           "the first that differs"))
