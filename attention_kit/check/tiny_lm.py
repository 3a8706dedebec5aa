"""Exercise checkers for notebook 06 (a tiny language model).

Every checker prints one line, ``✓ ...`` or ``✗ ...`` with a hint aimed at the usual mistake, and
returns True or False. The learner's exceptions are reported, never raised. What they compare with
(the public cases, their answers, the outputs of the usual mistakes, what the shipped model does)
is data, recorded once (``attention_kit.check.recorded``).

* ``layer_norm(fn)``: ``fn(X, gamma, beta, eps) -> X``'s shape, for ``X`` of shape ``(..., d)`` (a
  batch of sequences too, and two widths d); catches normalising over the wrong axis (the tokens
  instead of the features), a row-by-row loop that treats a whole sequence as one row, a missing
  ``eps`` (a constant row gives NaN), an ``eps`` written in instead of the one passed, the row
  statistics without ``keepdims`` (a broadcast error), dividing by the variance instead of its
  square root, the unbiased variance, forgetting ``gamma`` or ``beta``, and a list.
* ``mask_at_inference(last_changes, earlier_change)``: predictions (True or False) of what removing
  the causal mask does to the trained one-block model at inference; the hints explain the idea and
  do not state the answer.
* ``sample(fn)``: ``fn(logits, temperature, rng) -> int``; catches multiplying by the temperature,
  ignoring it, always taking the argmax, a generator re-created or re-seeded on every call (the
  same token every time), overflow for large logits, draws that do not come from the ``rng``
  passed in (numpy's global generator), a hard-coded number of tokens, and a result that is not an int.
* ``head_role(word, context=...)``: the word head 2 looks at most from the last word of the exercise's context
  (by default "humpty dumpty had a").
"""

from __future__ import annotations

import numpy as np

from ..i18n import N_, _
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
from .recorded import recorded, reference

__all__ = ["layer_norm", "mask_at_inference", "sample", "head_role"]

STUB = N_("no answer yet: replace the `...` with your code, then run the cell again")


# ---------------------------------------------------------------- layer norm


@reference
def _ln_wrong(X, g, b, eps):
    """(output, hint) of the usual wrong layer norms of X (..., d)."""
    from ..learn.layers import layer_norm as ln

    mu, var = X.mean(-1, keepdims=True), X.var(-1, keepdims=True)
    out = [
        ((X - mu) / (X.std(-1, keepdims=True) + eps) * g + b,
         N_("you added eps to the standard deviation; in layer norm eps keeps the variance away from 0, "
            "before the square root is taken")),
        ((X - X.mean(-2, keepdims=True)) / np.sqrt(X.var(-2, keepdims=True) + eps) * g + b,
         N_("you normalised each feature over the tokens; layer norm normalises each token over its own "
            "features, the last axis")),
        ((X - mu) / np.sqrt(var + eps), N_("the normalised rows are right, but the learned scale gamma and "
                                           "shift beta are missing")),
        ((X - mu) / (var + eps) * g + b, N_("you divided by the variance: the rows must end with a spread of 1, "
                                            "and the variance is the square of a spread")),
        ((X - mu) / np.sqrt(X.var(-1, ddof=1, keepdims=True) + eps) * g + b,
         N_("you used the unbiased variance (divided by d - 1); layer norm takes the plain mean of the squares")),
        (ln(X, g, b, eps=1e-5)[0], N_("you used eps = 1e-5 whatever eps was passed: use the argument eps")),
        ((X - mu) / X.std(-1, keepdims=True) * g + b,
         N_("eps is missing: a constant row, whose variance is 0, shows what it is for")),
    ]
    if X.ndim == 3:
        m3 = X.mean(axis=(1, 2), keepdims=True)
        v3 = X.var(axis=(1, 2), keepdims=True)
        out.insert(0, ((X - m3) / np.sqrt(v3 + eps) * g + b,
                       N_("for a batch (b, n, d) your mean and variance run over a whole sequence (a loop over "
                          "the first axis takes a sequence, not a token, as a row): each token is normalised "
                          "over its own d features, the last axis, whatever stands in front of it")))
    return out


