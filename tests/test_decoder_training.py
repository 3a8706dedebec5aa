"""The pieces notebooks 08 and 09 train with: learned positions in the one decoder (their gradient
against central differences), the sliding window with sinks, and the generic training loop."""

from __future__ import annotations

import numpy as np
import pytest

from attention_kit.decoder.block import decoder_backward, decoder_forward
from attention_kit.decoder.training import decoder_loss_and_grads, train_decoder
from attention_kit.errors import ParameterError
from attention_kit.heads.model import AttnOnlyConfig, init_attention_only
from attention_kit.learn.backward import numerical_gradient, relative_error
from attention_kit.learn.layers import cross_entropy
from attention_kit.scale.sliding_window import sliding_window_mask


def _small(seed=0):
    cfg = AttnOnlyConfig(vocab=5, d_model=8, n_heads=(2, 1), d_head=4, max_len=7)
    return init_attention_only(cfg, rng=np.random.default_rng(seed))


def test_learned_positions_add_rows_of_P_from_start():
    p = _small()
    ids = np.array([[1, 2, 3]])
    a, _ = decoder_forward(p, ids, positions="learned", start=2)
    q = dict(p, P=np.roll(p["P"], -2, axis=0))  # row 2 of P is now row 0
    b, _ = decoder_forward(q, ids, positions="learned")
    np.testing.assert_allclose(a, b, atol=1e-12)


@pytest.mark.parametrize("start", [0, 2])
def test_the_gradient_of_every_parameter_matches_central_differences(start):
    p = _small(1)
    rng = np.random.default_rng(2)
    ids, targets = rng.integers(0, 5, (2, 4)), rng.integers(0, 5, (2, 4))
    targets[0, 1] = -1  # a position without a target
    _, g = decoder_loss_and_grads(p, ids, targets, positions="learned", start=start)
    assert set(g) == set(p)
    for name in ("P", "E", "l0.attn.W_q", "l1.attn.W_k", "l1.attn.W_o", "W_out"):
        def f(x, name=name):
            return cross_entropy(decoder_forward(dict(p, **{name: x}), ids, positions="learned", start=start)[0], targets)[0]
        assert relative_error(g[name], numerical_gradient(f, p[name])) < 1e-6, name
    assert not g["P"][:start].any() and not g["P"][start + 4:].any()  # rows not used get nothing


def test_a_P_that_is_not_used_gets_a_zero_gradient_and_bad_positions_say_why():
    p = _small()
    logits, saved = decoder_forward(p, np.array([[1, 2]]), positions=None)
    assert not decoder_backward(p, saved, np.ones_like(logits))["P"].any()
    with pytest.raises(ParameterError, match="learned 7 positions"):
        decoder_forward(p, np.zeros((1, 8), dtype=int), positions="learned")
    q = dict(p)
    del q["P"]
    with pytest.raises(ParameterError, match='params\\["P"\\]'):
        decoder_forward(q, np.zeros((1, 3), dtype=int), positions="learned")


def test_sliding_window_with_sinks_keeps_the_first_columns():
    plain = sliding_window_mask(6, 2)
    m = sliding_window_mask(6, 2, sinks=1)
    want = plain.copy()
    want[:, 0] = True  # every query (all are at or after position 0) sees the sink
    np.testing.assert_array_equal(m, want)
    m2 = sliding_window_mask(6, 2, sinks=3)
    for i in range(6):
        for j in range(6):
            assert m2[i, j] == (j <= i and (i - j < 2 or j < 3))  # a plain loop
    np.testing.assert_array_equal(sliding_window_mask(6, 2, sinks=0), plain)
    with pytest.raises(ParameterError, match="sinks"):
        sliding_window_mask(6, 2, sinks=-1)


def test_the_decoder_passes_sinks_to_its_window():
    p = _small()
    ids = np.array([[1, 2, 3, 4, 0, 1]])
    _, saved = decoder_forward(p, ids, positions="learned", window=2, sinks=1)
    w = saved["weights"][0][0, 0]  # (n, n)
    assert (w[:, 0] > 0).all() and w[5, 2] == 0 and w[5, 4] > 0


def _copy_task(rng):
    ids = rng.integers(0, 5, (16, 6))
    targets = ids.copy()  # predict the current token: learnable by W_out E alone
    return ids, targets


def test_train_decoder_is_seeded_logs_every_step_and_keeps_snapshots():
    logs = []
    for _ in range(2):
        p = _small()
        seen = []
        log = train_decoder(p, _copy_task, steps=30, lr=0.03, seed=3, snapshot_every=10,
                            callback=lambda s, loss, seen=seen: seen.append(s), positions="learned")
        logs.append((log, p))
    (a, pa), (b, pb) = logs
    np.testing.assert_array_equal(a.losses, b.losses)
    assert a.losses.shape == (30,) and a.losses[-1] < a.losses[0] - 0.5
    assert sorted(a.snapshots) == [0, 10, 20, 30] and seen == [10, 20, 30]
    np.testing.assert_array_equal(a.snapshots[30]["E"], pa["E"])
    np.testing.assert_array_equal(a.snapshots[0]["E"], _small()["E"])
    assert a.smoothed(10).shape == (3,)


def test_weight_decay_shrinks_the_weights_and_bad_arguments_say_why():
    sizes = []
    for wd in (0.0, 0.5):
        p = _small()
        train_decoder(p, _copy_task, steps=20, lr=0.01, seed=0, weight_decay=wd, positions="learned")
        sizes.append(np.linalg.norm(p["P"]))
    assert sizes[1] < sizes[0]
    with pytest.raises(ParameterError, match="batch must be a function"):
        train_decoder(_small(), None, steps=2)
    with pytest.raises(ParameterError, match="weight_decay"):
        train_decoder(_small(), _copy_task, steps=2, weight_decay=-1)
    with pytest.raises(ParameterError, match="steps"):
        train_decoder(_small(), _copy_task, steps=0)
