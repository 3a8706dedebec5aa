"""Notebook 09's positions (attention_kit.long): RoPE against a second formulation (complex
numbers), its relative-position property under hypothesis, ALiBi's biases and slopes against the
paper, both inside the one attention forward / backward and the one block (gradients against
finite differences), and the KV cache that slides, with sinks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attention_kit as ak
from attention_kit.decoder import block as B
from attention_kit.decoder import tiny_lm as T
from attention_kit.learn.backward import multi_head_backward, numerical_gradient, relative_error
from attention_kit.learn.layers import cross_entropy
from attention_kit.relative.alibi import alibi_bias, alibi_slopes
from attention_kit.relative.rope import rope, rope_backward, rope_frequencies
from attention_kit.scale.kvcache import KVCache


def _rope_complex(x, positions, base=10000.0):
    """RoPE as RoFormer writes it (section 3.2.1): pair i is the complex number x[2i] + i x[2i+1],
    multiplied by e^{i m theta_i}."""
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)  # (d/2,)
    z = x[..., 0::2] + 1j * x[..., 1::2]  # (..., n, d/2)
    z = z * np.exp(1j * np.asarray(positions, dtype=float)[:, None] * theta)
    out = np.empty(x.shape)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


def test_rope_equals_the_complex_number_form():
    rng = np.random.default_rng(0)
    for shape, pos in (((5, 8), None), ((3, 2, 7, 16), np.arange(100, 107)), ((1, 4), [12345])):
        x = rng.normal(size=shape)
        p = np.arange(shape[-2]) if pos is None else pos
        np.testing.assert_allclose(rope(x, pos), _rope_complex(x, p), rtol=0, atol=1e-12)
    np.testing.assert_allclose(rope_frequencies(8), [1, 0.1, 0.01, 0.001])


@settings(max_examples=60, deadline=None)
@given(m=st.integers(0, 500), n=st.integers(0, 500), shift=st.integers(-200, 2000),
       seed=st.integers(0, 2**16), d=st.sampled_from([2, 4, 8, 16]))
def test_rope_scores_depend_on_the_positions_only_through_their_difference(m, n, shift, seed, d):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(1, d)), rng.normal(size=(1, d))
    s = (rope(q, [m]) @ rope(k, [n]).T).item()
    s_shifted = (rope(q, [m + shift]) @ rope(k, [n + shift]).T).item()
    assert s == pytest.approx(s_shifted, abs=1e-9)
    # and the rotation is the one of notebook 04 (rows convention: x @ R_k rotates the pairs of
    # [sin, cos] forward; for RoPE's (x0, x1) pairs the score is q . R((n - m) theta) k)
    assert np.linalg.norm(rope(q, [m])) == pytest.approx(np.linalg.norm(q))


def test_rope_backward_is_the_transpose_and_matches_finite_differences():
    rng = np.random.default_rng(1)
    x, g, pos = rng.normal(size=(2, 5, 6)), rng.normal(size=(2, 5, 6)), np.arange(7, 12)
    num = numerical_gradient(lambda z: float((rope(z, pos) * g).sum()), x)
    assert relative_error(rope_backward(g, pos), num) < 1e-8
    np.testing.assert_allclose(rope_backward(rope(x, pos), pos), x, atol=1e-12)


@pytest.mark.parametrize("call, words", [
    (lambda: rope(np.ones((3, 5))), "odd"),
    (lambda: rope(np.ones(4)), "(..., n, d_head)"),
    (lambda: rope(np.ones((3, 4)), [0, 1]), "one position per token"),
    (lambda: rope(np.ones((1, 4)), [np.nan]), "NaN"),
    (lambda: rope(np.full((1, 4), np.inf)), "inf"),
    (lambda: alibi_bias([1.0, -0.5], 3), ">= 0"),
    (lambda: alibi_bias(np.ones((2, 2)), 3), "one slope per head"),
])
def test_bad_input_is_named(call, words):
    with pytest.raises(ak.AttentionError, match=None) as e:
        call()
    assert words in str(e.value)


def test_alibi_slopes_are_the_papers():
    # Press et al. 2022, section 3: for 8 heads 1/2, 1/4, ..., 1/256; the geometric sequence
    # starting at 2^(-8/n) with that ratio; other head counts as in the paper's code
    np.testing.assert_allclose(alibi_slopes(8), 2.0 ** -np.arange(1, 9))
    np.testing.assert_allclose(alibi_slopes(16), 2.0 ** -(np.arange(1, 17) / 2))
    np.testing.assert_allclose(alibi_slopes(2), [2.0 ** -4, 2.0 ** -8])
    np.testing.assert_allclose(alibi_slopes(6), [0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125])
    b = alibi_bias([1.0, 0.25], 4)
    assert b.shape == (2, 4, 4)
    np.testing.assert_array_equal(b[0, 3], [-3, -2, -1, 0])
    np.testing.assert_array_equal(b[1, 2], [-0.5, -0.25, 0, -0.25])
    assert not np.signbit(b[:, np.arange(4), np.arange(4)]).any()  # no -0.0 on the diagonal


def _loop_attention(X, p, mask, pos=None, bias=None):
    """Multi-head self-attention with a loop over heads and pairs: the reference."""
    h, _, d = p.W_q.shape
    heads, weights = [], []
    for i in range(h):
        q, k, v = X @ p.W_q[i], X @ p.W_k[i], X @ p.W_v[i]
        if pos is not None:
            q, k = _rope_complex(q, pos), _rope_complex(k, pos)
        s = q @ k.T / np.sqrt(d) + (0 if bias is None else bias[i])
        s = np.where(mask, s, -np.inf)
        w = np.exp(s - s.max(1, keepdims=True))
        w /= w.sum(1, keepdims=True)
        heads.append(w @ v)
        weights.append(w)
    return np.concatenate(heads, 1) @ p.W_o, np.array(weights)


def test_multi_head_forward_with_rope_and_alibi_equals_a_loop_and_honours_the_mask():
    rng = np.random.default_rng(2)
    n, p = 7, ak.init_multi_head(8, 2, rng=rng)
    X = rng.normal(size=(n, 8))
    mask = ak.causal_mask(n)
    pos = np.arange(30, 30 + n)
    for kw, ref in (({"rotation": ak.rope_rotation(pos)}, {"pos": pos}),
                    ({"bias": alibi_bias([0.5, 0.0], n)}, {"bias": alibi_bias([0.5, 0.0], n)})):
        out, w, _ = ak.multi_head_forward(X, X, p, mask, **kw)
        want, want_w = _loop_attention(X, p, mask, **ref)
        np.testing.assert_allclose(out, want, atol=1e-12)
        np.testing.assert_allclose(w, want_w, atol=1e-12)
    # a bias that rewards the future is still blocked by the mask
    _, w, _ = ak.multi_head_forward(X, X, p, mask, bias=np.full((2, n, n), 50.0) * ~mask)
    assert (w[:, ~mask] == 0).all()
    with pytest.raises(ak.ShapeError, match="one bias per head"):
        ak.multi_head_forward(X, X, p, mask, bias=np.zeros((3, n, n)))


@pytest.mark.parametrize("kw", [{"rotation": ak.rope_rotation(np.arange(5, 11))}, {"bias": alibi_bias([1.0, 0.125], 6)}])
def test_multi_head_backward_with_rope_and_alibi_matches_finite_differences(kw):
    rng = np.random.default_rng(3)
    p = ak.init_multi_head(8, 2, rng=rng)
    X, G = rng.normal(size=(2, 6, 8)), rng.normal(size=(2, 6, 8))
    mask = ak.causal_mask(6)

    def loss(X_, **over):
        q = ak.MultiHeadParams(**{w: over.get(w, getattr(p, w)) for w in ("W_q", "W_k", "W_v", "W_o")})
        return float((ak.multi_head_forward(X_, X_, q, mask, **kw)[0] * G).sum())

    _, _, cache = ak.multi_head_forward(X, X, p, mask, **kw)
    dq, dkv, grads = multi_head_backward(cache, G)
    assert relative_error(dq + dkv, numerical_gradient(loss, X)) < 1e-7
    for w in ("W_q", "W_k", "W_v"):
        num = numerical_gradient(lambda W, w=w: loss(X, **{w: W}), getattr(p, w))
        assert relative_error(getattr(grads, w), num) < 1e-7


def _model(positions, n_layers=2, seed=0, context=8, vocab=11):
    cfg = T.TinyLMConfig(vocab_size=vocab, d_model=8, n_heads=2, n_layers=n_layers, d_ff=16,
                         context=context, positions=positions)
    return T.init_tiny_lm(cfg, rng=np.random.default_rng(seed)), cfg


@pytest.mark.parametrize("positions, slopes", [("rope", None), ("alibi", None), ("alibi", [1.0, 0.0])])
@pytest.mark.slow
def test_the_block_trains_through_rope_and_alibi(positions, slopes):
    """decoder_backward against finite differences, for every parameter."""
    p, _ = _model(positions)
    rng = np.random.default_rng(4)
    ids, tg = rng.integers(0, 11, (2, 6)), rng.integers(0, 11, (2, 6))

    def loss(params):
        return cross_entropy(B.decoder_forward(params, ids, positions=positions, slopes=slopes)[0], tg)

    logits, saved = B.decoder_forward(p, ids, positions=positions, slopes=slopes)
    g = B.decoder_backward(p, saved, cross_entropy(logits, tg)[1])
    for k in ("E", "l0.attn.W_q", "l0.attn.W_k", "l1.attn.W_q", "l1.attn.W_v", "l0.ln1.g"):
        num = numerical_gradient(lambda x, k=k: loss({**p, k: x})[0], p[k])
        assert relative_error(g[k], num) < 1e-6, k


@pytest.mark.parametrize("positions", ["rope", "alibi", None])
def test_relative_schemes_ignore_where_the_text_starts(positions):
    """RoPE and ALiBi see distances only: the same tokens at start 0 or 1000 give the same logits."""
    p, _ = _model(positions)
    ids = np.random.default_rng(5).integers(0, 11, (1, 8))
    a = B.decoder_forward(p, ids, positions=positions)[0]
    b = B.decoder_forward(p, ids, positions=positions, start=1000)[0]
    np.testing.assert_allclose(a, b, atol=1e-10)
    s = B.decoder_forward(p, ids, positions="sinusoidal")[0]
    assert np.abs(s - B.decoder_forward(p, ids, positions="sinusoidal", start=1000)[0]).max() > 1e-3


@pytest.mark.parametrize("positions", ["rope", "alibi", "sinusoidal"])
def test_cached_generation_equals_the_full_forward_within_the_context(positions):
    p, cfg = _model(positions)
    ids = np.random.default_rng(6).integers(0, 11, 3)
    seq, logits = T.generate_with_cache(p, cfg, ids, 5)
    full = T.lm_forward(p, cfg, seq[:-1])[0][0, 2:]
    np.testing.assert_allclose(logits, full, atol=1e-12)


def test_the_cache_keeps_the_last_window_and_the_sinks():
    c = KVCache(2, 2, window=3, sinks=2, capacity=2)
    for t in range(9):
        c.append(np.full(2, t), np.full(2, -t))
        keep = [j for j in range(t + 1) if j < 2 or t - j < 3]
        assert c.positions.tolist() == keep
        assert c.keys[:, 0].tolist() == keep and c.values[:, 0].tolist() == [-j for j in keep]
    c2 = KVCache(2, 2, window=3, sinks=1)
    c2.append(np.arange(10.0)[:, None].repeat(2, 1), np.zeros((10, 2)))  # ten tokens at once
    assert c2.positions.tolist() == [0, 7, 8, 9] and c2.keys[:, 0].tolist() == [0, 7, 8, 9]
    with pytest.raises(ak.ParameterError, match="window"):
        KVCache(2, 2, sinks=1)


def _full_forward_with_mask(p, ids, positions, mask):
    """One pass over the whole text under ``mask`` (n, n), through the one block: the reference."""
    X = p["E"][ids][None]  # (1, n, d)
    for l in range(B.n_layers_of(p)):
        X = B.block_forward(X, p, l, mask=mask, positions=positions)[0]
    F = (X - X.mean(-1, keepdims=True)) / np.sqrt(X.var(-1, keepdims=True) + 1e-5) * p["lnf.g"] + p["lnf.b"]
    return F[0] @ p["W_out"] + p["b_out"]  # (n, V)


@pytest.mark.parametrize("positions", ["rope", "alibi"])
@pytest.mark.parametrize("sinks", [0, 1, 2])
def test_a_one_layer_rolling_cache_equals_recomputing_the_window(positions, sinks):
    """Past the context the cache slides; for one layer every step equals the window (and the
    sinks) recomputed from scratch, because a key depends on its own token only."""
    W = 6
    p, cfg = _model(positions, n_layers=1, context=W)
    seq, logits = T.generate_with_cache(p, cfg, [1, 2, 3], 20, sinks=sinks)
    n = len(seq) - 1
    j, i = np.arange(n)[None, :], np.arange(n)[:, None]
    mask = (j <= i) & ((i - j < W) | (j < sinks))  # causal, the last W, and the sinks
    full = _full_forward_with_mask(p, seq[:n], positions, mask)  # (n, V)
    np.testing.assert_allclose(logits, full[2:], rtol=0, atol=1e-12)
    if not sinks:  # the window alone, recomputed as a fresh text starting at position 0
        for t in range(2, n):
            ids = seq[max(0, t - W + 1): t + 1][None]
            want = B.decoder_forward(p, ids, positions=positions)[0][0, -1]
            np.testing.assert_allclose(logits[t - 2], want, rtol=0, atol=1e-12)


def test_two_layers_rolling_cache_differs_from_recomputing_the_window():
    """With two layers the second layer's cached keys were computed from states that saw tokens
    since dropped: the rolling cache is no longer the window recomputed."""
    W = 6
    p, cfg = _model("rope", n_layers=2, context=W)
    seq, logits = T.generate_with_cache(p, cfg, [1, 2, 3], 12)
    diffs = []
    for t in range(2, len(seq) - 1):
        ids = seq[max(0, t - W + 1): t + 1][None]
        diffs.append(np.abs(logits[t - 2] - B.decoder_forward(p, ids, positions="rope")[0][0, -1]).max())
    diffs = np.array(diffs)
    assert diffs[: W - 2].max() < 1e-12  # nothing dropped yet: the same
    assert diffs[W:].min() > 1e-6  # once tokens drop out of the window, it differs


def test_predictable_splits_the_repeat_into_induction_and_the_boundary():
    from attention_kit.heads.tasks import repeated_sequences
    from attention_kit.long import extrapolation as ex

    ids, targets, repeated = repeated_sequences(np.random.default_rng(5), 64, length=30, vocab=64)
    induction, boundary = ex.predictable(ids, targets)
    assert (boundary.sum(axis=1) == 1).all()  # one boundary token per sequence ...
    first = repeated.argmax(axis=1)  # ... the first position of the repeat (i = period - 1)
    assert boundary[np.arange(64), first].all()
    np.testing.assert_array_equal(induction | boundary, repeated)
    assert not (induction & boundary).any()
    assert (targets[boundary] == ids[:, 0]).all()  # its target is the first token again


def test_stream_logits_with_the_sink_before_the_window_is_a_fresh_pass_over_sink_and_window():
    """StreamingLLM's positions for one RoPE layer: the sink at 0, the window at 1..W, recomputed."""
    from attention_kit.decoder.block import decoder_forward
    from attention_kit.decoder.lm_training import rhyme_stream
    from attention_kit.long import streaming

    params, cfg, _ = streaming.load_rope_lm(1)
    vocab = rhyme_stream()[1]
    ids = np.asarray(vocab.encode(rhyme_stream()[0])[:40])
    W = cfg.context
    got = streaming.stream_logits(params, cfg, ids, sinks=1, sink_positions="cache")
    text = streaming.stream_logits(params, cfg, ids, sinks=1)
    np.testing.assert_allclose(got[: W + 1], text[: W + 1], atol=1e-12)  # no gap yet: the same
    for t in range(W + 1, len(ids)):
        fresh = decoder_forward(params, np.concatenate([ids[:1], ids[t - W + 1: t + 1]])[None], positions="rope")[0]
        np.testing.assert_allclose(got[t], fresh[0, -1], atol=1e-9)
    assert np.abs(got[W + 1:] - text[W + 1:]).max() > 1e-6  # and not the sink at its text position
    with pytest.raises(ak.ParameterError):
        streaming.stream_logits(params, cfg, ids, sinks=1, sink_positions="window")


