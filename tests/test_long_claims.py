"""Notebook 09's claims, checked here rather than in front of the learners: the notebook's prose
quotes these numbers. Section 1.2: where a text starts moves a sinusoidal model's scores and
logits and leaves a RoPE model's alone (attention_kit against plain numpy). Section 3: the
length-extrapolation runs (``attention_kit/data/extrapolation.npz``, three seeds, and seed 0's
weights), and why the sinks lower RoPE's windowed accuracy; section 4.1: the RoPE rhyme models'
training windows and losses."""

from __future__ import annotations

import numpy as np
import pytest

from attention_kit.long import extrapolation

# Section 1.2: "a RoPE model gives the same logits whether its text starts at position 0 or 1,000; a
# sinusoidal one does not" (cell 14 prints it for the notebook's model, random weights of seed 1).

def _plain_layer0_scores(params, ids, scheme, start):
    """Layer 0's scores (h, n, n) of one text, in plain numpy from the formulas of notebooks 04 and 09
    (no attention_kit): the embeddings, plus sin / cos of position times 10000^(-2i/d) for
    "sinusoidal"; layer norm; each head's q and k, each pair of features turned as a complex number
    by e^(i position theta_i) for "rope"; q . k / sqrt(d_head)."""
    X = params["E"][ids]                                                      # (n, d_model)
    n, d = X.shape
    pos = np.arange(start, start + n, dtype=float)                            # (n,)
    if scheme == "sinusoidal":
        angle = pos[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)          # (n, d/2)
        X = X + np.stack([np.sin(angle), np.cos(angle)], axis=-1).reshape(n, d)   # sin at 2i, cos at 2i + 1
    mu, var = X.mean(axis=1, keepdims=True), X.var(axis=1, keepdims=True)
    A = (X - mu) / np.sqrt(var + 1e-5) * params["l0.ln1.g"] + params["l0.ln1.b"]
    scores = []
    for W_q, W_k in zip(params["l0.attn.W_q"], params["l0.attn.W_k"], strict=True):   # one head each
        q, k = A @ W_q, A @ W_k                                               # (n, d_head)
        if scheme == "rope":
            turn = np.exp(1j * pos[:, None] * 10000.0 ** (-np.arange(0, q.shape[1], 2) / q.shape[1]))
            q, k = ((x[:, 0::2] + 1j * x[:, 1::2]) * turn for x in (q, k))   # (n, d_head/2) complex
            s = (q.conj() @ k.T).real                                         # Re(q conj(k)) summed = q . k
        else:
            s = q @ k.T
        scores.append(s / np.sqrt(W_q.shape[1]))
    return np.array(scores)                                                   # (h, n, n)


@pytest.mark.parametrize("shift", [1, 7, 1000, 10_007])
def test_where_the_text_starts_moves_sinusoidal_scores_not_rope_scores(shift):
    from attention_kit.decoder import block, tiny_lm

    cfg = tiny_lm.TinyLMConfig(vocab_size=20, d_model=16, n_heads=2, n_layers=2, d_ff=32, context=8,
                               positions="rope")                              # cell 14's model
    p = tiny_lm.init_tiny_lm(cfg, rng=np.random.default_rng(1))
    ids = np.random.default_rng(shift).integers(0, 20, size=(3, 8))          # three texts of 8 tokens
    causal = np.tri(8, dtype=bool)
    moved = {}
    for scheme in ("rope", "sinusoidal"):
        logits, weights = {}, {}
        for start in (0, shift):
            z, saved = block.decoder_forward(p, ids, positions=scheme, start=start)
            logits[start], weights[start] = z, saved["weights"]
            for t in range(len(ids)):                                         # the same scores in plain numpy
                s = np.where(causal, _plain_layer0_scores(p, ids[t], scheme, start), -np.inf)
                w = np.exp(s - s.max(axis=-1, keepdims=True))
                np.testing.assert_allclose(saved["weights"][0][t], w / w.sum(axis=-1, keepdims=True), atol=1e-10)
        plain = [_plain_layer0_scores(p, ids[0], scheme, start) for start in (0, shift)]
        moved[scheme] = (np.abs(plain[1] - plain[0])[:, causal].max(),            # layer 0's scores
                         np.abs(logits[shift] - logits[0]).max(),                 # the logits
                         max(np.abs(a - b).max() for a, b in zip(weights[shift], weights[0], strict=True)))
    assert max(moved["rope"]) < 1e-9                                          # unchanged: "the same logits (to 1e-9)"
    assert min(moved["sinusoidal"]) > 1e-3                                    # changed, and by far more than 1e-9