@recorded
def _layer_norm_table() -> dict:
    """The cases (two widths d, a batch, a large eps), their layer norms, the usual mistakes'
    outputs with their hints, and a constant row."""
    from ..learn.layers import layer_norm as ln

    rng = np.random.default_rng(6)
    g, b = rng.normal(1.0, 0.3, 6), rng.normal(0.0, 0.5, 6)
    cases = [
        (N_("X of shape (4, 6), eps = 1e-5"), rng.normal(2.0, 3.0, (4, 6)), 1e-5),   # (n, d): 4 tokens, 6 features
        (N_("X of shape (4, 6), eps = 0.5"), rng.normal(0.0, 0.4, (4, 6)), 0.5),    # a large eps shows where it goes
        (N_("a batch X of shape (3, 4, 6), eps = 1e-5"), rng.normal(1.0, 2.0, (3, 4, 6)), 1e-5),
    ]
    out = [{"case": case, "X": X, "g": g, "b": b, "eps": eps, "want": ln(X, g, b, eps=eps)[0],
            "wrong": _ln_wrong(X, g, b, eps)} for case, X, eps in cases]
    X5, g5, b5 = rng.normal(-1.0, 1.5, (3, 5)), rng.normal(1.0, 0.3, 5), rng.normal(0.0, 0.5, 5)
    out.append({"case": N_("X of shape (3, 5), eps = 1e-3"), "X": X5, "g": g5, "b": b5, "eps": 1e-3,   # another d
                "want": ln(X5, g5, b5, eps=1e-3)[0], "wrong": _ln_wrong(X5, g5, b5, 1e-3)})
    return {"cases": out, "constant": np.full((2, 6), 3.0)}


@plain_numpy()
def layer_norm(fn) -> bool:
    """Check ``fn(X, gamma, beta, eps)``, for ``X`` of shape ``(n, d)`` and ``(b, n, d)``, two widths d,
    with a small and a large ``eps``."""
    if not_done(fn):
        return not_attempted(_(STUB))
    t = _layer_norm_table()
    for c in t["cases"]:
        case, X, g, b, eps = _(c["case"]), c["X"], c["g"], c["b"], c["eps"]
        X_in = X.copy()
        got, err = try_call(fn, X_in, g.copy(), b.copy(), eps=eps)
        if got is Ellipsis:
            return not_attempted(_(STUB))
        if not np.array_equal(X_in, X):
            return report(False, _("{case}: your function changed its input X in place (an in-place subtraction "
                                   "or division writes into the caller's array, and the caller's X is then "
                                   "normalised too); compute into a new array instead").format(case=case))
        if err:
            if "broadcast" in err:
                hint = _("The row means and variances lost their last axis, so they do not line up with the "
                         "rows: keep them as a column, one number per row")
            elif "unpack" in err and X.ndim == 3:
                hint = _("Your function takes X as one matrix (n, d); a batch (b, n, d) has another axis in "
                         "front: normalise over the last axis, whatever stands before it")
            elif "eps" in err and "argument" in err:
                hint = _("Your function must take the argument eps and use it")
            else:
                hint = ""
            return report(False, (_("{case}: {error}. {hint}") if hint else _("{case}: {error}"))
                          .format(case=case, error=err, hint=hint))
        if (msg := array_answer(got)):
            return report(False, msg)
        if np.shape(got) != X.shape:
            return report(False, _("{case}: the output has shape {got} but {want} was expected: "
                                   "the shape of the input, one row per token").format(
                                       case=case, got=shape_text(got), want=X.shape))
        if not close(got, c["want"]):
            hint = next((_(h) for w, h in c["wrong"] if close(got, w)),
                        _("the values differ from a layer norm of each row over its features: compare each "
                          "step with section 2's formula, and with its loop"))
            return report(False, _("{case}: {hint}").format(case=case, hint=hint))
    g, b = t["cases"][0]["g"], t["cases"][0]["b"]
    const, err = try_call(fn, t["constant"], g, b, eps=1e-5)
    if err or not np.all(np.isfinite(np.asarray(const, dtype=float))):
        return report(False, _("a constant row (all features equal) gives NaN or inf: its variance is 0; "
                               "where must eps go to keep the division finite?"))
    return report(True, _("layer norm: each token's features to mean 0 and variance 1, then gamma and "
                          "beta, for a batch too; a constant row stays finite"))