def test_rope_scores_at_any_distances():
    """extrapolation.rope_scores: the true distances give rope(q) @ rope(k).T; any other distances turn
    each pair by the distance given (the query turned by it against the unturned key)."""
    import attention_kit as ak
    from attention_kit.long import extrapolation

    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, 3, 6, 8))                                       # (batch, n, d)
    true = np.subtract.outer(np.arange(6), np.arange(6))
    np.testing.assert_allclose(extrapolation.rope_scores(q, k, true), ak.rope(q) @ ak.rope(k).swapaxes(-1, -2),
                               atol=1e-12)
    other = rng.integers(-4, 30, size=(6, 6))
    by_hand = np.array([[[ak.rope(q[b, i][None], [other[i, j]])[0] @ k[b, j] for j in range(6)] for i in range(6)]
                        for b in range(3)])
    np.testing.assert_allclose(extrapolation.rope_scores(q, k, other), by_hand, atol=1e-12)
    assert np.abs(extrapolation.rope_scores(q, k, other) - extrapolation.rope_scores(q, k, true)).max() > 0.1
    with pytest.raises(ak.ShapeError, match="one distance per query"):
        extrapolation.rope_scores(q, k, true[:5])


def test_rope_logits_at_the_true_distances_is_the_model():
    from attention_kit.decoder import block
    from attention_kit.heads.tasks import repeated_sequences
    from attention_kit.long import extrapolation

    params = extrapolation.load_extrapolation()["params"]["rope"]
    ids, _, _ = repeated_sequences(np.random.default_rng(1), 4, length=40, vocab=64, periods=(4, 12))
    true = np.subtract.outer(np.arange(40), np.arange(40))
    np.testing.assert_allclose(extrapolation.rope_logits_at(params, ids, true),
                               block.decoder_forward(params, ids, positions="rope")[0], atol=1e-10)
    clipped = extrapolation.rope_logits_at(params, ids, np.minimum(true, 23))
    np.testing.assert_allclose(clipped[:, :24], block.decoder_forward(params, ids[:, :24], positions="rope")[0],
                               atol=1e-10)                                   # nothing past 23 back before 24
    assert np.abs(clipped[:, 24:] - block.decoder_forward(params, ids, positions="rope")[0][:, 24:]).max() > 0.01
    with pytest.raises(ak.ParameterError, match="scheme='rope'"):
        extrapolation.accuracy(params, "sinusoidal", 48, distances=lambda d: d)
    window = ak.sliding_window_mask(40, 8, sinks=2)                            # a window with sinks: the same
    np.testing.assert_allclose(extrapolation.rope_logits_at(params, ids, true, mask=window),
                               block.decoder_forward(params, ids, positions="rope", window=8, sinks=2)[0],
                               atol=1e-10)
