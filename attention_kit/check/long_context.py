"""Exercise checkers for notebook 09 (positions for long texts).

Every checker prints one line, ``✓ ...`` or ``✗ ...`` with a hint aimed at the usual mistake, and
returns True or False. The learner's exceptions are reported, never raised.

* ``rope_matrix(fn)``: ``fn(d, delta) -> M`` (d, d) in plain numpy, the matrix with
  ``rope(q, m) . rope(k, n) = q @ M @ k`` whenever ``m - n = delta``: RoPE's score as a function of
  the distance alone; catches the transpose (the rotation the wrong way), one angle for every pair,
  the frequencies reversed, the half-split layout, the 1/sqrt(d) put in, nothing rotated.
* ``sliding_reach(earliest_cached, earliest_fresh)``: a prediction, the earliest position whose
  token can change the prediction at token 20 of a two-layer model reading through sliding caches
  of window 4, and through the recomputed window; catches the cache taken for the fresh window,
  one layer's reach counted only, off-by-ones (in one layer or in each), and answers that are not
  whole numbers.
* ``alibi_weights(fn, ratio)``: ``fn(slopes, i) -> w`` (h, i + 1) in plain numpy, the weights of query
  ``i`` over keys ``0 .. i`` under ALiBi when every ``q . k`` is equal; catches the biases given for the
  weights, the softmax left unnormalised or taken over the heads, the wrong sign (or the row reversed),
  the slope forgotten, one row for all heads. Then ``ratio``, one number per head: how many times more
  weight the paper's two heads (slopes 2^-4, 2^-8) give the token one back than the token ten back;
  catches one step, or another number of steps than the one asked for (the wrong pair of keys), the
  ratio upside down, the biases' difference given without the exponential, the heads swapped, a ratio
  cut or rounded too coarsely, one number for both heads, and text for a number (``["1.5"]``).
* ``cache_keeps(answer)``: a prediction, the positions a cache with ``window=4, sinks=1`` holds
  after token 9, in any order (a list, tuple, set or numpy array); catches the sink forgotten, the
  sink counted in the window, off-by-ones, and answers that are not whole numbers.

What a checker compares with (its cases, their right answers and the usual mistakes' outputs) is
computed once by the functions marked ``@recorded`` (``check/recorded.py``).
"""

from __future__ import annotations

import numpy as np

from ..i18n import N_, _
from ..relative.alibi import alibi_bias, alibi_slopes
from ..relative.rope import rope
from . import close, not_attempted, not_done, prediction, report, try_call, whole_list, whole_number
from . import quietly as quietly  # handed on: the notebook's cells call check.quietly()
from .general import array_answer, is_text
from .plain import plain_numpy
from .recorded import recorded, reference

__all__ = ["quietly", "rope_matrix", "sliding_reach", "alibi_weights", "cache_keeps"]

STUB = N_("no answer yet: replace the `...` after `return` with your code, then run the cell again")


# ---------------------------------------------------------------- exercise 1: RoPE's matrix of the distance

_MATRIX_HINTS = (
    N_("this is the transpose of M: it gives the score of the query at n and the key at m. Work out one "
       "pair by hand: does the query's rotation enter the dot product as it is, or transposed, and which way "
       "does that turn the key?"),
    N_("every pair turned by the same angle: each pair of features has its own frequency (section 1)"),
    N_("the frequencies are the wrong way round: pair 0 turns fastest"),
    N_("you paired feature i with feature i + d/2 (the half-split layout of GPT-NeoX and Hugging Face); here "
       "the pairs are neighbours, (0, 1), (2, 3), ..."),
    N_("M gives the dot product q' . k'; leave the 1/sqrt(d) of the score out"),
    N_("nothing turned: that is the matrix at distance 0; at distance delta each pair turns"),
)


@reference
def _theta(d):
    return 10000.0 ** (-np.arange(0, d, 2) / d)