@pytest.fixture(scope="module")
def runs():
    stored = extrapolation.load_extrapolation()
    A = {name: stored["accuracy"][i] for i, name in enumerate(stored["schemes"])}   # (seed, length) each
    return stored, A


def test_who_learned_at_24_tokens(runs):
    _, A = runs
    for name in ("sinusoidal", "rope", "alibi 1, 0"):
        assert (A[name][:, 0] > 0.97).all()                                   # learned at 24 tokens
    assert (A["alibi"] < 0.6).all()                                           # the paper's slopes: about half,
    assert (A["alibi"][:, 0] > 25 / 64).all()                                 # ... far above a uniform guess (1/64)
    assert f"{1 / 64:.3f}" == "0.016"
    assert [round(A["alibi"][:, 0].min(), 2), round(A["alibi"][:, 0].max(), 2)] == [0.44, 0.5]
    assert round(A["rope"][:, 0].min(), 2) == 0.99
    assert [round(A["alibi 1, 0"][:, 0].min(), 2), round(A["alibi 1, 0"][:, 0].max(), 2)] == [0.97, 0.99]
    assert A["alibi 1, 0"][:, 0].max() < A["rope"][:, 0].min()                # at 24 rotary is ahead on every seed


def test_alibi_with_the_slopes_1_and_0_stays_right(runs):
    _, A = runs
    assert (A["alibi 1, 0"] > 0.97).all()                                     # right from 24 to 192 ...
    assert (np.diff(A["alibi 1, 0"], axis=1) > 0).all()                      # ... the mean creeping up,
    assert (A["alibi 1, 0"][:, -1] - A["alibi 1, 0"][:, 0] < 0.02).all()      # ... by less than 0.02
    assert [round(A["alibi 1, 0"][:, n].mean(), 2) for n in (0, -1)] == [0.98, 1.00]


def test_sinusoidal_and_rotary_fall(runs):
    _, A = runs
    for name in ("sinusoidal", "rope"):
        assert (np.diff(A[name], axis=1) < 0).all()                           # falling at every step
        assert (A["alibi 1, 0"][:, -1] > A[name][:, -1] + 0.2).all()
    assert [round(A[s][:, -1].mean(), 2) for s in ("sinusoidal", "rope")] == [0.65, 0.59]   # the means at 192
    for name in ("sinusoidal", "rope", "alibi 1, 0"):
        assert (A["alibi"] < A[name]).all()                                   # the paper's slopes: last everywhere
    mean = {s: A[s].mean(axis=0) for s in A}
    assert all(mean["alibi 1, 0"][n] > max(mean[s][n] for s in A if s != "alibi 1, 0") for n in (1, 2, 3))


