"""Exercise checkers for notebook 05 (how attention learns).

Every checker prints one line, ``✓ ...`` or ``✗ ...`` with a hint aimed at the usual mistake, and
returns True or False. The learner's exceptions are reported, never raised. What they compare with
(the public cases, their answers and the outputs of the usual mistakes) is data, recorded once
(``attention_kit.check.recorded``).

* ``general_score_grads(fn)``: ``fn(Q, K, W, dS) -> (dQ, dK)`` for the general score ``S = Q W K^T``;
  catches W where its transpose belongs (and the reverse), W left out, a scaling that the general score
  does not have, the wrong index of dS, the sign and the two swapped. Its hints diagnose; none
  prints the answer.
* ``key_bias(fn, why)``: ``fn(Q, K, dS) -> (db_q, db_k)`` for the scaled dot product with biased
  ``Q`` and ``K``, and ``why``, the letter of the reason db_k is 0 when dS comes from a softmax; catches
  a db_k written down as 0 (the checker also passes a dS whose rows do not sum to 0), one row per token
  instead of one vector, an average, the wrong axis, the missing scaling or a fixed one (two widths
  d_k), and each wrong reason.
* ``gradient_check(fn)``: ``fn(f, x, analytic, eps) -> relative error``; catches an absolute error
  (which hides the scale of the gradient), an error measured against one gradient alone (it treats
  the two unlike and can exceed 1), a one-sided difference, a division by eps where the two points are
  2 eps apart, and x perturbed in place.
* ``rotate_pattern(answer)``: which key each query of the ``rotate`` task attends to after training.
* ``quietly()``: a context manager (from ``attention_kit.check``) that silences the checkers.
"""

from __future__ import annotations

import numpy as np

from ..i18n import N_, _
from . import (
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
from .general import array_answer
from .grad_check import gradient_check  # noqa: F401 (notebook 05 calls check.gradient_check)
from .plain import plain_numpy
from .recorded import recorded, reference

__all__ = ["general_score_grads", "key_bias", "gradient_check",
           "rotate_pattern", "quietly"]

STUB = N_("no answer yet: replace the `...` after `return` with your code, then run the cell again")


# ---------------------------------------------------------------- predict the learned pattern

# The hint the grader gives for a wrong pattern: the idea, not the keys.
_GRADED_ROTATE = N_("Attention goes where the answer is stored: for each query, ask which word the task "
                    "wants as its output, and which key's value holds that word")


@recorded(answers=True)  # a prediction's answers: sealed, withheld by PREDICTIONS=record
def _rotate_table() -> dict:
    """The pattern the head learns on *rotate*, the usual wrong ones, and the texts that name keys."""
    from ..learn.toy_tasks import N_TOKENS

    n = N_TOKENS
    want = [(i + 1) % n for i in range(n)]  # query i needs the word at i + 1 (the last: at 0)
    return {"n": n, "want": want, "backwards": [(i - 1) % n for i in range(n)],
            "diagonal": list(range(n)), "reverse": list(range(n))[::-1],
            "ok": N_("query i attends to key i + 1, and the last query wraps round to key 0: attention goes "
                     "where the answer is stored")}


@prediction
def rotate_pattern(answer) -> bool:
    """Check ``answer``: for each query of the ``rotate`` task, the key it attends to most."""
    t = _rotate_table().open()
    n, want = t["n"], t["want"]
    if not_done(answer):
        return not_attempted(_("no answer yet: replace the `...` after `answer =` with a list of {n} key indices, "
                               "then run the cell again").format(n=n))
    if isinstance(answer, (set, frozenset)):
        return report(False, _("a set has no order, and here the order is the answer: give a list of {n} key "
                               "indices, the first for query 0, the next for query 1, and so on").format(n=n))
    items = None
    if not isinstance(answer, (str, bytes, dict)):
        try:
            items = list(answer)
        except Exception:  # not iterable: never raise
            items = None
    if items is None or len(items) != n:
        return report(False, _("give a list of {n} key indices, one per query 0..{last}, such as {example}; got {answer}")
                      .format(n=n, last=n - 1, example=list(range(n)), answer=repr(answer)))
    if any(isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) for k in items):
        return report(False, _("give whole numbers (ints), the index of a key for each query"))
    got = [int(k) for k in items]
    if got == want:
        return report(True, _(t["ok"]))
    idea = _(_GRADED_ROTATE)
    if got == t["backwards"]:
        return report(False, _("that is, for each key, the query that reads it (or a shift the wrong way): "
                               "list, for each query, the key whose word that query must output"),
                      graded=_("that is a shift the wrong way round: list, for each query, the key it "
                               "reads, not for each key the query that reads it. {idea}").format(idea=idea))
    if got == t["diagonal"]:
        return report(False, _("the diagonal would copy each word in place; which position holds the word "
                               "that query i must output?"),
                      graded=_("the diagonal would copy each word in place, which is not the rotate task. "
                               "{idea}").format(idea=idea))
    if got == t["reverse"]:
        return report(False, _("that is the reverse task's pattern; reread what rotate asks each position "
                               "to output"),
                      graded=_("that is the reverse task's pattern. {idea}").format(idea=idea))
    if got[:-1] == want[:-1]:
        return report(False, _("almost: the last query ({last}) has no position after it; what does the "
                               "rotate task ask it to output?").format(last=n - 1),
                      graded=_("almost: look again at the last query, and at what the rotate task asks it "
                               "to output when there is no position after it"))
    if any(not 0 <= k < n for k in got):
        outside = sorted({k for k in got if not 0 <= k < n})
        return report(False, _("{outside}: no such key. The {n} keys are numbered from 0 to {last}, as Python "
                               "counts, like the queries").format(outside=", ".join(map(str, outside)), n=n, last=n - 1))
    return report(False, _("for each query, which word does the task want as its output, and which key holds "
                           "it? (read the task again for the last query)"), graded=idea)


