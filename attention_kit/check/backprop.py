"""Exercise checkers for notebook 05 (how attention learns).

Every checker prints one line, ``✓ ...`` or ``✗ ...`` with a hint aimed at the usual mistake, and
returns True or False. The learner's exceptions are reported, never raised.

* ``general_score_grads(fn)``: ``fn(Q, K, W, dS) -> (dQ, dK)`` for the general score ``S = Q W K^T``;
  catches W where W^T belongs (and the reverse), W left out, a scaling by sqrt(d_k) that the general score
  does not have, dS where dS^T belongs, the sign and the two swapped. Its hints diagnose; none prints
  the answer.
* ``key_bias(fn, why)``: ``fn(Q, K, dS) -> (db_q, db_k)`` for ``S = Q K^T / sqrt(d_k)`` with biased
  ``Q`` and ``K``, and ``why``, the letter of the reason db_k is 0 when dS comes from a softmax; catches
  a db_k written down as 0 (the checker also passes a dS whose rows do not sum to 0), one row per token
  instead of the sum, the wrong axis, the missing 1/sqrt(d_k), and each wrong reason.
* ``gradient_check(fn)``: ``fn(f, x, analytic, eps) -> relative error``; catches an absolute error
  (which hides the scale of the gradient), a one-sided difference and a division by eps instead of 2 eps.
* ``rotate_pattern(answer)``: which key each query of the ``rotate`` task attends to after training.
* ``quietly()``: a context manager (from ``attention_kit.check``) that silences the checkers; the
  worked solutions use it so that their cells store no output.
"""

from __future__ import annotations

import numpy as np

from ..learn.backward import relative_error
from ..learn.backward import softmax_backward as _softmax_backward
from ..learn.toy_tasks import N_TOKENS
from . import (
    as_floats,
    close,
    not_attempted,
    not_done,
    prediction,
    quietly,
    report,
    shape_of,
    shape_text,
    try_call,
)
from .plain import plain_numpy

__all__ = ["general_score_grads", "key_bias", "gradient_check",
           "rotate_pattern", "quietly"]

STUB = "no answer yet: replace the `...` after `return` with your code, then run the cell again"


# ---------------------------------------------------------------- gradient check

_EPS = 1e-4  # central differences: ~1e-8 relative here; one-sided: ~1e-4, so the two cannot be confused


def _curved(z):
    """A lot of curvature (module-level, so the grader can send it to a learner's kernel by name)."""
    return float(np.sum(np.sin(3 * z) * z**2))


def _tiny(z):
    """A gradient of order 1e-9."""
    return 1e-9 * float(np.sum(z**3))


def _huge(z):
    """A gradient of order 1e6."""
    return 1e6 * float(np.sum(np.cos(z)))


def _cases():
    """(name, f, x, analytic, wanted band) for the gradient-check checker."""
    x = np.linspace(-1.2, 1.3, 6).reshape(2, 3)  # no 0, where a gradient would vanish
    curved, tiny, huge = _curved, _tiny, _huge
    d_curved = np.cos(3 * x) * 3 * x**2 + 2 * x * np.sin(3 * x)
    d_tiny_wrong = 2 * (3e-9 * x**2)  # twice the true gradient: a relative error of 1/3
    return [("a correct gradient", curved, x, d_curved, "small"),
            ("a wrong gradient of size 1e-9", tiny, x, d_tiny_wrong, "large"),
            ("a correct gradient of size 1e6", huge, x, -1e6 * np.sin(x), "small")]


def _numeric(f, x, eps, kind: str) -> np.ndarray:
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        if kind == "central":
            g[i] = (f(up) - f(down)) / (2 * eps)
        elif kind == "one-sided":
            g[i] = (f(up) - f(x)) / eps
        else:  # "over eps": a central difference divided by eps, not 2 eps
            g[i] = (f(up) - f(down)) / eps
    return g


def _abs_errors(a, b) -> list[float]:
    return [float(np.max(np.abs(a - b))), float(np.linalg.norm(a - b))]


