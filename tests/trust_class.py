"""Answers of a made-up class, written for the grader's trust tests (tests/test_grading_trust.py).

HONEST: for each function exercise of notebooks 02, 04 and 06.1, five answers written
independently in different styles, the textbook ones included (the numerically stable softmax over
``axis=-1``, ``Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)``, the standard layer norm with the ``eps`` passed, the
Annotated Transformer's positions), each for the task as it stands: 02.1 and 02.2 a matrix or a stack of
them, 02.5 a batch or one sequence, 04.3 the positions given, 06.1 a batch with the ``eps`` given.
Learner ``k`` of the honest class writes style ``k`` of every exercise.

ZOE writes notebook 02 in a style of her own; COPY is Zoë's notebook with the names changed and
the comments dropped, handed in by another learner. PASTE is the teacher's solution cells of 04
pasted with comments stripped. HARD_CODED answers 02.1 with a table of the in-class checker's
own cases.
"""

from __future__ import annotations

HONEST: dict[str, list[str]] = {
    "02.1": [
        "def my_softmax_rows(S):\n    z = S - S.max(axis=-1, keepdims=True)\n    e = np.exp(z)\n"
        "    return e / e.sum(axis=-1, keepdims=True)",
        "def my_softmax_rows(S):\n    e = np.exp(S - np.max(S, axis=-1, keepdims=True))\n"
        "    return e / np.sum(e, axis=-1, keepdims=True)",
        "def my_softmax_rows(S):\n    out = np.empty(S.shape)\n    for idx in np.ndindex(S.shape[:-1]):\n"
        "        r = np.exp(S[idx] - S[idx].max())\n        out[idx] = r / r.sum()\n    return out",
        "def my_softmax_rows(S):\n    shifted = S - S.max(-1)[..., None]\n    ex = np.exp(shifted)\n"
        "    return ex / ex.sum(-1)[..., None]",
        "def my_softmax_rows(S):\n    rows = S.reshape(-1, S.shape[-1])\n    m = np.max(rows, axis=1, keepdims=True)\n"
        "    num = np.exp(rows - m)\n    return (num / num.sum(axis=1, keepdims=True)).reshape(S.shape)",
    ],
    "02.2": [
        "def my_scaled_scores(Q, K):\n    d_k = Q.shape[-1]\n    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)",
        "def my_scaled_scores(Q, K):\n    return (Q @ K.swapaxes(-2, -1)) / np.sqrt(Q.shape[-1])",
        "def my_scaled_scores(Q, K):\n    return np.matmul(Q, np.moveaxis(K, -1, -2)) / Q.shape[-1] ** 0.5",
        "import math\n\ndef my_scaled_scores(Q, K):\n    scale = 1 / math.sqrt(K.shape[-1])\n"
        "    return scale * np.matmul(Q, np.swapaxes(K, -2, -1))",
        "def my_scaled_scores(Q, K):\n    return np.einsum('...id,...jd->...ij', Q, K) / np.sqrt(Q.shape[-1])",
    ],
    "02.5": [
        "def my_self_attention(X, W_q, W_k, W_v):\n    Q, K, V = X @ W_q, X @ W_k, X @ W_v\n"
        "    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])\n    return ak.softmax(S) @ V",
        "def my_self_attention(X, W_q, W_k, W_v):\n    Q = X @ W_q\n    K = X @ W_k\n"
        "    A = ak.softmax(Q @ np.moveaxis(K, -1, -2) / np.sqrt(W_q.shape[1]))\n    return A @ (X @ W_v)",
        "def my_self_attention(X, W_q, W_k, W_v):\n"
        "    S = (X @ W_q) @ np.swapaxes(X @ W_k, -2, -1) / np.sqrt(W_k.shape[1])\n"
        "    E = np.exp(S - S.max(-1, keepdims=True))\n    return (E / E.sum(-1, keepdims=True)) @ (X @ W_v)",
        "def my_self_attention(X, W_q, W_k, W_v):\n    q = np.einsum('...nd,dk->...nk', X, W_q)\n"
        "    k = np.einsum('...nd,dk->...nk', X, W_k)\n    v = np.einsum('...nd,dv->...nv', X, W_v)\n"
        "    w = ak.softmax(np.einsum('...ik,...jk->...ij', q, k) / np.sqrt(q.shape[-1]))\n"
        "    return np.einsum('...ij,...jv->...iv', w, v)",
        "def my_self_attention(X, W_q, W_k, W_v):\n    d_k = W_k.shape[1]\n"
        "    scores = np.matmul(np.matmul(X, W_q), np.matmul(X, W_k).swapaxes(-1, -2)) / d_k ** 0.5\n"
        "    return np.matmul(ak.softmax(scores), np.matmul(X, W_v))",
    ],
    "02.6": [
        "def self_attention_fixed(X, W_q, W_k, W_v):\n    n, d = X.shape\n    Q = X @ W_q\n    K = X @ W_k\n"
        "    V = X @ W_v\n    S = Q @ K.T / np.sqrt(d)\n    E = np.exp(S - S.max(axis=1, keepdims=True))\n"
        "    return E / E.sum(axis=1, keepdims=True) @ V",
        "def self_attention_fixed(X, W_q, W_k, W_v):\n    Q, K, V = np.matmul(X, W_q), np.matmul(X, W_k), np.matmul(X, W_v)\n"
        "    S = np.matmul(Q, K.T) / np.sqrt(K.shape[1])\n    return np.matmul(softmax_given(S), V)",
        "def self_attention_fixed(X, W_q, W_k, W_v):\n    scores = (X @ W_q) @ (X @ W_k).T\n"
        "    scores = scores / np.sqrt(X.shape[1])\n    w = np.exp(scores - scores.max(-1, keepdims=True))\n"
        "    w = w / w.sum(-1, keepdims=True)\n    return w @ (X @ W_v)",
        "def self_attention_fixed(X, W_q, W_k, W_v):\n    out = []\n    K, V = X @ W_k, X @ W_v\n"
        "    for x in X:\n        s = (x @ W_q) @ K.T / np.sqrt(len(x))\n        a = np.exp(s - s.max())\n"
        "        out.append((a / a.sum()) @ V)\n    return np.array(out)",
        "def self_attention_fixed(X, W_q, W_k, W_v):\n    d = X.shape[-1]\n    Q = X.dot(W_q)\n    K = X.dot(W_k)\n"
        "    V = X.dot(W_v)\n    A = softmax_given(Q.dot(K.T) / d ** 0.5)\n    return A.dot(V)",
    ],
    "04.1": [
        "def my_causal_mask(n):\n    return np.tril(np.ones((n, n), dtype=bool))",
        "def my_causal_mask(n):\n    i = np.arange(n)\n    return i[:, None] >= i[None, :]",
        "def my_causal_mask(n):\n    return ~np.triu(np.ones((n, n), dtype=bool), k=1)",
        "def my_causal_mask(n):\n    return np.tri(n, dtype=bool)",
        "def my_causal_mask(n):\n    rows = np.arange(n).reshape(-1, 1)\n    cols = np.arange(n).reshape(1, -1)\n"
        "    return cols <= rows",
    ],
    "04.2": [
        "def my_masked_softmax(S, mask):\n    z = np.where(mask, S, -np.inf)\n    m = z.max(axis=1, keepdims=True)\n"
        "    m = np.where(np.isfinite(m), m, 0.0)\n    e = np.exp(z - m)\n    s = e.sum(axis=1, keepdims=True)\n"
        "    return e / np.where(s == 0, 1.0, s)",
        "def my_masked_softmax(S, mask):\n    out = np.zeros(S.shape)\n    for i in range(S.shape[0]):\n"
        "        keep = mask[i]\n        if keep.any():\n            z = np.exp(S[i, keep] - S[i, keep].max())\n"
        "            out[i, keep] = z / z.sum()\n    return out",
        "def my_masked_softmax(S, mask):\n    m = np.where(mask, S, -np.inf).max(axis=-1, keepdims=True)\n"
        "    m[~np.isfinite(m)] = 0.0\n    e = np.where(mask, np.exp(np.where(mask, S, m) - m), 0.0)\n"
        "    s = e.sum(axis=-1, keepdims=True)\n    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)",
        "def my_masked_softmax(S, mask):\n    big = np.max(np.where(mask, S, -np.inf), axis=1)\n"
        "    big[np.isinf(big)] = 0\n    w = np.exp(np.where(mask, S, big[:, None]) - big[:, None]) * mask\n    z = w.sum(1)\n"
        "    z[z == 0] = 1\n    return w / z[:, None]",
        "def my_masked_softmax(S, mask):\n    scores = np.where(mask, S, -np.inf)\n    result = np.zeros_like(scores)\n"
        "    live = mask.any(axis=1)\n    s = scores[live]\n    e = np.exp(s - s.max(axis=1, keepdims=True))\n"
        "    result[live] = e / e.sum(axis=1, keepdims=True)\n    return result",
    ],
    "04.3": [
        "def my_positions(pos, d):\n    omega = 10000.0 ** (-np.arange(0, d, 2) / d)\n"
        "    theta = np.asarray(pos)[:, None] * omega[None, :]\n    P = np.zeros((len(pos), d))\n"
        "    P[:, 0::2] = np.sin(theta)\n    P[:, 1::2] = np.cos(theta)\n    return P",
        "def my_positions(pos, d):\n    position = np.asarray(pos, dtype=float).reshape(-1, 1)\n"
        "    div = np.exp(np.arange(0, d, 2) * (-np.log(10000.0) / d))\n    pe = np.zeros((len(pos), d))\n"
        "    pe[:, 0::2] = np.sin(position * div)\n    pe[:, 1::2] = np.cos(position * div)\n    return pe",
        "def my_positions(pos, d):\n    i = np.arange(d // 2)\n    ang = np.outer(pos, 1 / 10000 ** (2 * i / d))\n"
        "    return np.stack([np.sin(ang), np.cos(ang)], axis=-1).reshape(len(pos), d)",
        "def my_positions(pos, d):\n    t = np.array(pos, dtype=float)[:, None]\n"
        "    freq = np.power(10000.0, -np.arange(0, d, 2, dtype=float) / d)[None, :]\n"
        "    out = np.zeros((t.shape[0], d))\n    out[:, ::2] = np.sin(t * freq)\n    out[:, 1::2] = np.cos(t * freq)\n"
        "    return out",
        "def my_positions(pos, d):\n    k = np.arange(d)\n    rates = 1.0 / 10000 ** ((k - k % 2) / d)\n"
        "    a = np.reshape(pos, (-1, 1)) * rates\n    return np.where(k % 2 == 0, np.sin(a), np.cos(a))",
    ],
    "06.1": [
        "def my_layer_norm(X, gamma, beta, eps=1e-5):\n    mu = X.mean(axis=-1, keepdims=True)\n"
        "    var = X.var(axis=-1, keepdims=True)\n    return gamma * (X - mu) / np.sqrt(var + eps) + beta",
        "def my_layer_norm(X, gamma, beta, eps=1e-5):\n    std = np.sqrt(X.var(-1, keepdims=True) + eps)\n"
        "    return gamma * ((X - X.mean(-1, keepdims=True)) / std) + beta",
        "def my_layer_norm(X, gamma, beta, eps=1e-5):\n    mu = X.sum(axis=-1, keepdims=True) / X.shape[-1]\n"
        "    xc = X - mu\n    var = (xc ** 2).sum(axis=-1, keepdims=True) / X.shape[-1]\n"
        "    return xc / np.sqrt(var + eps) * gamma + beta",
        "def my_layer_norm(X, gamma, beta, eps=1e-5):\n    mu = np.mean(X, axis=-1)[..., None]\n"
        "    sd = np.sqrt(np.mean((X - mu) ** 2, axis=-1)[..., None] + eps)\n    return (X - mu) / sd * gamma + beta",
        "def my_layer_norm(X, gamma, beta, eps=1e-5):\n    rows = X.reshape(-1, X.shape[-1])\n"
        "    centred = rows - np.mean(rows, axis=1, keepdims=True)\n"
        "    inv = 1.0 / np.sqrt(np.mean(centred * centred, axis=1, keepdims=True) + eps)\n"
        "    return (centred * inv * gamma + beta).reshape(X.shape)",
    ],
}