# ---------------------------------------------------------------- the mask at inference


@reference
def _shipped():
    """The model notebook 06 uses: the trained weights shipped with the package."""
    from ..decoder.lm_training import rhyme_stream
    from ..decoder.tiny_lm import load_pretrained

    params, config, _ = load_pretrained()
    return params, config, rhyme_stream()[1]


@recorded(answers=True)  # a prediction's answers: sealed, withheld by PREDICTIONS=record
def _mask_table() -> dict:
    """What removing the causal mask changes in the shipped model, on the exercise's context."""
    from ..decoder.tiny_lm import lm_forward

    params, config, vocab = _shipped()
    ids = vocab.encode("humpty dumpty sat on")
    masked = lm_forward(params, config, ids)[0][0]  # (n, V)
    free = lm_forward(params, config, ids, causal=False)[0][0]
    return {"last": not np.allclose(masked[-1], free[-1], rtol=1e-9, atol=1e-12),
            "earlier": not np.allclose(masked[:-1], free[:-1], rtol=1e-9, atol=1e-12),
            "n_layers": config.n_layers,
            "ok": N_("right: the last position already sees everything before it; only the earlier "
                     "positions change, and in training they would read their own answers")}


@prediction
def mask_at_inference(last_changes, earlier_change) -> bool:
    """The learner predicts, before running it, what removing the causal mask changes in the trained
    model (the weights shipped with the package) on "humpty dumpty sat on".

    ``last_changes``: does the next-word distribution after the whole context change?
    ``earlier_change``: do the predictions at the earlier positions change?
    """
    if not_done(last_changes) or not_done(earlier_change):
        return not_attempted(_("no answer yet: set both predictions to True or False"))
    if not isinstance(last_changes, (bool, np.bool_)) or not isinstance(earlier_change, (bool, np.bool_)):
        return report(False, _("answer each question with True or False"))
    t = _mask_table().open()
    if bool(last_changes) != t["last"]:
        if t["n_layers"] == 1:
            hint = _("last_changes is not right: compare the last row of the causal mask with a row of all "
                     "True: which keys does removing the mask add for the last word, in a model of one block?")
        else:
            hint = _("last_changes is not right: with several blocks the last position reads what the earlier "
                     "positions computed; ask whether those can change")
        return report(False, hint, graded=hint)
    if bool(earlier_change) != t["earlier"]:
        hint = _("earlier_change is not right: compare an earlier word's row of the causal mask with a row of "
                 "all True: which keys does removing the mask add for it, and what do they hold?")
        return report(False, hint, graded=hint)
    return report(True, _(t["ok"]))


# ---------------------------------------------------------------- sampling with a temperature


@recorded
def _sample_table() -> dict:
    """The logits, the distributions the draws must follow at each temperature (and those of the
    usual mistakes), another vocabulary size, and the probes of an argmax."""
    def softmax(z):
        e = np.exp(z - z.max())
        return e / e.sum()

    logits = np.array([2.0, 1.0, 0.0, -1.0])
    temps = (0.5, 2.0)
    six = np.array([0.5, -0.5, 1.5, 0.0, 1.0, -1.0])
    return {"logits": logits, "temps": temps,
            "target": {t: softmax(logits / t) for t in temps},
            "ignored": {t: softmax(logits) for t in temps},
            "times": {t: softmax(logits * t) for t in temps},
            "six": six, "six_t": 1.5, "six_target": softmax(six / 1.5),
            # flat logits whose largest is first, then last: an argmax returns 0, then 3; one fixed
            # uniform number (a generator seeded anew on every call) cannot give both
            "flat": [(np.array([0.1, 0.0, 0.0, 0.0]), 0), (np.array([0.0, 0.0, 0.0, 0.1]), 3)],
            # logits far apart: a shift by the first logit, the mean (about 0) or the minimum (-1000)
            # leaves exp(1000) or more, which overflows; only the largest logit keeps every exp finite
            "big": np.array([-1000.0, 1000.0, 999.0, -1000.0]), "big_ok": (1, 2)}


