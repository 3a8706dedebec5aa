"""The Transformer block's other pieces against central finite differences (float64)."""

import numpy as np
import pytest

import attention_kit as ak
from attention_kit.learn import layers as L
from attention_kit.learn.backward import numerical_gradient
from attention_kit.learn.backward import relative_error as rel_err


def num_grad(f, x):
    """Central differences of f() with respect to the array x, which f reads (changed in place)."""
    def at(v):
        old = x.copy()
        x[...] = v
        try:
            return f()
        finally:
            x[...] = old
    return numerical_gradient(at, x.copy())


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.mark.parametrize("shape", [(5, 6), (2, 3, 6)])
def test_layer_norm_gradients(shape, rng):
    X = rng.normal(size=shape)
    gamma, beta = rng.normal(size=6), rng.normal(size=6)
    G = rng.normal(size=shape)  # loss = sum(G * Y)

    def loss():
        return float(np.sum(G * L.layer_norm(X, gamma, beta)[0]))

    Y, cache = L.layer_norm(X, gamma, beta)
    dX, dg, db = L.layer_norm_backward(G, cache)
    assert rel_err(dX, num_grad(loss, X)) < 1e-7
    assert rel_err(dg, num_grad(loss, gamma)) < 1e-7
    assert rel_err(db, num_grad(loss, beta)) < 1e-7


def test_layer_norm_rows_have_mean_0_and_variance_1(rng):
    X = rng.normal(3.0, 5.0, size=(4, 8))
    Y, _ = L.layer_norm(X, np.ones(8), np.zeros(8))
    np.testing.assert_allclose(Y.mean(axis=-1), 0, atol=1e-12)
    np.testing.assert_allclose(Y.var(axis=-1), 1, rtol=1e-5)  # eps = 1e-5 against variance 25
    # a constant row stays finite thanks to eps
    Yc, _ = L.layer_norm(np.ones((1, 8)), np.ones(8), np.zeros(8))
    assert np.all(Yc == 0)


def test_layer_norm_bad_input():
    with pytest.raises(ak.ShapeError, match="gamma"):
        L.layer_norm(np.ones((3, 4)), np.ones(3), np.zeros(4))
    with pytest.raises(ak.ParameterError, match="eps"):
        L.layer_norm(np.ones((3, 4)), np.ones(4), np.zeros(4), eps=0)
    with pytest.raises(ak.NonFiniteError):
        L.layer_norm(np.array([[1.0, np.nan]]), np.ones(2), np.zeros(2))


def test_gelu_values_and_gradient(rng):
    x = np.array([-3.0, -1.0, 0.0, 1.0, 3.0])
    # the tanh form agrees with x * Phi(x) to about 1e-3 (Hendrycks & Gimpel 2016)
    from math import erf, sqrt
    exact = np.array([v * 0.5 * (1 + erf(v / sqrt(2))) for v in x])
    np.testing.assert_allclose(L.gelu(x), exact, atol=2e-3)
    x = rng.normal(size=7)
    g = rng.normal(size=7)
    assert rel_err(L.gelu_backward(g, x), num_grad(lambda: float(np.sum(g * L.gelu(x))), x)) < 1e-8


@pytest.mark.parametrize("shape", [(4, 6), (2, 3, 6)])
def test_mlp_gradients(shape, rng):
    X = rng.normal(size=shape)
    W1, b1 = rng.normal(size=(6, 10)) * 0.5, rng.normal(size=10)
    W2, b2 = rng.normal(size=(10, 6)) * 0.5, rng.normal(size=6)
    G = rng.normal(size=shape)

    def loss():
        return float(np.sum(G * L.mlp(X, W1, b1, W2, b2)[0]))

    _, cache = L.mlp(X, W1, b1, W2, b2)
    grads = L.mlp_backward(G, cache)
    for got, x in zip(grads, (X, W1, b1, W2, b2), strict=True):
        assert rel_err(got, num_grad(loss, x)) < 1e-7


def test_mlp_is_position_wise(rng):
    X = rng.normal(size=(5, 4))
    W1, b1, W2, b2 = rng.normal(size=(4, 8)), rng.normal(size=8), rng.normal(size=(8, 4)), rng.normal(size=4)
    Y, _ = L.mlp(X, W1, b1, W2, b2)
    for i in range(5):  # each row on its own gives the same row
        np.testing.assert_allclose(L.mlp(X[i:i + 1], W1, b1, W2, b2)[0][0], Y[i], rtol=1e-12)
    with pytest.raises(ak.ShapeError, match="W2"):
        L.mlp(X, W1, b1, W2.T, b2)


def test_embedding_lookup_and_gradient_with_repeats(rng):
    E = rng.normal(size=(7, 3))
    ids = np.array([[1, 4, 1], [0, 6, 1]])
    X, cache = L.embed(ids, E)
    assert X.shape == (2, 3, 3)
    np.testing.assert_array_equal(X[0, 1], E[4])
    G = rng.normal(size=X.shape)
    dE = L.embed_backward(G, cache)
    assert rel_err(dE, num_grad(lambda: float(np.sum(G * L.embed(ids, E)[0])), E)) < 1e-8
    np.testing.assert_allclose(dE[1], G[0, 0] + G[0, 2] + G[1, 2])  # token 1 appears three times
    assert np.all(dE[[2, 3, 5]] == 0)
    with pytest.raises(ak.ParameterError, match="outside 0..6"):
        L.embed([0, 7], E)
    with pytest.raises(ak.ShapeError, match="whole-number"):
        L.embed([0.5, 1.0], E)


def test_cross_entropy_value_and_gradient(rng):
    logits = rng.normal(size=(2, 4, 5))
    targets = rng.integers(0, 5, size=(2, 4))
    loss, d = L.cross_entropy(logits, targets)
    # plain loop
    total = 0.0
    for b in range(2):
        for t in range(4):
            z = logits[b, t]
            total += -(z[targets[b, t]] - np.log(np.exp(z).sum()))
    assert loss == pytest.approx(total / 8, rel=1e-12)
    assert rel_err(d, num_grad(lambda: L.cross_entropy(logits, targets)[0], logits)) < 1e-7
    # uniform logits: the loss is log(vocab_size)
    assert L.cross_entropy(np.zeros((3, 5)), [0, 1, 2])[0] == pytest.approx(np.log(5))
    # huge logits do not overflow
    assert np.isfinite(L.cross_entropy(np.array([[1000.0, 0.0]]), [1])[0])
    with pytest.raises(ak.ShapeError, match="one target id per row"):
        L.cross_entropy(logits, targets[:, :3])
