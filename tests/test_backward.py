"""The backward pass (attention_kit.learn.backward) against central finite differences in float64.

Every gradient is checked against ``numerical_gradient`` of the scalar loss ``L = sum(out * R)``
for a fixed random ``R`` (so ``dL/d(out) = R``), with a relative error of at most 1e-7; the
finite differences themselves are checked against closed forms first.
"""

from __future__ import annotations

import numpy as np
import pytest

import attention_kit as ak
from attention_kit.learn.backward import (
    attention_backward,
    attention_forward,
    multi_head_attention_backward,
    multi_head_backward,
    numerical_gradient,
    relative_error,
    scaled_dot_product_attention_backward,
    softmax_backward,
)
from attention_kit.mechanism.multi_head_attention import multi_head_forward

TOL = 1e-7


def assert_grad(analytic, numeric, what=""):
    err = relative_error(analytic, numeric)
    assert err <= TOL, f"{what}: relative error {err:.2e}"


def rows_mask(rng, shape, dead_row=True):
    """A random boolean mask with at least one fully masked row (when dead_row)."""
    m = rng.random(shape) < 0.6
    if dead_row:
        m[..., 0, :] = False  # query 0 may attend to nothing
    return m


# ---------------------------------------------------------------- the checking tools themselves

def test_numerical_gradient_matches_closed_form_and_leaves_x_alone():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 4))
    x0 = x.copy()
    g = numerical_gradient(lambda z: np.sum(np.sin(z) * z**2), x)
    np.testing.assert_allclose(g, np.cos(x0) * x0**2 + 2 * x0 * np.sin(x0), rtol=1e-8, atol=1e-9)
    np.testing.assert_array_equal(x, x0)


def test_central_differences_beat_one_sided():
    # for f = x^3 at x = 1 the central error is eps^2 = 1e-6 (exactly, up to rounding), one-sided 3 eps
    eps = 1e-3
    g = numerical_gradient(lambda z: float(np.sum(z**3)), np.array([1.0]), eps=eps)[0]
    assert abs(g - 3.0) == pytest.approx(eps**2, rel=1e-3)
    one_sided = ((1 + eps) ** 3 - 1) / eps
    assert abs(one_sided - 3.0) > 1000 * abs(g - 3.0)


@pytest.mark.parametrize("eps", [0, -1e-6, float("nan"), float("inf")])
def test_numerical_gradient_rejects_bad_eps(eps):
    with pytest.raises(ak.ParameterError, match="eps must be a positive number"):
        numerical_gradient(np.sum, np.ones(3), eps=eps)


def test_numerical_gradient_wants_a_scalar_loss():
    with pytest.raises(ak.ShapeError, match="one number"):
        numerical_gradient(lambda z: z * 2, np.ones(3))
    with pytest.raises(ak.ParameterError, match="NaN or inf"), np.errstate(invalid="ignore"):
        numerical_gradient(lambda z: np.log(z - 5).sum(), np.ones(2))


def test_relative_error_is_scale_free():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(4, 3))
    b = a + 1e-3 * rng.normal(size=(4, 3))
    e = relative_error(a, b)
    assert 1e-5 < e < 1e-2
    assert relative_error(1e6 * a, 1e6 * b) == pytest.approx(e, rel=1e-12)
    assert relative_error(1e-9 * a, 1e-9 * b) == pytest.approx(e, rel=1e-9)
    assert relative_error(np.zeros(3), np.zeros(3)) == 0.0
    assert relative_error(a, -a) == pytest.approx(1.0)
    with pytest.raises(ak.ShapeError, match="same array"):
        relative_error(a, a.T)


# ---------------------------------------------------------------- softmax

def softmax_jacobian_loop(a):
    """J[i, j] = da_i / ds_j = a_i (delta_ij - a_j), entry by entry."""
    n = len(a)
    return np.array([[a[i] * ((i == j) - a[j]) for j in range(n)] for i in range(n)])


