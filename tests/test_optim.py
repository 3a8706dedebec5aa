"""SGD and Adam (attention_kit.learn.optim) against hand-written updates, and their errors."""

from __future__ import annotations

import numpy as np
import pytest

import attention_kit as ak
from attention_kit.learn.optim import SGD, Adam, check_learning_rate


def test_sgd_step_is_w_minus_lr_g():
    w = np.array([1.0, -2.0])
    SGD(lr=0.1).step({"w": w}, {"w": np.array([0.5, 1.0])})
    np.testing.assert_allclose(w, [0.95, -2.1])


def test_sgd_momentum_matches_a_loop():
    w, ref, v = np.array([3.0]), 3.0, 0.0
    opt = SGD(lr=0.1, momentum=0.9)
    for _ in range(5):
        opt.step({"w": w}, {"w": 2 * w})  # gradient of w^2
        v = 0.9 * v + 2 * ref
        ref -= 0.1 * v
    assert w[0] == pytest.approx(ref, rel=1e-12)


def adam_reference(w0, grad_fn, lr, steps, b1=0.9, b2=0.999, eps=1e-8):
    """Adam written from the paper's Algorithm 1, one scalar at a time."""
    w, m, v = float(w0), 0.0, 0.0
    for t in range(1, steps + 1):
        g = grad_fn(w)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        w -= lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
    return w


def test_adam_matches_the_paper():
    w = np.array([2.0, -1.0])
    opt = Adam(lr=0.05)
    for _ in range(20):
        opt.step({"w": w}, {"w": 4 * w**3})  # gradient of w^4
    for i, w0 in enumerate((2.0, -1.0)):
        assert w[i] == pytest.approx(adam_reference(w0, lambda x: 4 * x**3, 0.05, 20), rel=1e-12)


def test_adam_first_step_is_lr_whatever_the_gradient_scale():
    for scale in (1e-3, 1.0, 1e6):  # (far below 1e-8 / 1e-5, eps would show)
        w = np.zeros(3)
        Adam(lr=0.01).step({"w": w}, {"w": scale * np.array([1.0, -2.0, 3.0])})
        np.testing.assert_allclose(w, [-0.01, 0.01, -0.01], rtol=1e-5)


def test_sgd_minimises_a_quadratic():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(4, 4))
    H = A @ A.T + np.eye(4)  # positive definite
    b = rng.normal(size=4)
    x = np.zeros(4)
    opt = SGD(lr=1 / np.linalg.eigvalsh(H).max())
    for _ in range(2000):
        opt.step({"x": x}, {"x": H @ x - b})
    np.testing.assert_allclose(x, np.linalg.solve(H, b), atol=1e-8)


def test_optimisers_accept_multi_head_params():
    rng = np.random.default_rng(1)
    p = ak.init_multi_head(4, 2, rng=rng, bias=True)
    before = p.W_q.copy()
    grads = ak.MultiHeadParams(*(np.ones_like(getattr(p, f)) for f in ("W_q", "W_k", "W_v", "W_o")),
                               b_q=np.ones_like(p.b_q), b_k=np.ones_like(p.b_k),
                               b_v=np.ones_like(p.b_v), b_o=np.ones_like(p.b_o))
    SGD(lr=0.5).step(p, grads)
    np.testing.assert_allclose(p.W_q, before - 0.5)
    np.testing.assert_allclose(p.b_o, -0.5)


@pytest.mark.parametrize("lr", [0, -0.1, float("nan"), float("inf"), "0.1", None, True])
def test_bad_learning_rates(lr):
    with pytest.raises(ak.ParameterError, match="learning rate must be a"):
        check_learning_rate(lr)
    with pytest.raises(ak.ParameterError, match="learning rate"):
        Adam(lr=lr)
    with pytest.raises(ak.ParameterError, match="learning rate"):
        SGD(lr=lr)


def test_a_diverged_gradient_is_refused_before_any_weight_moves():
    a, b = np.ones(2), np.ones(2)
    opt = Adam(lr=0.1)
    with pytest.raises(ak.NonFiniteError, match="gradient of b holds NaN or inf: training has diverged"):
        opt.step({"a": a, "b": b}, {"a": np.ones(2), "b": np.array([1.0, np.nan])})
    np.testing.assert_array_equal(a, 1.0)
    assert opt.t == 0


def test_mismatched_names_and_shapes():
    with pytest.raises(ak.ParameterError, match="same names"):
        SGD().step({"a": np.ones(2)}, {"b": np.ones(2)})
    with pytest.raises(ak.ShapeError, match=r"gradient of a has shape \(3,\) but a has shape \(2,\)"):
        SGD().step({"a": np.ones(2)}, {"a": np.ones(3)})
    with pytest.raises(ak.ParameterError, match="dict of arrays"):
        SGD().step([np.ones(2)], [np.ones(2)])
    with pytest.raises(ak.ParameterError, match="momentum"):
        SGD(momentum=1.0)
    with pytest.raises(ak.ParameterError, match="betas"):
        Adam(betas=(0.9, 1.0))
