"""The decoder block is written once (attention_kit.decoder.block): notebook 06's language model,
its cached generation and notebook 07's decoder all run through it, and give the same logits as
an independent reference written here layer by layer."""

from __future__ import annotations

import numpy as np
import pytest

import attention_kit as ak
from attention_kit.decoder import block as B
from attention_kit.decoder import tiny_lm as T
from attention_kit.decoder.lm_training import rhyme_stream
from attention_kit.learn.backward import numerical_gradient, relative_error
from attention_kit.learn.params import load_params, save_params


def _layer_norm(x, g, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) * g + b


def _gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def _reference_logits(p, ids, *, n_layers):
    """The pre-norm decoder written out with a loop over heads: an independent reference."""
    n = len(ids)
    X = p["E"][ids] + ak.sinusoidal_positions(n, p["E"].shape[1])  # (n, d)
    future = np.triu(np.ones((n, n), dtype=bool), 1)
    for l in range(n_layers):
        A = _layer_norm(X, p[f"l{l}.ln1.g"], p[f"l{l}.ln1.b"]) if f"l{l}.ln1.g" in p else X
        Wq, Wk, Wv = (p[f"l{l}.attn.{w}"] for w in ("W_q", "W_k", "W_v"))
        g = Wq.shape[0] // Wk.shape[0]  # query heads per key/value head
        heads = []
        for i in range(Wq.shape[0]):
            q, k, v = A @ Wq[i], A @ Wk[i // g], A @ Wv[i // g]  # (n, d_head) each
            s = np.where(future, -np.inf, q @ k.T / np.sqrt(q.shape[1]))
            w = np.exp(s - s.max(1, keepdims=True))
            heads.append(w / w.sum(1, keepdims=True) @ v)
        X = X + np.concatenate(heads, axis=1) @ p[f"l{l}.attn.W_o"]
        if f"l{l}.mlp.W1" in p:
            M = _layer_norm(X, p[f"l{l}.ln2.g"], p[f"l{l}.ln2.b"])
            X = X + _gelu(M @ p[f"l{l}.mlp.W1"] + p[f"l{l}.mlp.b1"]) @ p[f"l{l}.mlp.W2"] + p[f"l{l}.mlp.b2"]
    if "lnf.g" in p:
        X = _layer_norm(X, p["lnf.g"], p["lnf.b"])
    return X @ p["W_out"] + p.get("b_out", 0.0)


@pytest.fixture(scope="module")
def shipped():
    return T.load_pretrained()


def test_the_language_model_its_cache_and_the_reference_agree(shipped):
    p, cfg, _ = shipped
    _, vocab = rhyme_stream()
    prompt = vocab.encode("humpty dumpty sat on")
    seq, cached = T.generate_with_cache(p, cfg, prompt, cfg.context - len(prompt))
    full = T.lm_forward(p, cfg, seq)[0][0]  # (n, V): the whole sequence at once
    np.testing.assert_allclose(full, _reference_logits(p, seq, n_layers=cfg.n_layers), rtol=0, atol=1e-12)
    np.testing.assert_allclose(cached, full[len(prompt) - 1 : -1], rtol=0, atol=1e-12)


def test_the_shipped_weights_load_and_finish_the_rhyme(shipped):
    p, cfg, _ = shipped
    _, vocab = rhyme_stream()
    ctx = vocab.encode("humpty dumpty sat on")
    assert vocab.decode(T.generate(p, cfg, ctx, 3)[len(ctx):]) == ["a", "wall", ","]
    assert vocab.decode(T.generate_with_cache(p, cfg, ctx, 3)[0][len(ctx):]) == ["a", "wall", ","]


@pytest.mark.parametrize("n_kv_heads", [4, 2, 1])  # multi-head, grouped-query, multi-query
def test_notebook_07_decoder_runs_through_the_same_block(n_kv_heads):
    dec = ak.TinyDecoder(30, 16, 4, n_kv_heads, n_layers=2, rng=np.random.default_rng(0), max_len=20)
    tok, cached, _, _ = dec.generate([3, 1, 4, 1], 10, cache=True)
    ref = _reference_logits(dec.params, np.array(tok), n_layers=2)  # (14, V)
    np.testing.assert_allclose(dec.forward(tok), ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(cached, ref[3:-1], rtol=0, atol=1e-12)
    assert dec.config == ak.DecoderConfig(30, 16, 4, n_kv_heads, 2, 20)


def test_a_sliding_window_through_the_block_equals_a_cache_with_that_window():
    cfg = T.TinyLMConfig(vocab_size=12, d_model=8, n_heads=2, n_layers=2, d_ff=8, context=10)
    p = T.init_tiny_lm(cfg, rng=np.random.default_rng(1))
    ids = np.array([[1, 5, 2, 7, 3, 3, 9, 0]])
    full = B.decoder_forward(p, ids, window=3)[0][0]  # (8, V)
    caches = [ak.KVCache(4, 4, n_heads=2, window=3) for _ in range(2)]
    step = [B.decoder_forward(p, ids[:, [i]], start=i, caches=caches)[0][0, 0] for i in range(8)]
    np.testing.assert_allclose(step, full, rtol=0, atol=1e-12)
    assert not np.allclose(full, B.decoder_forward(p, ids)[0][0])  # the window matters


@pytest.mark.slow
def test_whole_model_gradient_check():
    cfg = T.TinyLMConfig(vocab_size=7, d_model=6, n_heads=2, n_layers=2, d_ff=8, context=5)
    p = T.init_tiny_lm(cfg, rng=np.random.default_rng(2))
    rng = np.random.default_rng(3)
    ids, targets = rng.integers(0, 7, (2, 5)), rng.integers(0, 7, (2, 5))
    targets[0, 0] = -1  # a position without a target adds nothing
    _, grads = T.lm_loss_and_grads(p, cfg, ids, targets)
    assert set(grads) == set(p)
    for name in p:
        num = numerical_gradient(lambda x, k=name: T.lm_loss_and_grads({**p, k: x}, cfg, ids, targets)[0],
                                 p[name], eps=1e-5)
        assert relative_error(grads[name], num) < 1e-6, name


def test_one_parameter_convention_saves_and_loads_every_model(tmp_path):
    dec = ak.TinyDecoder(20, 8, 2, 1, n_layers=1, rng=np.random.default_rng(0), max_len=12)
    save_params(tmp_path / "dec.npz", dec.params, dec.config, dtype=np.float64)
    params, config, _ = load_params(tmp_path / "dec.npz", ak.DecoderConfig)
    assert config == dec.config and set(params) == set(dec.params)
    np.testing.assert_array_equal(B.decoder_forward(params, np.array([[1, 2, 3]]))[0],
                                  B.decoder_forward(dec.params, np.array([[1, 2, 3]]))[0])
    cfg = T.TinyLMConfig(vocab_size=5, d_model=4, n_heads=2, n_layers=1, d_ff=4, context=3)
    save_params(tmp_path / "lm.npz", T.init_tiny_lm(cfg, rng=np.random.default_rng(0)), cfg)
    assert load_params(tmp_path / "lm.npz", T.TinyLMConfig)[1] == cfg
    with pytest.raises(ak.ParameterError, match="holds a DecoderConfig, not a TinyLMConfig"):
        load_params(tmp_path / "dec.npz", T.TinyLMConfig)
    with pytest.raises(ak.ParameterError, match="config must be a model's config"):
        save_params(tmp_path / "x.npz", dec.params, {"vocab": 20})


def test_the_backward_pass_needs_multi_head_attention_without_a_cache():
    dec = ak.TinyDecoder(20, 8, 2, 1, n_layers=1, rng=np.random.default_rng(0), max_len=12)
    logits, saved = B.decoder_forward(dec.params, np.array([[1, 2, 3]]))
    with pytest.raises(ak.ParameterError, match="multi-head attention without a cache"):
        B.decoder_backward(dec.params, saved, np.ones_like(logits))


def test_notebook_05_model_saves_and_loads_in_the_same_convention(tmp_path):
    from attention_kit.learn.toy_tasks import TASKS, init_model, model_from_params

    model = init_model("pair", n_heads=2, seed=4)
    save_params(tmp_path / "toy.npz", model.as_params(), model.config, dtype=np.float64)
    params, config, _ = load_params(tmp_path / "toy.npz", type(model.config))
    again = model_from_params(params, config)
    tokens, _ = TASKS["pair"].make(np.random.default_rng(0), 3)
    np.testing.assert_array_equal(again.forward(tokens)[0], model.forward(tokens)[0])
    assert config == model.config and config.n_heads == 2
