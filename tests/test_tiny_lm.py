"""The tiny language model: gradients of the whole model against finite differences, sampling,
saving and loading, the shipped weights, and the training script against its logged run."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import attention_kit as ak
from attention_kit.decoder import tiny_lm as T
from attention_kit.decoder.lm_training import evaluate, make_lm_data, rhyme_stream
from attention_kit.learn.backward import numerical_gradient, relative_error
from attention_kit.learn.corpus import UnknownWordError, Vocab, tokenize
from attention_kit.learn.params import load_params, save_params

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def shipped():
    return T.load_pretrained()


@pytest.mark.parametrize("switches", [{}, {"residual": False}, {"positions": False, "causal": False}])
@pytest.mark.slow
def test_whole_model_gradients_against_finite_differences(switches):
    rng = np.random.default_rng(1)
    cfg = T.TinyLMConfig(vocab_size=7, d_model=4, n_heads=2, n_layers=2, d_ff=6, context=4)
    p = T.init_tiny_lm(cfg, rng=rng)
    ids, tg = rng.integers(0, 7, (2, 4)), rng.integers(0, 7, (2, 4))
    _, g = T.lm_loss_and_grads(p, cfg, ids, tg, **switches)
    assert set(g) == set(p)
    for k in p:
        ng = numerical_gradient(lambda x, k=k: T.lm_loss_and_grads({**p, k: x}, cfg, ids, tg, **switches)[0],
                                p[k].copy(), eps=1e-5)
        assert relative_error(g[k], ng) <= 1e-7, k


def test_causal_model_does_not_look_ahead():
    rng = np.random.default_rng(2)
    cfg = T.TinyLMConfig(vocab_size=9, d_model=8, n_heads=2, n_layers=2, d_ff=8, context=6)
    p = T.init_tiny_lm(cfg, rng=rng)
    a = np.array([1, 2, 3, 4, 5, 6])
    b = a.copy()
    b[4:] = [7, 8]
    la, lb = T.lm_forward(p, cfg, a)[0], T.lm_forward(p, cfg, b)[0]
    np.testing.assert_allclose(la[0, :4], lb[0, :4], rtol=1e-12)  # earlier positions unchanged
    lc, ld = T.lm_forward(p, cfg, a, causal=False)[0], T.lm_forward(p, cfg, b, causal=False)[0]
    assert not np.allclose(lc[0, :4], ld[0, :4])


def test_without_positions_a_permutation_only_permutes():
    rng = np.random.default_rng(3)
    cfg = T.TinyLMConfig(vocab_size=9, d_model=8, n_heads=2, n_layers=1, d_ff=8, context=4)
    p = T.init_tiny_lm(cfg, rng=rng)
    x, perm = np.array([1, 2, 3, 4]), np.array([2, 0, 3, 1])
    out = T.lm_forward(p, cfg, x, causal=False, positions=False)[0][0]
    outp = T.lm_forward(p, cfg, x[perm], causal=False, positions=False)[0][0]
    np.testing.assert_allclose(outp, out[perm], rtol=1e-10)


def test_bad_inputs():
    with pytest.raises(ak.ParameterError, match="not divisible"):
        T.TinyLMConfig(vocab_size=10, d_model=10, n_heads=4)
    cfg = T.TinyLMConfig(vocab_size=5, d_model=4, n_heads=2, n_layers=1, d_ff=4, context=3)
    p = T.init_tiny_lm(cfg, rng=np.random.default_rng(0))
    with pytest.raises(ak.ShapeError, match="at most 3"):
        T.lm_forward(p, cfg, [0, 1, 2, 3])
    with pytest.raises(ak.ParameterError, match="outside 0..4"):
        T.lm_forward(p, cfg, [0, 9])
    with pytest.raises(ak.ParameterError, match="temperature"):
        T.next_token_probs(p, cfg, [0, 1], temperature=0)
    with pytest.raises(ak.ParameterError, match="rng"):
        T.generate(p, cfg, [0], 2, temperature=1.0)


def test_vocab_and_tokens():
    assert tokenize("Humpty Dumpty sat on a wall,\nHumpty") == \
        ["humpty", "dumpty", "sat", "on", "a", "wall", ",", "/", "humpty"]
    v = Vocab(["a", "b", "a", "c"])
    assert v.words == ["a", "b", "c"] and list(v.encode("b a")) == [1, 0]
    with pytest.raises(UnknownWordError, match="does not know 'zebra'.*knows only the 3 words"):
        v.encode("a zebra")
    assert Vocab.join(["humpty", "sat", ",", "/", "on", "."]) == "humpty sat,\non."


def test_sampling_greedy_and_temperature(shipped):
    p, cfg, _ = shipped
    _, vocab = rhyme_stream()
    ctx = vocab.encode("humpty dumpty sat on")
    g1, g2 = T.generate(p, cfg, ctx, 5), T.generate(p, cfg, ctx, 5)
    np.testing.assert_array_equal(g1, g2)  # greedy is deterministic
    s1 = T.generate(p, cfg, ctx, 5, temperature=1.0, rng=np.random.default_rng(0))
    s2 = T.generate(p, cfg, ctx, 5, temperature=1.0, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(s1, s2)  # the same seed, the same sample
    cold = T.next_token_probs(p, cfg, ctx, temperature=0.1)
    warm = T.next_token_probs(p, cfg, ctx, temperature=5.0)
    assert cold.max() > warm.max() and abs(cold.sum() - 1) < 1e-12
    assert np.argmax(cold) == g1[len(ctx)]  # low temperature -> the greedy choice


@pytest.mark.parametrize("n_layers,n_heads", [(1, 2), (2, 4)])
def test_generation_with_a_kv_cache_equals_the_full_forward(shipped, n_layers, n_heads):
    if (n_layers, n_heads) == (1, 2):
        p, cfg, _ = shipped  # the trained model of notebook 06
    else:  # more layers and heads, random weights
        cfg = T.TinyLMConfig(vocab_size=20, d_model=16, n_heads=n_heads, n_layers=n_layers,
                             d_ff=24, context=12)
        p = T.init_tiny_lm(cfg, rng=np.random.default_rng(3))
    prompt = [1, 7, 3, 2]
    seq, logits = T.generate_with_cache(p, cfg, prompt, cfg.context - len(prompt))
    np.testing.assert_array_equal(seq, T.generate(p, cfg, prompt, cfg.context - len(prompt)))
    full = [T.lm_forward(p, cfg, seq[:k])[0][0, -1] for k in range(len(prompt), cfg.context)]
    np.testing.assert_allclose(logits, full, rtol=0, atol=1e-12)  # loop vs whole-prefix forward


def test_generation_with_a_kv_cache_refuses_a_sliding_window(shipped):
    p, cfg, _ = shipped
    with pytest.raises(ak.ParameterError, match="absolute positions"):
        T.generate_with_cache(p, cfg, [1, 2, 3], cfg.context)  # 3 + 16 > 16
    with pytest.raises(ak.ParameterError, match="n_new"):
        T.generate_with_cache(p, cfg, [1, 2, 3], -1)


def test_shipped_weights_finish_the_rhyme_and_are_small(shipped):
    p, cfg, meta = shipped
    size = (ROOT / "attention_kit" / "data" / "tiny_lm.npz").stat().st_size
    assert size < 300_000
    _, vocab = rhyme_stream()
    ctx = vocab.encode("humpty dumpty sat on")
    out = vocab.decode(T.generate(p, cfg, ctx, 3)[len(ctx):])
    assert out == ["a", "wall", ","]
    data = make_lm_data(cfg.context, seed=int(meta["seed"]))
    loss, acc = evaluate(p, cfg, data.X_held, data.Y_held)
    assert loss < 0.6 and acc > 0.88
    assert float(meta["history"][-1, 2]) == pytest.approx(loss, abs=0.01)  # float32 rounding only


def test_training_script_reproduces_the_shipped_first_losses(shipped, tmp_path):
    _, _, meta = shipped
    spec = importlib.util.spec_from_file_location("train_tiny_lm", ROOT / "tools" / "train_tiny_lm.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    _, _, _, history = mod.run(steps=2 * mod.LOG_EVERY)
    logged = np.asarray(meta["history"])[:2]
    np.testing.assert_allclose(np.array(history)[:, 1:], logged[:, 1:], rtol=1e-6)
    np.testing.assert_array_equal(np.array(history)[:, 0], logged[:, 0])


def test_save_and_load_round_trip(tmp_path):
    cfg = T.TinyLMConfig(vocab_size=5, d_model=4, n_heads=2, n_layers=1, d_ff=4, context=3)
    p = T.init_tiny_lm(cfg, rng=np.random.default_rng(0))
    save_params(tmp_path / "m.npz", p, cfg, note=np.array([1, 2]))
    q, cfg2, meta = load_params(tmp_path / "m.npz", T.TinyLMConfig)
    assert cfg2 == cfg and set(q) == set(p) and list(meta["note"]) == [1, 2]
    for k in p:
        np.testing.assert_allclose(q[k], p[k], rtol=1e-6)  # stored as float32


def test_held_out_windows_are_the_training_text_shifted(shipped):
    """Notebook 06: 400 of the 432 held-out predictions have their context and target, word for
    word, inside some training window; held-out accuracy 93 % against 96 % on training windows."""
    params, cfg, _ = shipped
    data = make_lm_data(context=16, seed=0)
    train = np.concatenate([data.X_train, data.Y_train[:, -1:]], axis=1)  # (245, 17)
    runs = {tuple(w[s:e]) for w in train for s in range(17) for e in range(s + 1, 18)}
    inside = sum(tuple(np.append(x[:t + 1], y[t])) in runs
                 for x, y in zip(data.X_held, data.Y_held, strict=True) for t in range(16))
    assert (inside, data.Y_held.size) == (400, 432)
    assert round(evaluate(params, cfg, data.X_held, data.Y_held)[1], 2) == 0.93
    assert round(evaluate(params, cfg, data.X_train, data.Y_train)[1], 2) == 0.96


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.slow
def test_an_unseen_rhyme_is_not_predicted(seed):
    """Notebook 06: trained for 300 steps on seven rhymes, the model predicts the next word of the
    eighth ("mary had a little lamb") about as often as always predicting a line break, and with a
    loss above that of a uniform guess; the seven it trained on, at least 90 % of the time."""
    from attention_kit.decoder.lm_training import train_lm

    _, vocab = rhyme_stream()
    data = make_lm_data(context=16, held_rhyme=6)
    assert vocab.decode(data.X_held[0][:4]) == ["mary", "had", "a", "little"]
    cfg = T.TinyLMConfig(vocab_size=len(vocab), d_model=32, n_heads=2, n_layers=1, d_ff=64, context=16)
    params = T.init_tiny_lm(cfg, rng=np.random.default_rng(seed))
    train_lm(params, cfg, data, steps=300, lr=0.01, seed=seed, log_every=300)
    loss, acc = evaluate(params, cfg, data.X_held, data.Y_held)
    common = np.bincount(data.Y_train.ravel()).argmax()  # the most frequent next token in training: "/"
    always_common = float((data.Y_held == common).mean())
    assert vocab.decode([common]) == ["/"] and round(always_common, 2) == 0.14
    assert acc < 0.2 and acc < always_common                # no better than always guessing "/"
    assert loss > np.log(len(vocab))                     # worse than a uniform guess over the vocabulary
    assert evaluate(params, cfg, data.X_train, data.Y_train)[1] > 0.9


def test_replacing_a_head_by_zeros_is_zeroing_its_rows_of_w_o(shipped):
    """Notebook 06's ablations: replace_heads with zeros == the head's rows of W_o set to 0; with
    the head's mean output, head 1's removal leaves Miss Muffet her tuffet (zeroed, it does not)."""
    params, cfg, _ = shipped
    _, vocab = rhyme_stream()
    data = make_lm_data(context=16, seed=0)
    dh = cfg.d_model // cfg.n_heads
    q = dict(params)
    q["l0.attn.W_o"] = params["l0.attn.W_o"].copy()
    q["l0.attn.W_o"][dh:2 * dh] = 0
    np.testing.assert_allclose(T.lm_forward(q, cfg, data.X_held)[0],
                               T.lm_forward(params, cfg, data.X_held, replace_heads={(0, 1): np.zeros(dh)})[0])
    concat = T.lm_forward(params, cfg, data.X_train)[1]["layers"][0][1].concat
    mean = concat.reshape(-1, cfg.d_model).mean(axis=0)
    ids = vocab.encode("little miss muffet sat on a")

    def next_word(rep):
        return vocab.decode([int(T.lm_forward(params, cfg, ids, replace_heads=rep)[0][0, -1].argmax())])[0]

    assert next_word({(0, 0): mean[:dh]}) == "tuffet" and next_word({(0, 0): np.zeros(dh)}) != "tuffet"
    assert next_word({(0, 1): mean[dh:]}) == next_word({(0, 1): np.zeros(dh)}) == "wall"