def test_rotary_below_sinusoidal_seed_by_seed(runs):
    from attention_kit.heads.tasks import repeated_sequences

    _, A = runs
    paired = A["sinusoidal"][:, 2:] - A["rope"][:, 2:]                        # (seed, 96 and 192)
    assert (paired > 0).all()                                                 # rotary lower on every seed,
    assert [[round(c.min(), 2), round(c.max(), 2)] for c in paired.T] == [[0.01, 0.07], [0.03, 0.11]]
    assert [round(c.mean(), 2) for c in paired.T] == [0.04, 0.06]
    assert A["rope"][:, 1].mean() > A["sinusoidal"][:, 1].mean()             # but ahead at 48 tokens, on average,
    at48 = A["sinusoidal"][:, 1] - A["rope"][:, 1]                            # ... only through seed 1:
    assert [f"{x:+.3f}" for x in at48] == ["+0.014", "-0.059", "+0.000"]     # sinusoidal ahead on seed 0, level on 2
    ids, tg, _ = repeated_sequences(np.random.default_rng(123), 128, length=48, vocab=64, periods=(4, 12))
    scored = int(extrapolation.predictable(ids, tg)[0].sum())                 # in tokens (cell 32, the summary):
    assert scored == 5150
    assert np.round(at48 * scored, 6).tolist() == [70, -303, 1]               # seed 2: one token of 5,150 apart
    assert [round(A[s][:, 1].mean(), 2) for s in ("rope", "sinusoidal")] == [0.95, 0.94]
    assert [round(c.mean(), 3) for c in paired.T] == [0.041, 0.057]
    for n in (2, 3):                                                          # the seeds' ranges overlap ...
        assert A["rope"][:, n].max() > A["sinusoidal"][:, n].min()           # ... only through sinusoidal's seed 1
        assert A["rope"][:, n].max() < np.delete(A["sinusoidal"][:, n], 1).min()
    drop = {s: A[s][:, 0] - A[s][:, -1] for s in ("sinusoidal", "rope")}
    assert (drop["sinusoidal"] < drop["rope"]).all()                         # rotary loses more on every seed


def test_the_boundary_token(runs):
    stored, _ = runs
    boundary = stored["boundary"]                                             # (scheme, seed, length)
    assert (boundary == boundary[..., :1]).all()                             # it lies in the first 12 tokens
    assert (boundary < 0.5).all()
    means = [round(boundary[s, :, 0].mean(), 2) for s in range(len(stored["schemes"]))]
    assert min(means) == 0.08 and max(means) == 0.36                         # learned poorly: 0.08 to 0.36


# Section 3, seed 0's shipped weights: the numbers the notebook prints and its prose quotes.

@pytest.fixture(scope="module")
def seed0_at_192(runs):
    from attention_kit.decoder import block
    from attention_kit.heads.tasks import repeated_sequences

    stored, _ = runs
    ids, tg, _ = repeated_sequences(np.random.default_rng(123), 128, length=192, vocab=64, periods=(4, 12))
    can = extrapolation.predictable(ids, tg)[0]
    right = {}
    for scheme in stored["schemes"]:
        logits = block.decoder_forward(stored["params"][scheme], ids, **extrapolation.SCHEMES[scheme])[0]
        right[scheme] = logits.argmax(axis=-1) == tg
    return right, can


def test_seed0_by_position_matches_the_stored_runs(runs, seed0_at_192):
    stored, A = runs
    right, can = seed0_at_192
    for scheme in stored["schemes"]:
        assert abs(right[scheme][can].mean() - A[scheme][0, -1]) < 0.02       # = seed 0's stored accuracy at 192
    by_band = {s: [right[s][:, a:b][can[:, a:b]].mean() for a, b in ((0, 24), (24, 48), (48, 96), (96, 192))]
               for s in stored["schemes"]}
    alibi10 = np.array(by_band["alibi 1, 0"])
    assert alibi10[0] < 0.99 and (np.abs(alibi10[1:] - 0.998) < 0.001).all()  # flat beyond the training length
    late = {s: right[s][:, 96:][can[:, 96:]].mean() for s in ("sinusoidal", "rope")}
    assert [round(late[s], 2) for s in ("sinusoidal", "rope")] == [0.57, 0.42]   # positions 96-191


