"""Check at the door (issue 37): a learner's call is validated once, with its message; the package's
own inner calls between its rooms go through ``.unchecked`` and do not validate again."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import attention_kit as ak
from attention_kit import errors
from attention_kit.decoder import tiny_lm as lm
from attention_kit.learn import layers as L
from attention_kit.learn.backward import multi_head_backward
from attention_kit.learn.optim import Adam
from attention_kit.learn.toy_tasks import Trainer
from attention_kit.mechanism.multi_head_attention import merge_heads, multi_head_forward

# the validators of errors.py (not the doors' entries, which run under their cores' names)
VALIDATORS = {name for name in errors.__all__ if name.startswith(("as_", "check_"))}


def _count_validations(fn) -> int:
    """How many times ``fn()`` enters errors.py's validators from outside them (one check_matrix,
    with the as_float_array and check_finite it runs, counts once)."""
    calls = 0

    def watch(frame, event, arg):
        nonlocal calls
        code = frame.f_code
        if event == "call" and code.co_filename == errors.__file__ and code.co_name in VALIDATORS:
            caller = frame.f_back.f_code
            if not (caller.co_filename == errors.__file__ and caller.co_name in VALIDATORS):
                calls += 1

    sys.setprofile(watch)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return calls


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(scope="module")
def small_lm():
    cfg = lm.TinyLMConfig(vocab_size=11, d_model=16, n_heads=2, n_layers=2, d_ff=32, context=8)
    params = lm.init_tiny_lm(cfg, rng=np.random.default_rng(0))
    ids = np.random.default_rng(1).integers(0, 11, (4, 8))
    return cfg, params, ids


def test_a_training_step_of_the_tiny_lm_validates_once_per_public_entry(small_lm):
    cfg, params, ids = small_lm
    opt = Adam(lr=0.01)

    def step():  # what train_lm runs per step: two public entries
        _, grads = lm.lm_loss_and_grads(params, cfg, ids, np.roll(ids, -1, axis=1))
        opt.step(params, grads)

    step()
    assert _count_validations(step) <= 2  # was 45 (65 counting nested calls) before the doors


def test_a_step_of_notebook_05s_trainer_validates_once():
    trainer = Trainer("reverse", seed=0)
    trainer.step(1)
    assert _count_validations(lambda: trainer.step(1)) <= 1  # was 21


def test_the_unchecked_core_gives_the_same_numbers(small_lm, rng):
    X = rng.normal(size=(2, 5, 16))
    g, b = rng.normal(size=16), rng.normal(size=16)
    np.testing.assert_array_equal(L.layer_norm(X, g, b)[0], L.layer_norm.unchecked(X, g, b)[0])
    p = ak.init_multi_head(16, 2, rng=rng)
    mask = ak.causal_mask(5)
    out, w, _ = multi_head_forward(X, X, p, mask)
    out2, w2, _ = multi_head_forward.unchecked(X, X, p, mask)
    np.testing.assert_array_equal(out, out2)
    np.testing.assert_array_equal(w, w2)
    assert L.layer_norm.__name__ == "layer_norm" and L.layer_norm.__module__ == L.__name__
    assert ak.causal_mask.__code__.co_name == "causal_mask"  # what the grader's watch names


def test_every_door_still_rejects_nan_and_wrong_shapes_with_its_message(small_lm, rng):
    X = rng.normal(size=(5, 16))
    bad = X.copy()
    bad[2, 3] = np.nan
    g, b = np.ones(16), np.zeros(16)
    with pytest.raises(ak.NonFiniteError, match=r"X holds NaN \(first at index \(2, 3\)"):
        L.layer_norm(bad, g, b)
    with pytest.raises(ak.ShapeError, match="gamma"):
        L.layer_norm(X, np.ones(15), b)
    W1, W2 = rng.normal(size=(16, 32)), rng.normal(size=(32, 16))
    with pytest.raises(ak.ShapeError, match="W2"):
        L.mlp(X, W1, np.zeros(32), W2.T, np.zeros(16))
    with pytest.raises(ak.NonFiniteError, match="X holds NaN"):
        L.mlp(bad, W1, np.zeros(32), W2, np.zeros(16))
    with pytest.raises(ak.ParameterError, match="outside 0..6"):
        L.embed([0, 7], rng.normal(size=(7, 4)))
    with pytest.raises(ak.ShapeError, match="one target id per row"):
        L.cross_entropy(rng.normal(size=(3, 5)), [0, 1])
    with pytest.raises(ak.NonFiniteError, match="logits holds inf"):
        L.cross_entropy(np.array([[0.0, np.inf]]), [0])
    p = ak.init_multi_head(16, 2, rng=rng)
    with pytest.raises(ak.NonFiniteError, match="X_q holds NaN"):
        multi_head_forward(bad, X, p)
    with pytest.raises(ak.ShapeError, match=r"X_kv has shape \(5, 15\)"):
        multi_head_forward(X, X[:, :15], p)
    with pytest.raises(ak.MaskError, match="broadcast to the scores"):
        multi_head_forward(X, X, p, ak.causal_mask(4))
    _, _, cache = multi_head_forward(X, X, p)
    with pytest.raises(ak.ShapeError, match=r"grad_out has shape \(16, 5\).*Use \.T"):
        multi_head_backward(cache, X.T)
    with pytest.raises(ak.NonFiniteError, match="grad_out holds NaN"):
        multi_head_backward(cache, bad)
    with pytest.raises(ak.ShapeError, match=r"Xh has shape \(5, 16\)"):
        merge_heads(X)
    with pytest.raises(ak.ParameterError, match="n must be a whole number"):
        ak.causal_mask(0)
    with pytest.raises(ak.ParameterError, match="odd"):
        ak.sinusoidal_positions(4, 5)


def test_the_models_door_checks_ids_targets_and_weights(small_lm):
    cfg, params, ids = small_lm
    with pytest.raises(ak.ParameterError, match="outside 0..10"):
        lm.lm_forward(params, cfg, [1, 11])
    with pytest.raises(ak.ShapeError, match="one target id per row"):
        lm.lm_loss_and_grads(params, cfg, ids, ids[:, :3])
    with pytest.raises(ak.ParameterError, match="outside 0..10"):
        lm.lm_loss_and_grads(params, cfg, ids, ids + 5)
    broken = dict(params)
    broken["l1.mlp.W2"] = params["l1.mlp.W2"].copy()
    broken["l1.mlp.W2"][0, 0] = np.inf
    with pytest.raises(ak.NonFiniteError, match=r"params\['l1.mlp.W2'\] holds inf"):
        lm.lm_forward(broken, cfg, ids)



def test_a_door_asks_for_no_qualified_name_where_code_objects_have_none(monkeypatch):
    """Python 3.10 (the lowest the course supports) has no ``co_qualname``: the door must not ask
    for it there (it did, and every module with a door failed to import on 3.10)."""
    import sys

    from attention_kit import errors

    def core():
        pass

    monkeypatch.setattr(sys, "version_info", (3, 11, 7, "final", 0))
    assert errors.code_names(core) == {"co_name": "core", "co_qualname": core.__qualname__}
    monkeypatch.setattr(sys, "version_info", (3, 10, 13, "final", 0))
    assert errors.code_names(core) == {"co_name": "core"}


def test_block_forward_is_a_door_and_transposed_targets_are_refused():
    """Review of issue 37: block_forward (public) passed a learner's mask and X unchecked to the
    kernel, and lm_loss_and_grads reshaped transposed targets into wrong labels without a word."""
    from attention_kit import errors
    from attention_kit.decoder import block as B
    from attention_kit.decoder import tiny_lm as T

    params, config, _ = T.load_pretrained()
    d = np.shape(params["l0.attn.W_q"])[-2]
    X = np.random.default_rng(0).normal(size=(3, 6, d))
    ok = B.block_forward(X, params, 0, mask=np.tril(np.ones((6, 6), bool)))[0]
    np.testing.assert_array_equal(ok, B.block_forward.unchecked(X, params, 0, mask=np.tril(np.ones((6, 6), bool)))[0])
    cases = [(dict(mask=np.tril(np.ones((6, 6), int))), errors.MaskDtypeError, "astype"),
             (dict(mask=np.ones((5, 5), bool)), errors.MaskError, "causal_mask"),
             (dict(X=X[0].T), errors.ShapeError, "Use X.T"),
             (dict(l=7), errors.ParameterError, "the model has one block"),
             (dict(X=np.where(X > 2, np.nan, X)), errors.NonFiniteError, "NaN")]
    for change, error, words in cases:
        args = dict(X=X, l=0) | change
        with pytest.raises(error, match=words):
            B.block_forward(args.pop("X"), params, args.pop("l"), **args)
    rng = np.random.default_rng(1)
    ids = rng.integers(0, config.vocab_size, size=(3, 6))
    targets = rng.integers(0, config.vocab_size, size=(3, 6))
    assert T.lm_loss_and_grads(params, config, ids, targets)[0] == T.lm_loss_and_grads(params, config, ids, targets.ravel())[0]
    with pytest.raises(errors.ShapeError, match=r"\(6, 3\) but \(3, 6\)"):
        T.lm_loss_and_grads(params, config, ids, targets.T)