def _draws(fn, logits, t, n, seed):
    rng = np.random.default_rng(seed)
    got, err = try_repeat(fn, n, logits, t, rng)  # one request for all n draws under the grader
    if any(k is Ellipsis for k in got):
        return None, _(STUB)
    if err:
        return None, err
    out = []
    for k in got:
        if k is None:
            return None, _("your function returned None: did you forget `return`?")
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
            return None, _("your function returned {value} ({kind}); return one token id, an int").format(
                value=repr(k), kind=type(k).__name__)
        out.append(int(k))
    return np.array(out), None


def _always_argmax(fn, t: dict) -> bool:
    for logits, top in t["flat"]:
        got, err = try_call(fn, logits, 1.0, np.random.default_rng(3))
        if err or isinstance(got, (bool, np.bool_)) or not isinstance(got, (int, np.integer)) or int(got) != top:
            return False
    return True


@plain_numpy()
def sample(fn) -> bool:
    """Check ``fn(logits, temperature, rng) -> token id`` by the frequencies of many draws."""
    if not_done(fn):
        return not_attempted(_(STUB))
    t = _sample_table()
    logits, n_tok = t["logits"], len(t["logits"])
    freq = {}
    for temp in t["temps"]:
        draws, err = _draws(fn, logits, temp, 4000, seed=1)
        if err:
            return report_failure(err, stub=_(STUB))
        if draws.min() < 0 or draws.max() >= n_tok:
            return report(False, _("token ids must lie in 0..{last} for {n} logits, got {got}").format(
                last=n_tok - 1, n=n_tok, got=sorted(set(draws))[:5]))
        freq[temp] = np.bincount(draws, minlength=n_tok) / len(draws)
    again, err = _draws(fn, logits, 2.0, 200, seed=1)   # the same rng seed: the same draws, if they come from it
    if err:
        return report_failure(err, stub=_(STUB))
    if not np.array_equal(again, _draws(fn, logits, 2.0, 200, seed=1)[0]):
        return report(False, _("two runs with the same seeded rng gave different tokens: your draws do not come "
                               "from the rng you were given (numpy's global generator, perhaps). Draw with rng, "
                               "so that a seed makes generation repeatable"))
    if all(f.max() == 1.0 for f in freq.values()):   # one token, every time
        if _always_argmax(fn, t):
            return report(False, _("you always return the most likely token (argmax); draw a token at random, "
                                   "each with its probability"))
        return report(False, _("every call returned the same token: your draws start from the same state each "
                               "time (a generator created or seeded inside your function). Draw with the rng you "
                               "are given: it moves on after each draw"))
    # 4000 draws: a frequency's standard error is below 0.008, so 0.04 is a safe tolerance
    if all(np.abs(freq[temp] - t["target"][temp]).max() < 0.04 for temp in freq):
        six, err = _draws(fn, t["six"], t["six_t"], 2000, seed=2)
        n_six = len(t["six"])
        if err == _(STUB):
            return not_attempted(err)
        bad_ids = six is None or six.min() < 0 or six.max() >= n_six
        if err or bad_ids or np.abs(np.bincount(six, minlength=n_six) / len(six) - t["six_target"]).max() > 0.05:
            return report(False, (_("right for {n} logits, but not for {m} ({error}): does your function take "
                                    "the number of tokens from the logits it is given?") if err else
                                  _("right for {n} logits, but not for {m}: does your function take "
                                    "the number of tokens from the logits it is given?")).format(n=n_tok, m=n_six, error=err))
        big, err = try_call(fn, t["big"], 1.0, np.random.default_rng(0))
        try:
            bad = err is not None or isinstance(big, (bool, np.bool_)) or int(big) not in t["big_ok"]
        except (TypeError, ValueError):
            bad = True
        if bad:
            return report(False, _("logits far apart, such as 1000 and -1000, overflow the exponential (exp is inf "
                                   "past about 709). Subtracting the same number from every logit does not change "
                                   "the softmax: which number keeps every exponential at most 1?"))
        return report(True, _("sampling: softmax(logits / T); small T sharpens towards the argmax, large "
                              "T flattens towards uniform"))
    if all(np.abs(freq[temp] - t["ignored"][temp]).max() < 0.04 for temp in freq):
        return report(False, _("the temperature has no effect on your draws: a small T should sharpen the "
                               "distribution and a large T flatten it"))
    if all(np.abs(freq[temp] - t["times"][temp]).max() < 0.04 for temp in freq):
        return report(False, _("you multiplied the logits by the temperature: then a large T sharpens the "
                               "distribution, where it should flatten it"))
    return report(False, _("the frequencies of your samples do not follow softmax(logits / T): at T = 0.5 "
                           "expected about {want}, got {got}").format(
                               want=np.round(t["target"][0.5], 2), got=np.round(freq[0.5], 2)))