def test_alibi_1_0_first_repeat_is_the_harder_part(runs):
    from attention_kit.decoder import block
    from attention_kit.heads.tasks import repeated_sequences

    stored, _ = runs
    ids, tg, repeated = repeated_sequences(np.random.default_rng(123), 128, length=192, vocab=64, periods=(4, 12))
    can = extrapolation.predictable(ids, tg)[0]
    logits = block.decoder_forward(stored["params"]["alibi 1, 0"], ids, **extrapolation.SCHEMES["alibi 1, 0"])[0]
    right = logits.argmax(axis=-1) == tg
    period = (~repeated).sum(axis=1, keepdims=True) + 1
    first_repeat = can & (np.arange(192) < 2 * period - 1)
    assert not first_repeat[:, 24:].any()                                     # the first repeat lies before 24
    ids24, _, _ = repeated_sequences(np.random.default_rng(123), 128, length=24, vocab=64, periods=(4, 12))
    assert (ids[:, :24] == ids24).all()                                       # every length's texts begin alike
    split = right[first_repeat].mean(), right[can & ~first_repeat & (np.arange(192) < 24)].mean()
    assert split[0] < 0.98 < 0.99 < split[1]                                  # cell 24: 0.976 and 0.998


def test_first_layer_preference_and_the_window(runs):
    from attention_kit.decoder import block
    from attention_kit.heads.tasks import repeated_sequences

    stored, A = runs
    ids24, _, _ = repeated_sequences(np.random.default_rng(123), 128, length=24, vocab=64, periods=(4, 12))
    ratio = {}
    for scheme in stored["schemes"]:
        w0 = block.decoder_forward(stored["params"][scheme], ids24, **extrapolation.SCHEMES[scheme])[1]["weights"][0]
        one, two = (np.mean([w0[:, :, i, i - back] for i in range(2, 24)], axis=(0, 1)) for back in (1, 2))
        ratio[scheme] = one / two
    assert (np.abs(ratio["alibi"] - 1) < 0.1).all()                           # the paper's slopes: no preference
    for name in ("sinusoidal", "rope", "alibi 1, 0"):
        assert ratio[name].max() > 2.5                                        # the others have a head that prefers


def test_why_rope_and_sinusoidal_fall(runs):
    """Cells 30 and 31: the window, the window with 4 sinks, and RoPE with every distance above 23
    replaced by a seen one (every key kept)."""
    stored, A = runs
    P0 = stored["params"]
    got = {s: [round(A[s][0, -1], 2), round(extrapolation.accuracy(P0[s], s, 192, window=24), 2),
               round(extrapolation.accuracy(P0[s], s, 192, window=24, sinks=4), 2)] for s in ("sinusoidal", "rope")}
    assert got == {"sinusoidal": [0.71, 0.38, 0.52], "rope": [0.60, 0.78, 0.72]}
    seen = np.random.default_rng(0)
    clipped = extrapolation.accuracy(P0["rope"], "rope", 192, distances=lambda d: np.minimum(d, 23))
    drawn = extrapolation.accuracy(P0["rope"], "rope", 192,
                                   distances=lambda d: np.where(d > 23, seen.integers(12, 24, size=d.shape), d))
    assert [round(clipped, 2), round(drawn, 2)] == [0.93, 0.96]
    assert [round(A[s][0, 0], 2) for s in ("sinusoidal", "rope")] == [1.00, 0.99]
    assert [round(A["rope"][0, 0] - x, 2) for x in (drawn, clipped)] == [0.04, 0.07]   # left below 24 tokens
    true = extrapolation.accuracy(P0["rope"], "rope", 192, distances=lambda d: d)   # the true distances
    assert abs(true - A["rope"][0, -1]) < 0.002                               # = seed 0's stored accuracy


