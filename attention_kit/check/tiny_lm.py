"""Exercise checkers for notebook 06 (a tiny language model).

Every checker prints one line, ``✓ ...`` or ``✗ ...`` with a hint aimed at the usual mistake, and
returns True or False. The learner's exceptions are reported, never raised.

* ``layer_norm(fn)``: ``fn(X, gamma, beta, eps=1e-5) -> (n, d)``; catches normalising over the wrong
  axis (the tokens instead of the features), a missing ``eps`` (a constant row gives NaN), dividing
  by the variance instead of its square root, the unbiased variance (``ddof=1``), and forgetting
  ``gamma`` or ``beta``.
* ``mask_at_inference(last_changes, earlier_change)``: predictions of what removing the causal mask
  does to the trained one-block model at inference.
* ``sample(fn)``: ``fn(logits, temperature, rng) -> int``; catches multiplying by the temperature,
  ignoring it, always taking the argmax, and overflow for large logits.
* ``head_role(word, context=...)``: the word head 2 looks at most from the last word of the context
  (by default "little miss muffet sat on a").
"""

from __future__ import annotations

import numpy as np

from ..learn.corpus import Vocab
from ..learn.layers import layer_norm as _layer_norm
from ..learn.tiny_lm import TinyLMConfig, head_weights, lm_forward
from . import close, not_attempted, not_done, report, report_failure, try_call, try_repeat
from .plain import plain_numpy

__all__ = ["layer_norm", "mask_at_inference", "sample", "head_role"]

STUB = "no answer yet: replace the `...` with your code, then run the cell again"


def _ref(X, g, b, eps=1e-5):
    return _layer_norm(X, g, b, eps=eps)[0]


# ---------------------------------------------------------------- layer norm


@plain_numpy()
def layer_norm(fn) -> bool:
    """Check ``fn(X, gamma, beta, eps=1e-5)`` against ``attention_kit.learn.layers.layer_norm``."""
    if not_done(fn):
        return not_attempted(STUB)
    rng = np.random.default_rng(6)
    X = rng.normal(2.0, 3.0, (4, 6))  # (n, d): 4 tokens, 6 features
    g, b = rng.normal(1.0, 0.3, 6), rng.normal(0.0, 0.5, 6)
    got, err = try_call(fn, X.copy(), g.copy(), b.copy(), eps=1e-5)
    if got is Ellipsis:
        return not_attempted(STUB)
    if err:
        return report(False, f"{err} (if it does not take eps, add the argument eps=1e-5)")
    if np.shape(got) != X.shape:
        return report(False, f"the output has shape {np.shape(got)} but (4, 6) was expected: one row "
                             "per token, as many features as the input")
    if not close(got, _ref(X, g, b)):
        mu0 = X.mean(axis=0, keepdims=True)
        wrong_axis = (X - mu0) / np.sqrt(X.var(axis=0, keepdims=True) + 1e-5) * g + b
        no_scale = _ref(X, np.ones(6), np.zeros(6))
        by_var = (X - X.mean(-1, keepdims=True)) / (X.var(-1, keepdims=True) + 1e-5) * g + b
        unbiased = (X - X.mean(-1, keepdims=True)) / np.sqrt(X.var(-1, ddof=1, keepdims=True) + 1e-5) * g + b
        eps_outside = (X - X.mean(-1, keepdims=True)) / (X.std(-1, keepdims=True) + 1e-5) * g + b
        if close(got, eps_outside):
            hint = ("you added eps to the standard deviation, (x - mean) / (std + eps); layer norm adds it to "
                    "the variance, inside the square root: (x - mean) / sqrt(var + eps)")
        elif close(got, wrong_axis):
            hint = ("you normalised each feature over the tokens (axis 0); layer norm normalises "
                    "each token over its features: mean and var with axis=-1, keepdims=True")
        elif close(got, no_scale):
            hint = "the normalised rows are right, but multiply by gamma and add beta at the end"
        elif close(got, by_var):
            hint = "divide by the standard deviation sqrt(var + eps), not by the variance"
        elif close(got, unbiased):
            hint = ("you used the unbiased variance (divided by d - 1, ddof=1); layer norm divides by d: "
                    "X.var(axis=-1, keepdims=True) with the default ddof=0")
        else:
            hint = ("the values differ from (x - mean) / sqrt(var + eps) * gamma + beta, with the mean "
                    "and variance of each row (axis=-1)")
        return report(False, hint)
    const, err = try_call(fn, np.full((2, 6), 3.0), g, b, eps=1e-5)
    if err or not np.all(np.isfinite(np.asarray(const, dtype=float))):
        return report(False, "a constant row (all features equal) gives NaN or inf: its variance is 0, "
                             "so add eps inside the square root, sqrt(var + eps)")
    return report(True, "layer norm: each token's features to mean 0 and variance 1, then gamma and "
                        "beta; a constant row stays finite")


