"""Exercise checkers for notebook 01, the general attention model.

Each checker prints one line, ``✓ ...`` for a right answer or ``✗ ...`` with a hint aimed at the
usual mistake, and returns True or False. The learner's exceptions are reported, never raised.

* ``softmax_by_hand(weights)``: the softmax of ``SOFTMAX_SCORES`` worked out by hand.
* ``dot_scores(fn)``: ``fn(q, K)`` returns ``q . k_l`` for every key at once, shape ``(n_k,)``.
* ``predict_winners(dot_winner, cosine_winner)``: which key of ``WINNER_K`` wins for the query
  ``WINNER_Q`` under the dot score and under the cosine score.
* ``context_vector(fn)``: ``fn(a, V)`` returns the context ``a V`` for one query ``(n_k,)`` or
  several ``(n_q, n_k)``.
* ``output_model(fn)``: ``fn(c, W_c, b_c)`` returns ``softmax(W_c c + b_c)`` in the survey's layout.
* ``quietly()``: a context manager (from ``attention_kit.check``) that silences the checkers;
  the worked solutions use it so that their cells store no output.
"""

from __future__ import annotations

import numpy as np

from ..mechanism.alignment import softmax
from ..mechanism.scores import cosine_score, dot_score
from . import close, not_attempted, not_done, quietly, report, try_call
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
]

#: The score vector of the by-hand softmax exercise.
SOFTMAX_SCORES = np.array([2.0, 1.0, 0.0])

#: Query and keys of the "which key wins?" exercise: k1 is short and points almost along q,
#: k2 is long but 45 degrees off, k3 is orthogonal to q.
WINNER_Q = np.array([1.0, 0.0])
WINNER_K = np.array([[0.5, 0.05],   # k1: short, nearly parallel to q
                     [1.5, 1.5],    # k2: long, 45 degrees away from q
                     [0.0, 1.0]])   # k3: orthogonal to q
WINNER_LABELS = ("k1", "k2", "k3")


def _as_vector(x) -> np.ndarray | None:
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        return None
    return arr


def softmax_by_hand(weights, scores=SOFTMAX_SCORES, *, atol: float = 5e-3) -> bool:
    """Check hand-computed softmax weights of ``scores`` (default ``[2, 1, 0]``), to ``atol``.

    Parameters
    ----------
    weights : array_like, shape (3,)
        The learner's weights, rounded to two or three decimals is fine.
    """
    if not_done(weights):
        return not_attempted("no answer yet: replace the ... with your three weights")
    w = _as_vector(weights)
    e = np.asarray(scores, dtype=float)
    want = softmax(e)
    if w is None or w.shape != e.shape:
        shape = None if w is None else w.shape
        return report(False, f"expected {e.size} weights, one per score, shape {e.shape}; got shape {shape}")
    if np.allclose(w, want, atol=atol):
        return report(True, f"softmax({e.tolist()}) = {np.round(want, 3).tolist()}: the weights are positive and sum to 1")
    if np.allclose(w, np.exp(e), atol=max(atol, 0.02)):
        return report(False, "these are exp(e_l), not yet weights: divide each by their sum "
                             f"({np.exp(e).sum():.3f}) so that they add up to 1")
    if e.sum() != 0 and np.allclose(w, e / e.sum(), atol=atol):
        return report(False, "you divided the raw scores by their sum, which skips the exponential: "
                             "take exp(e_l) first, then divide by the sum of the exponentials")
    if np.allclose(w, softmax(-e), atol=atol):
        return report(False, "you gave the largest weight to the smallest score: softmax uses exp(+e_l), not exp(-e_l)")
    if np.allclose(np.sort(w), np.sort(want), atol=atol):
        return report(False, "right numbers, wrong order: weight l belongs to score l")
    if not np.isclose(w.sum(), 1.0, atol=2 * atol):
        return report(False, f"your weights sum to {w.sum():.3f}; softmax weights always sum to 1. "
                             "Compute exp(e_l) for each score, then divide by the total")
    return report(False, "your weights sum to 1 but are not the softmax: recompute exp(2), exp(1), exp(0) "
                         "(about 7.389, 2.718, 1) and divide each by their sum")


def _dot_cases():
    rng = np.random.default_rng(101)
    return [
        (rng.normal(size=3), rng.normal(size=(5, 3))),  # n_k != d: a transposed K fails loudly
        (rng.normal(size=4), rng.normal(size=(4, 4))),  # n_k == d: a transposed K gives wrong numbers
        (np.array([1.0, 2.0]), np.array([[3.0, 4.0]])),  # one key
    ]


