"""Exercise checkers for notebook 06 (a tiny language model).

Every checker prints one line, ``✓ ...`` or ``✗ ...`` with a hint aimed at the usual mistake, and
returns True or False. The learner's exceptions are reported, never raised.

* ``layer_norm(fn)``: ``fn(X, gamma, beta, eps) -> X``'s shape, for ``X`` of shape ``(..., d)`` (a
  batch of sequences too); catches normalising over the wrong axis (the tokens instead of the
  features), a row-by-row loop that treats a whole sequence as one row, a missing ``eps`` (a
  constant row gives NaN), an ``eps`` written in instead of the one passed, the row statistics
  without ``keepdims`` (a broadcast error), dividing by the variance instead of its square root, the
  unbiased variance (``ddof=1``), forgetting ``gamma`` or ``beta``, and a list.
* ``mask_at_inference(last_changes, earlier_change)``: predictions (True or False) of what removing
  the causal mask does to the trained one-block model at inference; the hints explain the idea and
  do not state the answer.
* ``sample(fn)``: ``fn(logits, temperature, rng) -> int``; catches multiplying by the temperature,
  ignoring it, always taking the argmax, overflow for large logits, draws that do not come from the
  ``rng`` passed in (numpy's global generator), and a result that is not an int.
* ``head_role(word, context=...)``: the word head 2 looks at most from the last word of the context
  (by default "little miss muffet sat on a").
"""

from __future__ import annotations

import numpy as np

from ..decoder.tiny_lm import TinyLMConfig, head_weights, lm_forward
from ..learn.corpus import Vocab
from ..learn.layers import layer_norm as _layer_norm
from . import (
    close,
    not_attempted,
    not_done,
    prediction,
    report,
    report_failure,
    shape_text,
    try_call,
    try_repeat,
)
from .general import array_answer
from .plain import plain_numpy

__all__ = ["layer_norm", "mask_at_inference", "sample", "head_role"]

STUB = "no answer yet: replace the `...` with your code, then run the cell again"


def _ref(X, g, b, eps=1e-5):
    return _layer_norm(X, g, b, eps=eps)[0]


# ---------------------------------------------------------------- layer norm


def _ln_wrong(X, g, b, eps):
    """(output, hint) of the usual wrong layer norms of X (..., d)."""
    mu, var = X.mean(-1, keepdims=True), X.var(-1, keepdims=True)
    out = [
        ((X - mu) / (X.std(-1, keepdims=True) + eps) * g + b,
         "you added eps to the standard deviation; layer norm adds it to the variance, inside the square root"),
        ((X - X.mean(-2, keepdims=True)) / np.sqrt(X.var(-2, keepdims=True) + eps) * g + b,
         "you normalised each feature over the tokens; layer norm normalises each token over its own "
         "features, the last axis"),
        ((X - mu) / np.sqrt(var + eps), "the normalised rows are right, but the learned scale gamma and "
                                        "shift beta are missing"),
        ((X - mu) / (var + eps) * g + b, "divide by the standard deviation, the square root of var + eps, "
                                         "not by the variance"),
        ((X - mu) / np.sqrt(X.var(-1, ddof=1, keepdims=True) + eps) * g + b,
         "you used the unbiased variance (divided by d - 1); layer norm divides by d"),
        (_ref(X, g, b, 1e-5), "you used eps = 1e-5 whatever eps was passed: use the argument eps"),
        ((X - mu) / X.std(-1, keepdims=True) * g + b,
         "eps is missing: it is added to the variance, inside the square root (a constant row, whose "
         "variance is 0, shows why)"),
    ]
    if X.ndim == 3:
        m3 = X.mean(axis=(1, 2), keepdims=True)
        v3 = X.var(axis=(1, 2), keepdims=True)
        out.insert(0, ((X - m3) / np.sqrt(v3 + eps) * g + b,
                       "for a batch (b, n, d) your mean and variance run over a whole sequence (a loop over "
                       "the first axis takes a sequence, not a token, as a row): each token is normalised "
                       "over its own d features, the last axis, whatever stands in front of it"))
    return out


