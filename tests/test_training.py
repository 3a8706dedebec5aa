"""The tiny trainable model (attention_kit.learn.toy_tasks): its gradients, its tasks and its trainer."""

from __future__ import annotations

import numpy as np
import pytest

import attention_kit as ak
from attention_kit.learn.backward import numerical_gradient, relative_error
from attention_kit.learn.layers import IGNORE, cross_entropy
from attention_kit.learn.toy_tasks import N_TOKENS, TASKS, VOCAB, Trainer, init_model


def test_cross_entropy_value_and_gradient():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(3, 4, 5))
    targets = rng.integers(0, 5, (3, 4))
    targets[0, :2] = IGNORE
    loss, d = cross_entropy(logits, targets)
    # reference: a loop over the positions that have a target
    terms = [np.log(np.exp(logits[b, i]).sum()) - logits[b, i, targets[b, i]]
             for b in range(3) for i in range(4) if targets[b, i] != IGNORE]
    assert loss == pytest.approx(np.mean(terms), rel=1e-12)
    num = numerical_gradient(lambda z: cross_entropy(z, targets)[0], logits)
    assert relative_error(d, num) < 1e-7
    assert np.all(d[0, :2] == 0)


@pytest.mark.parametrize("task, kw", [("reverse", {}), ("pair", dict(n_heads=2)),
                                      ("lookup", dict(scaled=False, d_k=4))])
@pytest.mark.slow
def test_model_gradients_finite_differences(task, kw):
    model = init_model(task, seed=1, **kw)
    tokens, targets = TASKS[task].make(np.random.default_rng(2), 3)
    _, grads = model.loss_and_grads(tokens, targets)
    for name, w in model.trainables().items():
        def loss(x, w=w):
            saved = w.copy()
            w[...] = x
            try:
                return model.loss_and_grads(tokens, targets)[0]
            finally:
                w[...] = saved
        err = relative_error(grads[name], numerical_gradient(loss, w))
        assert err < 1e-7, f"{task} {name}: {err:.1e}"


def test_tasks_make_what_they_say():
    rng = np.random.default_rng(3)
    tok, tgt = TASKS["reverse"].make(rng, 50)
    assert tok.shape == tgt.shape == (50, N_TOKENS)
    np.testing.assert_array_equal(tgt[:, 0], tok[:, -1])
    np.testing.assert_array_equal(tgt[:, 2], tok[:, N_TOKENS - 3])
    tok, tgt = TASKS["pair"].make(rng, 50)
    np.testing.assert_array_equal(tgt // VOCAB, tok)
    np.testing.assert_array_equal(tgt % VOCAB, tok[:, ::-1])
    tok, tgt = TASKS["lookup"].make(rng, 200)
    assert np.all(tgt[:, :-1] == IGNORE)
    for row, t in zip(tok, tgt[:, -1], strict=True):
        memory, q = row[:-1], row[-1]
        assert len(set(memory)) == N_TOKENS - 1  # five different words
        p = int(np.flatnonzero(memory == q)[0])
        assert p <= N_TOKENS - 3 and memory[p + 1] == t


def test_trainer_is_deterministic_and_reset_repeats_it():
    a, b = Trainer(seed=4), Trainer(seed=4)
    a.step(20)
    b.step(20)
    assert a.losses == b.losses and a.checkpoints == b.checkpoints
    first = list(a.losses)
    a.reset()
    a.step(20)
    assert a.losses == first
    assert Trainer(seed=5).step(20) != first[-1]


def test_heldout_sequences_never_train():
    tr = Trainer(n_heldout=2000, batch=256)
    codes = set(map(tuple, tr.heldout[0]))
    for _ in range(20):
        tokens, _ = tr._batch()
        assert not codes & set(map(tuple, tokens))


@pytest.mark.slow
def test_reverse_is_learned_with_the_mirrored_pattern():
    tr = Trainer("reverse", lr=0.1)
    assert tr.heldout_accuracy < 0.3  # chance is 1/8
    tr.step(300)
    assert tr.heldout_accuracy >= 0.95
    assert tr.pattern_mass() >= 0.9  # weight on key n-1-i
    w = tr.probe_weights()  # (h, n, n)
    assert w.shape == (1, N_TOKENS, N_TOKENS)
    np.testing.assert_array_equal(w[0].argmax(axis=1), np.arange(N_TOKENS)[::-1])


@pytest.mark.slow
def test_lookup_is_out_of_reach_of_one_layer():
    tr = Trainer("lookup", n_heads=2, lr=0.1)
    tr.step(300)
    assert tr.heldout_accuracy < 0.5
    assert np.isnan(tr.pattern_mass())


def test_divergence_gives_a_clear_message_until_reset():
    tr = Trainer(lr=3.0)
    with pytest.raises(ak.NonFiniteError, match=r"training diverged at step \d+.*learning rate 3 is too large"):
        tr.step(100)
    with pytest.raises(ak.NonFiniteError, match="diverged"):
        tr.step()
    tr.set_lr(0.1)
    tr.reset()
    assert tr.diverged == "" and tr.steps == 0
    tr.step(5)


def test_bad_arguments():
    with pytest.raises(ak.ParameterError, match="learning rate must be a positive number"):
        Trainer().set_lr(-1)
    with pytest.raises(ak.ParameterError, match="unknown task 'sort'"):
        Trainer("sort")
    with pytest.raises(ak.ParameterError, match="n_heads must divide"):
        init_model(n_heads=3)
    with pytest.raises(ak.ParameterError, match="optimizer must be"):
        Trainer(optimizer="rmsprop")


@pytest.mark.slow
def test_rotate_is_learned_with_the_shifted_pattern():
    tr = Trainer("rotate", lr=0.1)
    tr.step(200)
    assert tr.heldout_accuracy >= 0.95
    np.testing.assert_array_equal(tr.probe_weights()[0].argmax(axis=1), (np.arange(N_TOKENS) + 1) % N_TOKENS)
