"""KV cache, grouped-query attention, sliding windows and the tiny decoder, against plain references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attention_kit as ak

FAST = settings(max_examples=30, deadline=None, derandomize=True)


def causal_loop(Q, K, V, window=None):
    """Row t: softmax over keys 0..t (or the last ``window`` of them) of q_t . k_j / sqrt(d), times V."""
    out = np.zeros((Q.shape[-2], V.shape[-1]))
    for t in range(Q.shape[-2]):
        lo = 0 if window is None else max(0, t - window + 1)
        s = K[lo : t + 1] @ Q[t] / np.sqrt(Q.shape[-1])
        e = np.exp(s - s.max())
        out[t] = e / e.sum() @ V[lo : t + 1]
    return out


# ---------------------------------------------------------------------------------------- KV cache


@FAST
@given(st.integers(1, 20), st.integers(1, 5), st.integers(1, 5), st.none() | st.integers(1, 8),
       st.integers(1, 4))
def test_cache_equals_causal_attention_token_by_token(n, d_k, d_v, window, capacity):
    rng = np.random.default_rng(n + 10 * d_k)
    Q, K = rng.normal(size=(2, n, d_k))
    V = rng.normal(size=(n, d_v))
    ref = causal_loop(Q, K, V, window)
    cache = ak.KVCache(d_k, d_v, window=window, capacity=capacity)
    for t in range(n):
        cache.append(K[t], V[t])
        out, w = cache.attend(Q[t])
        np.testing.assert_allclose(out, ref[t], rtol=0, atol=1e-12)
        assert len(cache) == (t + 1 if window is None else min(t + 1, window)) == len(w)
        assert cache.nbytes == len(cache) * (d_k + d_v) * 8
    assert cache.seen == n


def test_cache_with_heads_and_grouped_queries():
    rng = np.random.default_rng(1)
    h, h_kv, n, d = 4, 2, 7, 3
    Q = rng.normal(size=(h, n, d))
    K, V = rng.normal(size=(2, h_kv, n, d))
    cache = ak.KVCache(d, d, n_heads=h_kv)
    cache.append(K[:, :3], V[:, :3])  # a prompt of 3 tokens at once
    for t in range(3, n):
        cache.append(K[:, t], V[:, t])
        out, w = cache.attend(Q[:, t])  # (h, d): query heads 0, 1 read K/V head 0; 2, 3 read head 1
        for head in range(h):
            np.testing.assert_allclose(out[head], causal_loop(Q[head], K[head // 2], V[head // 2])[t], atol=1e-12)
        assert w.shape == (h, t + 1)


@pytest.mark.parametrize("call, err, words", [
    (lambda c: c.attend(np.ones(3)), ak.ShapeError, "cache is empty"),
    (lambda c: c.append(np.ones(4), np.ones(2)), ak.ShapeError, r"k has shape \(4,\)"),
    (lambda c: c.append(np.ones((2, 3)), np.ones((3, 2))), ak.ShapeError, "one value per key"),
    (lambda c: c.append(np.full(3, np.nan), np.ones(2)), ak.NonFiniteError, "NaN"),
    (lambda c: (c.append(np.ones(3), np.ones(2)), c.attend(np.ones((2, 3)))), ak.ShapeError, "newest token's query"),
])
def test_cache_bad_input(call, err, words):
    with pytest.raises(err, match=words):
        call(ak.KVCache(3, 2))


def test_cache_bad_parameters():
    with pytest.raises(ak.ParameterError, match="window must be a whole number >= 1"):
        ak.KVCache(3, 2, window=0)
    with pytest.raises(ak.ParameterError, match="float32 or float64"):
        ak.KVCache(3, 2, dtype=np.int64)


def test_kv_cache_bytes_formula():
    # Llama 2 7B: 32 layers x 32 heads x 128 x 2 (K, V) x 2 bytes = 512 KiB per token
    s = ak.MODEL_SHAPES["Llama 2 7B"]
    assert ak.kv_cache_bytes(1, layers=s["layers"], kv_heads=s["kv_heads"], d_head=s["d_head"]) == 512 * 1024
    # a cache object of the same shape holds exactly that per token, per layer
    c = ak.KVCache(8, 8, n_heads=4, dtype=np.float32)
    c.append(np.ones((4, 5, 8)), np.ones((4, 5, 8)))
    assert c.nbytes == ak.kv_cache_bytes(5, layers=1, kv_heads=4, d_head=8, bytes_per_value=4)
    with pytest.raises(ak.ParameterError, match="kv_heads"):
        ak.kv_cache_bytes(10, layers=2, kv_heads=0, d_head=4)
    for shape in ak.MODEL_SHAPES.values():
        assert shape["heads"] % shape["kv_heads"] == 0


def test_kv_cache_bytes_with_a_sliding_window():
    # Mistral 7B v0.1: W = 4096, a rolling buffer; at 32k tokens 0.5 GiB instead of 4 GiB (8 x, its paper)
    s = ak.MODEL_SHAPES["Mistral 7B"]
    assert s["window"] == 4096 and all(m["window"] is None for k, m in ak.MODEL_SHAPES.items() if k != "Mistral 7B")
    kw = dict(layers=s["layers"], kv_heads=s["kv_heads"], d_head=s["d_head"])
    assert ak.kv_cache_bytes(32768, **kw, window=s["window"]) == 2**29
    assert ak.kv_cache_bytes(32768, **kw) == 8 * ak.kv_cache_bytes(32768, **kw, window=s["window"])
    assert ak.kv_cache_bytes(100, **kw, window=4096) == ak.kv_cache_bytes(100, **kw)   # below W: no cap
    # a rolling KVCache holds exactly min(n, W) tokens' worth
    c = ak.KVCache(8, 8, n_heads=2, window=3)
    for _ in range(5):
        c.append(np.ones((2, 1, 8)), np.ones((2, 1, 8)))
    assert c.nbytes == ak.kv_cache_bytes(5, layers=1, kv_heads=2, d_head=8, bytes_per_value=8, window=3)
    with pytest.raises(ak.ParameterError, match="window"):
        ak.kv_cache_bytes(10, **kw, window=0)


def test_attend_does_its_two_products_through_the_given_matmul():
    rng = np.random.default_rng(4)
    c = ak.KVCache(4, 3, n_heads=2)
    K, V = rng.normal(size=(2, 6, 4)), rng.normal(size=(2, 6, 3))
    c.append(K, V)
    q = rng.normal(size=(4, 4))                             # 4 query heads share the 2 key/value heads
    calls = []
    out, w = c.attend(q, matmul=lambda a, b: calls.append((a.shape, b.shape)) or a @ b)
    assert calls == [((2, 2, 4), (2, 4, 6)), ((2, 2, 6), (2, 6, 3))]   # q K^T, then a V
    ref, ref_w = ak.scaled_dot_product_attention(q.reshape(2, 2, 4), K, V)   # (2, 2, 3)
    np.testing.assert_allclose(out, ref.reshape(4, 3), rtol=1e-12)
    np.testing.assert_allclose(w, ref_w.reshape(4, 6), rtol=1e-12)


def test_tiny_decoder_counts_the_cached_attention_from_its_products():
    dec = ak.TinyDecoder(40, 16, 4, 2, n_layers=1, rng=np.random.default_rng(0), max_len=40)
    *_, madds, _ = dec.generate([3, 1, 4], 3, cache=True)
    seen = iter(range(3, 6))
    per_layer = lambda n: 16 * (4 + 2 * 2) * 4 + 4 * n * (4 + 4) + 4 * 4 * 16   # noqa: E731 proj, attend, W_o
    assert madds == [per_layer(n) + 16 * 40 for n in seen]  # + the logits


# ---------------------------------------------------------------------------------------- GQA


@FAST
@given(st.sampled_from([(4, 1), (4, 2), (4, 4), (6, 3), (6, 2), (2, 1)]), st.integers(1, 6),
       st.integers(1, 6), st.integers(0, 1000))
def test_gqa_equals_multi_head_with_repeated_kv_heads(heads, n_q, n_k, seed):
    h, h_kv = heads
    rng = np.random.default_rng(seed)
    p = ak.init_grouped_query(12, h, h_kv, rng=rng)
    Xq, Xkv = rng.normal(size=(n_q, 12)), rng.normal(size=(n_k, 12))
    mask = rng.random((h, n_q, n_k)) < 0.7  # a different mask for every head
    out, w = ak.grouped_query_attention(Xq, Xkv, p, mask=mask)
    ref, ref_w = ak.multi_head_attention(Xq, Xkv, ak.to_multi_head(p), mask=mask)
    np.testing.assert_allclose(out, ref, atol=1e-12)
    np.testing.assert_allclose(w, ref_w, atol=1e-12)
    # plain loop over query heads: head l uses K/V head l // g
    g = h // h_kv
    heads = []
    for head in range(h):
        q = Xq @ p.W_q[head]
        k, v = Xkv @ p.W_k[head // g], Xkv @ p.W_v[head // g]
        s = np.where(mask[head], q @ k.T / np.sqrt(q.shape[1]), -np.inf)
        e = np.exp(s - np.where(mask[head].any(1), s.max(1), 0)[:, None])
        a = e / np.maximum(e.sum(1, keepdims=True), 1e-300)
        np.testing.assert_allclose(w[head], a, atol=1e-12)
        heads.append(a @ v)
    np.testing.assert_allclose(out, np.concatenate(heads, axis=1) @ p.W_o, atol=1e-12)


def test_gqa_with_as_many_kv_heads_as_heads_is_mha():
    rng = np.random.default_rng(5)
    p = ak.init_multi_head(16, 4, rng=rng)
    X = rng.normal(size=(2, 6, 16))  # a batch of two sequences
    C = ak.causal_mask(6)
    out, w = ak.grouped_query_attention(X, X, ak.from_multi_head(p), mask=C)
    ref, ref_w = ak.multi_head_attention(X, X, p, mask=C)
    np.testing.assert_allclose(out, ref, atol=1e-13)
    np.testing.assert_allclose(w, ref_w, atol=1e-13)


def test_mqa_has_one_kv_head_and_fewer_parameters():
    rng = np.random.default_rng(0)
    mqa = ak.init_grouped_query(32, 8, 1, rng=rng)
    mha = ak.init_grouped_query(32, 8, 8, rng=rng)
    assert mqa.group == 8 and mqa.W_k.shape == (1, 32, 4)
    assert mha.n_parameters() - mqa.n_parameters() == 2 * 7 * 32 * 4  # 7 fewer K heads and V heads


@pytest.mark.parametrize("call, err, words", [
    (lambda rng: ak.init_grouped_query(16, 4, 3, rng=rng), ak.ParameterError, r"choose n_kv_heads from \[1, 2, 4\]"),
    (lambda rng: ak.init_grouped_query(16, 4, 0, rng=rng), ak.ParameterError, "n_kv_heads must be a whole number >= 1"),
    (lambda rng: ak.init_grouped_query(10, 4, 2, rng=rng), ak.ParameterError, "not divisible"),
    (lambda rng: ak.GroupedQueryParams(np.ones((4, 8, 2)), np.ones((3, 8, 2)), np.ones((3, 8, 2)), np.ones((8, 8))),
     ak.ParameterError, "does not divide 4"),
    (lambda rng: ak.GroupedQueryParams(np.ones((4, 8, 2)), np.ones((2, 8, 2)), np.ones((2, 8, 2)), np.ones((8, 7))),
     ak.ShapeError, r"W_o has shape \(8, 7\)"),
    (lambda rng: ak.grouped_query_attention(np.ones((3, 8)), np.ones((3, 8)), ak.init_multi_head(8, 2, rng=rng)),
     ak.ParameterError, "GroupedQueryParams"),
    (lambda rng: ak.grouped_query_attention(np.ones((8, 3)), np.ones((3, 8)), ak.init_grouped_query(8, 2, 1, rng=rng)),
     ak.ShapeError, "X_q.T"),
    (lambda rng: ak.grouped_query_attention(np.ones((3, 8)), np.ones((3, 8)), ak.init_grouped_query(8, 2, 1, rng=rng),
                                            mask=np.ones((3, 3))), ak.MaskDtypeError, "boolean"),
    (lambda rng: ak.from_multi_head(ak.init_multi_head(8, 2, rng=rng, bias=True)), ak.ParameterError, "no biases"),
])
def test_gqa_bad_input(call, err, words):
    with pytest.raises(err, match=words):
        call(np.random.default_rng(0))


# ---------------------------------------------------------------------------------------- sliding


def test_sliding_window_mask_is_the_causal_half_of_local_alignment():
    n, W = 9, 3
    m = ak.sliding_window_mask(n, W)
    for i in range(n):
        for j in range(n):
            assert m[i, j] == (i - W < j <= i)
    # local alignment around p = i with D = W - 1 puts weight exactly on the two-sided window
    w = ak.local_align(np.zeros((n, n)), p=np.arange(n, dtype=float), D=W - 1)
    np.testing.assert_array_equal(m, (w > 0) & ak.causal_mask(n))


@pytest.mark.parametrize("n, W, L", [(12, 3, 1), (12, 3, 2), (12, 3, 4), (10, 2, 3), (6, 6, 2)])
def test_receptive_field_grows_by_window_minus_one_per_layer(n, W, L):
    reach = ak.receptive_field(ak.sliding_window_mask(n, W), L)
    i, j = np.indices((n, n))
    np.testing.assert_array_equal(reach, (j <= i) & (i - j <= L * (W - 1)))


def test_receptive_field_matches_a_perturbation_through_real_layers():
    """Nudge input j, run L layers of masked self-attention with residuals: output i moves iff reach[i, j]."""
    n, W, L, d = 10, 3, 3, 4
    rng = np.random.default_rng(2)
    Ws = rng.normal(0, 0.5, (L, 3, d, d))
    M = ak.sliding_window_mask(n, W)

    def run(X):
        for Wq, Wk, Wv in Ws:
            X = X + ak.self_attention(X, Wq, Wk, Wv, mask=M)[0]
        return X

    X = rng.normal(size=(n, d))
    base = run(X)
    reach = ak.receptive_field(M, L)
    for j in range(n):
        X2 = X.copy()
        X2[j] += 0.1
        moved = np.abs(run(X2) - base).max(axis=1) > 1e-12
        np.testing.assert_array_equal(moved, reach[:, j])


def test_sliding_bad_input():
    with pytest.raises(ak.ParameterError, match="window must be a whole number >= 1"):
        ak.sliding_window_mask(5, 0)
    with pytest.raises(ak.MaskDtypeError, match="boolean"):
        ak.receptive_field(np.ones((3, 3)), 2)
    with pytest.raises(ak.MaskError, match="square"):
        ak.receptive_field(np.ones((3, 4), bool), 2)


# ---------------------------------------------------------------------------------------- decoder


def test_decoder_with_and_without_cache_agree_and_count():
    dec = ak.TinyDecoder(40, 16, 4, 2, n_layers=2, rng=np.random.default_rng(0), max_len=40)
    a_tok, a_log, a_madds, a_sec = dec.generate([3, 1, 4], 12, cache=False)
    b_tok, b_log, b_madds, b_sec = dec.generate([3, 1, 4], 12, cache=True)
    assert len(a_sec) == len(b_sec) == 12 and min(a_sec + b_sec) > 0
    assert a_tok == b_tok and len(a_tok) == 15
    np.testing.assert_allclose(a_log, b_log, atol=1e-12)
    # the no-cache forward equals grouped-query attention layer by layer
    t = np.array(a_tok)
    P = dec.params
    X = P["E"][t] + ak.sinusoidal_positions(len(t), 16)
    for l in range(2):
        p = ak.GroupedQueryParams(**{w: P[f"l{l}.attn.{w}"] for w in ("W_q", "W_k", "W_v", "W_o")})
        X = X + ak.grouped_query_attention(X, X, p, mask=ak.causal_mask(len(t)))[0]
    np.testing.assert_allclose(dec.forward(t), X @ P["W_out"], atol=1e-12)
    # without the cache the cost grows faster than linearly, with it exactly linearly
    a2 = np.diff(np.diff(a_madds))
    b1 = np.diff(b_madds)
    assert np.all(a2 > 0) and np.all(a2 == a2[0])  # quadratic: constant second difference
    assert np.all(b1 == b1[0]) and b1[0] > 0  # linear: constant first difference
    assert all(x > y for x, y in zip(a_madds, b_madds, strict=True))


def test_decoder_bad_input():
    dec = ak.TinyDecoder(10, 8, 2, 1, n_layers=1, rng=np.random.default_rng(0), max_len=8)
    with pytest.raises(ak.ParameterError, match=r"ints in 0..9"):
        dec.generate([3, 12], 2, cache=True)
    with pytest.raises(ak.ParameterError, match="max_len"):
        dec.generate([1, 2, 3], 6, cache=False)
    with pytest.raises(ak.ParameterError, match="Generator"):
        ak.TinyDecoder(10, 8, 2, 1, rng=0)


def test_gqa_batched_masks_follow_multi_head_attention():
    """A (batch, n_q, n_k) padding mask is one mask per sequence; (batch, h, n_q, n_k) one per head."""
    rng = np.random.default_rng(7)
    p = ak.init_grouped_query(8, 4, 2, rng=rng)
    X = rng.normal(size=(3, 5, 8))
    pad = ak.padding_mask([5, 3, 2], 5, n_q=5)  # (3, 5, 5)
    per_head = rng.random((3, 4, 5, 5)) < 0.6
    for mask in (pad, pad & ak.causal_mask(5), per_head, ak.padding_mask([5, 3, 2], 5)):
        out, w = ak.grouped_query_attention(X, X, p, mask=mask)
        ref, ref_w = ak.multi_head_attention(X, X, ak.to_multi_head(p), mask=mask)
        np.testing.assert_allclose(out, ref, atol=1e-12)
        np.testing.assert_allclose(w, ref_w, atol=1e-12)
    assert np.all(w[1, :, :, 3:] == 0)  # sequence 1 has 3 real tokens: no head looks at the pads
    with pytest.raises(ak.MaskError, match="ambiguous"):
        ak.grouped_query_attention(X, X, p, mask=np.ones((1, 1, 1, 1, 5, 5), bool))