def test_sinks_lower_rope_through_their_unseen_distances(runs):
    """Cells 30 and 31: 'Sinks lower it (0.72), because for RoPE they sit at distances never seen in
    training: the same sinks turned by 23, a seen distance, raise it to 0.84' (above the window
    alone, 0.78). Inside the window no distance is above 23, so clipping the distances to 23 turns
    the sinks alone, and with the true distances it is the window with sinks itself."""
    from attention_kit.scale.sliding_window import sliding_window_mask

    stored, _ = runs
    P0 = stored["params"]["rope"]
    true = np.subtract.outer(np.arange(192), np.arange(192))
    keep = sliding_window_mask(192, 24, sinks=4)
    assert (keep & (true > 23)).any() and not (keep & (true > 23))[:, 4:].any()   # only the sinks are far
    window = extrapolation.accuracy(P0, "rope", 192, window=24)
    sinks = extrapolation.accuracy(P0, "rope", 192, window=24, sinks=4)
    same = extrapolation.accuracy(P0, "rope", 192, window=24, sinks=4, distances=lambda d: d)
    seen = extrapolation.accuracy(P0, "rope", 192, window=24, sinks=4, distances=lambda d: np.minimum(d, 23))
    assert same == sinks                                                      # rope_logits_at with the window's mask
    assert sinks < window < seen                                              # the sinks' distances, not the sinks
    assert [round(x, 2) for x in (sinks, window, seen)] == [0.72, 0.78, 0.84]


def test_heads_at_long_lengths(runs):
    """Cell 28: the previous-token weight by query position and the induction head's copies."""
    from attention_kit.decoder import block
    from attention_kit.heads.tasks import repeated_sequences

    stored, _ = runs
    ids, _, _ = repeated_sequences(np.random.default_rng(123), 64, length=192, vocab=64, periods=(4, 12))
    after_copy = np.zeros((64, 192, 192), bool)
    after_copy[:, :, 1:] = ids[:, :, None] == ids[:, None, :-1]
    after_copy &= np.tri(192, k=-1, dtype=bool)
    earliest = after_copy & (np.cumsum(after_copy, axis=2) == 1)
    latest = after_copy & (np.cumsum(after_copy[..., ::-1], axis=2)[..., ::-1] == 1)
    two = after_copy.sum(axis=2) >= 2
    got = {}
    for scheme in ("sinusoidal", "rope"):
        w = block.decoder_forward(stored["params"][scheme], ids, **extrapolation.SCHEMES[scheme])[1]["weights"]
        prev = np.array([w[0][:, :, i, i - 1].mean(axis=0) for i in range(1, 192)]).max(axis=1)
        h = int(np.argmax([(w[1][:, h] * after_copy).sum(axis=2)[two].mean() for h in range(2)]))
        got[scheme] = ([round(prev[a - 1:b - 1].mean(), 2) for a, b in ((1, 13), (13, 24), (24, 48), (48, 96), (96, 192))],
                       [round((w[1][:, h] * c).sum(axis=2)[two].mean(), 2) for c in (earliest, latest)])
    assert got["sinusoidal"] == ([0.48, 0.26, 0.04, 0.03, 0.02], [0.41, 0.01])
    assert got["rope"] == ([0.97, 0.73, 0.41, 0.15, 0.07], [0.20, 0.05])
    at150 = earliest[:, 150][two[:, 150]]                                    # the key after the earliest copy
    assert at150.any(axis=1).all() and (150 - np.argmax(at150, axis=1) > 130).all()   # ... is more than 130 back


# Section 4.1: the rhyme models' training windows and the table of losses.

def test_the_rhyme_models_saw_90_percent_of_the_windows():
    from attention_kit.decoder.lm_training import make_lm_data, rhyme_stream

    data = make_lm_data(16, seed=0)                                           # as tools/train_tiny_lm.py
    assert (len(data.X_train), len(data.X_held)) == (245, 27)                  # 272 windows, 10 % held out
    ids = data.vocab.encode(rhyme_stream()[0])
    windows = ids[np.arange(len(ids) - 16)[:, None] + np.arange(17)]           # inputs and the next token
    held = {tuple(w) for w in np.concatenate([data.X_held, data.Y_held[:, -1:]], axis=1)}
    assert len({tuple(w) for w in windows}) == len(windows)                   # no window occurs twice
    assert sum(tuple(w) in held for w in windows[:200 - 16 + 1]) == 16       # section 4.1's 185 windows


