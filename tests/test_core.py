"""Every core function of attention_kit against a plain-loop reference written here.

The references use Python loops and ``math`` on single numbers, and where the survey of Brauwers &
Frasincar (arXiv 2203.14263) writes a formula with column vectors (``K = W_K F``, ``k^T W q``), the
reference is written in that column form, with explicit column matrices, so that each test also
checks the translation to the row convention (``K = F @ W_k`` with ``W_k = W_K.T``).

Score formulas. The table of score functions in the survey (Brauwers & Frasincar, IEEE TKDE 35(4),
2023) is, in the survey's notation (column vectors, ``k_l`` the l-th key):

    additive           w^T act(W_1 q + W_2 k_l + b)
    concatenate        w^T act(W [q; k_l] + b)
    multiplicative     q^T k_l
    scaled mult.       q^T k_l / sqrt(d_k)
    general            k_l^T W q
    biased general     k_l^T (W q + b)
    activated general  act(k_l^T W q + b)
    similarity         similarity(q, k_l)   (cosine here)

Each formula is also the standard form of the paper that introduced it (Bahdanau et al. 2015 for the
additive score, Luong et al. 2015 for dot, general and concat, Vaswani et al. 2017 for the scaled
product, Graves et al. 2014 for cosine similarity), and those agree with the table.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import attention_kit as ak

RNG_SEED = 20240501


@pytest.fixture
def rng():
    return np.random.default_rng(RNG_SEED)


# ----------------------------------------------------------------------------------------------
# plain-loop references
# ----------------------------------------------------------------------------------------------


def loop_softmax(row, allowed=None):
    """Softmax of one list of numbers; masked entries get 0; an all-masked row gives zeros."""
    allowed = [True] * len(row) if allowed is None else list(allowed)
    live = [x for x, ok in zip(row, allowed, strict=True) if ok]
    if not live:
        return [0.0] * len(row)
    m = max(live)
    ex = [math.exp(x - m) if ok else 0.0 for x, ok in zip(row, allowed, strict=True)]
    total = sum(ex)
    return [e / total for e in ex]


def loop_dot(u, v):
    return sum(float(a) * float(b) for a, b in zip(u, v, strict=True))


def loop_matvec(M, v):
    """Column convention: M (rows x cols) times column vector v (cols,)."""
    return [loop_dot(row, v) for row in M]


def loop_matmul(A, B):
    A = np.asarray(A)
    B = np.asarray(B)
    return np.array([[loop_dot(A[i], B[:, j]) for j in range(B.shape[1])] for i in range(A.shape[0])])


def loop_sdpa(Q, K, V, allowed=None, scale=None):
    """softmax(Q K^T * scale) V, one query at a time."""
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    scale = 1 / math.sqrt(Q.shape[1]) if scale is None else scale
    out, weights = [], []
    for i in range(Q.shape[0]):
        e = [loop_dot(Q[i], K[j]) * scale for j in range(K.shape[0])]
        a = loop_softmax(e, None if allowed is None else allowed[i])
        weights.append(a)
        out.append([sum(a[j] * V[j, c] for j in range(K.shape[0])) for c in range(V.shape[1])])
    return np.array(out), np.array(weights)


ACT = {"tanh": math.tanh, "relu": lambda z: max(z, 0.0), "sigmoid": lambda z: 1 / (1 + math.exp(-z)),
       "identity": lambda z: z}


def survey_score(name, q, k, params, act="tanh"):
    """One score e_l = score(q, k_l) in the survey's column form.

    The row-convention parameters of attention_kit are turned into the survey's column ones here:
    ``W_survey = W.T`` (so ``k^T W_survey q == q W k^T``).
    """
    f = ACT[act]
    q = [float(x) for x in q]
    k = [float(x) for x in k]
    if name == "additive":
        W1, W2, w = params["W1"].T, params["W2"].T, params["w"]  # (d_w, d_q), (d_w, d_k)
        b = params.get("b")
        b = [0.0] * len(w) if b is None else b
        h = [f(a + c + bb) for a, c, bb in zip(loop_matvec(W1, q), loop_matvec(W2, k), b, strict=True)]
        return loop_dot(w, h)
    if name == "concat":
        W, w = params["W"].T, params["w"]  # (d_w, d_q + d_k)
        b = params.get("b")
        b = [0.0] * len(w) if b is None else b
        h = [f(z + bb) for z, bb in zip(loop_matvec(W, q + k), b, strict=True)]
        return loop_dot(w, h)
    if name == "dot":
        return loop_dot(q, k)
    if name == "scaled_dot":
        return loop_dot(q, k) / math.sqrt(len(k))
    if name == "general":
        return loop_dot(k, loop_matvec(params["W"].T, q))
    if name == "biased_general":
        Wq = loop_matvec(params["W"].T, q)
        return loop_dot(k, [a + b for a, b in zip(Wq, params["b"], strict=True)])
    if name == "activated_general":
        return f(loop_dot(k, loop_matvec(params["W"].T, q)) + float(params["b"]))
    if name == "similarity":
        return loop_dot(q, k) / (math.sqrt(loop_dot(q, q)) * math.sqrt(loop_dot(k, k)))
    raise AssertionError(name)


def make_score_params(name, d_q, d_k, rng, d_w=3):
    if name == "additive":
        return {"W1": rng.normal(size=(d_q, d_w)), "W2": rng.normal(size=(d_k, d_w)),
                "w": rng.normal(size=d_w), "b": rng.normal(size=d_w)}
    if name == "concat":
        return {"W": rng.normal(size=(d_q + d_k, d_w)), "w": rng.normal(size=d_w), "b": rng.normal(size=d_w)}
    if name in ("general",):
        return {"W": rng.normal(size=(d_q, d_k))}
    if name == "biased_general":
        return {"W": rng.normal(size=(d_q, d_k)), "b": rng.normal(size=d_k)}
    if name == "activated_general":
        return {"W": rng.normal(size=(d_q, d_k)), "b": float(rng.normal())}
    return {}


# ----------------------------------------------------------------------------------------------
# the worked example of notebook 02: three 2-D tokens and their dot products
# ----------------------------------------------------------------------------------------------


def test_toy_example_dot_product_matrix():
    X = np.array([[0.1, 0.5],  # x1
                  [0.3, 0.4],  # x2
                  [0.8, 0.0]])  # x3
    expected = np.array([[0.26, 0.23, 0.08],
                         [0.23, 0.25, 0.24],
                         [0.08, 0.24, 0.64]])
    np.testing.assert_allclose(ak.dot_score(X, X), expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ak.score("dot", X, X), expected, rtol=0, atol=1e-12)
    # y1 = 0.26 x1 + 0.23 x2 + 0.08 x3 (the un-normalised first step of notebook 02): Y = (X X^T) X
    Y = ak.dot_score(X, X) @ X
    np.testing.assert_allclose(Y[0], 0.26 * X[0] + 0.23 * X[1] + 0.08 * X[2], rtol=0, atol=1e-12)
    # with the softmax: general attention with identity projections = softmax(X X^T) X
    ctx, a = ak.general_attention(X, X, X, score="dot")
    ref_out, ref_w = loop_sdpa(X, X, X, scale=1.0)
    np.testing.assert_allclose(a, ref_w, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ctx, ref_out, rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------------------------
# softmax and masks
# ----------------------------------------------------------------------------------------------


def test_softmax_matches_loop(rng):
    x = rng.normal(scale=3, size=(4, 6))
    got = ak.softmax(x)
    ref = np.array([loop_softmax(row) for row in x])
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-15)


def test_softmax_batch_and_axis(rng):
    x = rng.normal(size=(2, 3, 5))  # (batch, n_q, n_k)
    got = ak.softmax(x)
    for b in range(2):
        for i in range(3):
            np.testing.assert_allclose(got[b, i], loop_softmax(x[b, i]), rtol=1e-13)
    got0 = ak.softmax(x[0], axis=0)  # normalise columns instead
    for j in range(5):
        np.testing.assert_allclose(got0[:, j], loop_softmax(x[0][:, j]), rtol=1e-13)
    assert not np.shares_memory(got, x)


def test_softmax_does_not_modify_input(rng):
    x = rng.normal(size=(3, 4))
    before = x.copy()
    ak.softmax(x)
    ak.softmax(x, mask=ak.causal_mask(3, 4))
    np.testing.assert_array_equal(x, before)


def test_softmax_mask_matches_loop(rng):
    x = rng.normal(size=(4, 5))
    mask = rng.random((4, 5)) < 0.6
    mask[2] = False  # one fully masked row
    got = ak.softmax(x, mask=mask)
    ref = np.array([loop_softmax(r, m) for r, m in zip(x, mask, strict=True)])
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(got[2], np.zeros(5))
    assert np.all(got[~mask] == 0)


def test_softmax_mask_broadcasts(rng):
    x = rng.normal(size=(2, 3, 4))
    mask = np.array([True, True, False, True])  # (n_k,) applies to every row
    got = ak.softmax(x, mask=mask)
    assert np.all(got[..., 2] == 0)
    np.testing.assert_allclose(got.sum(-1), 1.0, rtol=1e-14)


def test_softmax_extreme_scores_are_finite():
    x = np.array([[1e4, -1e4, 0.0], [-1e4, -1e4, -1e4], [1e4, 1e4, -1e4]])
    got = ak.softmax(x)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3], [0.5, 0.5, 0]], atol=1e-15)
    got32 = ak.softmax(x.astype(np.float32))
    assert got32.dtype == np.float32 and np.isfinite(got32).all()


def test_softmax_kernel_equals_the_formula(rng):
    # the in-place fast path behind softmax and attention (mechanism/kernels.py) gives the plain
    # formula exp(x - max) / sum, masked rows included, and refuses NaN/inf
    from attention_kit.mechanism.kernels import softmax_inplace

    x = rng.normal(scale=4, size=(2, 2, 64, 96))
    mask = rng.random((64, 96)) < 0.7
    mask[5] = False
    got = ak.softmax(x, mask=mask)
    e = np.where(mask, np.exp(x - np.where(mask, x, -np.inf).max(-1, keepdims=True, initial=-np.inf)), 0.0)
    ref = np.divide(e, e.sum(-1, keepdims=True), out=np.zeros_like(e), where=e.sum(-1, keepdims=True) > 0)
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-300)
    assert np.all(got[..., 5, :] == 0)
    np.testing.assert_array_equal(ak.softmax(x), softmax_inplace(x.copy()))
    row = [float(v) for v in x[1, 0, 7]]
    np.testing.assert_allclose(got[1, 0, 7], loop_softmax(row, mask[7]), rtol=1e-12, atol=1e-300)
    big = np.zeros((4, 512, 512))
    big[3, 100, 7] = np.inf
    with pytest.raises(ak.NonFiniteError, match="scores hold NaN or \\+inf"):
        softmax_inplace(big)


@pytest.mark.parametrize("dtype,expected", [(np.float32, np.float32), (np.float64, np.float64),
                                            (np.int64, np.float64), (np.int32, np.float64),
                                            (bool, np.float64)])
def test_softmax_dtype_rules(dtype, expected):
    x = np.array([[1, 2, 3], [0, 0, 1]]).astype(dtype)
    got = ak.softmax(x)
    assert got.dtype == expected
    np.testing.assert_allclose(got.sum(-1), 1.0, rtol=1e-6)


def test_causal_mask_loop():
    m = ak.causal_mask(4)
    assert m.dtype == bool and m.shape == (4, 4)
    for i in range(4):
        for j in range(4):
            assert m[i, j] == (j <= i)
    m2 = ak.causal_mask(2, 5)
    assert m2.shape == (2, 5) and m2[1].tolist() == [True, True, False, False, False]


def test_padding_mask_loop():
    m = ak.padding_mask([2, 4, 0], 4)
    assert m.shape == (3, 1, 4) and m.dtype == bool
    for b, L in enumerate([2, 4, 0]):
        assert m[b, 0].tolist() == [j < L for j in range(4)]
    assert ak.padding_mask(3, 5).tolist() == [[True, True, True, False, False]]
    assert ak.padding_mask([1, 2], 3, n_q=2).shape == (2, 2, 3)


def test_window_mask_loop():
    m = ak.window_mask(3, 6, center=[0, 2.5, 5], D=1)
    for i, p in enumerate([0, 2.5, 5]):
        assert m[i].tolist() == [abs(s - p) <= 1 for s in range(6)]


# ----------------------------------------------------------------------------------------------
# score functions
# ----------------------------------------------------------------------------------------------

ALL_SCORES = sorted(ak.SCORES)


def test_registry_names():
    assert set(ak.SCORES) == {"additive", "concat", "dot", "scaled_dot", "general", "biased_general",
                              "activated_general", "similarity"}
    for spec in ak.SCORES.values():
        assert callable(spec.fn) and spec.formula and spec.survey_formula and spec.origin


@pytest.mark.parametrize("name", ALL_SCORES)
def test_score_matches_survey_loop(name, rng):
    same = ak.SCORES[name].needs_same_dim
    d_q, d_k = (3, 3) if same else (3, 4)
    Q = rng.normal(size=(2, d_q))
    K = rng.normal(size=(5, d_k))
    params = make_score_params(name, d_q, d_k, rng)
    got = ak.score(name, Q, K, **params)
    assert got.shape == (2, 5)
    ref = np.array([[survey_score(name, q, k, params) for k in K] for q in Q])
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-14)
    # the named function gives the same as the registry
    np.testing.assert_array_equal(ak.SCORES[name].fn(Q, K, **params), got)
    # a single query (d_q,) gives (n_k,)
    one = ak.score(name, Q[1], K, **params)
    assert one.shape == (5,)
    np.testing.assert_allclose(one, ref[1], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ALL_SCORES)
def test_score_batch_dims(name, rng):
    same = ak.SCORES[name].needs_same_dim
    d_q, d_k = (2, 2) if same else (2, 3)
    Q = rng.normal(size=(3, 2, d_q))  # (batch, n_q, d_q)
    K = rng.normal(size=(3, 4, d_k))  # (batch, n_k, d_k)
    params = make_score_params(name, d_q, d_k, rng)
    got = ak.score(name, Q, K, **params)
    assert got.shape == (3, 2, 4)
    for b in range(3):
        np.testing.assert_allclose(got[b], ak.score(name, Q[b], K[b], **params), rtol=1e-13)


@pytest.mark.parametrize("name", ALL_SCORES)
@pytest.mark.parametrize("dtype,expected", [(np.float32, np.float32), (np.float64, np.float64),
                                            (np.int64, np.float64)])
def test_score_dtype(name, dtype, expected, rng):
    Q = (rng.normal(size=(2, 3)) * 3).astype(dtype)
    K = (rng.normal(size=(4, 3)) * 3).astype(dtype)
    params = {k: (np.asarray(v).astype(np.float32) if dtype == np.float32 else v)
              for k, v in make_score_params(name, 3, 3, rng).items()}
    assert ak.score(name, Q, K, **params).dtype == expected


@pytest.mark.parametrize("act", ["tanh", "relu", "sigmoid", "identity"])
def test_activations_in_loop(act, rng):
    Q, K = rng.normal(size=(2, 3)), rng.normal(size=(4, 2))
    for name in ("additive", "concat", "activated_general"):
        params = make_score_params(name, 3, 2, rng)
        got = ak.score(name, Q, K, act=act, **params)
        ref = [[survey_score(name, q, k, params, act=act) for k in K] for q in Q]
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-14)


def test_default_score_params_general_is_dot(rng):
    Q, K = rng.normal(size=(2, 3)), rng.normal(size=(4, 3))
    for name in ("general", "biased_general"):
        np.testing.assert_allclose(ak.score(name, Q, K), ak.dot_score(Q, K), rtol=1e-14)
    np.testing.assert_allclose(ak.score("activated_general", Q, K), np.tanh(ak.dot_score(Q, K)), rtol=1e-14)
    for name in ALL_SCORES:  # every entry works with defaults, even with d_q != d_k where allowed
        d_k = 3 if ak.SCORES[name].needs_same_dim else 5
        assert ak.score(name, Q, rng.normal(size=(4, d_k))).shape == (2, 4)


def test_cosine_zero_vector_scores_zero():
    got = ak.cosine_score(np.array([[0.0, 0.0], [1.0, 0.0]]), np.array([[1.0, 1.0], [2.0, 0.0]]))
    np.testing.assert_allclose(got, [[0, 0], [1 / math.sqrt(2), 1]], atol=1e-15)


# ----------------------------------------------------------------------------------------------
# alignment
# ----------------------------------------------------------------------------------------------


def test_soft_align_temperature_loop(rng):
    e = rng.normal(size=(3, 5))
    for t in (0.25, 1.0, 4.0):
        ref = np.array([loop_softmax([x / t for x in row]) for row in e])
        np.testing.assert_allclose(ak.soft_align(e, temperature=t), ref, rtol=1e-13)
        np.testing.assert_allclose(ak.align(e, "soft", temperature=t), ref, rtol=1e-13)


def test_hard_align_argmax_loop(rng):
    e = rng.normal(size=(4, 6))
    e[1, 2] = e[1, 4] = 10.0  # a tie: the first key wins
    got = ak.hard_align(e)
    for i, row in enumerate(e):
        j = max(range(6), key=lambda c: (row[c], -c))
        assert got[i].tolist() == [1.0 if c == j else 0.0 for c in range(6)]
    assert got[1, 2] == 1.0
    mask = np.ones((4, 6), bool)
    mask[0, int(np.argmax(e[0]))] = False
    mask[3] = False
    gm = ak.hard_align(e, mask=mask)
    assert gm[0, int(np.argmax(np.where(mask[0], e[0], -np.inf)))] == 1.0
    assert gm[3].sum() == 0 and gm[:3].sum() == 3


def test_hard_align_sampling_follows_softmax():
    e = np.log(np.array([0.1, 0.2, 0.7]))
    E = np.tile(e, (2000, 1))  # 2000 independent queries with the same scores
    got = ak.hard_align(E, rng=np.random.default_rng(1))
    assert (got.sum(-1) == 1).all()
    freq = got.mean(0)
    # binomial standard error at n = 2000 is at most 0.0103; 5 sigma (the draw is seeded anyway)
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.7], atol=0.052)
    # the same seed gives the same draw
    np.testing.assert_array_equal(got, ak.hard_align(E, rng=np.random.default_rng(1)))


def loop_local(e, p, D, allowed=None):
    """Luong local-p: softmax over the window [p - D, p + D], times exp(-(s - p)^2 / (2 sigma^2))."""
    sigma = D / 2
    n = len(e)
    win = [abs(s - p) <= D and (allowed is None or allowed[s]) for s in range(n)]
    a = loop_softmax(e, win)
    return [a[s] * math.exp(-((s - p) ** 2) / (2 * sigma**2)) for s in range(n)]


@pytest.mark.parametrize("p,D", [(3, 1), (3, 2), (0, 2), (7, 3), (2.4, 2), (5.5, 1)])
def test_local_align_luong_loop(p, D, rng):
    e = rng.normal(size=8)
    got = ak.local_align(e, p=p, D=D)
    ref = loop_local(list(e), p, D)
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-16)
    assert got.sum() <= 1 + 1e-12
    for s in range(8):
        if abs(s - p) > D:
            assert got[s] == 0
    ren = ak.local_align(e, p=p, D=D, renormalize=True)
    np.testing.assert_allclose(ren.sum(), 1.0, rtol=1e-13)
    np.testing.assert_allclose(ren, np.array(ref) / sum(ref), rtol=1e-12)
    np.testing.assert_allclose(ak.align(e, "local", p=p, D=D), got, rtol=0, atol=0)


def test_local_align_per_query_centres_and_mask(rng):
    e = rng.normal(size=(3, 7))
    p = np.array([0.0, 3.0, 6.0])
    mask = rng.random((3, 7)) < 0.8
    got = ak.local_align(e, p=p, D=2, mask=mask)
    for i in range(3):
        np.testing.assert_allclose(got[i], loop_local(list(e[i]), p[i], 2, mask[i]), rtol=1e-13, atol=1e-16)


def test_local_align_sigma_is_half_D():
    # equal scores: inside the window the softmax is uniform, so the weights trace the Gaussian
    D, p = 4, 5
    got = ak.local_align(np.zeros(11), p=p, D=D)
    inside = np.arange(p - D, p + D + 1)
    ratio = got[inside] / got[p]
    np.testing.assert_allclose(ratio, np.exp(-((inside - p) ** 2) / (2 * (D / 2) ** 2)), rtol=1e-13)
    np.testing.assert_allclose(got[p + 2] / got[p], math.exp(-0.5), rtol=1e-13)  # one sigma away


def test_alignment_registry():
    assert set(ak.ALIGNMENTS) == {"soft", "hard", "local"}


# ----------------------------------------------------------------------------------------------
# the general attention module (survey column form vs row form)
# ----------------------------------------------------------------------------------------------


def survey_attend(q, F_cols, W_K, W_V, score_name="dot", params=None):
    """The general attention module exactly as the survey writes it: columns are vectors.

    F_cols (d_f, n_f); W_K (d_k, d_f); W_V (d_v, d_f); K = W_K F, V = W_V F, e_l = score(q, k_l),
    a = softmax(e), c = sum_l a_l v_l.
    """
    K_cols = loop_matmul(W_K, F_cols)  # (d_k, n_f)
    V_cols = loop_matmul(W_V, F_cols)  # (d_v, n_f)
    n_f = F_cols.shape[1]
    e = [survey_score(score_name, q, K_cols[:, l], params or {}) for l in range(n_f)]
    a = loop_softmax(e)
    c = [sum(a[l] * V_cols[r, l] for l in range(n_f)) for r in range(V_cols.shape[0])]
    return np.array(c), np.array(a), np.array(e)


@pytest.mark.parametrize("name", ALL_SCORES)
def test_attend_column_form_equals_row_form(name, rng):
    n_f, d_f, d_k, d_v = 5, 4, 3, 2
    F = rng.normal(size=(n_f, d_f))  # rows are feature vectors
    W_k = rng.normal(size=(d_f, d_k))  # row-convention projections
    W_v = rng.normal(size=(d_f, d_v))
    d_q = d_k if ak.SCORES[name].needs_same_dim else 2
    q = rng.normal(size=d_q)
    params = make_score_params(name, d_q, d_k, rng)
    c, a, e = ak.attend(q, F, W_k, W_v, score=name, score_params=params, return_scores=True)
    # the survey: F as columns, W_K = W_k.T of shape (d_k, d_f)
    c_ref, a_ref, e_ref = survey_attend(q, F.T, W_k.T, W_v.T, name, params)
    assert c.shape == (d_v,) and a.shape == (n_f,)
    np.testing.assert_allclose(e, e_ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(a, a_ref, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(c, c_ref, rtol=1e-12, atol=1e-14)


def test_attend_identity_projections_and_many_queries(rng):
    F = rng.normal(size=(4, 3))
    Qs = rng.normal(size=(2, 3))
    c, a = ak.attend(Qs, F)  # W_k = W_v = identity: the raw features
    eye = np.eye(3)
    for i in range(2):
        c_ref, a_ref, _ = survey_attend(Qs[i], F.T, eye, eye)
        np.testing.assert_allclose(a[i], a_ref, rtol=1e-13)
        np.testing.assert_allclose(c[i], c_ref, rtol=1e-13)


def test_attend_alignment_options(rng):
    F = rng.normal(size=(6, 2))
    q = rng.normal(size=2)
    e = ak.dot_score(q, F)
    c, a = ak.attend(q, F, align="hard")
    assert a.tolist() == ak.hard_align(e).tolist()
    np.testing.assert_allclose(c, F[int(np.argmax(e))], rtol=0)
    c, a = ak.attend(q, F, align="local", align_params={"p": 2, "D": 2})
    np.testing.assert_allclose(a, loop_local(list(e), 2, 2), rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(c, a @ F, rtol=1e-13)
    c, a = ak.attend(q, F, align_params={"temperature": 0.5}, mask=np.array([1, 1, 0, 1, 1, 1], bool))
    np.testing.assert_allclose(a, loop_softmax(list(e / 0.5), [1, 1, 0, 1, 1, 1]), rtol=1e-13, atol=1e-16)


def test_general_attention_loop(rng):
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    c, a = ak.general_attention(Q, K, V, score="scaled_dot")
    ref_c, ref_a = loop_sdpa(Q, K, V)
    np.testing.assert_allclose(a, ref_a, rtol=1e-13)
    np.testing.assert_allclose(c, ref_c, rtol=1e-13)


# ----------------------------------------------------------------------------------------------
# scaled dot-product and self-attention
# ----------------------------------------------------------------------------------------------


def test_sdpa_loop(rng):
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    out, w = ak.scaled_dot_product_attention(Q, K, V)
    ref_out, ref_w = loop_sdpa(Q, K, V)
    np.testing.assert_allclose(w, ref_w, rtol=1e-13)
    np.testing.assert_allclose(out, ref_out, rtol=1e-13, atol=1e-15)
    out, w = ak.scaled_dot_product_attention(Q, K, V, scale=0.3)
    ref_out, ref_w = loop_sdpa(Q, K, V, scale=0.3)
    np.testing.assert_allclose(w, ref_w, rtol=1e-13)


def test_sdpa_mask_and_fully_masked_row(rng):
    Q, K, V = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    mask = ak.causal_mask(4)
    mask[2] = False  # query 2 may attend to nothing
    out, w = ak.scaled_dot_product_attention(Q, K, V, mask=mask)
    ref_out, ref_w = loop_sdpa(Q, K, V, allowed=mask)
    np.testing.assert_allclose(w, ref_w, rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(out, ref_out, rtol=1e-13, atol=1e-15)
    assert np.all(out[2] == 0) and np.all(w[2] == 0)
    assert np.isfinite(out).all()


def test_sdpa_batch_dims(rng):
    Q, K, V = rng.normal(size=(2, 3, 3, 4)), rng.normal(size=(2, 3, 5, 4)), rng.normal(size=(2, 3, 5, 2))
    mask = rng.random((3, 5)) < 0.7
    out, w = ak.scaled_dot_product_attention(Q, K, V, mask=mask)
    assert out.shape == (2, 3, 3, 2) and w.shape == (2, 3, 3, 5)
    for b in range(2):
        for h in range(3):
            ro, rw = loop_sdpa(Q[b, h], K[b, h], V[b, h], allowed=mask)
            np.testing.assert_allclose(w[b, h], rw, rtol=1e-13, atol=1e-16)
            np.testing.assert_allclose(out[b, h], ro, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 5e-13), (np.float32, 3e-5)])
def test_shift_free_softmax_equals_shifted(dtype, rtol, rng):
    # small scores skip subtracting the row maximum; the weights are the same up to rounding
    # (x - max itself is rounded to eps * max, about 1.3e-13 at 600: hence rtol 5e-13)
    from attention_kit.mechanism.kernels import SHIFT_FREE_LIMIT, softmax_inplace

    limit = SHIFT_FREE_LIMIT[np.dtype(dtype)]
    x = rng.uniform(-limit, limit, size=(6, 300)).astype(dtype)
    mask = rng.random((6, 300)) < 0.5
    mask[4] = False
    for m in (None, mask):
        free = softmax_inplace(x.copy(), -1, m, shift=False)
        ref = softmax_inplace(x.copy(), -1, m, shift=True)
        assert free.dtype == dtype and np.isfinite(free).all()
        np.testing.assert_allclose(free, ref, rtol=rtol, atol=float(np.finfo(dtype).tiny))
    # and through scaled_dot_product_attention, on both sides of the limit
    for scale in (0.5, 3.0):
        Q = rng.normal(size=(5, 4)) * scale * 8
        out, w = ak.scaled_dot_product_attention(Q, Q, Q)
        ref_out, ref_w = loop_sdpa(Q, Q, Q)
        np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-300)


def test_sdpa_large_scores_finite():
    Q = np.array([[100.0, 0.0], [0.0, 100.0]])
    K = np.array([[100.0, 0.0], [-100.0, 0.0], [0.0, 100.0]])  # scores of +-1e4 (before the scale)
    out, w = ak.scaled_dot_product_attention(Q, K, K, scale=1.0)
    assert np.isfinite(w).all() and np.isfinite(out).all()
    np.testing.assert_allclose(w, [[1, 0, 0], [0, 0, 1]], atol=1e-300)


@pytest.mark.parametrize("dtype,expected", [(np.float32, np.float32), (np.float64, np.float64),
                                            (np.int64, np.float64)])
def test_sdpa_and_self_attention_dtype(dtype, expected, rng):
    X = (rng.normal(size=(3, 4)) * 3).astype(dtype)
    out, w = ak.scaled_dot_product_attention(X, X, X)
    assert out.dtype == expected and w.dtype == expected
    Wm = (np.eye(4) * 2).astype(dtype)
    out, w = ak.self_attention(X, Wm, Wm, Wm)
    assert out.dtype == expected and w.dtype == expected
    np.testing.assert_allclose(w.sum(-1), 1, rtol=1e-6)


def test_self_attention_loop(rng):
    X = rng.normal(size=(4, 5))
    W_q, W_k, W_v = rng.normal(size=(5, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    out, w = ak.self_attention(X, W_q, W_k, W_v, mask=ak.causal_mask(4))
    Q, K, V = loop_matmul(X, W_q), loop_matmul(X, W_k), loop_matmul(X, W_v)
    ref_out, ref_w = loop_sdpa(Q, K, V, allowed=ak.causal_mask(4))
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-16)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-15)


def test_self_attention_batch(rng):
    X = rng.normal(size=(2, 4, 5))
    W = [rng.normal(size=(5, 3)) for _ in range(3)]
    out, w = ak.self_attention(X, *W)
    for b in range(2):
        o, ww = ak.self_attention(X[b], *W)
        np.testing.assert_allclose(out[b], o, rtol=1e-13)


# ----------------------------------------------------------------------------------------------
# multi-head attention
# ----------------------------------------------------------------------------------------------


def loop_mha(X_q, X_kv, p, allowed=None):
    """One head at a time, in a Python loop, then concatenate and apply W_o."""
    h = p.W_q.shape[0]
    heads, weights = [], []
    for l in range(h):
        Q = X_q @ p.W_q[l] + (0 if p.b_q is None else p.b_q[l])
        K = X_kv @ p.W_k[l] + (0 if p.b_k is None else p.b_k[l])
        V = X_kv @ p.W_v[l] + (0 if p.b_v is None else p.b_v[l])
        o, w = loop_sdpa(Q, K, V, allowed=allowed)
        heads.append(o)
        weights.append(w)
    concat = np.concatenate(heads, axis=1)  # (n_q, h * d_v)
    out = concat @ p.W_o + (0 if p.b_o is None else p.b_o)
    return out, np.array(weights)


@pytest.mark.parametrize("bias", [False, True])
def test_mha_self_attention_loop(bias, rng):
    p = ak.init_multi_head(8, 2, rng=rng, bias=bias)
    if bias:
        p.b_q, p.b_k, p.b_v = rng.normal(size=(2, 4)), rng.normal(size=(2, 4)), rng.normal(size=(2, 4))
        p.b_o = rng.normal(size=8)
    X = rng.normal(size=(5, 8))
    out, w = ak.multi_head_attention(X, X, p)
    ref_out, ref_w = loop_mha(X, X, p)
    assert out.shape == (5, 8) and w.shape == (2, 5, 5)
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-16)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-14)


def test_mha_cross_attention_mask_and_dims(rng):
    p = ak.init_multi_head(6, 3, rng=rng, d_k=4, d_v=5)  # d_k, d_v independent of d_model / h
    X_q, X_kv = rng.normal(size=(3, 6)), rng.normal(size=(7, 6))
    mask = rng.random((3, 7)) < 0.6
    mask[1] = False
    out, w = ak.multi_head_attention(X_q, X_kv, p, mask=mask)
    ref_out, ref_w = loop_mha(X_q, X_kv, p, allowed=mask)
    assert out.shape == (3, 6) and w.shape == (3, 3, 7)
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-16)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-14)
    assert np.all(w[:, 1] == 0)


def test_mha_self_attention_with_unequal_head_sizes(rng):
    # the fused [W_q | W_k | W_v] projection used when X_q is X_kv, with d_k != d_v and biases
    p = ak.init_multi_head(6, 2, rng=rng, d_k=3, d_v=5, bias=True)
    p.b_q, p.b_k, p.b_v = rng.normal(size=(2, 3)), rng.normal(size=(2, 3)), rng.normal(size=(2, 5))
    X = rng.normal(size=(2, 4, 6))  # (batch, n, d_model)
    out, w = ak.multi_head_attention(X, X, p, mask=ak.causal_mask(4))
    for b in range(2):
        ref_out, ref_w = loop_mha(X[b], X[b], p, allowed=ak.causal_mask(4))
        np.testing.assert_allclose(w[b], ref_w, rtol=1e-12, atol=1e-16)
        np.testing.assert_allclose(out[b], ref_out, rtol=1e-12, atol=1e-14)
    out2, _ = ak.multi_head_attention(X, X.copy(), p, mask=ak.causal_mask(4))  # unfused path
    np.testing.assert_allclose(out2, out, rtol=1e-12, atol=1e-14)


def test_mha_per_head_mask_and_batch(rng):
    p = ak.init_multi_head(4, 2, rng=rng)
    X = rng.normal(size=(2, 3, 4))  # (batch, n, d_model)
    mask = np.stack([ak.causal_mask(3), np.ones((3, 3), bool)])  # (h, n, n): head 0 causal
    # with batched tokens a 3-D mask means one mask per sequence, so a per-head mask gets a
    # batch axis of 1: (1, h, n, n)
    out, w = ak.multi_head_attention(X, X, p, mask=mask[None])
    assert out.shape == (2, 3, 4) and w.shape == (2, 2, 3, 3)
    for b in range(2):
        ro, rw = loop_mha(X[b], X[b], p)
        np.testing.assert_allclose(w[b, 1], rw[1], rtol=1e-12)
        assert np.all(np.triu(w[b, 0], 1) == 0)


def loop_batched_mha(X, p, masks):
    """A loop over the sequences of a batch, each with its own (n_q, n_k) mask."""
    outs, ws = zip(*(loop_mha(X[b], X[b], p, allowed=masks[b]) for b in range(len(X))), strict=True)
    return np.array(outs), np.array(ws)


@pytest.mark.parametrize("batch, h", [(2, 2), (2, 4), (3, 1), (3, 2)])
def test_mha_batched_padding_mask_means_the_batch(batch, h, rng):
    # padding_mask gives (batch, 1, n): it must line up with the sequences, not with the heads
    n, d = 4, 8
    p = ak.init_multi_head(d, h, rng=rng)
    X = rng.normal(size=(batch, n, d))
    lengths = [n - 1 - b % 2 for b in range(batch)]
    pm = ak.padding_mask(lengths, n)  # (batch, 1, n)
    out, w = ak.multi_head_attention(X, X, p, mask=pm)
    ref_out, ref_w = loop_batched_mha(X, p, np.broadcast_to(pm, (batch, n, n)))
    assert w.shape == (batch, h, n, n)
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-14)
    for b, L in enumerate(lengths):
        assert np.all(w[b, :, :, L:] == 0), "no weight on <pad> keys, in any head"


@pytest.mark.parametrize("batch, h", [(2, 2), (2, 4)])
def test_mha_causal_and_padding_combined_per_sequence(batch, h, rng):
    n, d = 5, 8
    p = ak.init_multi_head(d, h, rng=rng, bias=True)
    X = rng.normal(size=(batch, n, d))
    m = ak.causal_mask(n) & ak.padding_mask([3, 5][:batch] + [4] * (batch - 2), n)  # (batch, n, n)
    out, w = ak.multi_head_attention(X, X, p, mask=m)
    ref_out, ref_w = loop_batched_mha(X, p, m)
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-14)
    # the unfused path (X_q is not X_kv) treats the mask the same way
    out2, w2 = ak.multi_head_attention(X, X.copy(), p, mask=m)
    np.testing.assert_allclose(w2, w, rtol=1e-12, atol=1e-15)


def test_mha_explicit_per_sequence_per_head_mask(rng):
    batch, h, n, d = 2, 2, 3, 4
    p = ak.init_multi_head(d, h, rng=rng)
    X = rng.normal(size=(batch, n, d))
    m = rng.random((batch, h, n, n)) < 0.7
    m[..., 0] = True
    out, w = ak.multi_head_attention(X, X, p, mask=m)
    for b in range(batch):
        for l in range(h):
            _, ref_w = loop_mha(X[b], X[b], p, allowed=m[b, l])
            np.testing.assert_allclose(w[b, l], ref_w[l], rtol=1e-12, atol=1e-15)


def test_mha_ambiguous_or_misplaced_mask_is_rejected(rng):
    p = ak.init_multi_head(4, 2, rng=rng)
    X = rng.normal(size=(3, 4, 4))  # batch of 3, h = 2
    per_head = np.ones((2, 4, 4), bool)  # (h, n, n) given with batched tokens
    with pytest.raises(ak.errors.MaskError, match=r"\(1, 2, n_q, n_k\)"):
        ak.multi_head_attention(X, X, p, mask=per_head)
    X2 = rng.normal(size=(2, 3, 4, 4))  # two batch axes
    with pytest.raises(ak.errors.MaskError, match="ambiguous"):
        ak.multi_head_attention(X2, X2, p, mask=np.ones((3, 4, 4), bool))
    with pytest.raises(ak.errors.MaskError, match="ambiguous"):
        ak.multi_head_attention(X, X, p, mask=np.ones((1, 3, 2, 4, 4), bool))
    # two batch axes with a mask shaped like the batch: fine
    out, w = ak.multi_head_attention(X2, X2, p, mask=np.ones((2, 3, 4, 4), bool))
    assert w.shape == (2, 3, 2, 4, 4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mha_dtype(dtype, rng):
    p = ak.init_multi_head(8, 4, rng=rng, dtype=dtype)
    X = rng.normal(size=(3, 8)).astype(dtype)
    out, w = ak.multi_head_attention(X, X, p)
    assert out.dtype == dtype and w.dtype == dtype
    Xi = np.arange(24).reshape(3, 8) % 5  # integers -> float64
    out, w = ak.multi_head_attention(Xi, Xi, ak.init_multi_head(8, 4, rng=rng))
    assert out.dtype == np.float64


def test_init_multi_head_shapes_and_seed():
    p = ak.init_multi_head(12, 3, rng=np.random.default_rng(5))
    assert p.W_q.shape == (3, 12, 4) and p.W_k.shape == (3, 12, 4) and p.W_v.shape == (3, 12, 4)
    assert p.W_o.shape == (12, 12)
    assert (p.n_heads, p.d_model, p.d_k, p.d_v) == (3, 12, 4, 4)
    assert p.n_parameters() == 4 * 144
    q = ak.init_multi_head(12, 3, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(p.W_o, q.W_o)


def test_split_merge_heads_loop(rng):
    X = rng.normal(size=(5, 6))
    Xh = ak.split_heads(X, 3)
    assert Xh.shape == (3, 5, 2)
    for l in range(3):
        for i in range(5):
            for c in range(2):
                assert Xh[l, i, c] == X[i, l * 2 + c]
    np.testing.assert_array_equal(ak.merge_heads(Xh), X)
    Xb = rng.normal(size=(2, 5, 6))
    np.testing.assert_array_equal(ak.merge_heads(ak.split_heads(Xb, 2)), Xb)
    assert ak.split_heads(Xb, 2).shape == (2, 2, 5, 3)


def test_cosine_keeps_the_direction_of_tiny_vectors():
    # A short but non-zero vector still has a direction: |q||k| = 7.5e-13 once gave 0.75, not 1.
    np.testing.assert_allclose(ak.cosine_score([1.2e-11], [[0.0625], [-3.0]]), [1.0, -1.0])
    np.testing.assert_allclose(ak.cosine_score([1e-160, 1e-160], [[1.0, 1.0]]), [1.0], rtol=1e-12)
    assert ak.cosine_score([0.0, 0.0], [[1.0, 2.0]])[0] == 0.0


def test_mixed_dtypes_follow_numpy_promotion():
    rng = np.random.default_rng(0)
    X32 = rng.normal(size=(5, 8)).astype(np.float32)
    p64 = ak.init_multi_head(8, 2, rng=np.random.default_rng(1))
    p32 = ak.init_multi_head(8, 2, rng=np.random.default_rng(1), dtype=np.float32)
    out64, w64 = ak.multi_head_attention(X32, X32, p64)
    out32, w32 = ak.multi_head_attention(X32, X32, p32)
    assert out64.dtype == w64.dtype == np.float64  # as the package docstring says
    assert out32.dtype == w32.dtype == np.float32
    np.testing.assert_allclose(out32, out64, rtol=1e-4, atol=1e-5)
