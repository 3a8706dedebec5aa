"""The online softmax and tiled attention equal the plain formulas, for every shape and block size.

References are written here in plain numpy, independently of attention_kit: a two-pass softmax
per row and ``softmax(Q K^T / sqrt(d_k)) V`` with the mask applied by a loop over the rows.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import attention_kit as ak

FAST = settings(max_examples=40, deadline=None, derandomize=True)
finite = st.floats(min_value=-30, max_value=30, allow_nan=False, allow_infinity=False, width=64)


def softmax_loop(x, mask=None):
    """Two-pass softmax of each row over its allowed entries; an all-blocked row is all zeros."""
    x = np.atleast_2d(x)
    out = np.zeros_like(x, dtype=float)
    for i, row in enumerate(x):
        keep = np.ones(row.shape, bool) if mask is None else np.atleast_2d(mask)[i]
        if keep.any():
            e = np.exp(row[keep] - row[keep].max())
            out[i, keep] = e / e.sum()
    return out


def attention_loop(Q, K, V, mask=None):
    """One query at a time: scores, masked softmax, weighted sum of values."""
    out = np.zeros((Q.shape[0], V.shape[1]))
    for i, q in enumerate(Q):
        s = K @ q / np.sqrt(Q.shape[1])  # (n_k,)
        keep = np.ones(len(s), bool) if mask is None else mask[i]
        if keep.any():
            e = np.exp(s[keep] - s[keep].max())
            out[i] = (e / e.sum()) @ V[keep]
    return out


# ---------------------------------------------------------------------------------------- online


@FAST
@given(st.integers(1, 5), st.integers(1, 12), st.integers(1, 14), st.data())
def test_online_softmax_equals_two_pass_softmax(n_q, n_k, block, data):
    x = data.draw(hnp.arrays(np.float64, (n_q, n_k), elements=finite))
    mask = data.draw(hnp.arrays(np.bool_, (n_q, n_k)))
    np.testing.assert_allclose(ak.online_softmax(x, block=block), softmax_loop(x), rtol=1e-12, atol=1e-15)
    got = ak.online_softmax(x, block=block, mask=mask)
    np.testing.assert_allclose(got, softmax_loop(x, mask), rtol=1e-12, atol=1e-15)
    assert np.all(got[~mask] == 0)


def test_online_step_rescales_the_old_sum():
    x = np.array([1.0, 3.0, 2.0, 5.0])
    m, l = np.array(-np.inf), np.array(0.0)
    for j in range(len(x)):
        m, l, alpha, _ = ak.online_step(m, l, x[j : j + 1])
        seen = x[: j + 1]
        assert m == seen.max()
        np.testing.assert_allclose(l, np.exp(seen - seen.max()).sum(), rtol=1e-15)
    # the step from [1, 3, 2] to 5 rescales by exp(3 - 5)
    np.testing.assert_allclose(alpha, np.exp(3.0 - 5.0))


def test_online_trace_records_each_block():
    x = np.array([0.5, 2.0, -1.0, 4.0, 3.0])
    tr = ak.online_trace(x, block=2)
    assert tr["stop"] == [2, 4, 5]
    np.testing.assert_allclose(tr["m"], [2.0, 4.0, 4.0])
    np.testing.assert_allclose(tr["l"][-1], np.exp(x - 4.0).sum())
    np.testing.assert_allclose(tr["alpha"][1], np.exp(2.0 - 4.0))
    np.testing.assert_allclose(tr["weights"], softmax_loop(x)[0])


def test_online_softmax_handles_large_scores_without_overflow():
    x = np.array([[1000.0, 999.0, -1000.0]])
    np.testing.assert_allclose(ak.online_softmax(x), softmax_loop(x))


@pytest.mark.parametrize("kwargs, err, words", [
    ({"x": np.array([1.0, np.nan])}, ak.NonFiniteError, "NaN"),
    ({"x": np.zeros((2, 0))}, ak.EmptySequenceError, "no keys"),
    ({"x": np.zeros(3), "block": 0}, ak.ParameterError, "block must be a whole number"),
    ({"x": np.zeros(3), "block": 1.5}, ak.ParameterError, "need not divide"),
    ({"x": np.zeros(3), "mask": np.ones(3)}, ak.MaskDtypeError, "boolean"),
    ({"x": np.zeros((2, 3)), "mask": np.ones((3, 2), bool)}, ak.MaskError, "broadcast"),
])
def test_online_softmax_bad_input(kwargs, err, words):
    with pytest.raises(err, match=words):
        ak.online_softmax(**kwargs)


def test_online_trace_wants_one_row():
    with pytest.raises(ak.ParameterError, match="one row"):
        ak.online_trace(np.zeros((2, 3)))


# ---------------------------------------------------------------------------------------- tiled


@st.composite
def qkv(draw, max_n=13):
    n_q, n_k = draw(st.integers(1, max_n)), draw(st.integers(1, max_n))
    d_k, d_v = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    el = st.floats(-3, 3, allow_nan=False, width=64)
    return (draw(hnp.arrays(np.float64, (n_q, d_k), elements=el)),
            draw(hnp.arrays(np.float64, (n_k, d_k), elements=el)),
            draw(hnp.arrays(np.float64, (n_k, d_v), elements=el)))


blocks = st.integers(1, 16)  # often larger than n, often not dividing it


@FAST
@given(qkv(), blocks, blocks)
def test_tiled_equals_plain_attention(arrs, bq, bk):
    Q, K, V = arrs
    out, counts = ak.tiled_attention(Q, K, V, block_q=bq, block_k=bk)
    np.testing.assert_allclose(out, attention_loop(Q, K, V), rtol=0, atol=1e-12)
    np.testing.assert_allclose(out, ak.scaled_dot_product_attention(Q, K, V)[0], rtol=0, atol=1e-12)
    n_tiles = -(-Q.shape[0] // bq) * -(-K.shape[0] // bk)
    assert counts == ak.TileCounts(total=n_tiles, computed=n_tiles, skipped=0)


@FAST
@given(qkv(), blocks, blocks, st.data())
def test_tiled_with_a_mask_array(arrs, bq, bk, data):
    Q, K, V = arrs
    mask = data.draw(hnp.arrays(np.bool_, (Q.shape[0], K.shape[0])))
    out, counts = ak.tiled_attention(Q, K, V, mask, block_q=bq, block_k=bk)
    np.testing.assert_allclose(out, attention_loop(Q, K, V, mask), rtol=0, atol=1e-12)
    # a tile is skipped exactly when its part of the mask is all False
    empty = sum(not mask[r:r + bq, c:c + bk].any()
                for r in range(0, Q.shape[0], bq) for c in range(0, K.shape[0], bk))
    assert counts.skipped == empty and counts.computed + counts.skipped == counts.total


@FAST
@given(st.integers(1, 20), st.integers(1, 4), blocks, blocks, st.data())
def test_tiled_causal_and_window_build_their_masks_per_tile(n, d, bq, bk, data):
    rng = np.random.default_rng(n * 100 + d)
    Q, K, V = rng.normal(size=(3, n, d))
    window = data.draw(st.none() | st.integers(1, n + 2))
    if window is None:
        mask = np.tril(np.ones((n, n), bool))
    else:
        i, j = np.indices((n, n))
        mask = (j <= i) & (i - j < window)
    out, counts = ak.tiled_attention(Q, K, V, block_q=bq, block_k=bk, causal=True, window=window)
    np.testing.assert_allclose(out, attention_loop(Q, K, V, mask), rtol=0, atol=1e-12)
    out2, counts2 = ak.tiled_attention(Q, K, V, mask, block_q=bq, block_k=bk)  # the same, from an array
    np.testing.assert_allclose(out2, out, rtol=0, atol=1e-12)
    assert counts == counts2 == ak.tile_counts(n, n, block_q=bq, block_k=bk, causal=True, window=window)


@pytest.mark.parametrize("n, b, skipped", [(12, 4, 3), (13, 4, 6), (64, 16, 6), (1000, 100, 45), (5, 8, 0)])
def test_causal_skips_the_tiles_above_the_diagonal(n, b, skipped):
    """T = ceil(n / b) tiles per side; the T (T - 1) / 2 strictly above the diagonal are skipped."""
    counts = ak.tile_counts(n, n, block_q=b, block_k=b, causal=True)
    assert counts.skipped == skipped
    T = -(-n // b)
    assert counts.total == T * T and counts.skipped == T * (T - 1) // 2


def test_tiled_batched_heads_and_float32():
    rng = np.random.default_rng(3)
    Q, K, V = rng.normal(size=(3, 2, 4, 9, 5)).astype(np.float32)  # (batch, h, n, d)
    mask = rng.random((2, 1, 9, 9)) < 0.7  # one mask per sequence, shared by the heads
    out, _ = ak.tiled_attention(Q, K, V, mask, block_q=4, block_k=3)
    ref, _ = ak.scaled_dot_product_attention(Q, K, V, mask)
    assert out.dtype == np.float32 and out.shape == (2, 4, 9, 5)
    np.testing.assert_allclose(out, ref, atol=1e-5)


def test_tiled_large_scores_and_empty_rows():
    Q = np.array([[30.0, 0.0], [0.0, 30.0], [1.0, 1.0]])
    K = np.array([[30.0, 0.0], [0.0, -30.0], [5.0, 5.0]])
    V = np.eye(3)
    mask = np.array([[True, True, True], [True, True, False], [False, False, False]])
    out, _ = ak.tiled_attention(Q, K, V, mask, block_q=1, block_k=1)
    np.testing.assert_allclose(out, attention_loop(Q, K, V, mask), atol=1e-12)
    assert np.all(out[2] == 0)  # nothing allowed: zeros, as in softmax, never NaN


def test_tiled_trace_converges_to_the_exact_row():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(3, 10, 3))
    steps = ak.tiled_trace(Q, K, V, block_q=4, block_k=3, causal=True)
    ref = attention_loop(Q, K, V, np.tril(np.ones((10, 10), bool)))
    assert len(steps) == 3 * 4 and [s.skipped for s in steps].count(True) == 3
    for s in steps:
        if s.k_block == 3 or s.cols[1] == 10:  # the last tile of a row block: the exact rows
            np.testing.assert_allclose(s.out, ref[s.rows[0]:s.rows[1]], atol=1e-12)
    row0 = [s for s in steps if s.q_block == 0]
    assert row0[0].m.shape == (4,) and not row0[0].skipped and row0[-1].skipped


@pytest.mark.slow
def test_tiled_never_holds_an_n_by_n_array():
    """Peak traced memory of tiled attention grows like n, of plain attention like n^2."""
    def peak(fn, n):
        rng = np.random.default_rng(0)
        Q, K, V = rng.normal(size=(3, n, 16))
        tracemalloc.start()
        tracemalloc.reset_peak()
        fn(Q, K, V)
        p = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return p

    def tiled(Q, K, V):
        return ak.tiled_attention(Q, K, V, block_q=32, block_k=32)

    def plain(Q, K, V):
        return ak.scaled_dot_product_attention(Q, K, V)

    n1, n2 = 512, 2048
    slope = {name: np.log(peak(fn, n2) / peak(fn, n1)) / np.log(n2 / n1)
             for name, fn in (("tiled", tiled), ("plain", plain))}
    assert 0.8 < slope["tiled"] < 1.2, slope
    assert 1.8 < slope["plain"] < 2.1, slope
    assert peak(tiled, n2) < 2048 * 2048 * 8 / 4  # far less than the score matrix


@pytest.mark.parametrize("kwargs, err, words", [
    ({"block_q": 0}, ak.ParameterError, "block_q must be a whole number"),
    ({"block_k": 2.5}, ak.ParameterError, "block_k"),
    ({"window": 0}, ak.ParameterError, "window must be a whole number >= 1, got 0; for example window=4096"),
    ({"mask": np.ones((4, 4))}, ak.MaskDtypeError, "boolean"),
    ({"mask": np.ones((3, 4), bool)}, ak.MaskError, "broadcast"),
    ({"scale": np.inf}, ak.ParameterError, "scale"),
])
def test_tiled_bad_parameters(kwargs, err, words):
    Q = K = V = np.ones((4, 2))
    with pytest.raises(err, match=words):
        ak.tiled_attention(Q, K, V, **kwargs)


def test_tiled_bad_arrays_reuse_the_forward_messages():
    Q, K, V = np.ones((4, 2)), np.ones((5, 2)), np.ones((5, 3))
    with pytest.raises(ak.ShapeError, match=r"column layout \(d_k, n_k\)\? Use K.T"):
        ak.tiled_attention(Q, K.T, V)
    with pytest.raises(ak.ShapeError, match="one row per key"):
        ak.tiled_attention(Q, K, V[:4])
    with pytest.raises(ak.NonFiniteError, match="NaN"):
        ak.tiled_attention(np.full((4, 2), np.nan), K, V)
    with pytest.raises(ak.EmptySequenceError):
        ak.tiled_attention(np.ones((0, 2)), K, V)
    with pytest.raises(ak.ShapeError, match="one sequence"):
        ak.tiled_trace(np.ones((2, 4, 2)), np.ones((2, 5, 2)), np.ones((2, 5, 3)))
    with pytest.raises(ak.ParameterError, match="n_q must be a whole number >= 1"):
        ak.tile_counts(0, 4, block_q=2, block_k=2)


def test_tiled_reports_overflowing_scores():
    Q = np.full((2, 2), 1e200)
    with pytest.raises(ak.NonFiniteError, match="scores"):
        ak.tiled_attention(Q, Q, np.ones((2, 2)))
