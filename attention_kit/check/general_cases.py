"""Notebook 01's exercises: the cases the checkers of ``attention_kit.check.general`` compare with.

Each ``@recorded`` table holds a checker's public cases, their right answers and the outputs of
the usual mistakes with the hint for each; the student edition keeps the tables as data
(``attention_kit.check.recorded``) and leaves out the ``@reference`` code that computed them.
"""

from __future__ import annotations

import numpy as np

from ..i18n import N_
from ..mechanism.alignment import softmax
from ..mechanism.scores import cosine_score, dot_score
from .recorded import recorded, reference

__all__ = ["SOFTMAX_SCORES", "WINNER_Q", "WINNER_K", "WINNER_LABELS", "softmax_table", "dot_table",
           "winner_table", "context_table", "output_table"]

#: The score vector of the by-hand softmax exercise.
SOFTMAX_SCORES = np.array([2.0, 1.0, 0.0])

#: Query and keys of the "which key wins?" exercise, one key per row (k1, k2, k3): keys of different
#: lengths and directions, in another order than notebook 01's section 3.
WINNER_Q = np.array([1.0, 0.0])
WINNER_K = np.array([[0.0, 1.0],    # k1
                     [0.5, 0.05],   # k2
                     [1.5, 1.5]])   # k3
WINNER_LABELS = ("k1", "k2", "k3")


@recorded(sealed=True)  # one fixed answer: the table is that answer, sealed
def softmax_table() -> dict:
    """The by-hand softmax's scores, their weights and the usual mistakes' numbers."""
    e = SOFTMAX_SCORES.astype(float)
    return {"scores": e, "want": softmax(e), "exp": np.exp(e), "exp_sum": float(np.exp(e).sum()),
            "linear": e / e.sum(), "negated": softmax(-e)}


@reference
def _dot_cases():
    rng = np.random.default_rng(101)
    return [
        (rng.normal(size=3), rng.normal(size=(5, 3))),  # n_k != d: a transposed K fails loudly
        (rng.normal(size=4), rng.normal(size=(4, 4))),  # n_k == d: a transposed K gives wrong numbers
        (np.array([1.0, 2.0]), np.array([[3.0, 4.0]])),  # one key
    ]


@recorded
def dot_table() -> list[dict]:
    """Each case's q and K, its scores, and the outputs of the usual mistakes with their hints."""
    table = []
    for q, K in _dot_cases():
        want = dot_score(q, K)
        table.append({"q": q, "K": K, "want": want, "mistakes": [
            (K.T @ q if K.shape[0] == K.shape[1] else None,
             N_("you used the keys as columns: in attention_kit the rows of K are the keys, so score l "
             "pairs q with row l of K")),
            (want / np.sqrt(q.shape[-1]), N_("you divided by sqrt(d): that is the scaled dot product; the "
             "plain dot score has no scaling")),
            (softmax(want), N_("you applied the softmax: that gives weights; the score is the raw q . k_l")),
            (cosine_score(q, K), N_("you divided by the vector lengths: that is the cosine score, not the "
             "dot score")),
        ]})
    return table


@recorded(answers=True)  # a prediction's answers: sealed, withheld by PREDICTIONS=record
def winner_table() -> dict:
    """The winning keys of ``WINNER_Q`` among ``WINNER_K`` under the dot and the cosine score."""
    return {"labels": list(WINNER_LABELS),
            "dot": WINNER_LABELS[int(np.argmax(dot_score(WINNER_Q, WINNER_K)))],
            "cosine": WINNER_LABELS[int(np.argmax(cosine_score(WINNER_Q, WINNER_K)))]}


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
def context_table() -> list[dict]:
    """Each case's weights and values, its context, and the usual mistakes' outputs with their hints."""
    table = []
    for a, V in _context_cases():
        want = general_attention_context(a, V)
        mean = np.broadcast_to(V.mean(axis=0), want.shape).copy()
        table.append({"a": a, "V": V, "want": want, "mistakes": [
            (mean, N_("that is the plain average of the values: each value must be weighted by its a_l")),
            (want.T if a.ndim == 2 else None,
             N_("transposed layout: for weights of shape (n_q, n_k) the context has shape (n_q, d_v), "
                "one row per query (rows are tokens)")),
            (general_attention_context(a.T, V) if a.ndim == 2 and a.shape[0] == a.shape[1] else None,
             N_("you transposed the weights: row i of a holds query i's weights over the keys, and it "
             "should stay the row of query i")),
        ]})
    return table