def test_softmax_backward_is_the_jacobian_product():
    rng = np.random.default_rng(2)
    s, g = rng.normal(size=5), rng.normal(size=5)
    a = ak.softmax(s)
    J = softmax_jacobian_loop(a)
    np.testing.assert_allclose(softmax_backward(a, g), g @ J, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(J, J.T)  # symmetric, so J g = J^T g


@pytest.mark.parametrize("shape, masked", [((5,), False), ((3, 4), False), ((2, 3, 4), True), ((4, 6), True)])
def test_softmax_backward_finite_differences(shape, masked):
    rng = np.random.default_rng(3)
    s, R = rng.normal(size=shape), rng.normal(size=shape)
    mask = rows_mask(rng, shape) if masked and len(shape) > 1 else None
    a = ak.softmax(s, mask=mask)
    num = numerical_gradient(lambda z: np.sum(ak.softmax(z, mask=mask) * R), s)
    ana = softmax_backward(a, R)
    assert_grad(ana, num, f"softmax {shape}")
    if mask is not None:
        assert np.all(ana[~mask] == 0.0)  # exactly zero, not just small
        assert np.all(ana[..., 0, :] == 0.0)  # the fully masked row


def test_softmax_backward_other_axis():
    rng = np.random.default_rng(4)
    s, R = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    a = ak.softmax(s, axis=0)
    num = numerical_gradient(lambda z: np.sum(ak.softmax(z, axis=0) * R), s)
    assert_grad(softmax_backward(a, R, axis=0), num, "axis 0")


def test_softmax_backward_bad_input():
    a = ak.softmax(np.array([[1.0, 2.0, 3.0]]))
    with pytest.raises(ak.ShapeError, match=r"grad_a has shape \(3,\) but it must have the shape of a, \(1, 3\)"):
        softmax_backward(a, np.ones(3))
    with pytest.raises(ak.NonFiniteError, match="grad_a holds NaN"):
        softmax_backward(a, np.array([[1.0, np.nan, 0.0]]))
    with pytest.raises(ak.ParameterError, match="instead of the weights"):
        softmax_backward(np.array([1.0, 2.0, 3.0]), np.ones(3))
    with pytest.raises(ak.ShapeError, match="scalar"):
        softmax_backward(1.0, 1.0)
    one = np.nextafter(1.0, 2.0)  # a weight one rounding step above 1 is still a weight
    np.testing.assert_allclose(softmax_backward(np.array([one, 0.0]), np.array([1.0, 2.0])), [0.0, 0.0], atol=1e-15)


# ---------------------------------------------------------------- scaled dot-product attention

SDPA_CASES = [
    # (Q shape, K shape, V shape, mask shape or None)
    ((3, 4), (5, 4), (5, 2), None),  # n_q != n_k, d_v != d_k
    ((4, 3), (4, 3), (4, 3), (4, 4)),  # masked, with a fully masked row
    ((2, 3, 4), (2, 5, 4), (2, 5, 3), (2, 3, 5)),  # a batch
    ((2, 3, 4), (5, 4), (5, 3), (3, 5)),  # shared K, V broadcast over the batch of queries
    ((2, 3, 2), (2, 1, 2), (2, 1, 3), None),  # a single key
]


@pytest.mark.parametrize("qs, ks, vs, ms", SDPA_CASES)
def test_sdpa_backward_finite_differences(qs, ks, vs, ms):
    rng = np.random.default_rng(5)
    Q, K, V = (rng.normal(size=s) for s in (qs, ks, vs))
    mask = None if ms is None else rows_mask(rng, ms)
    out, _ = ak.scaled_dot_product_attention(Q, K, V, mask)
    R = rng.normal(size=out.shape)

    def loss(Q_=Q, K_=K, V_=V):
        return np.sum(ak.scaled_dot_product_attention(Q_, K_, V_, mask)[0] * R)

    dQ, dK, dV = scaled_dot_product_attention_backward(Q, K, V, mask, R)
    assert (dQ.shape, dK.shape, dV.shape) == (Q.shape, K.shape, V.shape)
    assert_grad(dQ, numerical_gradient(lambda x: loss(Q_=x), Q), "dQ")
    assert_grad(dK, numerical_gradient(lambda x: loss(K_=x), K), "dK")
    assert_grad(dV, numerical_gradient(lambda x: loss(V_=x), V), "dV")
    if mask is not None:
        assert np.all(dQ[..., 0, :] == 0.0)  # a query that sees nothing gets no gradient


def test_sdpa_backward_custom_scale():
    rng = np.random.default_rng(6)
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    R = rng.normal(size=(3, 2))
    dQ, dK, _ = scaled_dot_product_attention_backward(Q, K, V, None, R, scale=1.0)
    loss = lambda x: np.sum(ak.scaled_dot_product_attention(x, K, V, scale=1.0)[0] * R)  # noqa: E731
    assert_grad(dQ, numerical_gradient(loss, Q), "dQ, scale 1")


def test_sdpa_backward_loop_reference():
    """dV, dA and dS written with explicit loops over queries and keys."""
    rng = np.random.default_rng(7)
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    g = rng.normal(size=(3, 2))
    out, A, cache = attention_forward(Q, K, V)
    n_q, n_k = A.shape
    dV = np.zeros_like(V)
    dQ = np.zeros_like(Q)
    for i in range(n_q):
        dA_i = np.array([g[i] @ V[j] for j in range(n_k)])  # dL/dA[i, j] = g_i . v_j
        dS_i = A[i] * (dA_i - dA_i @ A[i])
        for j in range(n_k):
            dV[j] += A[i, j] * g[i]  # v_j reaches output i with weight A[i, j]
            dQ[i] += dS_i[j] * K[j] / np.sqrt(4)
    got = attention_backward(cache, g)
    np.testing.assert_allclose(got[0], dQ, rtol=1e-12)
    np.testing.assert_allclose(got[2], dV, rtol=1e-12)


def test_sdpa_backward_bad_inputs_match_forward():
    rng = np.random.default_rng(8)
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    R = rng.normal(size=(3, 2))
    bad = [
        dict(K=K.T),  # the column layout
        dict(V=V[:4]),  # one value too few
        dict(Q=np.zeros((0, 4))),  # empty
        dict(Q=np.where(Q > 1, np.nan, Q)),  # NaN
        dict(mask=np.ones((3, 5))),  # a float mask
        dict(mask=np.ones((5, 3), dtype=bool)),  # a transposed mask
    ]
    for kw in bad:
        args = dict(Q=Q, K=K, V=V, mask=None) | kw
        with pytest.raises(ak.AttentionError) as fwd:
            ak.scaled_dot_product_attention(**args)
        with pytest.raises(type(fwd.value)) as bwd:
            scaled_dot_product_attention_backward(args["Q"], args["K"], args["V"], args["mask"], R)
        assert str(bwd.value) == str(fwd.value)
    with pytest.raises(ak.ShapeError, match=r"grad_out has shape \(2, 3\).*\(3, 2\).*Use \.T"):
        scaled_dot_product_attention_backward(Q, K, V, None, R.T)
    with pytest.raises(ak.NonFiniteError, match="grad_out holds inf"):
        scaled_dot_product_attention_backward(Q, K, V, None, np.full((3, 2), np.inf))
    with pytest.raises(ak.ParameterError, match="AttentionCache"):
        attention_backward((Q, K, V), R)


# ---------------------------------------------------------------- multi-head attention

def _params(rng, d_model, h, d_k, d_v, bias):
    p = ak.init_multi_head(d_model, h, rng=rng, d_k=d_k, d_v=d_v, bias=bias)
    if bias:  # non-zero biases, so that their gradients are tested at a generic point
        for name in ("b_q", "b_k", "b_v", "b_o"):
            setattr(p, name, rng.normal(size=getattr(p, name).shape))
    return p


MHA_CASES = [
    # (X_q shape, X_kv shape, h, d_k, d_v, bias, mask shape or None)
    ((3, 6), (4, 6), 2, 3, 2, False, None),  # cross-attention, n_q != n_k
    ((3, 6), (4, 6), 2, 3, 2, True, (3, 4)),  # biases and a mask with a fully masked row
    ((2, 3, 4), (2, 5, 4), 2, 2, 3, True, (2, 2, 3, 5)),  # a batch, a mask per sequence and head
    ((2, 3, 4), (2, 5, 4), 2, 2, 3, False, (2, 3, 5)),  # a mask per sequence, shared by the heads
    ((3, 4, 4), (3, 4, 4), 2, 2, 2, False, (3, 1, 4)),  # a padding mask (batch, 1, n_k)
    ((2, 3, 4), (5, 4), 1, 4, 4, True, None),  # one head; tokens to look at shared by the batch
    ((4, 4), (4, 4), 4, 1, 1, True, (4, 4)),  # four heads of width 1
]


@pytest.mark.parametrize("xq, xkv, h, d_k, d_v, bias, ms", MHA_CASES)
def test_mha_backward_finite_differences(xq, xkv, h, d_k, d_v, bias, ms):
    rng = np.random.default_rng(9)
    X_q, X_kv = rng.normal(size=xq), rng.normal(size=xkv)
    p = _params(rng, xq[-1], h, d_k, d_v, bias)
    mask = None if ms is None else rows_mask(rng, ms)
    out, _ = ak.multi_head_attention(X_q, X_kv, p, mask)
    R = rng.normal(size=out.shape)
    dX_q, dX_kv, grads = multi_head_attention_backward(X_q, X_kv, p, mask, R)

    def loss(**change):
        q, kv = change.pop("X_q", X_q), change.pop("X_kv", X_kv)
        params = ak.MultiHeadParams(**{**vars(p), **change})
        return np.sum(ak.multi_head_attention(q, kv, params, mask)[0] * R)

    assert_grad(dX_q, numerical_gradient(lambda x: loss(X_q=x), X_q), "dX_q")
    assert_grad(dX_kv, numerical_gradient(lambda x: loss(X_kv=x), X_kv), "dX_kv")
    names = [f for f in vars(p) if getattr(p, f) is not None]
    assert len(names) == (8 if bias else 4)
    for name in names:
        g = getattr(grads, name)
        assert g.shape == getattr(p, name).shape, name
        num = numerical_gradient(lambda w, name=name: loss(**{name: w}), getattr(p, name))
        if name == "b_k":  # q . (k + b) = q . k + q . b: the same shift for every key of a row
            np.testing.assert_allclose(g, 0, atol=1e-12)
            np.testing.assert_allclose(num, 0, atol=1e-8)
        else:
            assert_grad(g, num, name)
    if not bias:
        assert grads.b_q is None and grads.b_o is None


def test_mha_self_attention_gradient_is_the_sum():
    """Self-attention uses X twice (as queries and as keys/values): dX = dX_q + dX_kv."""
    rng = np.random.default_rng(10)
    X = rng.normal(size=(5, 4))
    p = _params(rng, 4, 2, 2, 2, True)
    mask = ak.causal_mask(5)
    R = rng.normal(size=(5, 4))
    dX_q, dX_kv, _ = multi_head_attention_backward(X, X, p, mask, R)
    num = numerical_gradient(lambda x: np.sum(ak.multi_head_attention(x, x, p, mask)[0] * R), X)
    assert_grad(dX_q + dX_kv, num, "self-attention dX")
    assert relative_error(dX_q, num) > 1e-3  # either part alone is wrong


def test_mha_forward_matches_multi_head_attention():
    rng = np.random.default_rng(11)
    X_q, X_kv = rng.normal(size=(2, 3, 8)), rng.normal(size=(2, 5, 8))
    p = _params(rng, 8, 4, 2, 3, True)
    mask = rows_mask(rng, (2, 1, 3, 5))
    out, w, cache = multi_head_forward(X_q, X_kv, p, mask)
    ref_out, ref_w = ak.multi_head_attention(X_q, X_kv, p, mask)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-15)
    assert cache.Q.shape == (2, 4, 3, 2) and cache.concat.shape == (2, 3, 12)


