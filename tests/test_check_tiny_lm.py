"""Checkers of notebook 06: right answers pass, each typical mistake gets its own hint, stubs and
exceptions never raise."""

import numpy as np
import pytest

from attention_kit.check import tiny_lm as C
from attention_kit.learn.lm_training import rhyme_stream
from attention_kit.learn.tiny_lm import load_pretrained


@pytest.fixture(scope="module")
def model():
    p, cfg, _ = load_pretrained()
    return {"params": p, "config": cfg, "vocab": rhyme_stream()[1]}


def ln_right(X, g, b, eps=1e-5):
    mu = X.mean(axis=-1, keepdims=True)
    return (X - mu) / np.sqrt(X.var(axis=-1, keepdims=True) + eps) * g + b


LN_CASES = {
    "axis 0": (lambda X, g, b, eps=1e-5: (X - X.mean(0)) / np.sqrt(X.var(0) + eps) * g + b, "axis=-1"),
    "no eps": (lambda X, g, b, eps=1e-5: (X - X.mean(-1, keepdims=True)) / X.std(-1, keepdims=True) * g + b,
               "eps inside"),
    "variance": (lambda X, g, b, eps=1e-5: (X - X.mean(-1, keepdims=True)) / (X.var(-1, keepdims=True) + eps) * g + b,
                 "not by the variance"),
    "ddof 1": (lambda X, g, b, eps=1e-5: (X - X.mean(-1, keepdims=True))
               / np.sqrt(X.var(-1, ddof=1, keepdims=True) + eps) * g + b, "ddof=1"),
    "eps outside the root": (lambda X, g, b, eps=1e-5: (X - X.mean(-1, keepdims=True))
                             / (X.std(-1, keepdims=True) + eps) * g + b, "inside the square root"),
    "no gamma": (lambda X, g, b, eps=1e-5: (X - X.mean(-1, keepdims=True)) / np.sqrt(X.var(-1, keepdims=True) + eps),
                 "multiply by gamma"),
}


def test_layer_norm_checker(capsys):
    assert C.layer_norm(ln_right)
    assert "✓" in capsys.readouterr().out
    for name, (fn, hint) in LN_CASES.items():
        with np.errstate(all="ignore"):
            assert not C.layer_norm(fn), name
        assert hint in capsys.readouterr().out, name
    assert not C.layer_norm(...)
    assert "no answer yet" in capsys.readouterr().out
    assert not C.layer_norm(lambda X, g, b, eps=1e-5: 1 / 0)
    assert "ZeroDivisionError" in capsys.readouterr().out


def test_mask_at_inference_checker(model, capsys):
    assert C.mask_at_inference(False, True, **model)
    assert "✓" in capsys.readouterr().out
    assert not C.mask_at_inference(True, True, **model)
    assert "last row of the causal mask" in capsys.readouterr().out
    assert not C.mask_at_inference(False, False, **model)
    assert "words after it" in capsys.readouterr().out
    assert not C.mask_at_inference(..., True, **model)
    assert not C.mask_at_inference("no", True, **model)
    assert "True or False" in capsys.readouterr().out


def sample_right(logits, t, rng):
    z = logits / t
    p = np.exp(z - z.max())
    return int(rng.choice(len(p), p=p / p.sum()))


def test_sample_checker(capsys):
    assert C.sample(sample_right)
    assert "✓" in capsys.readouterr().out
    cases = {
        "argmax": (lambda lg, t, rng: int(np.argmax(lg)), "argmax"),
        "ignored": (lambda lg, t, rng: sample_right(lg, 1.0, rng), "no effect"),
        "times": (lambda lg, t, rng: sample_right(lg * t * t, t, rng), "multiplied"),
        "overflow": (lambda lg, t, rng: int(rng.choice(len(lg), p=np.exp(lg / t) / np.exp(lg / t).sum())),
                     "overflow"),
    }
    for name, (fn, hint) in cases.items():
        with np.errstate(all="ignore"):
            assert not C.sample(fn), name
        assert hint in capsys.readouterr().out, name
    assert not C.sample(lambda lg, t, rng: "a")
    assert "one token id" in capsys.readouterr().out


def test_head_role_checker(model, capsys):
    assert C.head_role("muffet", **model)
    assert "✓" in capsys.readouterr().out
    assert not C.head_role("on", **model)
    assert "where head 1 looks" in capsys.readouterr().out
    # another context: head 2 looks back at "dumpty", head 1 at the last word itself
    assert C.head_role("dumpty", context="humpty dumpty had a", **model)
    assert "“dumpty”, 2 words back" in capsys.readouterr().out
    assert not C.head_role("a", context="humpty dumpty had a", **model)
    assert "where head 1 looks" in capsys.readouterr().out
    assert not C.head_role("little", **model)
    assert "brightest cell" in capsys.readouterr().out
    assert not C.head_role(3, **model)
    assert not C.head_role(None, **model)


def test_model_checkers_default_to_the_shipped_weights(capsys):
    assert C.mask_at_inference(False, True)
    assert C.head_role("muffet")
    assert capsys.readouterr().out.count("✓") == 2
