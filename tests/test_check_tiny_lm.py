"""Checkers of notebook 06: right answers pass, each typical mistake gets its own hint, stubs and
exceptions never raise."""

import numpy as np
import pytest

from attention_kit.check import tiny_lm as C


def ln_right(X, g, b, eps=1e-5):
    mu = X.mean(axis=-1, keepdims=True)
    return (X - mu) / np.sqrt(X.var(axis=-1, keepdims=True) + eps) * g + b


def layer_norm_loop(X, gamma, beta, eps=1e-5):
    """A loop over the rows of a 2-D X, as a learner may write it from section 2's loop."""
    out = np.empty_like(X)
    for i, x in enumerate(X):
        mu = x.mean()
        var = ((x - mu) ** 2).mean()
        out[i] = gamma * (x - mu) / np.sqrt(var + eps) + beta
    return out


def layer_norm_notebook_loop(X, gamma, beta, eps=1e-5):
    """Notebook 06's section 2 loop, copied: a matrix (n, d) only."""
    n, d = X.shape
    out = np.empty_like(X)
    for i in range(n):
        mu = sum(X[i, j] for j in range(d)) / d
        var = sum((X[i, j] - mu) ** 2 for j in range(d)) / d
        for j in range(d):
            out[i, j] = gamma[j] * (X[i, j] - mu) / np.sqrt(var + eps) + beta[j]
    return out


def _ln_in_place(X, g, b, eps):
    X -= X.mean(-1, keepdims=True)
    X /= np.sqrt(X.var(-1, keepdims=True) + eps)
    return X * g + b


LN_CASES = {
    "axis 0": (lambda X, g, b, eps=1e-5: (X - X.mean(-2, keepdims=True)) / np.sqrt(X.var(-2, keepdims=True) + eps)
               * g + b, "over its own features"),
    "no eps": (lambda X, g, b, eps=1e-5: (X - X.mean(-1, keepdims=True)) / X.std(-1, keepdims=True) * g + b,
               "eps is missing"),
    "variance": (lambda X, g, b, eps=1e-5: (X - X.mean(-1, keepdims=True)) / (X.var(-1, keepdims=True) + eps) * g + b,
                 "you divided by the variance"),
    "ddof 1": (lambda X, g, b, eps=1e-5: (X - X.mean(-1, keepdims=True))
               / np.sqrt(X.var(-1, ddof=1, keepdims=True) + eps) * g + b, "divided by d - 1"),
    "eps outside the root": (lambda X, g, b, eps=1e-5: (X - X.mean(-1, keepdims=True))
                             / (X.std(-1, keepdims=True) + eps) * g + b, "before the square root is taken"),
    "no gamma": (lambda X, g, b, eps=1e-5: (X - X.mean(-1, keepdims=True)) / np.sqrt(X.var(-1, keepdims=True) + eps),
                 "gamma and shift beta are missing"),
    # eps written in: right for eps = 1e-5, wrong for the checker's eps = 0.5
    "hard-coded eps": (lambda X, g, b, eps=1e-5: ln_right(X, g, b, 1e-5), "use the argument eps"),
    # no keepdims: a broadcast error, which is about the row statistics, not about eps
    "no keepdims": (lambda X, g, b, eps=1e-5: (X - X.mean(-1)) / np.sqrt(X.var(-1) + eps) * g + b,
                    "keep them as a column"),
    "a row loop": (layer_norm_loop, "a whole sequence"),
    "section 2's loop": (layer_norm_notebook_loop, "another axis in front"),
    "a list": (lambda X, g, b, eps=1e-5: ln_right(X, g, b, eps).tolist(), "returned a list"),
    # a width written in: right for d = 6, wrong for the checker's d = 5
    "hard-coded d": (lambda X, g, b, eps=1e-5: (X - X.sum(-1, keepdims=True) / 6)
                     / np.sqrt(((X - X.sum(-1, keepdims=True) / 6) ** 2).sum(-1, keepdims=True) / 6 + eps) * g + b,
                     "section 2's formula"),
    # right values, but the caller's X is normalised too (learner trial, issue 46; 02.1 and 04.2 catch it)
    "in place": (lambda X, g, b, eps=1e-5: _ln_in_place(X, g, b, eps), "changed its input X in place"),
}


def test_layer_norm_checker(capsys):
    assert C.layer_norm(ln_right)
    assert "✓" in capsys.readouterr().out
    for name, (fn, hint) in LN_CASES.items():
        with np.errstate(all="ignore"):
            assert not C.layer_norm(fn), name
        out = capsys.readouterr().out
        assert hint in out, (name, out)
        assert "axis=-1" not in out and "keepdims=True" not in out, out   # the idea, not the code
        assert "sqrt(var + eps)" not in out and "inside the square root" not in out, out
    assert not C.layer_norm(...)
    assert "no answer yet" in capsys.readouterr().out
    assert not C.layer_norm(lambda X, g, b, eps=1e-5: 1 / 0)
    assert "ZeroDivisionError" in capsys.readouterr().out


def test_mask_at_inference_checker(capsys):
    assert C.mask_at_inference(False, True)
    assert "✓" in capsys.readouterr().out
    assert not C.mask_at_inference(True, True)
    out = capsys.readouterr().out
    assert "last row of the causal mask" in out
    assert not C.mask_at_inference(False, False)
    out += capsys.readouterr().out
    assert "earlier word's row" in out
    for verdict in ("cannot change", "its prediction changes", "so with one block"):   # in class too: no answer
        assert verdict not in out, out
    assert not C.mask_at_inference(..., True)
    assert not C.mask_at_inference("no", True)
    assert "True or False" in capsys.readouterr().out