@plain_numpy()
def gradient_check(fn) -> bool:
    """Check ``fn(f, x, analytic, eps) -> float``: the relative error between ``analytic`` and central differences."""
    if not_done(fn):
        return not_attempted("no answer yet: write my_gradient_check(f, x, analytic, eps) and pass it in")
    for case, f, x, analytic, band in _cases():
        x_in = x.copy()
        x_in.setflags(write=False)  # perturbing x itself (in place) fails here, restored or not
        got, err = try_call(fn, f, x_in, analytic.copy(), _EPS)
        if got is Ellipsis:
            return not_attempted(STUB)
        if err and "read-only" in err:
            return report(False, f"{case}: your function perturbs x itself (in place); the checker passes x "
                                 "read-only to show it. The task says to perturb a copy: changing the caller's x, "
                                 "even if you put it back, leaves it changed after an exception or an early return")
        if err:
            return report(False, f"{case}: {err}")
        v = as_floats(got)
        if v is None or v.size != 1 or not np.isfinite(v):
            return report(False, f"{case}: return one finite number, the relative error, got {shape_text(got)}")
        v = float(v.reshape(()))
        if v < 0:
            return report(False, f"{case}: a relative error is |a - n| / (|a| + |n|), never negative; got {v:.3g}")
        num = {k: _numeric(f, x, _EPS, k) for k in ("central", "one-sided", "over eps")}
        if band == "small" and v <= 1e-6:
            continue
        if band == "large" and 0.1 <= v <= 1.0:
            continue
        if any(np.isclose(v, e, rtol=0.05) for e in _abs_errors(analytic, num["central"])):
            return report(False, f"{case}: you returned an absolute error ({v:.3g}). It hides the scale: a "
                                 "gradient of size 1e-9 that is wrong by 100% differs by only 1e-9, and one of size "
                                 "1e6 that is right differs by more than that. Divide by |a| + |n|")
        if np.isclose(v, relative_error(analytic, num["one-sided"]), rtol=0.2):
            return report(False, f"{case}: this is the error of a one-sided difference (f(x + eps) - f(x)) / eps, "
                                 f"{v:.1e}: its own error is of order eps. Use the central difference "
                                 "(f(x + eps) - f(x - eps)) / (2 eps), whose error is of order eps^2")
        if np.isclose(v, relative_error(analytic, num["over eps"]), rtol=0.05):
            return report(False, f"{case}: your numerical gradient is twice too large: the two points "
                                 "x + eps and x - eps are 2 eps apart, so divide by 2 * eps")
        if band == "small":
            return report(False, f"{case}: a correct gradient should give a relative error below 1e-6, got {v:.2e}; "
                                 "use the central difference and divide |a - n| by |a| + |n|")
        return report(False, f"{case}: a gradient that is twice too large has a relative error of 1/3, got {v:.2e}; "
                             "compare |a - n| with |a| + |n|")
    return report(True, "your gradient check is right: central differences, and an error relative to the "
                        "size of the gradients, so 1e-9 and 1e6 are judged alike")


# ---------------------------------------------------------------- predict the learned pattern

# The hint make grade gives for a wrong pattern: the idea, not the keys.
_GRADED_ROTATE = ("Attention goes where the answer is stored: for each query, ask which word the task "
                  "wants as its output, and which key's value holds that word")