@plain_numpy()
def layer_norm(fn) -> bool:
    """Check ``fn(X, gamma, beta, eps)`` against ``attention_kit.learn.layers.layer_norm``, for ``X`` of
    shape ``(n, d)`` and ``(b, n, d)``, with ``eps = 1e-5`` and ``eps = 0.5``."""
    if not_done(fn):
        return not_attempted(STUB)
    rng = np.random.default_rng(6)
    cases = [
        ("X of shape (4, 6), eps = 1e-5", rng.normal(2.0, 3.0, (4, 6)), 1e-5),   # (n, d): 4 tokens, 6 features
        ("X of shape (4, 6), eps = 0.5", rng.normal(0.0, 0.4, (4, 6)), 0.5),    # a large eps shows where it goes
        ("a batch X of shape (3, 4, 6), eps = 1e-5", rng.normal(1.0, 2.0, (3, 4, 6)), 1e-5),
    ]
    g, b = rng.normal(1.0, 0.3, 6), rng.normal(0.0, 0.5, 6)
    for case, X, eps in cases:
        got, err = try_call(fn, X.copy(), g.copy(), b.copy(), eps=eps)
        if got is Ellipsis:
            return not_attempted(STUB)
        if err:
            if "broadcast" in err:
                hint = (" The row means and variances lost their last axis, so they do not line up with the "
                        "rows: keep them as a column, one number per row")
            elif "eps" in err and "argument" in err:
                hint = " Your function must take the argument eps and use it"
            else:
                hint = ""
            return report(False, f"{case}: {err}.{hint}" if hint else f"{case}: {err}")
        if (msg := array_answer(got)):
            return report(False, msg)
        if np.shape(got) != X.shape:
            return report(False, f"{case}: the output has shape {shape_text(got)} but {X.shape} was expected: "
                                 "the shape of the input, one row per token")
        if not close(got, _ref(X, g, b, eps)):
            hint = next((h for w, h in _ln_wrong(X, g, b, eps) if close(got, w)),
                        "the values differ from (x - mean) / sqrt(var + eps) * gamma + beta, with the mean "
                        "and variance of each row, over its features")
            return report(False, f"{case}: {hint}")
    const, err = try_call(fn, np.full((2, 6), 3.0), g, b, eps=1e-5)
    if err or not np.all(np.isfinite(np.asarray(const, dtype=float))):
        return report(False, "a constant row (all features equal) gives NaN or inf: its variance is 0, "
                             "so eps must go inside the square root")
    return report(True, "layer norm: each token's features to mean 0 and variance 1, then gamma and "
                        "beta, for a batch too; a constant row stays finite")


# ---------------------------------------------------------------- the mask at inference


def _shipped(params, config, vocab):
    """The model the notebook uses: the given one, or the weights shipped with the package."""
    if params is None or config is None or vocab is None:
        from ..decoder.lm_training import rhyme_stream
        from ..decoder.tiny_lm import load_pretrained

        p, c, _ = load_pretrained()
        params, config, vocab = params or p, config or c, vocab or rhyme_stream()[1]
    return params, config, vocab


@prediction
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
            hint = ("last_changes is not right: compare the last row of the causal mask with a row of all "
                    "True: which keys does removing the mask add for the last word, in a model of one block?")
        else:
            hint = ("last_changes is not right: with several blocks the last position reads what the earlier "
                    "positions computed; ask whether those can change")
        return report(False, hint, graded=hint)
    if bool(earlier_change) != earlier_truth:
        hint = ("earlier_change is not right: compare an earlier word's row of the causal mask with a row of "
                "all True: which keys does removing the mask add for it, and what do they hold?")
        return report(False, hint, graded=hint)
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
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
            return None, f"your function returned {k!r} ({type(k).__name__}); return one token id, an int"
        out.append(int(k))
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
    again, err = _draws(fn, logits, 2.0, 200, seed=1)   # the same rng seed: the same draws, if they come from it
    if err:
        return report_failure(err, stub=STUB)
    if not np.array_equal(again, _draws(fn, logits, 2.0, 200, seed=1)[0]):
        return report(False, "two runs with the same seeded rng gave different tokens: your draws do not come "
                             "from the rng you were given (numpy's global generator, perhaps). Draw with rng, "
                             "so that a seed makes generation repeatable")
    if freq[0.5][0] == 1.0 and freq[2.0][0] == 1.0:
        return report(False, "you always return the most likely token (argmax); draw a token at random, "
                             "each with its probability")
    # 4000 draws: a frequency's standard error is below 0.008, so 0.04 is a safe tolerance
    if all(np.abs(freq[t] - target[t]).max() < 0.04 for t in freq):
        big, err = try_call(fn, np.array([1000.0, 999.0, 0.0]), 1.0, np.random.default_rng(0))
        try:
            bad = err is not None or isinstance(big, (bool, np.bool_)) or int(big) not in (0, 1)
        except (TypeError, ValueError):
            bad = True
        if bad:
            return report(False, "logits of 1000 overflow the exponential: shift the logits by their "
                                 "largest first, which does not change the softmax")
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


@prediction
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