# ---------------------------------------------------------------- the mask at inference


def _shipped(params, config, vocab):
    """The model the notebook uses: the given one, or the weights shipped with the package."""
    if params is None or config is None or vocab is None:
        from ..learn.lm_training import rhyme_stream
        from ..learn.tiny_lm import load_pretrained

        p, c, _ = load_pretrained()
        params, config, vocab = params or p, config or c, vocab or rhyme_stream()[1]
    return params, config, vocab


def mask_at_inference(last_changes, earlier_change, *, params: dict | None = None,
                      config: TinyLMConfig | None = None, vocab: Vocab | None = None,
                      context: str = "humpty dumpty sat on") -> bool:
    """The learner predicts, before running it, what removing the causal mask changes.

    ``last_changes``: does the next-word distribution after the whole context change?
    ``earlier_change``: do the predictions at the earlier positions change?
    Both are checked against the model itself (by default the trained weights shipped with the
    package, which notebook 06 uses).
    """
    if not_done(last_changes) or not_done(earlier_change):
        return not_attempted("no answer yet: set both predictions to True or False")
    if not isinstance(last_changes, (bool, np.bool_)) or not isinstance(earlier_change, (bool, np.bool_)):
        return report(False, "answer each question with True or False")
    params, config, vocab = _shipped(params, config, vocab)
    ids = vocab.encode(context)
    masked = lm_forward(params, config, ids)[0][0]  # (n, V)
    free = lm_forward(params, config, ids, causal=False)[0][0]
    last_truth = not np.allclose(masked[-1], free[-1], rtol=1e-9, atol=1e-12)
    earlier_truth = not np.allclose(masked[:-1], free[:-1], rtol=1e-9, atol=1e-12)
    if bool(last_changes) != last_truth:
        if config.n_layers == 1:
            return report(False, "look at the last row of the causal mask: the last word may already "
                                 "attend to every word, so with one block its output cannot change",
                          graded="compare the last row of the causal mask with a row of all True: "
                                 "which keys does removing the mask add for the last word?")
        return report(False, "with several blocks the earlier positions' outputs feed the last one",
                      graded="with several blocks the last position reads what the earlier positions "
                             "computed: ask whether those can change")
    if bool(earlier_change) != earlier_truth:
        return report(False, "without the mask, an earlier word's row may attend to the words after it "
                             "(the very words it should predict), so its prediction changes",
                      graded="compare an earlier word's row of the causal mask with a row of all True: "
                             "which keys does removing the mask add for it?")
    return report(True, "right: the last position already sees everything before it; only the earlier "
                        "positions change, and in training they would read their own answers")


# ---------------------------------------------------------------- sampling with a temperature


def _draws(fn, logits, t, n, seed):
    rng = np.random.default_rng(seed)
    got, err = try_repeat(fn, n, logits, t, rng)  # one request for all n draws under the grader
    if any(k is Ellipsis for k in got):
        return None, STUB
    if err:
        return None, err
    out = []
    for k in got:
        if k is None:
            return None, "your function returned None: did you forget `return`?"
        try:
            out.append(int(k))
        except (TypeError, ValueError):
            return None, f"your function returned {k!r}; return one token id (an int)"
    return np.array(out), None