@prediction
def rotate_pattern(answer) -> bool:
    """Check ``answer``: for each query i = 0..5 of the ``rotate`` task, the key it attends to most."""
    if not_done(answer):
        return not_attempted("no answer yet: replace the `...` after `answer =` with a list of 6 key indices, "
                             "then run the cell again")
    items = None
    if not isinstance(answer, (str, bytes, dict)):
        try:
            items = list(answer)
        except Exception:  # not iterable: never raise
            items = None
    if items is None or len(items) != N_TOKENS:
        return report(False, f"give a list of {N_TOKENS} key indices, one per query 0..{N_TOKENS - 1}, "
                             f"such as [0, 1, 2, 3, 4, 5]; got {answer!r}")
    if any(isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) for k in items):
        return report(False, "give whole numbers (ints), the index of a key for each query")
    got = [int(k) for k in items]
    want = [(i + 1) % N_TOKENS for i in range(N_TOKENS)]  # query i needs the word at i + 1 (the last: at 0)
    if got == want:
        return report(True, "query i attends to key i + 1, and the last query wraps round to key 0: "
                            "attention goes where the answer is stored")
    if got == [(i - 1) % N_TOKENS for i in range(N_TOKENS)]:
        return report(False, "that is, for each key, the query that reads it (or a shift the wrong way): "
                             "query i outputs the word at i + 1, so query i looks at key i + 1",
                      graded="that is a shift the wrong way round: list, for each query, the key it "
                             "reads, not for each key the query that reads it. " + _GRADED_ROTATE)
    if got == list(range(N_TOKENS)):
        return report(False, "the diagonal would copy each word in place; query i must output the word at "
                             "position i + 1, so it has to look there",
                      graded="the diagonal would copy each word in place, which is not the rotate task. "
                             + _GRADED_ROTATE)
    if got == list(range(N_TOKENS))[::-1]:
        return report(False, "that is the reverse task's pattern; in rotate, query i outputs the word at i + 1",
                      graded="that is the reverse task's pattern. " + _GRADED_ROTATE)
    if got[:-1] == want[:-1]:
        return report(False, f"almost: the last query ({N_TOKENS - 1}) outputs the word at position "
                             f"({N_TOKENS - 1} + 1) mod {N_TOKENS} = 0",
                      graded="almost: look again at the last query, and at what the rotate task asks it "
                             "to output when there is no position after it")
    return report(False, "query i outputs the word at position i + 1 (the last one wraps to 0): where must it look?",
                  graded=_GRADED_ROTATE)


# ---------------------------------------------------------------- dQ and dK of the general score

def _general_cases():
    """(name, Q (n_q, d_q), K (n_k, d_k), W (d_q, d_k), dS (n_q, n_k)); the square case lets wrong
    transposes run, so their numbers are checked; the other has four different sizes."""
    rng = np.random.default_rng(27)
    out = []
    for n_q, n_k, d_q, d_k in ((3, 3, 3, 3), (2, 5, 3, 4)):
        out.append((f"n_q={n_q}, n_k={n_k}, d_q={d_q}, d_k={d_k}", rng.normal(size=(n_q, d_q)),
                    rng.normal(size=(n_k, d_k)), rng.normal(size=(d_q, d_k)), rng.normal(size=(n_q, n_k))))
    return out


def _measured_grads(Q, K, W, dS) -> tuple[np.ndarray, np.ndarray]:
    """The gradients of L = sum(dS * (Q W K^T)) by Q and by K, measured: L is linear in each of
    them, so a central difference with a step of 1 is exact up to rounding (about 1e-15 here).
    The student edition ships this file; the formula is the exercise, so it is not written here."""
    def loss(Qx, Kx):
        return float(np.sum(dS * (Qx @ W @ Kx.T)))

    grads = []
    for which, X in ((0, Q), (1, K)):
        g = np.zeros_like(X, dtype=float)
        for idx in np.ndindex(X.shape):
            up, down = X.astype(float), X.astype(float)
            up[idx] += 1.0
            down[idx] -= 1.0
            args_up = (up, K) if which == 0 else (Q, up)
            args_down = (down, K) if which == 0 else (Q, down)
            g[idx] = (loss(*args_up) - loss(*args_down)) / 2.0
        grads.append(g)
    return grads[0], grads[1]


def _dq_hint(dQ, Q, K, W, dS) -> str:
    d_k = K.shape[1]
    right = _measured_grads(Q, K, W, dS)[0]
    wrong = [(right / np.sqrt(d_k), "dQ is divided by sqrt(d_k), but the general score q W k^T has no scaling: "
                                    "nothing divides it"),
             (-right, "dQ has the wrong sign")]
    if W.shape[0] == W.shape[1]:
        wrong += [(dS @ K @ W, "dQ uses W where its transpose belongs: a key k lives in the keys' space, "
                               "and it is W that maps a query into that space; going back, from keys to "
                               "queries, takes the transpose"),
                  (dS @ K, "dQ leaves W out: the score of q is q (W k^T), so q meets each key only "
                           "after W has acted on it")]
    for w, hint in wrong:
        if close(dQ, w):
            return hint
    if shape_of(dQ) != Q.shape:
        return (f"dQ must have the shape of Q, (n_q, d_q) = {Q.shape}, got {shape_text(dQ)}; write the shape of "
                "each factor under it: dS is (n_q, n_k), K is (n_k, d_k), W is (d_q, d_k)")
    return ("dQ has the right shape but the wrong numbers; take one entry, S[i, j] = sum_a,b Q[i, a] W[a, b] K[j, b], "
            "differentiate it by Q[i, a] and sum over j with the weights dS[i, j]")


