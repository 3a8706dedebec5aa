"""Exercise checkers for notebook 01, the general attention model.

Each checker prints one line, ``✓ ...`` for a right answer or ``✗ ...`` with a hint aimed at the
usual mistake, and returns True or False. The learner's exceptions are reported, never raised.

* ``softmax_by_hand(weights)``: the softmax of ``SOFTMAX_SCORES`` worked out by hand.
* ``dot_scores(fn)``: ``fn(q, K)`` returns the dot score of one query against every key, shape
  ``(n_k,)``.
* ``predict_winners(dot_winner, cosine_winner)``: which key of ``WINNER_K`` wins for the query
  ``WINNER_Q`` under the dot score and under the cosine score.
* ``context_vector(fn)``: ``fn(a, V)`` returns the context vector for one query's weights
  ``(n_k,)`` or several queries' ``(n_q, n_k)``.
* ``output_model(fn)``: ``fn(C, W_c, b_c)`` applies the survey's output model to a stack of
  contexts ``C``, one per row, ``(n, d_v)``: the result is ``(n, d_y)``, one row of
  probabilities per context.
* ``array_answer(out)``: the hint for a function that returns a list or a tuple where the task
  asks for a numpy array (the other notebooks' checkers use it too).
* ``is_text(x)``: whether an answer that should be numbers is text (``"0.5"`` or ``["0.5"]``, which
  numpy would read as numbers); the other notebooks' checkers use it too.
* ``first_match(out, mistakes)``: the hint of the first recorded mistake that ``out`` equals.
* ``is_text(x)``: True for text given where numbers are asked (the checkers refuse it with a hint).
* ``quietly()``: a context manager (from ``attention_kit.check``) that silences the checkers.

The checkers compare with recorded cases: their inputs, right answers and the outputs of the
usual mistakes (``attention_kit.check.recorded``).
"""

from __future__ import annotations

import numpy as np

from ..i18n import _
from . import close, not_attempted, not_done, prediction, quietly, report, try_call
from .general_cases import (
    SOFTMAX_SCORES,
    WINNER_K,
    WINNER_LABELS,
    WINNER_Q,
    context_table,
    dot_table,
    output_table,
    softmax_table,
    winner_table,
)
from .plain import plain_numpy

__all__ = [
    "quietly",
    "SOFTMAX_SCORES",
    "WINNER_Q",
    "WINNER_K",
    "WINNER_LABELS",
    "softmax_by_hand",
    "dot_scores",
    "predict_winners",
    "context_vector",
    "output_model",
    "array_answer",
    "is_text",
    "first_match",
    "is_text",
]

def array_answer(out, name: str | None = None) -> str | None:
    """The hint when a function returns a list or a tuple where the task asks for a numpy array, else None.

    One rule for every notebook: where an exercise asks for an array, a list or a tuple is not
    accepted (``np.asarray`` would hide a tuple ``(out, weights)`` returned by mistake). Where it
    asks for two arrays, the pair itself may be a tuple or a list, and ``name`` names the element
    that is not an array.
    """
    if isinstance(out, np.ndarray):
        return None
    if isinstance(out, (list, tuple)):
        if name is not None:
            return _("{name} is a {kind}; the task asks for numpy arrays (the pair itself may be a tuple or "
                     "a list): compute with numpy arrays all the way").format(name=name, kind=type(out).__name__)
        return _("your function returned a {kind}; the task asks for a numpy array: compute with numpy arrays "
                 "all the way (a tuple often means two results returned where one was asked)").format(kind=type(out).__name__)
    return None


def _as_vector(x) -> np.ndarray | None:
    """``x`` as an array of floats, or None. Complex numbers count as real ones when their
    imaginary parts are all 0 (without numpy's ComplexWarning), else None."""
    try:
        arr = np.asarray(x)
        if np.iscomplexobj(arr):
            if np.any(arr.imag != 0):
                return None
            arr = arr.real
        return np.asarray(arr, dtype=float)
    except (TypeError, ValueError):
        return None


