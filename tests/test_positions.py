"""The sinusoidal positional encoding against a plain loop, its rotation property, and its errors."""

import math

import numpy as np
import pytest

import attention_kit as ak


def positions_loop(n, d, base=10000.0):
    """Vaswani et al. 2017, section 3.5, written out one number at a time."""
    P = [[0.0] * d for _ in range(n)]
    for pos in range(n):
        for i in range(d // 2):
            angle = pos / base ** (2 * i / d)
            P[pos][2 * i] = math.sin(angle)
            P[pos][2 * i + 1] = math.cos(angle)
    return np.array(P)


@pytest.mark.parametrize("n, d", [(1, 2), (5, 8), (50, 16), (7, 512)])
def test_matches_loop(n, d):
    np.testing.assert_allclose(ak.sinusoidal_positions(n, d), positions_loop(n, d), rtol=0, atol=1e-12)


def test_known_values_and_start():
    P = ak.sinusoidal_positions(3, 4)
    np.testing.assert_allclose(P[0], [0, 1, 0, 1], atol=1e-15)  # position 0: sin 0 = 0, cos 0 = 1
    np.testing.assert_allclose(P[1], [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)], atol=1e-15)
    np.testing.assert_allclose(ak.sinusoidal_positions(2, 4, start=1), P[1:], atol=1e-15)
    np.testing.assert_allclose(ak.position_frequencies(4), [1.0, 0.01])
    assert np.abs(ak.sinusoidal_positions(100, 32)).max() <= 1.0


@pytest.mark.parametrize("k", [1, 3, -2, 17])
def test_rotation_moves_every_position_by_k(k):
    d = 16
    P = ak.sinusoidal_positions(40, d)
    R = ak.position_rotation(k, d)
    lo, hi = max(0, -k), 40 - max(0, k)
    for pos in range(lo, hi):
        np.testing.assert_allclose(P[pos] @ R, P[pos + k], atol=1e-12)
    np.testing.assert_allclose(R @ R.T, np.eye(d), atol=1e-12)  # a rotation: orthogonal


def test_dot_product_depends_on_offset_only():
    P = ak.sinusoidal_positions(30, 16)
    G = P @ P.T
    for k in range(-5, 6):
        diag = np.diagonal(G, offset=k)
        np.testing.assert_allclose(diag, diag[0], atol=1e-12)
    np.testing.assert_allclose(np.diag(G), 8.0)  # d/2 pairs, each sin^2 + cos^2 = 1


@pytest.mark.parametrize("call, match", [
    (lambda: ak.sinusoidal_positions(4, 7), r"d_model = 7 is odd.*use 6 or 8"),
    (lambda: ak.sinusoidal_positions(0, 8), r"n must be a whole number >= 1"),
    (lambda: ak.sinusoidal_positions(2.5, 8), r"n must be a whole number"),
    (lambda: ak.sinusoidal_positions(4, 8, base=1), r"base must be a finite number greater than 1"),
    (lambda: ak.sinusoidal_positions(4, 8, base="x"), r"base must be a number greater than 1"),
    (lambda: ak.sinusoidal_positions(4, 8, start=-1), r"start must be a whole number >= 0"),
    (lambda: ak.position_rotation(np.nan, 8), r"k \(an offset in positions\) must be finite"),
])
def test_errors(call, match):
    with pytest.raises(ak.ParameterError, match=match):
        call()
