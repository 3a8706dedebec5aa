"""Answers of a made-up class, written for the grader's trust tests (tests/test_grading_trust.py).

HONEST: for each function exercise that declares honest styles (``Grading.honest`` in its
declaration, ``attention_kit/check/exercises_*.py``: today 02, 04 and 06.1), five answers written
independently in different styles, the textbook ones included (the numerically stable softmax over
``axis=-1``, ``Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)``, the standard layer norm with the ``eps``
passed, the Annotated Transformer's positions), each for the task as it stands. Learner ``k`` of
the honest class writes style ``k`` of every exercise. VALUES: the value exercises' honest forms,
declared the same way. Both are read from the registry, in course order.

ZOE writes notebook 02 in a style of her own; COPY is Zoë's notebook with the names changed and
the comments dropped, handed in by another learner. PASTE is the teacher's solution cells of 04
pasted with comments stripped. HARD_CODED answers 02.1 with a table of the in-class checker's
own cases.
"""

from __future__ import annotations

from attention_kit.check import registry


def _declared(functions: bool) -> dict[str, list[str]]:
    out = {}
    for ex_id, _nb, _ex in registry.exercises():
        g = registry.grading(ex_id)
        if g.honest and bool(g.hidden) == functions:
            out[ex_id] = list(g.honest)
    return out


HONEST: dict[str, list[str]] = _declared(functions=True)

#: Answers to the value exercises, in different honest forms (five for 02.3 and 02.4, so that the
#: graded class's learners, who pick style 0, 2, 4 and 1, each write their own).
VALUES: dict[str, list[str]] = _declared(functions=False)

#: Zoë's own style for notebook 02 (unusual forms no textbook uses).
ZOE = {
    "02.1": "def my_softmax_rows(S):\n    T = np.exp(S - np.amax(S, axis=-1)[..., np.newaxis])\n"
            "    T *= 1.0 / np.add.reduce(T, axis=-1)[..., np.newaxis]\n    return T",
    "02.2": "def my_scaled_scores(Q, K):\n    G = np.matmul(Q, np.transpose(K, (*range(K.ndim - 2), -1, -2)))\n"
            "    G *= np.reciprocal(np.sqrt(np.float64(K.shape[-1])))\n    return G",
    "02.5": "def my_self_attention(X, W_q, W_k, W_v):\n    P = np.matmul(np.dot(X, W_q), np.swapaxes(np.dot(X, W_k), -1, -2))\n"
            "    P *= np.reciprocal(np.sqrt(np.float64(W_k.shape[1])))\n    return ak.softmax(P) @ np.dot(X, W_v)",
    "02.6": "def self_attention_fixed(X, W_q, W_k, W_v):\n    G = np.tensordot(X @ W_q, X @ W_k, axes=([1], [1]))\n"
            "    G *= np.reciprocal(np.sqrt(np.float64(X.shape[1])))\n"
            "    T = np.exp(G - np.amax(G, axis=1)[:, np.newaxis])\n"
            "    T *= 1.0 / np.add.reduce(T, axis=1)[:, np.newaxis]\n    return T @ np.dot(X, W_v)",
}

#: Zoë's notebook 02 handed in by a classmate: names changed, comments and layout changed.
COPY = {
    "02.1": "def my_softmax_rows(scores):\n    # my softmax\n    out = np.exp(scores - np.amax(scores, axis=-1)[..., np.newaxis])\n"
            "    out *= 1.0 / np.add.reduce(out, axis=-1)[..., np.newaxis]\n    return out",
    "02.2": "def my_scaled_scores(A, B):\n    M = np.matmul(A, np.transpose(B, (*range(B.ndim - 2), -1, -2)))\n"
            "    M *= np.reciprocal(np.sqrt(np.float64(B.shape[-1])))   # scale\n    return M",
    "02.5": "def my_self_attention(inp, wq, wk, wv):\n"
            "    sc = np.matmul(np.dot(inp, wq), np.swapaxes(np.dot(inp, wk), -1, -2))   # batch\n"
            "    sc *= np.reciprocal(np.sqrt(np.float64(wk.shape[1])))\n    return ak.softmax(sc) @ np.dot(inp, wv)",
    "02.6": "def self_attention_fixed(inp, wq, wk, wv):\n    sc = np.tensordot(inp @ wq, inp @ wk, axes=([1], [1]))\n"
            "    sc *= np.reciprocal(np.sqrt(np.float64(inp.shape[1])))\n"
            "    ww = np.exp(sc - np.amax(sc, axis=1)[:, np.newaxis])\n"
            "    ww *= 1.0 / np.add.reduce(ww, axis=1)[:, np.newaxis]\n    return ww @ np.dot(inp, wv)",
}
