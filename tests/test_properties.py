"""Property tests (hypothesis) of the attention core: identities that must hold for every input.

Settings: at most 50 examples each, no deadline (a busy CI machine must not fail a test for being
slow), and ``derandomize=True`` so that every run draws the same examples (deterministic CI).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import attention_kit as ak

FAST = settings(max_examples=50, deadline=None, derandomize=True)

finite = st.floats(min_value=-50, max_value=50, allow_nan=False, allow_infinity=False, width=64)
dims = st.integers(min_value=1, max_value=6)


def arrays(shape):
    return hnp.arrays(np.float64, shape, elements=finite)


@st.composite
def score_matrices(draw):
    n_q, n_k = draw(dims), draw(dims)
    return draw(arrays((n_q, n_k)))


@st.composite
def token_matrices(draw, min_n=1, max_n=6, max_d=5):
    n = draw(st.integers(min_n, max_n))
    d = draw(st.integers(1, max_d))
    return draw(arrays((n, d)))


def rng_from(seed):
    return np.random.default_rng(seed)


seeds = st.integers(min_value=0, max_value=2**32 - 1)


# ----------------------------------------------------------------------------------------------
# softmax
# ----------------------------------------------------------------------------------------------


@FAST
@given(score_matrices(), st.floats(0.05, 20))
def test_rows_sum_to_one(e, t):
    for w in (ak.softmax(e), ak.soft_align(e, temperature=t), ak.hard_align(e)):
        assert np.all(w >= 0)
        np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-12)


@FAST
@given(score_matrices(), st.data())
def test_masked_rows_sum_to_one_or_zero(e, data):
    mask = data.draw(hnp.arrays(bool, e.shape))
    w = ak.softmax(e, mask=mask)
    sums = w.sum(axis=-1)
    live = mask.any(axis=-1)
    np.testing.assert_allclose(sums[live], 1.0, rtol=1e-12)
    assert np.all(sums[~live] == 0)
    assert np.all(w[~mask] == 0)


@FAST
@given(score_matrices(), st.data())
def test_adding_a_constant_to_a_row_changes_nothing(e, data):
    c = data.draw(arrays((e.shape[0], 1)))  # one constant per row
    np.testing.assert_allclose(ak.softmax(e + c), ak.softmax(e), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ak.soft_align(e + c, temperature=0.5), ak.soft_align(e, temperature=0.5),
                               rtol=1e-9, atol=1e-12)


@pytest.mark.slow
@FAST
@given(hnp.arrays(np.float64, st.integers(1, 8), elements=st.floats(-1e4, 1e4)))
def test_huge_scores_stay_finite(e):
    w = ak.softmax(e)
    assert np.isfinite(w).all()
    np.testing.assert_allclose(w.sum(), 1.0, rtol=1e-12)


# ----------------------------------------------------------------------------------------------
# self-attention
# ----------------------------------------------------------------------------------------------


@FAST
@given(token_matrices(min_n=2), seeds)
def test_self_attention_is_permutation_equivariant(X, seed):
    rng = rng_from(seed)
    d = X.shape[1]
    W_q, W_k, W_v = (rng.normal(size=(d, 3)) for _ in range(3))
    perm = rng.permutation(X.shape[0])
    out, w = ak.self_attention(X, W_q, W_k, W_v)
    out_p, w_p = ak.self_attention(X[perm], W_q, W_k, W_v)
    np.testing.assert_allclose(out_p, out[perm], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(w_p, w[perm][:, perm], rtol=1e-9, atol=1e-12)


@FAST
@given(token_matrices(), seeds)
def test_one_head_mha_with_identity_output_equals_self_attention(X, seed):
    rng = rng_from(seed)
    d = X.shape[1]
    W_q, W_k, W_v = (rng.normal(size=(d, d)) for _ in range(3))
    p = ak.MultiHeadParams(W_q=W_q[None], W_k=W_k[None], W_v=W_v[None], W_o=np.eye(d))
    out, w = ak.multi_head_attention(X, X, p)
    ref_out, ref_w = ak.self_attention(X, W_q, W_k, W_v)
    np.testing.assert_allclose(w[0], ref_w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(out, ref_out, rtol=1e-9, atol=1e-9)


@FAST
@given(token_matrices(min_n=2), seeds, st.data())
def test_causal_output_ignores_later_tokens(X, seed, data):
    rng = rng_from(seed)
    n, d = X.shape
    W_q, W_k, W_v = (rng.normal(size=(d, 3)) for _ in range(3))
    i = data.draw(st.integers(0, n - 2))
    X2 = X.copy()
    X2[i + 1:] = data.draw(arrays((n - i - 1, d)))  # change every token after i
    mask = ak.causal_mask(n)
    out, _ = ak.self_attention(X, W_q, W_k, W_v, mask=mask)
    out2, _ = ak.self_attention(X2, W_q, W_k, W_v, mask=mask)
    np.testing.assert_allclose(out[: i + 1], out2[: i + 1], rtol=1e-13, atol=1e-13)
    p = ak.init_multi_head(d, 1, rng=rng, d_k=3, d_v=2)
    o, _ = ak.multi_head_attention(X, X, p, mask=mask)
    o2, _ = ak.multi_head_attention(X2, X2, p, mask=mask)
    np.testing.assert_allclose(o[: i + 1], o2[: i + 1], rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------------------------------
# score functions
# ----------------------------------------------------------------------------------------------


@FAST
@given(token_matrices(), st.data())
def test_scaled_dot_equals_general_with_scaled_identity(Q, data):
    d = Q.shape[1]
    K = data.draw(arrays((data.draw(dims), d)))
    W = np.eye(d) / np.sqrt(d)
    np.testing.assert_allclose(ak.scaled_dot_score(Q, K), ak.general_score(Q, K, W), rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(ak.score("scaled_dot", Q, K), ak.score("general", Q, K, W=W), rtol=1e-12, atol=1e-10)


@FAST
@given(token_matrices(), token_matrices(), seeds, st.sampled_from(["tanh", "relu", "sigmoid", "identity"]))
def test_additive_equals_concat(Q, K, seed, act):
    rng = rng_from(seed)
    d_q, d_k, d_w = Q.shape[1], K.shape[1], 3
    W1, W2 = rng.normal(size=(d_q, d_w)), rng.normal(size=(d_k, d_w))
    w, b = rng.normal(size=d_w), rng.normal(size=d_w)
    add = ak.additive_score(Q, K, W1, W2, w, b, act=act)
    cat = ak.concat_score(Q, K, np.vstack([W1, W2]), w, b, act=act)  # W = [W1; W2]
    np.testing.assert_allclose(add, cat, rtol=1e-9, atol=1e-9)


@FAST
@given(token_matrices(), st.data())
def test_cosine_in_range_and_scale_free(Q, data):
    K = data.draw(arrays((data.draw(dims), Q.shape[1])))
    c = ak.cosine_score(Q, K)
    assert np.all(np.abs(c) <= 1 + 1e-12)
    np.testing.assert_allclose(ak.cosine_score(3.0 * Q, 0.5 * K), c, rtol=1e-9, atol=1e-12)


# ----------------------------------------------------------------------------------------------
# multi-head attention: the head loop equals the vectorised form
# ----------------------------------------------------------------------------------------------


@FAST
@given(st.integers(1, 4), st.integers(1, 3), st.integers(1, 5), st.integers(1, 5), seeds, st.booleans())
def test_head_loop_equals_vectorised(h, d_head, n_q, n_k, seed, bias):
    rng = rng_from(seed)
    d_model = h * d_head
    p = ak.init_multi_head(d_model, h, rng=rng, bias=bias)
    if bias:
        p.b_q, p.b_k = rng.normal(size=(h, d_head)), rng.normal(size=(h, d_head))
        p.b_v, p.b_o = rng.normal(size=(h, d_head)), rng.normal(size=d_model)
    X_q, X_kv = rng.normal(size=(n_q, d_model)) * 3, rng.normal(size=(n_k, d_model)) * 3
    out, w = ak.multi_head_attention(X_q, X_kv, p)
    heads = []
    for l in range(h):  # the loop: one scaled dot-product attention per head
        Q = X_q @ p.W_q[l] + (p.b_q[l] if bias else 0)
        K = X_kv @ p.W_k[l] + (p.b_k[l] if bias else 0)
        V = X_kv @ p.W_v[l] + (p.b_v[l] if bias else 0)
        o, wl = ak.scaled_dot_product_attention(Q, K, V)
        np.testing.assert_allclose(w[l], wl, rtol=1e-9, atol=1e-12)
        heads.append(o)
    ref = np.concatenate(heads, axis=-1) @ p.W_o + (p.b_o if bias else 0)
    np.testing.assert_allclose(out, ref, rtol=1e-9, atol=1e-9)


@FAST
@given(st.integers(1, 4), st.integers(1, 3), st.integers(1, 5), seeds)
def test_split_merge_roundtrip(h, d_head, n, seed):
    X = rng_from(seed).normal(size=(2, n, h * d_head))
    Xh = ak.split_heads(X, h)
    assert Xh.shape == (2, h, n, d_head)
    np.testing.assert_array_equal(ak.merge_heads(Xh), X)