def _is_complex(x) -> bool:
    """True for complex numbers, or a list or array holding one (never raises)."""
    try:
        return bool(np.iscomplexobj(np.asarray(x)))
    except Exception:  # the learner's object: never raise
        return False


def is_text(x) -> bool:
    """True when ``x`` is a string, or an array or a list or tuple holding one (numpy would read
    ``"0.665"`` as a number, so without this a list of strings would pass). Every checker that asks
    for numbers refuses text with it (01's softmax by hand, 09's ALiBi ratio)."""
    if isinstance(x, (str, bytes)):
        return True
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "SU" or (x.dtype == object and any(is_text(v) for v in x.ravel()))
    return isinstance(x, (list, tuple)) and any(is_text(v) for v in x)


def softmax_by_hand(weights, *, atol: float = 1e-3) -> bool:
    """Check hand-computed softmax weights of ``SOFTMAX_SCORES`` (``[2, 1, 0]``), to ``atol``.

    Parameters
    ----------
    weights : array_like, shape (3,)
        The learner's weights, to three decimals (the exercise asks for three): rounded or cut
        after the third decimal passes, a slip in the third decimal (e^2 taken as 7.5) does not.
    """
    if not_done(weights):
        return not_attempted(_("no answer yet: replace the ... with your three weights"))
    if is_text(weights):
        return report(False, _("give the weights as numbers, not as text: write 0.5, not \"0.5\" (quotes make "
                               "a string, and a string is not a number you can compute with)"))
    t = softmax_table().open()
    e, want = t["scores"], t["want"]
    if _is_complex(weights):
        return report(False, _("your weights are complex numbers (written with j): softmax weights are real "
                               "numbers, so write each one as a plain decimal"))
    w = _as_vector(weights)
    if w is None and not isinstance(weights, (list, tuple, np.ndarray)):
        return report(False, _("give the {n} weights as numbers in a list or a numpy array, one per score, "
                               "in the scores' order; got a {kind}").format(n=e.size, kind=type(weights).__name__))
    if w is None or w.shape != e.shape:
        shape = None if w is None else w.shape
        return report(False, _("expected {n} weights, one per score, shape {want}; got shape {got}").format(n=e.size, want=e.shape, got=shape))
    if not np.all(np.isfinite(w)):
        return report(False, _("your weights hold {bad}, which is not a number you can add up: each softmax "
                               "weight is a finite number between 0 and 1, worked out from the scores").format(
                                   bad="NaN" if np.isnan(w).any() else "inf"))
    if np.allclose(w, want, atol=atol):
        return report(True, _("softmax({scores}) = {weights}: the weights are positive and sum to 1").format(scores=e.tolist(), weights=np.round(want, 3).tolist()))
    if np.allclose(w, t["exp"], atol=max(atol, 0.02)):
        return report(False, _("these are exp(e_l), not yet weights: what must the weights add up to, "
                             "and what turns these numbers into such weights?"))
    if np.allclose(w, t["linear"], atol=atol):
        return report(False, _("you divided the raw scores by their sum, which skips a step: softmax "
                             "makes every score positive first, with the function that gives it its name"))
    if np.allclose(w, t["negated"], atol=atol):
        return report(False, _("you gave the largest weight to the smallest score: a larger score "
                             "should get a larger weight"))
    if np.allclose(np.sort(w), np.sort(want), atol=atol):
        return report(False, _("right numbers, wrong order: weight l belongs to score l"))
    if any(np.allclose(w, cut(want * 10**d) / 10**d, rtol=0, atol=1e-9) for d in (1, 2) for cut in (np.round, np.floor)):
        # every weight right, rounded or cut to one or two decimals: their sum may be off, no step is
        return report(False, _("close, but rounded too coarsely: give each weight to three decimals "
                             "(the checker accepts a difference of {atol})").format(atol=f"{atol:g}"))
    if abs(w.sum() - 1.0) > 0.0015 + 1e-12:   # three weights rounded to 3 decimals: the sum is off by at most 0.0015
        return report(False, _("your weights sum to {total}, not to 1; softmax weights always sum to 1 "
                               "(up to rounding): check each step of the recipe in section 1").format(total=f"{w.sum():.3f}"))
    if np.allclose(w, want, atol=0.05) and np.allclose(w, np.round(w, 2), rtol=0, atol=1e-9):
        return report(False, _("close, but rounded too coarsely: give each weight to three decimals "
                             "(the checker accepts a difference of {atol})").format(atol=f"{atol:g}"))
    if np.allclose(w, want, atol=0.05):
        return report(False, _("close, but not the softmax to three decimals: a weight is off in its third "
                               "decimal or earlier. Work each exponential out more precisely (a rough e^1 or "
                               "e^2 moves every weight), and round only at the end"))
    return report(False, _("your weights sum to 1 (to rounding) but are not the softmax of these "
                         "scores: check each exponential, and the total you divide them by"))


