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
* ``first_match(out, mistakes)``: the hint of the first recorded mistake that ``out`` equals.
* ``quietly()``: a context manager (from ``attention_kit.check``) that silences the checkers.

The checkers compare with recorded cases: their inputs, right answers and the outputs of the
usual mistakes (``attention_kit.check.recorded``).
"""

from __future__ import annotations

import numpy as np

from ..mechanism.alignment import softmax
from ..mechanism.scores import cosine_score, dot_score
from . import close, not_attempted, not_done, prediction, quietly, report, try_call
from .plain import plain_numpy
from .recorded import recorded, reference

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
    "first_match",
]

#: The score vector of the by-hand softmax exercise.
SOFTMAX_SCORES = np.array([2.0, 1.0, 0.0])

#: Query and keys of the "which key wins?" exercise: k1 is orthogonal to q, k2 is short and points
#: almost along q, k3 is long but 45 degrees off (not the order of notebook 01's section 3).
WINNER_Q = np.array([1.0, 0.0])
WINNER_K = np.array([[0.0, 1.0],    # k1: orthogonal to q
                     [0.5, 0.05],   # k2: short, nearly parallel to q
                     [1.5, 1.5]])   # k3: long, 45 degrees away from q
WINNER_LABELS = ("k1", "k2", "k3")


def array_answer(out) -> str | None:
    """The hint when a function returns a list or a tuple where the task asks for a numpy array, else None.

    One rule for every notebook: where an exercise asks for an array, a list or a tuple is not
    accepted (``np.asarray`` would hide a tuple ``(out, weights)`` returned by mistake).
    """
    if isinstance(out, np.ndarray):
        return None
    if isinstance(out, (list, tuple)):
        return (f"your function returned a {type(out).__name__}; the task asks for a numpy array: "
                "compute with numpy arrays all the way (a tuple often means two results returned where one was asked)")
    return None


def _as_vector(x) -> np.ndarray | None:
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        return None
    return arr


@recorded
def _softmax_table() -> dict:
    """The by-hand softmax's scores, their weights and the usual mistakes' numbers."""
    e = SOFTMAX_SCORES.astype(float)
    return {"scores": e, "want": softmax(e), "exp": np.exp(e), "exp_sum": float(np.exp(e).sum()),
            "linear": e / e.sum(), "negated": softmax(-e)}


def softmax_by_hand(weights, *, atol: float = 5e-3) -> bool:
    """Check hand-computed softmax weights of ``SOFTMAX_SCORES`` (``[2, 1, 0]``), to ``atol``.

    Parameters
    ----------
    weights : array_like, shape (3,)
        The learner's weights, rounded to two or three decimals is fine.
    """
    if not_done(weights):
        return not_attempted("no answer yet: replace the ... with your three weights")
    w = _as_vector(weights)
    t = _softmax_table()
    e, want = t["scores"], t["want"]
    if w is None or w.shape != e.shape:
        shape = None if w is None else w.shape
        return report(False, f"expected {e.size} weights, one per score, shape {e.shape}; got shape {shape}")
    if np.allclose(w, want, atol=atol):
        return report(True, f"softmax({e.tolist()}) = {np.round(want, 3).tolist()}: the weights are positive and sum to 1")
    if np.allclose(w, t["exp"], atol=max(atol, 0.02)):
        return report(False, "these are exp(e_l), not yet weights: what must the weights add up to, "
                             "and what turns these numbers into such weights?")
    if np.allclose(w, t["linear"], atol=atol):
        return report(False, "you divided the raw scores by their sum, which skips a step: softmax "
                             "makes every score positive first, with the function that gives it its name")
    if np.allclose(w, t["negated"], atol=atol):
        return report(False, "you gave the largest weight to the smallest score: a larger score "
                             "should get a larger weight")
    if np.allclose(np.sort(w), np.sort(want), atol=atol):
        return report(False, "right numbers, wrong order: weight l belongs to score l")
    if abs(w.sum() - 1.0) > 0.0015 + 1e-12:   # three weights rounded to 3 decimals: the sum is off by at most 0.0015
        return report(False, f"your weights sum to {w.sum():.3f}, not to 1; softmax weights always sum to 1 "
                             "(up to rounding): check each step of the recipe in section 1")
    if np.allclose(w, want, atol=0.05):
        return report(False, "close, but rounded too coarsely: give each weight to three decimals "
                             "(the checker accepts a difference of 0.005)")
    return report(False, "your weights sum to 1 (to rounding) but are not the softmax of these "
                         "scores: check each exponential, and the total you divide them by")


def first_match(out, candidates) -> str | None:
    """The hint of the first recorded mistake ``(output, hint)`` that ``out`` equals, else None
    (an output of None: that mistake cannot happen on this case)."""
    for arr, hint in candidates:
        if arr is not None and close(out, arr):
            return hint
    return None


@reference
def _dot_cases():
    rng = np.random.default_rng(101)
    return [
        (rng.normal(size=3), rng.normal(size=(5, 3))),  # n_k != d: a transposed K fails loudly
        (rng.normal(size=4), rng.normal(size=(4, 4))),  # n_k == d: a transposed K gives wrong numbers
        (np.array([1.0, 2.0]), np.array([[3.0, 4.0]])),  # one key
    ]


@recorded
def _dot_table() -> list[dict]:
    """Each case's q and K, its scores, and the outputs of the usual mistakes with their hints."""
    table = []
    for q, K in _dot_cases():
        want = dot_score(q, K)
        table.append({"q": q, "K": K, "want": want, "mistakes": [
            (K.T @ q if K.shape[0] == K.shape[1] else None,
             "you used the keys as columns: in attention_kit the rows of K are the keys, so score l "
             "pairs q with row l of K"),
            (want / np.sqrt(q.shape[-1]), "you divided by sqrt(d): that is the scaled dot product; the "
             "plain dot score has no scaling"),
            (softmax(want), "you applied the softmax: that gives weights; the score is the raw q . k_l"),
            (cosine_score(q, K), "you divided by the vector lengths: that is the cosine score, not the "
             "dot score"),
        ]})
    return table


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
        return not_attempted("no answer yet: define the function and pass it in")
    for case in _dot_table():
        q, K, want = case["q"], case["K"], case["want"]
        out, err = try_call(fn, q.copy(), K.copy())
        if out is Ellipsis:
            return not_attempted("no answer yet: replace the `...` after `return` with your code, then run the cell again")
        if err:
            hint = ""
            if "matmul" in err or "shapes" in err or "aligned" in err:
                hint = (". The rows of K are the keys, so K has shape (n_k, d): the product must pair "
                        "q with each row of K, which means contracting over the features, K's last axis")
            return report(False, f"for q of shape {q.shape} and K of shape {K.shape}, {err}{hint}")
        if (msg := array_answer(out)):
            return report(False, msg)
        out = _as_vector(out)
        if out is None:
            return report(False, "your function must return an array of numbers")
        if out.shape == () and K.shape[0] > 1:
            return report(False, "you returned one number for all the keys: you summed over everything; "
                                 "sum over the features only, one score per key")
        if out.shape == K.shape:
            return report(False, f"you returned shape {out.shape}, the element-wise products: "
                                 "sum them over the features to get one score per key")
        if out.shape == (K.shape[1],) and K.shape[0] != K.shape[1]:
            return report(False, f"you returned {K.shape[1]} numbers (one per feature) instead of "
                                 f"{K.shape[0]} (one per key): you summed over the keys' axis; sum over the features instead")
        if out.shape != want.shape:
            return report(False, f"for K of shape {K.shape} the scores must have shape {want.shape}, "
                                 f"one per key; you returned shape {out.shape}")
        if close(out, want):
            continue
        if (hint := first_match(out, case["mistakes"])):
            return report(False, hint)
        return report(False, f"for q = {np.round(q, 2).tolist()} and the first key {np.round(K[0], 2).tolist()} "
                             f"your score is {out[0]:.3f}: work that one out by hand (multiply the matching "
                             "features and add the products up) and compare")
    return report(True, "your dot scores match ak.dot_score for several q and K, including n_k != d")