# ---------------------------------------------------------------- dQ and dK of the general score


def _pair(got, names: tuple[str, str]) -> str | None:
    """The course's rule for a pair of arrays: two numpy arrays, in a tuple or a list (either is fine
    as the pair); an element that is a list or a tuple gets the array hint. None when it holds."""
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        if isinstance(got, (tuple, list)):
            return _("return the two arrays as a pair, ({a}, {b}): a tuple or a list of two numpy arrays; "
                     "got a {kind} of {n}").format(a=names[0], b=names[1], kind=type(got).__name__, n=len(got))
        return _("return the two arrays as a pair, ({a}, {b}): a tuple or a list of two numpy arrays; "
                 "got {got}").format(a=names[0], b=names[1], got=shape_text(got))
    for name, x in zip(names, got, strict=True):
        if (msg := array_answer(x, name)):
            return msg
    return None


@reference
def _measured_grads(Q, K, W, dS) -> tuple[np.ndarray, np.ndarray]:
    """The gradients of L = sum(dS * (Q W K^T)) by Q and by K, measured: L is linear in each of
    them, so a central difference with a step of 1 is exact up to rounding (about 1e-15 here)."""
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


@recorded
def _general_table() -> list[dict]:
    """Per case (the square one lets wrong transposes run, so their numbers are checked; the other
    has four different sizes): Q (n_q, d_q), K (n_k, d_k), W (d_q, d_k), dS (n_q, n_k), the right dQ
    and dK, and the usual wrong ones, each with the key of its hint."""
    rng = np.random.default_rng(27)
    out = []
    for n_q, n_k, d_q, d_k in ((3, 3, 3, 3), (2, 5, 3, 4)):
        Q, K, W, dS = (rng.normal(size=(n_q, d_q)), rng.normal(size=(n_k, d_k)),
                       rng.normal(size=(d_q, d_k)), rng.normal(size=(n_q, n_k)))
        dQ, dK = _measured_grads(Q, K, W, dS)
        wrong_q = [(dQ / np.sqrt(d_k), "q scaled"), (-dQ, "q sign")]
        wrong_k = [(dK / np.sqrt(d_k), "k scaled"), (-dK, "k sign")]
        if d_q == d_k:
            wrong_q += [(dS @ K @ W, "q W"), (dS @ K, "q no W")]
            wrong_k += [(dS.T @ Q @ W.T, "k W.T"), (dS.T @ Q, "k no W")]
        if n_q == n_k:
            wrong_k.append((dS @ Q @ W, "k row"))
        out.append({"case": f"n_q={n_q}, n_k={n_k}, d_q={d_q}, d_k={d_k}", "Q": Q, "K": K, "W": W, "dS": dS,
                    "dQ": dQ, "dK": dK, "wrong_dQ": wrong_q, "wrong_dK": wrong_k})
    return out


_GENERAL_HINTS = {
    "q scaled": N_("dQ is scaled by a square root, but the general score q W k^T has no scaling: nothing divides it"),
    "q sign": N_("dQ has the wrong sign"),
    "q W": N_("dQ takes W the wrong way round: the chain rule carries a gradient back through a product by the "
              "transpose of the matrix that multiplied on the way forward. In q W k^T, ask what multiplies q from "
              "the right, and which way round it must act going back, from the keys' space to the queries'"),
    "q no W": N_("dQ leaves W out: the score of q is q (W k^T), so q meets each key only after W has acted on it"),
    "k scaled": N_("dK is scaled by a square root, but the general score q W k^T has no scaling"),
    "k sign": N_("dK has the wrong sign"),
    "k row": N_("dK sums over the wrong index of dS: key j collects the gradients of column j (every query that "
                "scored it), not of row j"),
    "k W.T": N_("dK takes W the wrong way round: read score (i, j) as a dot product of k_j with a vector made "
                "from q_i and W, and ask which side of W the query stands on in that vector; the chain rule hands "
                "key j that vector as it is, weighted by dS"),
    "k no W": N_("dK leaves W out: key k meets q W, not q"),
}