def _dk_hint(dK, Q, K, W, dS) -> str:
    d_k = K.shape[1]
    right = _measured_grads(Q, K, W, dS)[1]
    wrong = [(right / np.sqrt(d_k), "dK is divided by sqrt(d_k), but the general score q W k^T has no scaling"),
             (-right, "dK has the wrong sign")]
    if dS.shape[0] == dS.shape[1]:
        wrong.append((dS @ Q @ W, "dK sums over the wrong index of dS: key j collects the gradients of column j "
                                  "(every query that scored it), not of row j"))
    if W.shape[0] == W.shape[1]:
        wrong += [(dS.T @ Q @ W.T, "dK uses the transpose of W where W itself belongs: Q W is (n_q, d_k), the "
                                   "queries carried into the keys' space"),
                  (dS.T @ Q, "dK leaves W out: key k meets q W, not q")]
    for w, hint in wrong:
        if close(dK, w):
            return hint
    if shape_of(dK) != K.shape:
        return (f"dK must have the shape of K, (n_k, d_k) = {K.shape}, got {shape_text(dK)}; which index of dS "
                "belongs to the keys?")
    return ("dK has the right shape but the wrong numbers; differentiate S[i, j] = sum_a,b Q[i, a] W[a, b] K[j, b] "
            "by K[j, b] and sum over the queries i with the weights dS[i, j]")


@plain_numpy()
def general_score_grads(fn) -> bool:
    """Check ``fn(Q (n_q, d_q), K (n_k, d_k), W (d_q, d_k), dS (n_q, n_k)) -> (dQ, dK)`` for ``S = Q W K^T``."""
    if not_done(fn):
        return not_attempted("no answer yet: write my_general_score_grads(Q, K, W, dS) and pass it in")
    for case, Q, K, W, dS in _general_cases():
        got, err = try_call(fn, Q.copy(), K.copy(), W.copy(), dS.copy())
        if got is Ellipsis or (isinstance(got, tuple) and any(x is Ellipsis for x in got)):
            return not_attempted(STUB)
        if err:
            if "matmul" in err or "align" in err or "shape" in err:
                err += (". Write each factor's shape under it; a product (a, b) @ (b, c) needs the inner "
                        "sizes to agree, and the result must have the shape of Q (for dQ) or K (for dK)")
            return report(False, f"{case}: {err}")
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            return report(False, f"return two arrays, (dQ, dK); got {type(got).__name__}")
        dQ, dK = got
        want_dQ, want_dK = _measured_grads(Q, K, W, dS)
        if Q.shape == K.shape and close(dQ, want_dK) and close(dK, want_dQ):
            return report(False, "dQ and dK are swapped: return (dQ, dK) in that order")
        if not close(dQ, want_dQ):
            return report(False, f"{case}: " + _dq_hint(dQ, Q, K, W, dS))
        if not close(dK, want_dK):
            return report(False, f"{case}: " + _dk_hint(dK, Q, K, W, dS))
    return report(True, "dQ and dK are right: they match the gradients measured by finite differences "
                        "for both shapes, and the scaled dot product is the case W = I / sqrt(d_k)")


# ---------------------------------------------------------------- why the key bias learns nothing

BIAS_CHOICES = {
    "a": "b_k starts at zero, and a zero bias gets no gradient",
    "b": "q_i . b_k is the same number for every key of row i, and the softmax ignores a number added to a "
         "whole row",
    "c": "the scores are divided by sqrt(d_k), which cancels the bias",
    "d": "b_k is added after the softmax, where it cannot change the weights",
}


def _bias_cases():
    """(name, Q (n, d_k) with its bias, K (n, d_k) with its bias, dS (n, n), d_k)."""
    rng = np.random.default_rng(28)
    n, d_k = 4, 3
    Q, K = rng.normal(size=(n, d_k)), rng.normal(size=(n, d_k))
    a = np.exp(Q @ K.T / np.sqrt(d_k))
    a /= a.sum(axis=1, keepdims=True)
    from_softmax = _softmax_backward(a, rng.normal(size=(n, n)))  # rows sum to 0
    return [("dS from a softmax backward", Q, K, from_softmax, d_k),
            ("any dS (rows that do not sum to 0)", Q, K, rng.normal(size=(n, n)), d_k)]