@recorded
def _winner_table() -> dict:
    """The winning keys of ``WINNER_Q`` among ``WINNER_K`` under the dot and the cosine score."""
    return {"labels": list(WINNER_LABELS),
            "dot": WINNER_LABELS[int(np.argmax(dot_score(WINNER_Q, WINNER_K)))],
            "cosine": WINNER_LABELS[int(np.argmax(cosine_score(WINNER_Q, WINNER_K)))]}


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
        return not_attempted("no answer yet: give both winners as key labels such as 'k1'")
    t = _winner_table()
    labels = t["labels"]
    answers = []
    for name, ans in (("dot_winner", dot_winner), ("cosine_winner", cosine_winner)):
        ans = str(ans).strip().lower()
        if ans not in labels and f"k{ans}" in labels:
            return report(False, f"{name}: write the key's label, 'k{ans}' (a string with the k), not the number {ans}")
        if ans not in labels:
            return report(False, f"{name} must be one of {labels}, got {ans!r}")
        answers.append(ans)
    d_ans, c_ans = answers
    d_true, c_true = t["dot"], t["cosine"]
    if (d_ans, c_ans) == (d_true, c_true):
        return report(True, f"dot picks {d_true} (length counts), cosine picks {c_true} (only the angle counts)")
    if (d_ans, c_ans) == (c_true, d_true):
        return report(False, "you swapped them: the dot product q . k grows with the length of k, "
                             "while the cosine divides the length out and keeps only the angle",
                      graded="both are not right: the dot product q . k grows with the length of k, "
                             "while the cosine divides the length out and keeps only the angle; "
                             "compare the keys' lengths and their angles to q")
    if d_ans == c_ans:
        return report(False, "here the two scores disagree: the dot score rewards a long key even if it "
                             "points a bit away from q; the cosine score ignores length entirely")
    wrong = "dot_winner" if d_ans != d_true else "cosine_winner"
    return report(False, f"{wrong} is not right: a key orthogonal to q scores 0 under both. "
                         "Compare q . k = |q| |k| cos(angle) for the other two keys, then their angles alone")