def _grad_hint(name: str, got, want, wrong, like: np.ndarray) -> str:
    for w, key in wrong:
        if close(got, w):
            return _(_GENERAL_HINTS[key])
    letter = name[1]
    if shape_of(got) != like.shape:
        if letter == "Q":
            return _("dQ must have the shape of Q, (n_q, d_q) = {want}, got {got}; write the shape of each factor "
                     "under it: dS is (n_q, n_k), K is (n_k, d_k), W is (d_q, d_k)").format(want=like.shape, got=shape_text(got))
        return _("dK must have the shape of K, (n_k, d_k) = {want}, got {got}; which index of "
                 "dS belongs to the keys?").format(want=like.shape, got=shape_text(got))
    if letter == "Q":
        return _("dQ has the right shape but the wrong numbers; write one entry of S as a sum over the features "
                 "(the statement does), keep the terms that contain Q[i, a], and add up what every score that "
                 "Q[i, a] enters passes back to it")
    return _("dK has the right shape but the wrong numbers; in the same sum for S[i, j], find the terms that "
             "contain K[j, b], and add up what every query that scored key j passes back to it")


@plain_numpy()
def general_score_grads(fn) -> bool:
    """Check ``fn(Q (n_q, d_q), K (n_k, d_k), W (d_q, d_k), dS (n_q, n_k)) -> (dQ, dK)`` for ``S = Q W K^T``."""
    if not_done(fn):
        return not_attempted(_("no answer yet: write my_general_score_grads(Q, K, W, dS) and pass it in"))
    for c in _general_table():
        case, Q, K, W, dS = c["case"], c["Q"], c["K"], c["W"], c["dS"]
        got, err = try_call(fn, Q.copy(), K.copy(), W.copy(), dS.copy())
        if got is Ellipsis or (isinstance(got, tuple) and any(x is Ellipsis for x in got)):
            return not_attempted(_(STUB))
        if err:
            if "matmul" in err or "align" in err or "shape" in err:
                err += _(". Write each factor's shape under it; a product (a, b) @ (b, c) needs the inner "
                         "sizes to agree, and the result must have the shape of Q (for dQ) or K (for dK)")
            return report(False, _("{case}: {hint}").format(case=case, hint=err))
        if (msg := _pair(got, ("dQ", "dK"))):
            return report(False, msg)
        dQ, dK = got
        if Q.shape == K.shape and close(dQ, c["dK"]) and close(dK, c["dQ"]):
            return report(False, _("dQ and dK are swapped: return (dQ, dK) in that order"))
        if not close(dQ, c["dQ"]):
            return report(False, _("{case}: {hint}").format(case=case, hint=_grad_hint("dQ", dQ, c["dQ"], c["wrong_dQ"], Q)))
        if not close(dK, c["dK"]):
            return report(False, _("{case}: {hint}").format(case=case, hint=_grad_hint("dK", dK, c["dK"], c["wrong_dK"], K)))
    return report(True, _("dQ and dK are right: they match the gradients measured by finite differences "
                          "for both shapes, and the scaled dot product is the case W = I / sqrt(d_k)"))


# ---------------------------------------------------------------- why the key bias learns nothing

BIAS_CHOICES = ("a", "b", "c", "d")  # the reasons, as the notebook lists them