def sample_right(logits, t, rng):
    z = logits / t
    p = np.exp(z - z.max())
    return int(rng.choice(len(p), p=p / p.sum()))


@pytest.mark.slow
def test_sample_checker(capsys):
    assert C.sample(sample_right)
    assert "✓" in capsys.readouterr().out
    cases = {
        "argmax": (lambda lg, t, rng: int(np.argmax(lg)), "argmax"),
        "ignored": (lambda lg, t, rng: sample_right(lg, 1.0, rng), "no effect"),
        "times": (lambda lg, t, rng: sample_right(lg * t * t, t, rng), "multiplied"),
        "overflow": (lambda lg, t, rng: int(rng.choice(len(lg), p=np.exp(lg / t) / np.exp(lg / t).sum())),
                     "overflow"),
        # numpy's global generator ignores the rng passed in: the same seed no longer gives the same draws
        "global rng": (lambda lg, t, rng: int(np.random.choice(len(lg), p=np.exp(lg / t - (lg / t).max())
                                                               / np.exp(lg / t - (lg / t).max()).sum())),
                       "do not come from the rng you were given"),
        "a float": (lambda lg, t, rng: float(sample_right(lg, t, rng)), "return one token id, an int"),
        "a bool": (lambda lg, t, rng: bool(sample_right(lg, t, rng)), "return one token id, an int"),
        # a generator seeded anew on every call: the same token every time, whatever the softmax
        "re-seeded": (lambda lg, t, rng: sample_right(lg, t, np.random.default_rng(0)), "every call returned the same token"),
        "re-seeded 7": (lambda lg, t, rng: sample_right(lg, t, np.random.default_rng(7)), "every call returned the same token"),
        "np.random.seed": (lambda lg, t, rng: (np.random.seed(0), int(np.random.choice(len(lg), p=np.exp(lg / t - (lg / t).max())
                                                                                  / np.exp(lg / t - (lg / t).max()).sum())))[1],
                           "every call returned the same token"),
        # the number of tokens written in: right for 4 logits, not for 6
        "four tokens": (lambda lg, t, rng: int(rng.choice(4, p=np.exp(lg[:4] / t - (lg[:4] / t).max())
                                                          / np.exp(lg[:4] / t - (lg[:4] / t).max()).sum())),
                        "but not for 6"),
    }
    for name, (fn, hint) in cases.items():
        with np.errstate(all="ignore"):
            assert not C.sample(fn), name
        assert hint in capsys.readouterr().out, name
    assert not C.sample(lambda lg, t, rng: "a")
    assert "one token id" in capsys.readouterr().out


def test_head_role_checker(capsys):
    # the exercise's context: head 2 looks back at "dumpty", head 1 at the last word itself
    assert C.head_role("dumpty", context="humpty dumpty had a")
    assert "“dumpty”, 2 words back" in capsys.readouterr().out
    assert not C.head_role("a", context="humpty dumpty had a")
    assert "where head 1 looks" in capsys.readouterr().out
    assert not C.head_role("had", context="humpty dumpty had a")
    assert "brightest cell" in capsys.readouterr().out
    assert not C.head_role(3, context="humpty dumpty had a")
    assert not C.head_role(None, context="humpty dumpty had a")


def test_model_checkers_default_to_the_shipped_weights(capsys):
    assert C.mask_at_inference(False, True)
    assert C.head_role("dumpty")
    assert capsys.readouterr().out.count("✓") == 2


def test_head_role_refuses_an_edited_call(capsys):
    """Section 5's context, whose answer a cell above the exercise prints, passed with context= (learner
    trial, issue 46); another head too."""
    assert not C.head_role("muffet", context="little miss muffet sat on a")
    assert "call it as the exercise cell does" in capsys.readouterr().out
    assert not C.head_role("a", context="humpty dumpty had a", head=0)
    assert "call it as the exercise cell does" in capsys.readouterr().out


def test_head_role_knows_only_its_recorded_contexts(capsys):
    assert not C.head_role("jill", context="jill came")
    assert "call it as the exercise cell does" in capsys.readouterr().out


# ---------------------------------------------------------------- trial report (2026-11-28): W1

def test_sample_shifted_by_the_mean_overflows(capsys):
    def by_mean(logits, temperature, rng):
        z = logits / temperature
        p = np.exp(z - z.mean())
        return int(rng.choice(len(p), p=p / p.sum()))

    with np.errstate(all="ignore"):
        assert C.sample(by_mean) is False
    out = capsys.readouterr().out
    assert "overflow" in out and "1000 and -1000" in out, out


def test_sampling_shifted_by_the_first_logit_fails():
    """Re-trial: p = exp(z - z[0]) passed 06.3 (the first of the large logits was their maximum)."""
    def first(logits, T, rng):
        z = np.asarray(logits, float) / T
        with np.errstate(all="ignore"):
            p = np.exp(z - z[0])
        return int(rng.choice(len(z), p=p / p.sum()))

    def right(logits, T, rng):
        z = np.asarray(logits, float) / T
        p = np.exp(z - z.max())
        return int(rng.choice(len(z), p=p / p.sum()))

    assert C.sample(first) is False
    assert C.sample(right) is True