_X = "X_ex = np.array([[0.1, 0.5], [0.3, 0.4], [0.6, 0.3]])  # the exercise's sentence\n"

#: Answers to notebook 02's value exercises, in different honest forms (five for 02.3 and 02.4, so
#: that the graded class's learners, who pick style 0, 2, 4 and 1, each write their own).
VALUES = {
    "02.3": [_X + "s = X_ex[2] @ X_ex.T / np.sqrt(2)\na = np.exp(s) / np.exp(s).sum()\ny3 = a @ X_ex",
             _X + "y3 = ak.softmax(X_ex @ X_ex.T / np.sqrt(2))[2] @ X_ex",
             _X + "scores = np.array([X_ex[2] @ x for x in X_ex]) / 2 ** 0.5\nw = np.exp(scores)\n"
             "w = w / w.sum()\ny3 = (w[:, None] * X_ex).sum(axis=0)",
             _X + "d = X_ex.shape[1]\nlogits = X_ex @ X_ex[2] / np.sqrt(d)\n"
             "weights = np.exp(logits - logits.max())\nweights /= weights.sum()\ny3 = weights @ X_ex",
             _X + "x3 = X_ex[2]\ne = [np.exp(x3 @ xj / np.sqrt(2)) for xj in X_ex]\n"
             "y3 = sum(ej * xj for ej, xj in zip(e, X_ex)) / sum(e)"],
    "02.4": ["variance, std = 32, np.sqrt(32)", "variance = 16 * 2\nstd = variance ** 0.5",
             "variance, std = 32.0, 5.656854",
             "d_k = 16\nterm_var = 1 * 1 + 1 * 0 ** 2 + 1 * 1 ** 2\nvariance = d_k * term_var\nstd = np.sqrt(variance)",
             "variance = 16 * (1.0 + 1.0)\nstd = math.sqrt(variance)"],
    "04.4": ["answer = [3, 4, 5]", "answer = list(range(3, 6))", "answer = (3, 4, 5)"],
}

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