# ---------------------------------------------------------------- a head's role


def _back(k: int) -> str:
    """The ✓ verdict's template for a strongest key ``k`` words before the last one."""
    return (_("head {head} puts {weight} of the last word's weight on “{word}”, the word itself") if k == 0 else
            _("head {head} puts {weight} of the last word's weight on “{word}”, 1 word back") if k == 1 else
            _("head {head} puts {weight} of the last word's weight on “{word}”, {back} words back"))


_HEAD_CONTEXTS = ("humpty dumpty had a",)  # the exercise's context only: section 5's is answered above it
_HEAD = 1  # the exercise's head, 0-based ("head 2")


@recorded(answers=True)  # a prediction's answers: sealed, withheld by PREDICTIONS=record
def _head_table() -> dict:
    """For the exercise's context: its words, and for each head of the shipped model's layer the last
    query's strongest key and its weight."""
    from ..decoder.tiny_lm import head_weights

    params, config, vocab = _shipped()
    out = {}
    for context in _HEAD_CONTEXTS:
        ids = vocab.encode(context)
        W = head_weights(params, config, ids)[0]  # (h, n, n): the first layer's heads
        out[context] = {"tokens": vocab.decode(ids), "best": [int(np.argmax(W[h, -1])) for h in range(W.shape[0])],
                        "weight": [float(W[h, -1].max()) for h in range(W.shape[0])]}
    return out


@prediction
def head_role(word, *, context: str = "humpty dumpty had a", head: int = _HEAD) -> bool:
    """The word that head ``head`` (0-based; "head 2" in the widget) looks at most from the last token
    of the exercise's ``context``; another context or head is an edited call, and is refused."""
    if not_done(word):
        return not_attempted(_("no answer yet: write the word, e.g. 'sat', as a string"))
    if not isinstance(word, str):
        return report(False, _("answer with the word as a string, e.g. 'sat', not {kind}").format(kind=type(word).__name__))
    table = _head_table().open()
    if context not in table or head != _HEAD:
        return report(False, _("this checker knows the exercise's context and head only: call it as the "
                               "exercise cell does"))
    r = table[context]
    toks, best = r["tokens"], r["best"]
    answer = word.strip().lower()
    if answer == toks[best[head]]:
        back = len(toks) - 1 - best[head]
        return report(True, _back(back).format(head=head + 1, weight=f"{r['weight'][head]:.2f}",
                                               word=toks[best[head]], back=back))
    others = [h for h in range(len(best)) if h != head and toks[best[h]] == answer]
    if others:
        return report(False, _("that is where head {other} looks; pick head {head} in the "
                               "widget and read the last row").format(other=others[0] + 1, head=head + 1))
    return report(False, _("read the last row of head {head}'s heatmap (query “{word}”): which "
                           "key has the brightest cell?").format(head=head + 1, word=toks[-1]))