@reference
def _context_cases():
    rng = np.random.default_rng(202)
    a1 = softmax(rng.normal(size=4))  # (n_k,)
    V1 = rng.normal(size=(4, 3))  # (n_k, d_v)
    A2 = softmax(rng.normal(size=(2, 4)))  # (n_q, n_k)
    V2 = rng.normal(size=(4, 3))
    A3 = softmax(rng.normal(size=(3, 3)))  # square: a transposed product gives wrong numbers
    V3 = rng.normal(size=(3, 3))
    return [(a1, V1), (A2, V2), (A3, V3)]


@recorded
def _context_table() -> list[dict]:
    """Each case's weights and values, its context, and the usual mistakes' outputs with their hints."""
    table = []
    for a, V in _context_cases():
        want = general_attention_context(a, V)
        mean = np.broadcast_to(V.mean(axis=0), want.shape).copy()
        table.append({"a": a, "V": V, "want": want, "mistakes": [
            (mean, "that is the plain average of the values: each value must be weighted by its a_l"),
            (want.T if a.ndim == 2 else None,
             f"transposed layout: for weights of shape {a.shape} the context has shape {want.shape}, "
             "one row per query (rows are tokens)"),
            (general_attention_context(a.T, V) if a.ndim == 2 and a.shape[0] == a.shape[1] else None,
             "you transposed the weights: row i of a holds query i's weights over the keys, and it "
             "should stay the row of query i"),
        ]})
    return table


@reference
def general_attention_context(a: np.ndarray, V: np.ndarray) -> np.ndarray:
    """The context of weights ``a`` (``(n_k,)`` or ``(n_q, n_k)``) over the values ``V``."""
    return np.einsum("...k,kd->...d", a, V)


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
        return not_attempted("no answer yet: define the function and pass it in")
    for case in _context_table():
        a, V, want = case["a"], case["V"], case["want"]
        out, err = try_call(fn, a.copy(), V.copy())
        if out is Ellipsis:
            return not_attempted("no answer yet: replace the `...` after `return` with your code, then run the cell again")
        if err:
            hint = ""
            if "matmul" in err or "shapes" in err or "broadcast" in err:
                hint = (". The weights a index the keys, which are the rows of V: the product must sum "
                        "over that shared axis, a's last and V's first")
            return report(False, f"for a of shape {a.shape} and V of shape {V.shape}, {err}{hint}")
        if (msg := array_answer(out)):
            return report(False, msg)
        out = _as_vector(out)
        if out is None:
            return report(False, "your function must return an array of numbers")
        if close(out, want):
            continue
        if a.ndim == 1 and out.shape == V.shape:
            return report(False, f"you returned shape {out.shape}: the weighted values a_l v_l, not yet summed; "
                                 "add them up over the keys; one matrix product does the weighting and the sum at once")
        if a.ndim == 1 and out.shape == (V.shape[0],):
            return report(False, "you summed over the value's components instead of over the keys: "
                                 "the context has one entry per component, d_v of them")
        if (hint := first_match(out, case["mistakes"])):
            return report(False, hint)
        if out.shape != want.shape:
            return report(False, f"for a of shape {a.shape} and V of shape {V.shape} the context must have "
                                 f"shape {want.shape}; you returned {out.shape}")
        return report(False, "wrong numbers: the context is sum_l a_l v_l, weight l times value l (row l of V), summed over l")
    return report(True, "your context vectors are right for one query (n_k,) and for a batch of queries (n_q, n_k)")