@plain_numpy()
def sample(fn) -> bool:
    """Check ``fn(logits, temperature, rng) -> token id`` by the frequencies of many draws."""
    if not_done(fn):
        return not_attempted(STUB)
    logits = np.array([2.0, 1.0, 0.0, -1.0])
    target = {}
    for t in (0.5, 2.0):
        e = np.exp(logits / t - (logits / t).max())
        target[t] = e / e.sum()
    freq = {}
    for t in (0.5, 2.0):
        draws, err = _draws(fn, logits, t, 4000, seed=1)
        if err:
            return report_failure(err, stub=STUB)
        if draws.min() < 0 or draws.max() >= 4:
            return report(False, f"token ids must lie in 0..3 for 4 logits, got {sorted(set(draws))[:5]}")
        freq[t] = np.bincount(draws, minlength=4) / len(draws)
    if freq[0.5][0] == 1.0 and freq[2.0][0] == 1.0:
        return report(False, "you always return the most likely token (argmax); draw from the "
                             "probabilities with rng.choice(len(p), p=p)")
    # 4000 draws: a frequency's standard error is below 0.008, so 0.04 is a safe tolerance
    if all(np.abs(freq[t] - target[t]).max() < 0.04 for t in freq):
        big, err = try_call(fn, np.array([1000.0, 999.0, 0.0]), 1.0, np.random.default_rng(0))
        try:
            bad = err is not None or int(big) not in (0, 1)
        except (TypeError, ValueError):
            bad = True
        if bad:
            return report(False, "logits of 1000 overflow exp(): subtract the largest logit first, "
                                 "it does not change the softmax")
        return report(True, "sampling: softmax(logits / T); small T sharpens towards the argmax, large "
                            "T flattens towards uniform")
    plain = np.exp(logits - logits.max())
    plain /= plain.sum()
    times = {t: np.exp(logits * t - (logits * t).max()) for t in freq}
    if all(np.abs(freq[t] - plain).max() < 0.04 for t in freq):
        return report(False, "the temperature has no effect: divide the logits by it before the softmax")
    if all(np.abs(freq[t] - times[t] / times[t].sum()).max() < 0.04 for t in freq):
        return report(False, "you multiplied the logits by the temperature; divide by it, so that a "
                             "large T flattens the distribution")
    return report(False, "the frequencies of your samples do not follow softmax(logits / T): "
                         f"at T = 0.5 expected about {np.round(target[0.5], 2)}, got {np.round(freq[0.5], 2)}")


# ---------------------------------------------------------------- a head's role


def _back(k: int) -> str:
    return "the word itself" if k == 0 else "1 word back" if k == 1 else f"{k} words back"


def head_role(word, *, params: dict | None = None, config: TinyLMConfig | None = None,
              vocab: Vocab | None = None, context: str = "little miss muffet sat on a",
              head: int = 1) -> bool:
    """The word that head ``head`` (0-based; "head 2" in the widget) looks at most from the last token."""
    if not_done(word):
        return not_attempted("no answer yet: write the word, e.g. 'sat', as a string")
    if not isinstance(word, str):
        return report(False, f"answer with the word as a string, e.g. 'sat', not {type(word).__name__}")
    params, config, vocab = _shipped(params, config, vocab)
    ids = vocab.encode(context)
    toks = vocab.decode(ids)
    W = head_weights(params, config, ids)[0]  # (h, n, n): the first layer's heads
    w = W[head, -1]  # (n,): the last query's row
    best = toks[int(np.argmax(w))]
    answer = word.strip().lower()
    if answer == best:
        return report(True, f"head {head + 1} puts {w.max():.2f} of the last word's weight on "
                            f"“{best}”, {_back(len(toks) - 1 - int(np.argmax(w)))}")
    others = [h for h in range(W.shape[0]) if h != head and toks[int(np.argmax(W[h, -1]))] == answer]
    if others:
        return report(False, f"that is where head {others[0] + 1} looks; pick head {head + 1} in the "
                             "widget and read the last row")
    return report(False, f"read the last row of head {head + 1}'s heatmap (query “{toks[-1]}”): which "
                         "key has the brightest cell?")