@reference
def _blocks(d, angles, *, halves=False):
    """The (d, d) rotation by ``angles`` (d/2,) pair by pair, acting on a column vector."""
    M = np.zeros((d, d))
    c, s = np.cos(angles), np.sin(angles)
    i = np.arange(d // 2)
    a, b = (i, i + d // 2) if halves else (2 * i, 2 * i + 1)
    M[a, a], M[a, b], M[b, a], M[b, b] = c, -s, s, c
    return M


@reference
def _rope_matrix(d, delta):
    """The reference, from ``rope`` itself: entry (a, b) is rope(e_a, m) . rope(e_b, n), m - n = delta."""
    E = np.eye(d)
    m, n = delta + 7, 7
    return rope(E, np.full(d, float(m))) @ rope(E, np.full(d, float(n))).T  # (d, d)


@recorded
def _matrix_table() -> dict:
    """Four sizes d and distances of both signs; the right matrices and the usual mistakes' (in the
    order of ``_MATRIX_HINTS``)."""
    cases = ((4, 3), (2, 1), (8, -5), (16, 40))
    want, wrong = [], []
    for d, delta in cases:
        th = _theta(d)
        want.append(_rope_matrix(d, delta))
        wrong.append([_blocks(d, delta * th), _blocks(d, -delta * np.ones_like(th)),
                      _blocks(d, -delta * th[::-1]), _blocks(d, -delta * th, halves=True),
                      _rope_matrix(d, delta) / np.sqrt(d), np.eye(d)])
    return {"cases": cases, "want": want, "wrong": wrong}


@plain_numpy()
def rope_matrix(fn) -> bool:
    """Check ``fn(d, delta) -> ndarray (d, d)``: ``rope(q, m) . rope(k, n) = q @ M @ k`` for ``m - n = delta``."""
    if not_done(fn):
        return not_attempted(_("no answer yet: define my_rope_matrix(d, delta) and pass it in"))
    table = _matrix_table()
    for (d, delta), want, wrong in zip(table["cases"], table["want"], table["wrong"], strict=True):
        out, err = try_call(fn, d, delta)
        if out is Ellipsis:
            return not_attempted(_(STUB))
        if err:
            return report(False, _("for d = {d} and delta = {delta}: {problem}").format(d=d, delta=delta, problem=err))
        if (msg := array_answer(out)):
            return report(False, msg)
        if close(out, want, atol=1e-9):
            continue
        if np.shape(out) != (d, d):
            return report(False, _("for d = {d} give a ({d}, {d}) matrix, one row and one column per feature; "
                                   "got shape {got}").format(d=d, got=np.shape(out)))
        for M, hint in zip(wrong, _MATRIX_HINTS, strict=True):
            if close(out, M, atol=1e-9):
                return report(False, _(hint))
        return report(False, _("wrong numbers for d = {d}, delta = {delta}. Check d = 2 by hand: what is the score "
                               "of q = (1, 0) at position delta against k = (1, 0) at position 0, and against "
                               "k = (0, 1)? Those are two entries of M's first row; larger d repeats it pair by "
                               "pair").format(d=d, delta=delta))
    return report(True, _("M depends on m - n only: the same matrix gives rope(q, m) . rope(k, n) = q @ M @ k at any m"))


# ---------------------------------------------------------------- exercise 2: how far back a sliding cache reaches



@recorded(answers=True)  # a prediction's answers: sealed, withheld by PREDICTIONS=record
def _reach() -> tuple[int, int]:
    """(earliest cached, earliest fresh): measured on the shipped two-layer RoPE model by changing one
    token at a time and seeing whether token 20's logits move."""
    from ..long import streaming

    params, cfg, _ = streaming.load_rope_lm(2)
    ids = np.arange(21) % cfg.vocab_size
    base = {"cached": streaming.stream_logits(params, cfg, ids, window=4)[20],
            "fresh": streaming.recompute_logits(params, cfg, ids, window=4)[20]}
    earliest = {}
    for how, run in (("cached", streaming.stream_logits), ("fresh", streaming.recompute_logits)):
        for pos in range(21):
            other = ids.copy()
            other[pos] = (other[pos] + 5) % cfg.vocab_size
            if np.abs(run(params, cfg, other, window=4)[20] - base[how]).max() > 1e-9:
                earliest[how] = pos
                break
    return earliest["cached"], earliest["fresh"]


@recorded(answers=True)  # a prediction's answers: sealed, withheld by PREDICTIONS=record
def _reach_hints() -> dict:
    """The in-class texts of ``sliding_reach``: its ✓ and its hints, which may state the answer (the
    learner compares with the explorer), so they are kept as data, not in the checker's code."""
    return {
        # ``ok`` is a template: the checker fills in the two positions (``cached``, ``fresh``)
        "ok": N_("the caches reach {cached}, two layers of three steps back each; a fresh window only "
                 "{fresh}: the cached model is a different model once the window slides"),
        "fresh_off_by_one": N_("the recomputed window: off by one. A window of 4 counts token 20 itself among its 4 tokens"),
        "fresh": N_("the recomputed window: a fresh pass over the last 4 tokens sees those 4 and nothing else, "
                    "whatever the number of layers"),
        "cache_is_fresh": N_("the caches are not the fresh window: layer 1's cached keys and values of the window's "
                             "tokens were made when those tokens arrived, from layer-0 states that had each seen "
                             "three tokens further back"),
        "off_by_one": N_("off by one: in each layer, a window of 4 counts the token itself among its 4 tokens"),
        "off_by_one_each": N_("off by one in each layer: you counted four tokens back per layer, but a window of 4 "
                              "counts the token itself among its 4"),
        "too_far": N_("too far back: a layer lets a token see no further back than its window, and there are only "
                      "two layers to pass through"),
        "not_far": N_("not far enough back: what layer 1 reads from its cache was computed by layer 0, which had "
                      "already looked back through a window of its own; the two layers' reaches add up"),
        # the graded hints' common end (``make grade``): the idea, not the answer, but near enough to it
        # that the kept code does not show it either
        "graded": N_("a layer lets a token see the window - 1 tokens before it; a cached key or value of layer 1 "
                     "was computed when its token arrived, from a layer-0 state that saw its own window; a fresh "
                     "pass over the window sees the window only"),
    }


@prediction
def sliding_reach(earliest_cached, earliest_fresh) -> bool:
    """Check the prediction: earliest positions that can change token 20's prediction (window 4, two layers)."""
    if not_done(earliest_cached) or not_done(earliest_fresh):
        return not_attempted(_("no answer yet: replace each `...` with a position (a whole number), then run the "
                               "cell again"))
    cached, fresh = whole_number(earliest_cached), whole_number(earliest_fresh)
    if cached is None or fresh is None:
        return report(False, _("give each answer as a whole number, a position in the text (such as 12, not 12.0, "
                               "'12' or True); got {cached} and {fresh}").format(
                                   cached=repr(earliest_cached), fresh=repr(earliest_fresh)))
    want_cached, want_fresh = _reach().open()
    hints = {k: _(v) for k, v in _reach_hints().open().items()}  # the in-class texts (may state the answer): recorded data
    end = hints["graded"][:1].upper() + hints["graded"][1:]  # a sentence of its own after the first
    if (cached, fresh) == (want_cached, want_fresh):
        return report(True, hints["ok"].format(cached=want_cached, fresh=want_fresh))
    if fresh != want_fresh:
        if fresh == want_fresh - 1:
            return report(False, hints["fresh_off_by_one"],
                          graded=_("off by one in the fresh window. {rule}").format(rule=end))
        return report(False, hints["fresh"], graded=end)
    if cached == fresh:
        return report(False, hints["cache_is_fresh"],
                      graded=_("the cache reaches further than the fresh window. {rule}").format(rule=end))
    if cached == want_cached - 1:
        return report(False, hints["off_by_one"],
                      graded=_("off by one: a window of 4 holds the token itself. {rule}").format(rule=end))
    if cached == want_cached - 2:
        return report(False, hints["off_by_one_each"],
                      graded=_("off by one in each layer: a window of 4 holds the token itself. {rule}").format(rule=end))
    if cached < want_cached:
        return report(False, hints["too_far"], graded=end)
    return report(False, hints["not_far"], graded=end)


# ---------------------------------------------------------------- exercise 3: ALiBi's weights when content is equal

_WEIGHT_HINTS = (
    N_("these are the biases; the weights are what attention makes of the scores (every q . k is equal, so "
       "the biases are all that is left of them)"),
    N_("each head's row must sum to 1, as every row of attention weights does"),
    N_("the far keys got the most weight (the sign, or the row, is reversed): ALiBi's bias is a penalty for "
       "distance, and key j = i, the query itself, is the nearest"),
    N_("you normalised over the heads: each head's row sums to 1 over the keys"),
    N_("the slope is missing: each head's penalty grows with the distance at its own rate"),
)

_RATIO_HINTS = (
    N_("that is the ratio for a single step (one back against two back); the ratio asked for spans every "
       "step from the token one back to the token ten back"),
    N_("upside down: the token one back is nearer, so it gets more weight, and the ratio is above 1"),
    N_("that is the difference of the biases; the weights are exponentials of the scores, so a difference of "
       "biases becomes a factor"),
    N_("the heads are swapped: give one number per head in the order of the slopes, the steeper head (2^-4) "
       "first"),
)


@reference
def _softmax(s, axis=-1):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@reference
def _ratio_of(slopes, near, far):
    """Weight of the key ``near`` back over the key ``far`` back, per head, from ALiBi's softmax."""
    w = _softmax(alibi_bias(np.array(slopes), far + 1)[:, far])  # (h, far + 1): query far, keys 0 .. far
    return w[:, far - near] / w[:, 0]


@recorded
def _alibi_table() -> dict:
    """(slopes, i) of several head counts and lengths; the right weights, the usual mistakes'
    (in the order of ``_WEIGHT_HINTS``); the ratio asked for, its mistakes, and the ✓ text that
    states it."""
    cases = (((2.0 ** -4, 2.0 ** -8), 3), ((1.0, 0.0), 0), (tuple(alibi_slopes(8)), 9), ((0.5,), 6))
    want, wrong = [], []
    for slopes, i in cases:
        m = np.array(slopes)
        bias = alibi_bias(m, i + 1)[:, i]  # (h, i + 1)
        j = np.arange(i + 1.0)
        want.append(_softmax(bias))
        wrong.append([bias, np.exp(bias), _softmax(-bias), _softmax(bias, axis=0),
                      _softmax(-np.broadcast_to(i - j, bias.shape))])
    slopes, (near, far) = (2.0 ** -4, 2.0 ** -8), (1, 10)  # the paper's slopes for two heads
    ratio = _ratio_of(slopes, near, far)
    return {"cases": cases, "want": want, "wrong": wrong, "n_heads": len(slopes), "ratio": ratio,
            # in the order of ``_RATIO_HINTS``: one step, upside down, the biases' difference, the heads swapped
            "ratio_wrong": [_ratio_of(slopes, near, near + 1), 1 / ratio, (far - near) * np.array(slopes),
                            ratio[::-1]],
            # the ratio of two keys k steps apart (k other than 1 and the distance asked for): the wrong pair
            "ratio_steps": {k: _ratio_of(slopes, 0, k) for k in range(2, 13) if k != far - near},
            # each head's ratio cut or rounded to whole numbers or to one decimal
            "ratio_coarse": [sorted({float(f(r * 10 ** d) / 10 ** d) for d in (0, 1)
                                     for f in (np.floor, np.round, np.ceil)}) for r in ratio],
            "ratio_ok": N_("right weights, and each head's ratio is e^(9 m): {ratio_16} for slope 1/16 and "
                           "{ratio_256} for 1/256. Even the steeper head weighs its two nearest neighbours "
                           "almost alike: one step back is worth only e^m")}  # filled in from "ratio"


def _check_ratio(ratio, table) -> bool:
    """Check ``ratio``: per head, the weight on the token one back over the token ten back (slopes 2^-4, 2^-8)."""
    if not_done(ratio):
        return not_attempted(_("the function is right; now replace the `...` after `my_ratio =` with one number "
                               "per head (use your function), then run the cell again"))
    if is_text(ratio):  # numpy would read "1.5" as a number
        return report(False, _("give the ratio as numbers, not as text: write [2.0, 3.0], not \"2.0, 3.0\" or "
                               "[\"2.0\", \"3.0\"] (quotes make a string, and a string is not a number to compute with)"))
    try:
        got = np.asarray(ratio, dtype=float)
    except (TypeError, ValueError):
        return report(False, _("give the ratio as numbers, one per head, such as [2.0, 3.0]; got {ratio}").format(
            ratio=repr(ratio)))
    h = table["n_heads"]
    if got.shape != (h,):
        return report(False, _("give one number per head, {h} in all, such as [2.0, 3.0]; got shape {got}").format(h=h, got=got.shape))
    if close(got, table["ratio"], atol=0.006):
        r = table["ratio"]
        return report(True, _(table["ratio_ok"]).format(ratio_16=f"{r[0]:.2f}", ratio_256=f"{r[1]:.2f}"))
    for wrong, hint in zip(table["ratio_wrong"], _RATIO_HINTS, strict=True):
        if close(got, wrong, atol=0.006):
            return report(False, _(hint))
    for k, wrong in table["ratio_steps"].items():
        if close(got, wrong, atol=0.006):
            return report(False, _("your ratios are those of two keys {k} steps apart: the ratio depends only on how many steps "
                                   "separate the two keys. Count again the steps from the token one back to the token ten back").format(k=k))
    if abs(got[0] - got[1]) < 1e-9 and any(abs(got[0] - r) <= 0.051 for r in table["ratio"]):  # one slope for both
        return report(False, _("both heads got the same ratio: each head has a slope of its own"))
    right = [abs(g - r) <= 0.006 for g, r in zip(got, table["ratio"], strict=True)]
    if all(ok or any(abs(g - c) < 1e-9 for c in cut) for ok, g, cut in zip(right, got, table["ratio_coarse"], strict=True)):
        return report(False, _("close, but rounded too coarsely: the two heads' ratios differ in the second "
                               "decimal, so give each to two decimals at least (the checker accepts 0.006 either way)"))
    if any(right):  # trial 5: one head right, the other's slope not (was 'rounded too coarsely' or 'not the ratio')
        return report(False, _("one head's ratio is right, the other's is not: each head has a slope of its own; check the other one's"))
    return report(False, _("not the ratio of the weights: for each head, divide the weight of the key one back by the weight of "
                           "the key ten back (any query at 10 or later gives the same ratio)"))


@plain_numpy()
def alibi_weights(fn, ratio) -> bool:
    """Check ``fn(slopes, i) -> ndarray (h, i + 1)``: ALiBi's weights of query ``i`` when every q . k is equal;
    then ``ratio``: the paper's two heads' weight on the token one back over the token ten back."""
    if not_done(fn):
        return not_attempted(_("no answer yet: define my_alibi_weights(slopes, i) and pass it in"))
    table = _alibi_table()
    for (slopes, i), want, wrong in zip(table["cases"], table["want"], table["wrong"], strict=True):
        m = np.array(slopes)
        out, err = try_call(fn, m.copy(), i)
        if out is Ellipsis:
            return not_attempted(_(STUB))
        if err:
            return report(False, _("for slopes {slopes} and i = {i}: {problem}").format(slopes=slopes, i=i, problem=err))
        if (msg := array_answer(out)):
            return report(False, msg)
        if is_text(out):  # numpy would read "0.5" as a number
            return report(False, _("your function returned text (strings): return the weights as numbers"))
        if close(out, want, atol=1e-9):
            continue
        if np.shape(out) != want.shape:
            return report(False, _("for {h} heads and i = {i} give shape {want}: one row per head, one weight per "
                                   "key 0 .. {i}; got shape {got}").format(h=len(m), i=i, want=want.shape,
                                                                          got=np.shape(out)))
        for W, hint in zip(wrong, _WEIGHT_HINTS, strict=True):
            if close(out, W, atol=1e-9):
                return report(False, _(hint))
        return report(False, _("wrong numbers for slopes {slopes}, i = {i}: with every q . k equal, each head's "
                               "scores are its ALiBi biases alone, and attention turns a row of scores into "
                               "weights as it always does").format(slopes=slopes, i=i))
    return _check_ratio(ratio, table)


# ---------------------------------------------------------------- exercise 4: what a cache with a sink keeps



@recorded(answers=True)  # a prediction's answers: sealed, withheld by PREDICTIONS=record
def _keeps() -> list[int]:
    """What KVCache(window=4, sinks=1) holds after tokens 0 .. 9, asked of the package's cache."""
    from ..scale.kvcache import KVCache

    cache = KVCache(1, 1, window=4, sinks=1)
    for _i in range(10):
        cache.append(np.zeros((1, 1)), np.zeros((1, 1)))
    return [int(p) for p in cache.positions]


@recorded(answers=True)  # a prediction's answers: sealed, withheld by PREDICTIONS=record
def _keeps_hints() -> dict:
    """The in-class texts of ``cache_keeps``: its ✓ and its hints, which may state the answer (the
    learner compares with the explorer), so they are kept as data, not in the checker's code."""
    return {
        # ``ok`` is a template: the checker fills in the positions kept (``sink``, ``first`` .. ``last``)
        "ok": N_("the sink (position {sink}) and the last four, {first} to {last}: five keys, however "
                 "long the text"),
        "no_sink": N_("the sink is missing: a cache with sinks=1 keeps more than its window. Which token does a "
                      "sink hold, and for how long?"),
        "sink_in_window": N_("the sink does not take one of the window's places: it is kept in addition to the "
                             "window, whose places all go to the most recent tokens"),
        "off_by_one": N_("off by one: the newest token is in the window too"),
        "other": N_("which tokens stay? A cache with sinks keeps two kinds: the sinks, kept for ever, and a window "
                    "of the most recent tokens. Work out each for tokens 0 .. 9"),
        # the graded hints' common end (``make grade``): the rule, which the kept code does not show either
        "graded": N_("a cache with window W and k sinks keeps the first k tokens for ever and, beside them, the W "
                     "most recent ones, the new token included"),
    }


@prediction
def cache_keeps(answer) -> bool:
    """Check ``answer``: the positions a KVCache(window=4, sinks=1) holds after tokens 0 .. 9, in any order."""
    if not_done(answer):
        return not_attempted(_("no answer yet: replace the `...` after `answer =` with a list of positions, "
                               "then run the cell again"))
    got = whole_list(answer)
    if got is None:
        return report(False, _("give a list of whole numbers, the positions the cache holds (such as [1, 2], "
                               "not 1.0, '1' or True); got {answer}").format(answer=repr(answer)))
    got = sorted(got)
    keeps = _keeps().open()
    sink, window = keeps[:1], keeps[1:]
    hints = {k: _(v) for k, v in _keeps_hints().open().items()}  # the in-class texts (may state the answer): recorded data
    end = hints["graded"][:1].upper() + hints["graded"][1:]  # a sentence of its own after the first
    if got == keeps:
        return report(True, hints["ok"].format(sink=sink[0], first=window[0], last=window[-1]))
    if got == window:
        return report(False, hints["no_sink"], graded=_("the sink is missing. {rule}").format(rule=end))
    if got == sink + window[1:]:
        return report(False, hints["sink_in_window"],
                      graded=_("the sink is kept beside the window, not inside it. {rule}").format(rule=end))
    early = [window[0] - 1] + window[:-1]
    if got in (sink + early, sink + [window[0] - 1] + window, sink + window[:-1]):
        return report(False, hints["off_by_one"],
                      graded=_("off by one: the newest token is in the window. {rule}").format(rule=end))
    return report(False, hints["other"], graded=end)
