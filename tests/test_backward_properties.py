"""Property tests (hypothesis) of the backward pass: identities that hold for every input.

Same settings as tests/test_properties.py: at most 50 examples, no deadline, derandomized.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import attention_kit as ak
from attention_kit.learn.backward import (
    attention_backward,
    attention_forward,
    multi_head_backward,
    softmax_backward,
)
from attention_kit.mechanism.multi_head_attention import multi_head_forward

FAST = settings(max_examples=50, deadline=None, derandomize=True)
finite = st.floats(min_value=-20, max_value=20, allow_nan=False, allow_infinity=False, width=64)
dims = st.integers(min_value=1, max_value=5)


@st.composite
def sdpa_inputs(draw):
    """Q (n_q, d_k), K (n_k, d_k), V (n_k, d_v), a mask (n_q, n_k) or None, g (n_q, d_v)."""
    n_q, n_k, d_k, d_v = draw(dims), draw(dims), draw(dims), draw(dims)
    arr = lambda shape: draw(hnp.arrays(np.float64, shape, elements=finite))  # noqa: E731
    mask = draw(st.none() | hnp.arrays(np.bool_, (n_q, n_k)))
    return arr((n_q, d_k)), arr((n_k, d_k)), arr((n_k, d_v)), mask, arr((n_q, d_v))


@FAST
@given(sdpa_inputs(), finite)
def test_row_constant_shift_of_the_scores_has_zero_gradient(inputs, c):
    """softmax(s + c) = softmax(s): moving every score of a row together changes nothing, so the
    score gradient of each row sums to 0 (its component along the all-ones direction vanishes)."""
    Q, K, V, mask, g = inputs
    _, A, cache = attention_forward(Q, K, V, mask)
    dA = g @ V.T  # (n_q, n_k)
    dS = softmax_backward(A, dA)
    scale = max(1.0, np.abs(dA).max())
    np.testing.assert_allclose(dS.sum(axis=-1), 0.0, atol=1e-12 * scale)
    S = Q @ K.T / np.sqrt(Q.shape[1])
    np.testing.assert_allclose(ak.softmax(S + c, mask=mask), A, atol=1e-12)
    if mask is not None:
        assert np.all(dS[~mask] == 0.0)


@FAST
@given(sdpa_inputs())
def test_dV_is_A_transpose_g(inputs):
    Q, K, V, mask, g = inputs
    _, A, cache = attention_forward(Q, K, V, mask)
    _, _, dV = attention_backward(cache, g)
    np.testing.assert_allclose(dV, A.T @ g, rtol=1e-12, atol=1e-12)


@FAST
@given(sdpa_inputs(), st.floats(-3, 3))
def test_backward_is_linear_in_grad_out(inputs, t):
    Q, K, V, mask, g = inputs
    cache = attention_forward(Q, K, V, mask)[2]
    g2 = np.roll(g, 1, axis=0)
    a = attention_backward(cache, g + t * g2)
    b, c = attention_backward(cache, g), attention_backward(cache, g2)
    for x, y, z in zip(a, b, c, strict=True):
        np.testing.assert_allclose(x, y + t * z, rtol=1e-9, atol=1e-9 * (1 + np.abs(y).max() + np.abs(z).max()))


@FAST
@given(st.integers(1, 4), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_mha_output_projection_gradients(n_q, n_k, seed):
    """dW_o = concat^T g and db_o = sum of g over the tokens; the key bias never gets a gradient."""
    rng = np.random.default_rng(seed)
    p = ak.init_multi_head(4, 2, rng=rng, bias=True)
    p.b_q, p.b_k = rng.normal(size=p.b_q.shape), rng.normal(size=p.b_k.shape)
    X_q, X_kv = rng.normal(size=(n_q, 4)), rng.normal(size=(n_k, 4))
    _, _, cache = multi_head_forward(X_q, X_kv, p)
    g = rng.normal(size=(n_q, 4))
    _, _, grads = multi_head_backward(cache, g)
    np.testing.assert_allclose(grads.W_o, cache.concat.T @ g, rtol=1e-12)
    np.testing.assert_allclose(grads.b_o, g.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(grads.b_k, 0.0, atol=1e-12)