def first_match(out, candidates) -> str | None:
    """The hint of the first recorded mistake ``(output, hint)`` that ``out`` equals, else None
    (an output of None: that mistake cannot happen on this case)."""
    for arr, hint in candidates:
        if arr is not None and close(out, arr):
            return _(hint)
    return None


@plain_numpy()
def dot_scores(fn) -> bool:
    """Check ``fn(q, K) -> scores``: the dot-product score of one query against every key.

    Parameters
    ----------
    fn : callable
        ``q`` has shape ``(d,)`` and ``K`` shape ``(n_k, d)`` (rows are keys); the result must
        have shape ``(n_k,)``, one score per key.
    """
    if not_done(fn):
        return not_attempted(_("no answer yet: define the function and pass it in"))
    for case in dot_table():
        q, K, want = case["q"], case["K"], case["want"]
        out, err = try_call(fn, q.copy(), K.copy())
        if out is Ellipsis:
            return not_attempted(_("no answer yet: replace the `...` after `return` with your code, then run the cell again"))
        if err:
            hint = ""
            if "matmul" in err or "shapes" in err or "aligned" in err:
                hint = _(". The rows of K are the keys, so K has shape (n_k, d): the product must pair "
                        "q with each row of K, which means contracting over the features, K's last axis")
            return report(False, _("for q of shape {q} and K of shape {K}, {error}").format(q=q.shape, K=K.shape, error=err) + hint)
        if (msg := array_answer(out)):
            return report(False, msg)
        out = _as_vector(out)
        if out is None:
            return report(False, _("your function must return an array of numbers"))
        if out.shape == () and K.shape[0] > 1:
            return report(False, _("you returned one number for all the keys: you summed over everything; "
                                 "sum over the features only, one score per key"))
        if out.shape == K.shape:
            return report(False, _("you returned shape {got}, the element-wise products: "
                                   "sum them over the features to get one score per key").format(got=out.shape))
        if out.shape == (K.shape[1],) and K.shape[0] != K.shape[1]:
            return report(False, _("you returned {d} numbers (one per feature) instead of {n_k} (one per key): you summed over "
                                   "the keys' axis; sum over the features instead").format(d=K.shape[1], n_k=K.shape[0]))
        if out.shape != want.shape:
            return report(False, _("for K of shape {K} the scores must have shape {want}, one per key; you returned shape {got}")
                          .format(K=K.shape, want=want.shape, got=out.shape))
        if close(out, want):
            continue
        if (hint := first_match(out, case["mistakes"])):
            return report(False, hint)
        return report(False, _("for q = {q} and the first key {k} your score is {score}: work that one out by hand "
                               "(multiply the matching features and add the products up) and compare").format(
                                   q=np.round(q, 2).tolist(), k=np.round(K[0], 2).tolist(), score=f"{out[0]:.3f}"))
    return report(True, _("your dot scores match ak.dot_score for several q and K, including n_k != d"))