@plain_numpy()
def key_bias(fn, why) -> bool:
    """Check ``fn(Q, K, dS) -> (db_q, db_k)`` for ``S = (X W_q + b_q)(X W_k + b_k)^T / sqrt(d_k)``, where
    ``Q`` and ``K`` already hold their biases, and ``why``: the letter of the reason db_k is 0."""
    if not_done(fn):
        return not_attempted("no answer yet: write my_bias_grads(Q, K, dS) and pass it in")
    for case, Q, K, dS, d_k in _bias_cases():
        got, err = try_call(fn, Q.copy(), K.copy(), dS.copy())
        if got is Ellipsis or (isinstance(got, tuple) and any(x is Ellipsis for x in got)):
            return not_attempted(STUB)
        if err:
            return report(False, f"{case}: {err}")
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            return report(False, f"return two arrays, (db_q, db_k); got {type(got).__name__}")
        db_q, db_k = got
        dQ, dK = dS @ K / np.sqrt(d_k), dS.T @ Q / np.sqrt(d_k)
        want_q, want_k = dQ.sum(axis=0), dK.sum(axis=0)
        for name, got_b, want, full in (("db_q", db_q, want_q, dQ), ("db_k", db_k, want_k, dK)):
            if close(got_b, want):
                continue
            if close(got_b, full):
                return report(False, f"{case}: {name} has one row per token, {shape_text(got_b)}; the bias is "
                                     "one vector added to every row, so it collects the rows' gradients: shape (d_k,)")
            if close(got_b, full.mean(axis=0)):
                return report(False, f"{case}: {name} is the average of the rows' gradients; the bias is added to "
                                     "every row, and each of those rows passes its whole gradient back to it, so "
                                     "the contributions add up, they are not averaged")
            if close(got_b, full.sum(axis=1)):
                return report(False, f"{case}: {name} sums over the wrong axis: the bias is added to every row "
                                     "(every token), so add up the rows, one number per feature")
            if close(got_b, want * np.sqrt(d_k)):
                return report(False, f"{case}: {name} misses the 1/sqrt(d_k) of the scores")
            if name == "db_k" and close(got_b, np.zeros_like(want)):
                return report(False, f"{case}: db_k is 0 here, but this dS does not come from a softmax (its "
                                     "rows do not sum to 0), and then the key bias does get a gradient. "
                                     "Compute it from dK; do not write down the 0 you expect")
            if shape_of(got_b) != want.shape:
                return report(False, f"{case}: {name} must have the shape of the bias, (d_k,) = {want.shape}, "
                                     f"got {shape_text(got_b)}")
            return report(False, f"{case}: {name} has the right shape but the wrong numbers: first write the "
                                 "gradient of Q (or K) with respect to the scores, then ask what a vector added "
                                 "to every row receives")
    if not_done(why):
        return not_attempted("the function is right; now replace the `...` after `why =` with the letter of "
                             "the reason")
    letter = str(why).strip().lower().strip("()")
    if letter not in BIAS_CHOICES:
        return report(False, f"give one of the letters {', '.join(BIAS_CHOICES)}; got {why!r}")
    if letter == "a":
        return report(False, "the checker's Q and K had biases that were not zero, and db_k was still 0 for a dS "
                             "from a softmax: the starting value is not the reason. What does q_i . b_k depend on?")
    if letter == "c":
        return report(False, "dividing by sqrt(d_k) scales the bias's term, it does not remove it; your db_q "
                             "has the same division and is not 0. Look at which keys q_i . b_k depends on")
    if letter == "d":
        return report(False, "b_k is added to the keys, so it reaches the scores, before the softmax; what is "
                             "special about the term q_i . b_k that it adds to score (i, j)?")
    return report(True, "db_k = Q^T (dS 1) / sqrt(d_k), and every row of a softmax's dS sums to 0: the term "
                        "q_i . b_k shifts a whole row of scores, which changes no weight")