def test_mha_backward_bad_inputs_match_forward():
    rng = np.random.default_rng(12)
    X_q, X_kv = rng.normal(size=(3, 6)), rng.normal(size=(4, 6))
    p = _params(rng, 6, 2, 3, 3, False)
    R = rng.normal(size=(3, 6))
    bad = [
        dict(X_q=X_q.T),  # the column layout
        dict(X_kv=np.zeros((0, 6))),  # empty
        dict(X_kv=np.full((4, 6), np.nan)),
        dict(params=(p.W_q, p.W_k)),  # not a MultiHeadParams
        dict(mask=np.ones((3, 4), dtype=int)),
        dict(mask=np.ones((4, 3), dtype=bool)),
        dict(X_q=X_q[None].repeat(2, 0), X_kv=X_kv[None].repeat(2, 0), mask=np.ones((3, 3, 4), dtype=bool)),
        dict(X_q=X_q[None].repeat(2, 0), X_kv=X_kv[None].repeat(2, 0), mask=np.ones((1, 2, 2, 3, 4), dtype=bool)),
    ]
    for kw in bad:
        args = dict(X_q=X_q, X_kv=X_kv, params=p, mask=None) | kw
        with pytest.raises(ak.AttentionError) as fwd:
            ak.multi_head_attention(**args)
        g = R if np.ndim(args["X_q"]) == 2 else np.broadcast_to(R, args["X_q"].shape[:-2] + R.shape)
        with pytest.raises(type(fwd.value)) as bwd:
            multi_head_attention_backward(args["X_q"], args["X_kv"], args["params"], args["mask"], g)
        assert str(bwd.value) == str(fwd.value)
    with pytest.raises(ak.ShapeError, match=r"grad_out has shape \(3, 5\) but it must have the shape of the output"):
        multi_head_attention_backward(X_q, X_kv, p, None, R[:, :5])
    with pytest.raises(ak.ParameterError, match="MultiHeadCache"):
        multi_head_backward(None, R)


def test_mha_without_scaling():
    """scale=1.0 is attention on the raw scores q . k, checked against finite differences."""
    rng = np.random.default_rng(13)
    X = rng.normal(size=(4, 6))
    p = _params(rng, 6, 2, 3, 3, False)
    R = rng.normal(size=(4, 6))
    out1 = multi_head_forward(X, X, p, scale=1.0)[0]
    W_q_big = ak.MultiHeadParams(**{**vars(p), "W_q": p.W_q * np.sqrt(3)})  # sqrt(d_k) undoes the 1/sqrt(d_k)
    np.testing.assert_allclose(out1, ak.multi_head_attention(X, X, W_q_big)[0], rtol=1e-12)
    _, _, grads = multi_head_attention_backward(X, X, p, None, R, scale=1.0)
    loss = lambda w: np.sum(multi_head_forward(X, X, ak.MultiHeadParams(**{**vars(p), "W_q": w}), scale=1.0)[0] * R)  # noqa: E731
    assert_grad(grads.W_q, numerical_gradient(loss, p.W_q), "W_q, unscaled")
    for bad in (0, -1.0, float("nan")):
        with pytest.raises(ak.ParameterError, match="scale must be a positive number"):
            multi_head_forward(X, X, p, scale=bad)