@prediction
def predict_winners(dot_winner, cosine_winner) -> bool:
    """Check the prediction of which key of ``WINNER_K`` gets the highest score for ``WINNER_Q``
    under ``dot`` and under ``similarity``.

    Parameters
    ----------
    dot_winner, cosine_winner : str
        Key labels, for example ``"k1"``.
    """
    if not_done(dot_winner) or not_done(cosine_winner):
        return not_attempted(_("no answer yet: give both winners as key labels such as 'k1'"))
    t = winner_table().open()
    labels = t["labels"]
    answers = []
    for name, ans in (("dot_winner", dot_winner), ("cosine_winner", cosine_winner)):
        ans = str(ans).strip().lower()
        if ans not in labels and f"k{ans}" in labels:
            return report(False, _("{name}: write the key's label, 'k{number}' (a string with the k), not the number {number}").format(name=name, number=ans))
        if ans not in labels:
            return report(False, _("{name} must be one of {labels}, got {got}").format(name=name, labels=labels, got=repr(ans)))
        answers.append(ans)
    d_ans, c_ans = answers
    d_true, c_true = t["dot"], t["cosine"]
    if (d_ans, c_ans) == (d_true, c_true):
        return report(True, _("dot picks {dot} (length counts), cosine picks {cosine} (only the angle counts)").format(dot=d_true, cosine=c_true))
    if (d_ans, c_ans) == (c_true, d_true):
        return report(False, _("you swapped them: the dot product q . k grows with the length of k, "
                             "while the cosine divides the length out and keeps only the angle"),
                      graded=_("both are not right: the dot product q . k grows with the length of k, "
                             "while the cosine divides the length out and keeps only the angle; "
                             "compare the keys' lengths and their angles to q"))
    if d_ans == c_ans:
        return report(False, _("here the two scores disagree: the dot score rewards a long key even if it "
                             "points a bit away from q; the cosine score ignores length entirely"))
    wrong = "dot_winner" if d_ans != d_true else "cosine_winner"
    return report(False, _("{name} is not right: a key orthogonal to q scores 0 under both. Compare q . k = |q| |k| "
                           "cos(angle) for the other two keys, then their angles alone").format(name=wrong))


@plain_numpy()
def context_vector(fn) -> bool:
    """Check ``fn(a, V) -> c``: the context vector as one matrix product.

    Parameters
    ----------
    fn : callable
        ``a`` has shape ``(n_k,)`` (one query) or ``(n_q, n_k)`` (one row per query); ``V`` has
        shape ``(n_k, d_v)`` (rows are values). The result has shape ``(d_v,)`` or ``(n_q, d_v)``.
    """
    if not_done(fn):
        return not_attempted(_("no answer yet: define the function and pass it in"))
    for case in context_table():
        a, V, want = case["a"], case["V"], case["want"]
        out, err = try_call(fn, a.copy(), V.copy())
        if out is Ellipsis:
            return not_attempted(_("no answer yet: replace the `...` after `return` with your code, then run the cell again"))
        if err:
            hint = ""
            if "matmul" in err or "shapes" in err or "broadcast" in err:
                hint = _(". The weights a index the keys, which are the rows of V: the product must sum "
                        "over that shared axis, a's last and V's first")
            elif a.ndim == 1:
                hint = _(". Here a is one weight vector, shape (n_k,), not a stack of rows: the same expression "
                         "must take both forms, so write it for a's last axis, whatever stands before it")
            return report(False, _("for a of shape {a} and V of shape {V}, {error}").format(a=a.shape, V=V.shape, error=err) + hint)
        if (msg := array_answer(out)):
            return report(False, msg)
        out = _as_vector(out)
        if out is None:
            return report(False, _("your function must return an array of numbers"))
        if close(out, want):
            continue
        if a.ndim == 1 and out.shape == V.shape:
            return report(False, _("you returned shape {got}: the weighted values a_l v_l, not yet summed; add them up over the "
                                   "keys; one matrix product does the weighting and the sum at once").format(got=out.shape))
        if a.ndim == 1 and out.shape == (V.shape[0],):
            return report(False, _("you summed over the value's components instead of over the keys: "
                                 "the context has one entry per component, d_v of them"))
        if (hint := first_match(out, case["mistakes"])):
            return report(False, hint)
        if out.shape != want.shape:
            return report(False, _("for a of shape {a} and V of shape {V} the context must have shape {want}; you returned {got}")
                          .format(a=a.shape, V=V.shape, want=want.shape, got=out.shape))
        return report(False, _("wrong numbers: the context is sum_l a_l v_l, weight l times value l (row l of V), summed over l"))
    return report(True, _("your context vectors are right for one query (n_k,) and for a batch of queries (n_q, n_k)"))