@reference
def _output_cases():
    rng = np.random.default_rng(303)
    return [
        (rng.normal(size=(2, 3)), rng.normal(size=(4, 3)), rng.normal(size=4)),  # n=2, d_v=3, d_y=4
        (rng.normal(size=(3, 3)), rng.normal(size=(3, 3)), rng.normal(size=3)),  # square: W_c vs W_c.T, axis 0 vs 1
        (rng.normal(size=(1, 2)), rng.normal(size=(3, 2)), rng.normal(size=3)),  # one context
    ]


@recorded
def _output_table() -> list[dict]:
    """Each case's contexts, W_c and b_c, the probabilities, and the usual mistakes' outputs."""
    table = []
    for C, W, b in _output_cases():
        logits = np.einsum("yv,nv->ny", W, C) + b          # (n, d_y): row i is (W_c c_i + b_c)^T
        want = softmax(logits)
        on_c = softmax(np.einsum("yv,nv->ny", W, softmax(C)) + b)
        table.append({"C": C, "W": W, "b": b, "want": want, "mistakes": [
            (want.T, f"transposed layout: the result must have shape {want.shape}, one row of "
                     "probabilities per context (rows are tokens), not one column"),
            (logits, "these are the logits W_c c + b_c: apply the softmax to turn them into probabilities"),
            (softmax(logits - b), "you forgot the bias b_c: the logits are W_c c + b_c"),
            (softmax(logits.T).T, "your columns sum to 1, not your rows: the softmax runs over the classes "
                                  "of one context, the last axis, not down the contexts"),
            (softmax(np.einsum("vy,nv->ny", W, C) + b) if W.shape[0] == W.shape[1] else None,
             "you multiplied by W_c itself, the survey's column-form matrix: your contexts are rows, and "
             "section 2's table shows what a column-form matrix becomes when the vectors are rows"),
            (on_c, "the softmax goes on the logits W_c c + b_c, not on c"),
            (np.einsum("yv,nv->ny", W, softmax(C)) + b, "the softmax goes on the logits W_c c + b_c, not on c"),
        ]})
    return table


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
        return not_attempted("no answer yet: define the function and pass it in")
    for case in _output_table():
        C, W, b, want = case["C"], case["W"], case["b"], case["want"]
        out, err = try_call(fn, C.copy(), W.copy(), b.copy())
        if out is Ellipsis:
            return not_attempted("no answer yet: replace the `...` after `return` with your code, then run the cell again")
        if err:
            hint = ""
            if "matmul" in err or "shapes" in err or "broadcast" in err or "aligned" in err:
                hint = (f". W_c has shape {W.shape} = (d_y, d_v) in the survey's column layout, while the "
                        f"contexts are the rows of C {C.shape}: turn the survey's product into the row form "
                        "(section 2's table)")
            return report(False, f"for C {C.shape}, W_c {W.shape}, b_c {b.shape}: {err}{hint}")
        if (msg := array_answer(out)):
            return report(False, msg)
        out = _as_vector(out)
        if out is None:
            return report(False, "your function must return an array of numbers")
        if close(out, want):
            continue
        mistakes = case["mistakes"]
        if (hint := first_match(out, mistakes[:1])):
            return report(False, hint)
        if out.shape != want.shape:
            return report(False, f"for C of shape {C.shape} the output must have shape {want.shape}, one row "
                                 f"per context and one probability per class (d_y); you returned {out.shape}")
        if (hint := first_match(out, mistakes[1:])):
            return report(False, hint)
        return report(False, "wrong numbers: for each context the logits are W_c c + b_c, "
                             "and the probabilities are their softmax")
    return report(True, "your output model gives softmax(W_c c + b_c) for every context: each row sums to 1")