@plain_numpy()
def dot_scores(fn) -> bool:
    """Check ``fn(q, K) -> scores``: the dot-product score of one query against every key.

    Parameters
    ----------
    fn : callable
        ``q`` has shape ``(d,)`` and ``K`` shape ``(n_k, d)`` (rows are keys); the result must
        have shape ``(n_k,)`` with entry ``l`` equal to ``q . k_l``.
    """
    if not_done(fn):
        return not_attempted("no answer yet: define the function and pass it in")
    for q, K in _dot_cases():
        out, err = try_call(fn, q.copy(), K.copy())
        if out is Ellipsis:
            return not_attempted("no answer yet: replace the `...` after `return` with your code, then run the cell again")
        if err:
            hint = ""
            if "matmul" in err or "shapes" in err or "aligned" in err:
                hint = (". The rows of K are the keys, so K has shape (n_k, d): multiply K by q "
                        "(or q by K.T), not q by K")
            return report(False, f"for q of shape {q.shape} and K of shape {K.shape}, {err}{hint}")
        out = _as_vector(out)
        want = dot_score(q, K)
        if out is None:
            return report(False, "your function must return an array of numbers")
        if out.shape == () and K.shape[0] > 1:
            return report(False, "you returned one number for all the keys: you summed over everything; "
                                 "sum over the features only (axis=-1), one score per key")
        if out.shape == K.shape:
            return report(False, f"you returned shape {out.shape}, the element-wise products: "
                                 "sum them over the features (axis=-1) to get one score per key")
        if out.shape == (K.shape[1],) and K.shape[0] != K.shape[1]:
            return report(False, f"you returned {K.shape[1]} numbers (one per feature) instead of "
                                 f"{K.shape[0]} (one per key): you summed over the keys' axis; use axis=-1 or K @ q")
        if out.shape != want.shape:
            return report(False, f"for K of shape {K.shape} the scores must have shape {want.shape}, "
                                 f"one per key; you returned shape {out.shape}")
        if close(out, want):
            continue
        if K.shape[0] == K.shape[1] and close(out, K.T @ q):
            return report(False, "you used the keys as columns (K.T @ q or q @ K): in attention_kit the rows "
                                 "of K are the keys, so the scores are K @ q")
        if close(out, want / np.sqrt(q.shape[-1])):
            return report(False, "you divided by sqrt(d): that is the scaled dot product; the plain dot score has no scaling")
        if close(out, softmax(want)):
            return report(False, "you applied the softmax: that gives weights; the score is the raw q . k_l")
        if close(out, cosine_score(q, K)):
            return report(False, "you divided by the vector lengths: that is the cosine score, not the dot score")
        return report(False, f"for q = {np.round(q, 2).tolist()} and the first key {np.round(K[0], 2).tolist()} "
                             f"the score should be {want[0]:.3f}, you gave {out[0]:.3f}")
    return report(True, "your dot scores match ak.dot_score for several q and K, including n_k != d")


def predict_winners(dot_winner, cosine_winner, q=WINNER_Q, K=WINNER_K, labels=WINNER_LABELS) -> bool:
    """Check the prediction of which key gets the highest score under ``dot`` and under ``similarity``.

    Parameters
    ----------
    dot_winner, cosine_winner : str
        Key labels, for example ``"k1"``.
    """
    if not_done(dot_winner) or not_done(cosine_winner):
        return not_attempted("no answer yet: give both winners as key labels such as 'k1'")
    labels = list(labels)
    answers = []
    for name, ans in (("dot_winner", dot_winner), ("cosine_winner", cosine_winner)):
        ans = str(ans).strip().lower()
        if ans not in labels and f"k{ans}" in labels:
            return report(False, f"{name}: write the key's label, 'k{ans}' (a string with the k), not the number {ans}")
        if ans not in labels:
            return report(False, f"{name} must be one of {labels}, got {ans!r}")
        answers.append(ans)
    d_ans, c_ans = answers
    d_true = labels[int(np.argmax(dot_score(q, K)))]
    c_true = labels[int(np.argmax(cosine_score(q, K)))]
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
    return report(False, f"{wrong} is not right: the third key is orthogonal to q, so both scores give it 0. "
                         "Compare q . k for the other two keys, then their angles to q")