def test_the_streaming_losses_the_text_quotes():
    from attention_kit.decoder import block
    from attention_kit.decoder.lm_training import rhyme_stream
    from attention_kit.learn.layers import cross_entropy
    from attention_kit.long import streaming

    tokens, vocab = rhyme_stream()
    ids = vocab.encode(tokens)[:200]
    got = {}
    for layers in (1, 2):
        p, c, _ = streaming.load_rope_lm(layers)
        ways = [streaming.recompute_logits(p, c, ids[:-1]), streaming.stream_logits(p, c, ids[:-1]),
                streaming.stream_logits(p, c, ids[:-1], sinks=1),
                streaming.stream_logits(p, c, ids[:-1], sinks=1, sink_positions="cache"),
                block.decoder_forward(p, ids[None, :-1], positions="rope")[0][0]]
        raw = [cross_entropy(z[None, 16:], ids[None, 17:])[0] for z in ways]
        fresh, win, sink_text, sink_cache, _ = raw
        for sink in (sink_text, sink_cache):
            assert win < sink < win + 0.001                                   # the sink: no help, under 0.001 nats
        assert abs(sink_text - sink_cache) < 0.001                            # where the sink stands: < 0.001
        assert raw[4] > win + 0.2 and max(sink_text, sink_cache) < 0.01 * raw[4]   # tiny next to no window
        if layers == 1:
            assert abs(fresh - win) < 1e-9                                    # one layer: the cache is the window
        if layers == 2:
            assert fresh < win - 0.0005                                       # two layers: the cache is worse
        got[layers] = [round(x, 4) for x in raw]
    assert got == {1: [0.0008, 0.0008, 0.0012, 0.0017, 1.6868], 2: [0.0016, 0.0022, 0.0030, 0.0032, 0.9783]}


def test_the_sliding_cache_against_the_window():
    """Cell 37: one layer equal to 1e-12; two layers equal for 16 tokens, then up to 3.4 (median 0.4)."""
    from attention_kit.decoder.lm_training import rhyme_stream
    from attention_kit.long import streaming

    tokens, vocab = rhyme_stream()
    ids = vocab.encode(tokens)[:200]
    diff = {}
    for layers in (1, 2):
        p, c, _ = streaming.load_rope_lm(layers)
        diff[layers] = np.abs(streaming.stream_logits(p, c, ids) - streaming.recompute_logits(p, c, ids)).max(axis=1)
        assert diff[layers][:16].max() < 1e-12                                 # before anything leaves the window
    assert diff[1].max() < 1e-12
    assert np.median(diff[2][16:]) > 0.05
    assert [f"{diff[2][16:].max():.1f}", f"{np.median(diff[2][16:]):.1f}"] == ["3.4", "0.4"]


def test_no_head_parks_weight_on_the_first_key():
    """Cell 41: every head puts less than 1/16 on a fresh window's first key, and more than half of its
    weight further back than 15 when the whole text is read at once."""
    from attention_kit.decoder import block
    from attention_kit.decoder.lm_training import rhyme_stream
    from attention_kit.long import streaming

    tokens, vocab = rhyme_stream()
    ids = vocab.encode(tokens)[:200]
    windows = ids[np.arange(185)[:, None] + np.arange(16)]
    for layers in (1, 2):
        p, c, _ = streaming.load_rope_lm(layers)
        w = block.decoder_forward(p, windows, positions="rope")[1]["weights"]
        assert all((wl[:, :, 15, 0].mean(axis=0) < 1 / 16).all() for wl in w)
        wf = block.decoder_forward(p, ids[None, :-1], positions="rope")[1]["weights"]
        far = [np.mean([wl[0, h, i, :i - 15].sum() for i in range(16, 199)]) for wl in wf for h in range(c.n_heads)]
        assert min(far) > 0.5