@recorded(sealed=True)  # holds the one right letter: sealed
def _bias_table() -> dict:
    """The cases (a dS from a softmax's backward, rows summing to 0, and any dS, at two widths d_k),
    the right (db_q, db_k), what the usual mistakes return, and the right reason with the hints."""
    from ..learn.backward import softmax_backward

    rng = np.random.default_rng(28)
    cases = []
    for case, n, d_k, from_softmax in ((N_("dS from a softmax backward"), 4, 3, True),
                                       (N_("any dS (rows that do not sum to 0)"), 5, 2, False)):
        Q, K = rng.normal(size=(n, d_k)), rng.normal(size=(n, d_k))
        dS = rng.normal(size=(n, n))
        if from_softmax:
            a = np.exp(Q @ K.T / np.sqrt(d_k))
            dS = softmax_backward(a / a.sum(axis=1, keepdims=True), dS)
        full = {"db_q": dS @ K / np.sqrt(d_k), "db_k": dS.T @ Q / np.sqrt(d_k)}
        parts = {}
        for name, g in full.items():
            want = g.sum(axis=0)
            parts[name] = {"want": want, "rows": g, "mean": g.mean(axis=0), "other axis": g.sum(axis=1),
                           "unscaled": want * np.sqrt(d_k),
                           "fixed": [want * np.sqrt(d_k) / np.sqrt(m) for m in range(1, 9) if m != d_k]}
        cases.append({"case": case, "Q": Q, "K": K, "dS": dS, "parts": parts})
    why = {"right": "b",
           "ok": N_("db_k adds up, over the keys, terms weighted by the row sums of dS, and every row of a "
                    "softmax's dS sums to 0: the term q_i . b_k shifts a whole row of scores, which changes no weight"),
           "a": N_("the checker's Q and K had biases that were not zero, and db_k was still 0 for a dS from a "
                   "softmax: the starting value is not the reason. What does q_i . b_k depend on?"),
           "c": N_("dividing by sqrt(d_k) scales the bias's term, it does not remove it; your db_q has the same "
                   "division and is not 0. Look at which keys q_i . b_k depends on"),
           "d": N_("b_k is added to the keys, so it reaches the scores, before the softmax; what is special about "
                   "the term q_i . b_k that it adds to score (i, j)?")}
    return {"cases": cases, "why": why}


def _bias_hint(case: str, name: str, got, p: dict) -> str | None:
    """None when ``got`` is right, else the hint."""
    want = p["want"]
    if close(got, want):
        return None
    if close(got, p["rows"]):
        return _("{case}: {name} has one row per token, {shape}; the bias is one vector added to "
                 "every row, so it gets a single gradient of the bias's shape").format(case=case, name=name, shape=shape_text(got))
    if close(got, p["mean"]):
        return _("{case}: {name} is the average of the rows' gradients; the bias is added to every row, and "
                 "each of those rows passes its whole gradient back to it, so the contributions add up, they "
                 "are not averaged").format(case=case, name=name)
    if close(got, p["other axis"]):
        return _("{case}: {name} runs over the wrong axis: the bias is added to every row (every token), so "
                 "its gradient gathers the tokens, one number per feature").format(case=case, name=name)
    if close(got, p["unscaled"]):
        return _("{case}: {name} misses the 1/sqrt(d_k) of the scores").format(case=case, name=name)
    if any(close(got, w) for w in p["fixed"]):
        return _("{case}: {name} is scaled by a fixed number: d_k is the width of the keys, which differs from "
                 "case to case, so read it from the arrays you are given").format(case=case, name=name)
    if name == "db_k" and close(got, np.zeros_like(want)):
        return _("{case}: db_k is 0 here, but this dS does not come from a softmax (its rows do not sum to 0), and "
                 "then the key bias does get a gradient. Compute it from dK; do not write down the 0 you expect").format(case=case)
    if shape_of(got) != want.shape:
        return _("{case}: {name} must have the shape of the bias, (d_k,) = {want}, got {got}").format(
            case=case, name=name, want=want.shape, got=shape_text(got))
    return _("{case}: {name} has the right shape but the wrong numbers: first write the gradient of Q (or K) "
             "with respect to the scores, then ask what a vector added to every row receives").format(case=case, name=name)


@plain_numpy()
def key_bias(fn, why) -> bool:
    """Check ``fn(Q, K, dS) -> (db_q, db_k)`` for the scaled dot-product scores of ``Q`` and ``K``,
    which already hold their biases, and ``why``: the letter of the reason db_k is 0."""
    if not_done(fn):
        return not_attempted(_("no answer yet: write my_bias_grads(Q, K, dS) and pass it in"))
    t = _bias_table().open()
    for c in t["cases"]:
        case = _(c["case"])
        got, err = try_call(fn, c["Q"].copy(), c["K"].copy(), c["dS"].copy())
        if got is Ellipsis or (isinstance(got, tuple) and any(x is Ellipsis for x in got)):
            return not_attempted(_(STUB))
        if err:
            return report(False, _("{case}: {hint}").format(case=case, hint=err))
        if (msg := _pair(got, ("db_q", "db_k"))):
            return report(False, msg)
        for name, got_b in zip(("db_q", "db_k"), got, strict=True):
            if (hint := _bias_hint(case, name, got_b, c["parts"][name])) is not None:
                return report(False, hint)
    if not_done(why):
        return not_attempted(_("the function is right; now replace the `...` after `why =` with the letter of "
                               "the reason"))
    letter = str(why).strip().lower().strip("()")
    if letter not in BIAS_CHOICES:
        return report(False, _("give one of the letters {letters}; got {why}").format(
            letters=", ".join(BIAS_CHOICES), why=repr(why)))
    if letter != t["why"]["right"]:
        return report(False, _(t["why"][letter]))
    return report(True, _(t["why"]["ok"]))