@reference
def general_attention_context(a: np.ndarray, V: np.ndarray) -> np.ndarray:
    """The context of weights ``a`` (``(n_k,)`` or ``(n_q, n_k)``) over the values ``V``."""
    return np.einsum("...k,kd->...d", a, V)


@reference
def _output_cases():
    rng = np.random.default_rng(303)
    return [
        (rng.normal(size=(2, 3)), rng.normal(size=(4, 3)), rng.normal(size=4)),  # n=2, d_v=3, d_y=4
        (rng.normal(size=(3, 3)), rng.normal(size=(3, 3)), rng.normal(size=3)),  # square: W_c vs W_c.T, axis 0 vs 1
        (rng.normal(size=(1, 2)), rng.normal(size=(3, 2)), rng.normal(size=3)),  # one context
    ]


@recorded
def output_table() -> list[dict]:
    """Each case's contexts, W_c and b_c, the probabilities, and the usual mistakes' outputs."""
    table = []
    for C, W, b in _output_cases():
        logits = np.einsum("yv,nv->ny", W, C) + b          # (n, d_y): row i is (W_c c_i + b_c)^T
        want = softmax(logits)
        on_c = softmax(np.einsum("yv,nv->ny", W, softmax(C)) + b)
        table.append({"C": C, "W": W, "b": b, "want": want, "mistakes": [
            (want.T, N_("transposed layout: the result must have shape (n, d_y), one row of "
                        "probabilities per context (rows are tokens), not one column")),
            (logits, N_("these are the logits W_c c + b_c: apply the softmax to turn them into probabilities")),
            (softmax(logits - b), N_("you forgot the bias b_c: the logits are W_c c + b_c")),
            (softmax(logits.T).T, N_("your columns sum to 1, not your rows: the softmax runs over the classes "
                                  "of one context, the last axis, not down the contexts")),
            (softmax(np.einsum("vy,nv->ny", W, C) + b) if W.shape[0] == W.shape[1] else None,
             N_("you multiplied by W_c itself, the survey's column-form matrix: your contexts are rows, and "
             "section 2's table shows what a column-form matrix becomes when the vectors are rows")),
            (on_c, N_("the softmax goes on the logits W_c c + b_c, not on c")),
            (np.einsum("yv,nv->ny", W, softmax(C)) + b, N_("the softmax goes on the logits W_c c + b_c, not on c")),
            (np.exp(logits) / np.exp(logits).sum(), N_("the whole matrix sums to 1, but each ROW must: one "
                                                       "probability distribution per context, so normalise each "
                                                       "row over its classes separately")),
            (softmax(logits - b) + b, N_("the bias was added after the softmax: it belongs to the logits, before they "
                                         "become probabilities; added afterwards, a row no longer sums to 1")),
            (softmax(logits - 2 * b), N_("you subtracted the bias b_c: the survey's model adds it to the logits")),
            (1 / (1 + np.exp(-logits)), N_("each probability comes from its own logit alone (a sigmoid): the rows do "
                                           "not sum to 1. The softmax normalises over all the classes of one context")),
            (softmax(logits / np.sqrt(C.shape[-1])), N_("you scaled the logits (divided by the square root of the "
                                                        "context's size): the output model has no scaling; that "
                                                        "belongs to the scaled dot-product score")),
            (np.log(softmax(logits)), N_("these are the logarithms of the probabilities (a log-softmax): the model's "
                                         "output is the probabilities themselves, between 0 and 1")),
            (np.eye(W.shape[0])[logits.argmax(axis=-1)], N_("you returned a one-hot row for the most likely class: the "
                                                            "model gives a probability to every class, not only the "
                                                            "winner")),
            (softmax(logits * np.log(2)), N_("your exponential has another base than e: the softmax uses the "
                                             "exponential function itself")),
            (softmax(logits + (C.sum(axis=-1, keepdims=True) - 1) * b),
             N_("the bias was added to W_c, so each context multiplies it too: the bias is added to the logits, "
                "after the product, once per class")),
        ]})
    return table