@plain_numpy(allow=('softmax',))
def output_model(fn) -> bool:
    """Check ``fn(C, W_c, b_c) -> Y``: the output model ``softmax(W_c c + b_c)`` for every row ``c`` of ``C``.

    Parameters
    ----------
    fn : callable
        ``C`` shape ``(n, d_v)``, one context per row (rows are tokens); ``W_c`` shape
        ``(d_y, d_v)`` and ``b_c`` shape ``(d_y,)`` as in the survey's column layout. The result
        has shape ``(n, d_y)``, one row of probabilities per context, so each row sums to 1.
    """
    if not_done(fn):
        return not_attempted(_("no answer yet: define the function and pass it in"))
    for case in output_table():
        C, W, b, want = case["C"], case["W"], case["b"], case["want"]
        out, err = try_call(fn, C.copy(), W.copy(), b.copy())
        if out is Ellipsis:
            return not_attempted(_("no answer yet: replace the `...` after `return` with your code, then run the cell again"))
        if err:
            hint = ""
            if "matmul" in err or "shapes" in err or "broadcast" in err or "aligned" in err:
                hint = _(". W_c has shape {W} = (d_y, d_v) in the survey's column layout, while the contexts are the "
                          "rows of C {C}: turn the survey's product into the row form (section 2's table)").format(W=W.shape, C=C.shape)
            return report(False, _("for C {C}, W_c {W}, b_c {b}: {error}").format(C=C.shape, W=W.shape, b=b.shape, error=err) + hint)
        if (msg := array_answer(out)):
            return report(False, msg)
        out = _as_vector(out)
        if out is None:
            return report(False, _("your function must return an array of numbers"))
        if close(out, want):
            continue
        mistakes = case["mistakes"]
        if (hint := first_match(out, mistakes[:1])):
            return report(False, hint)
        if out.shape != want.shape:
            return report(False, _("for C of shape {C} the output must have shape {want}, one row per context and one "
                                   "probability per class (d_y); you returned {got}").format(C=C.shape, want=want.shape, got=out.shape))
        if (hint := first_match(out, mistakes[1:])):
            return report(False, hint)
        with np.errstate(all="ignore"):
            sums = out.sum(axis=-1)
        if not np.allclose(sums, 1.0, atol=1e-6):
            return report(False, _("your rows do not sum to 1 (the first sums to {total}): each row must be a "
                                   "probability distribution over the classes of its context").format(
                                       total=f"{float(sums.ravel()[0]):.4g}"))
        return report(False, _("wrong numbers: each of your rows sums to 1, but it is not the survey's output "
                               "model of that context. Work the model out for the first context by hand, one "
                               "step at a time (the product with W_c, the bias, the softmax), and compare each "
                               "step with yours; if the product is where they part, section 2's table shows "
                               "what a column-form product becomes when the vectors are rows"))
    return report(True, _("your output model gives softmax(W_c c + b_c) for every context: each row sums to 1"))