def _context_cases():
    rng = np.random.default_rng(202)
    a1 = softmax(rng.normal(size=4))  # (n_k,)
    V1 = rng.normal(size=(4, 3))  # (n_k, d_v)
    A2 = softmax(rng.normal(size=(2, 4)))  # (n_q, n_k)
    V2 = rng.normal(size=(4, 3))
    A3 = softmax(rng.normal(size=(3, 3)))  # square: a transposed product gives wrong numbers
    V3 = rng.normal(size=(3, 3))
    return [(a1, V1), (A2, V2), (A3, V3)]


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
    for a, V in _context_cases():
        out, err = try_call(fn, a.copy(), V.copy())
        if out is Ellipsis:
            return not_attempted("no answer yet: replace the `...` after `return` with your code, then run the cell again")
        if err:
            hint = ""
            if "matmul" in err or "shapes" in err or "broadcast" in err:
                hint = ". The weights a index the keys, which are the rows of V: a @ V"
            return report(False, f"for a of shape {a.shape} and V of shape {V.shape}, {err}{hint}")
        out = _as_vector(out)
        want = a @ V
        if out is None:
            return report(False, "your function must return an array of numbers")
        if close(out, want):
            continue
        if a.ndim == 1 and out.shape == V.shape:
            return report(False, f"you returned shape {out.shape}: the weighted values a_l v_l, not yet summed; "
                                 "add them up over the keys (axis 0), or simply write a @ V")
        if a.ndim == 1 and out.shape == (V.shape[0],):
            return report(False, "you summed over the value's components instead of over the keys: "
                                 "the context has one entry per component, d_v of them")
        if close(out, V.mean(axis=0)) or (a.ndim == 2 and close(out, np.broadcast_to(V.mean(axis=0), want.shape))):
            return report(False, "that is the plain average of the values: each value must be weighted by its a_l")
        if a.ndim == 2 and close(out, want.T):
            return report(False, f"transposed layout: for weights of shape {a.shape} the context has shape "
                                 f"{want.shape}, one row per query; write a @ V")
        if a.ndim == 2 and a.shape[0] == a.shape[1] and close(out, a.T @ V):
            return report(False, "you used a.T: row i of a holds query i's weights over the keys, so the "
                                 "context rows are a @ V")
        if out.shape != want.shape:
            return report(False, f"for a of shape {a.shape} and V of shape {V.shape} the context must have "
                                 f"shape {want.shape}; you returned {out.shape}")
        return report(False, "wrong numbers: the context is sum_l a_l v_l, which is the matrix product a @ V")
    return report(True, "c = a @ V works for one query (n_k,) and for a batch of queries (n_q, n_k)")


def _output_cases():
    rng = np.random.default_rng(303)
    return [
        (rng.normal(size=3), rng.normal(size=(4, 3)), rng.normal(size=4)),  # d_y=4, d_v=3
        (rng.normal(size=2), rng.normal(size=(2, 2)), rng.normal(size=2)),  # square W_c
    ]


@plain_numpy(allow=('softmax',))
def output_model(fn) -> bool:
    """Check ``fn(c, W_c, b_c) -> y_hat``: the output model ``softmax(W_c c + b_c)`` (survey layout).

    Parameters
    ----------
    fn : callable
        ``c`` shape ``(d_v,)``, ``W_c`` shape ``(d_y, d_v)`` as in the survey, ``b_c`` shape
        ``(d_y,)``; the result is ``(d_y,)`` class probabilities.
    """
    if not_done(fn):
        return not_attempted("no answer yet: define the function and pass it in")
    for c, W, b in _output_cases():
        out, err = try_call(fn, c.copy(), W.copy(), b.copy())
        if out is Ellipsis:
            return not_attempted("no answer yet: replace the `...` after `return` with your code, then run the cell again")
        if err:
            hint = ""
            if "matmul" in err or "shapes" in err or "broadcast" in err:
                hint = f". W_c has shape {W.shape} = (d_y, d_v) in the survey's layout, so the product is W_c @ c"
            return report(False, f"for c {c.shape}, W_c {W.shape}, b_c {b.shape}: {err}{hint}")
        out = _as_vector(out)
        want = softmax(W @ c + b)
        if out is None:
            return report(False, "your function must return an array of numbers")
        if close(out, want):
            continue
        if out.shape != want.shape:
            return report(False, f"the output must have shape {want.shape}, one probability per class (d_y); "
                                 f"you returned {out.shape}")
        if close(out, W @ c + b):
            return report(False, "these are the logits W_c c + b_c: apply the softmax to turn them into probabilities")
        if close(out, softmax(W @ c)):
            return report(False, "you forgot the bias b_c: the logits are W_c c + b_c")
        if W.shape[0] == W.shape[1] and close(out, softmax(W.T @ c + b)):
            return report(False, "you used W_c.T: in the survey's layout W_c is (d_y, d_v) and multiplies c from the left")
        if close(out, W @ softmax(c) + b) or close(out, softmax(W @ softmax(c) + b)):
            return report(False, "the softmax goes on the logits W_c c + b_c, not on c")
        return report(False, "wrong numbers: compute the logits z = W_c @ c + b_c, then softmax(z)")
    return report(True, "your output model matches softmax(W_c c + b_c): the probabilities sum to 1")
