"""Exercise checkers for notebook 08 (what trained heads do).

Every checker prints one line, ``✓ ...`` or ``✗ ...`` with a hint aimed at the usual mistake, and
returns True or False. The learner's exceptions are reported, never raised.

* ``prefix_matching(fn)``: ``fn(w, ids) -> float``, one head's prefix-matching score from its
  weights ``w`` (n, n) and the tokens ``ids`` (n,); catches the earlier copy itself instead of the
  token after it (off by one), queries without an earlier copy counted, the weights read by
  columns (keys) instead of rows (queries), and the key ``i - 1`` for every query.
* ``most_harmful_head(answer)``: a prediction ``(layer, head)``, the head of the two-layer model
  whose mean-ablation brings the accuracy on the repeats lowest.
* ``sink_window_mask(fn)``: ``fn(n, window, sinks) -> bool (n, n)``, the sliding-window mask that
  keeps the first ``sinks`` tokens; catches sinks that see the future, a window one too wide or too
  narrow, the sinks forgotten, a window that replaces the causal mask, and the polarity reversed.
"""

from __future__ import annotations

import numpy as np

from ..heads.diagnostics import prefix_match_mask
from ..scale.sliding_window import sliding_window_mask
from . import close, not_attempted, not_done, quietly, report, report_failure, try_call
from .plain import plain_numpy

__all__ = ["quietly", "prefix_matching", "most_harmful_head", "sink_window_mask"]

STUB = "no answer yet: replace the `...` after `return` with your code, then run the cell again"


def _call(fn, *args):
    out, err = try_call(fn, *args)
    if err:
        return None, err
    if out is Ellipsis:
        return None, STUB
    return out, None


# ---------------------------------------------------------------- prefix matching


def _prefix_cases():
    """(w, ids) pairs: random causal weights on sequences with repeats (and one with a token seen twice)."""
    rng = np.random.default_rng(8)
    cases = []
    for ids in ([3, 1, 4, 5, 3, 1, 4, 5, 3, 1], [2, 7, 2, 7, 2, 9, 0], [6, 0, 1, 6, 1, 0, 6, 0, 1]):
        n = len(ids)
        s = rng.normal(0, 1.5, (n, n))
        s[np.triu_indices(n, 1)] = -np.inf  # causal
        w = np.exp(s - s.max(axis=1, keepdims=True))
        cases.append((w / w.sum(axis=1, keepdims=True), np.array(ids)))
    return cases


def _score(w, match, rows):
    """Sum of ``w`` on ``match`` per query, averaged over ``rows`` (bool (n,))."""
    return float((w * match).sum(axis=1)[rows].mean()) if rows.any() else 0.0


def _prefix_variants(w, ids):
    n = len(ids)
    match = prefix_match_mask(ids)[0]  # (n, n)
    has = match.any(axis=1)
    copy = (ids[:, None] == ids[None, :]) & np.tri(n, k=-1, dtype=bool)  # the earlier copy itself
    prev = np.eye(n, k=-1, dtype=bool)
    right = _score(w, match, has)
    wrong = [
        (_score(w, copy, copy.any(axis=1)), "you summed the weight on the earlier copy of the token itself; an "
         "induction head looks one step further, at the token that FOLLOWED the earlier copy (key j with "
         "ids[j - 1] == ids[i])"),
        (_score(w, match, np.ones(n, dtype=bool)), "you averaged over every query; average only over the queries "
         "whose token occurred before (the others have nothing to match, and would pull the score down)"),
        (_score(w, match, np.arange(n) > 0), "you averaged over queries 1..n-1; average only over the queries whose "
         "token occurred before"),
        (_score(w.T, match, has), "you read the weights by column: row i of w is query i's weights over the keys, "
         "so sum along each row (axis 1), not each column"),
        (_score(w, prev, has), "that is the weight on the previous token (key i - 1): the prefix-matching score "
         "sums the weight on the keys right after an earlier occurrence of query i's token"),
        (float((w * match).sum() / max(int(match.sum()), 1)), "you averaged over matching (query, key) pairs; first "
         "sum each query's weight over its matching keys, then average over the queries that have one"),
    ]
    return right, wrong


@plain_numpy()
def prefix_matching(fn) -> bool:
    """Check ``fn(w, ids) -> float``: one head's prefix-matching score (w (n, n), ids (n,))."""
    if not_done(fn):
        return not_attempted("no answer yet: define my_prefix_matching(w, ids) and pass it in")
    for w, ids in _prefix_cases():
        out, err = _call(fn, w.copy(), ids.copy())
        if err:
            return report_failure(err if err == STUB else f"for ids = {ids.tolist()}: {err}", stub=STUB)
        try:
            got = float(np.asarray(out, dtype=float).reshape(()))
        except Exception:  # the learner's object: never raise
            return report(False, f"return one number (a float), got {type(out).__name__} "
                                 f"{getattr(out, 'shape', '')}; average over the queries")
        right, wrong = _prefix_variants(w, ids)
        if close(got, right):
            continue
        for value, hint in wrong:
            if close(got, value):
                return report(False, f"for ids = {ids.tolist()}: {hint}")
        return report(False, f"for ids = {ids.tolist()}: expected {right:.4f}, got {got:.4f}. For each query i "
                             "whose token occurred before, add up w[i, j] over the keys j < i with ids[j - 1] == "
                             "ids[i]; then average those sums")
    return report(True, "the prefix-matching score: for each query with an earlier copy, the weight on the "
                        "token after that copy, averaged over those queries")


# ---------------------------------------------------------------- most harmful head

_GRADED_HEAD = ("think about what each layer-1 head needs in order to find its key, and which single head "
                "both of them depend on")


def most_harmful_head(answer) -> bool:
    """Check the prediction ``(layer, head)``: the head whose mean-ablation hurts induction most."""
    if not_done(answer):
        return not_attempted("no answer yet: set my_most_harmful_head = (layer, head), e.g. (1, 1)")
    try:
        layer, head = (int(x) for x in answer)
    except Exception:  # the learner's object: never raise
        return report(False, f"give a pair (layer, head) of whole numbers, e.g. (1, 1); got {answer!r}")
    if (layer, head) not in ((0, 0), (0, 1), (1, 0), (1, 1)):
        return report(False, f"the model has layers 0 and 1, each with heads 0 and 1; got ({layer}, {head})")
    if (layer, head) == (0, 0):
        return report(True, "layer 0 head 0: both layer-1 heads find their key through what the previous-token "
                            "head wrote there; without it accuracy falls to about 0.2, below one layer")
    if (layer, head) == (1, 0):
        return report(False, "ablating the induction head itself leaves layer 1 head 1, a partial induction head "
                             "(prefix-matching 0.77), so accuracy only falls to about 0.5. Which head do BOTH "
                             "layer-1 heads rely on?", graded=_GRADED_HEAD)
    if (layer, head) == (1, 1):
        return report(False, "layer 1 head 1 is the weaker of the two induction heads: without it, head 0 still "
                             "predicts the repeats (accuracy about 0.96)", graded=_GRADED_HEAD)
    return report(False, "layer 0 head 1 looks at the same token, which layer 1 can read from the residual stream "
                         "anyway: without it accuracy stays near 0.9", graded=_GRADED_HEAD)


# ---------------------------------------------------------------- the sink-keeping window


def _mask_variants(n, window, sinks):
    causal = np.tri(n, dtype=bool)
    plain = sliding_window_mask(n, window)
    sink_cols = np.zeros((n, n), dtype=bool)
    sink_cols[:, :sinks] = True
    return [
        (plain | sink_cols, "the sinks are visible to queries BEFORE them too: keep the mask causal (a query i "
         "sees a sink j only when j <= i)"),
        (sliding_window_mask(n, window + 1, sinks=sinks), "the window is one too wide: query i sees "
         "i - window + 1 .. i, that is `window` keys counting itself"),
        (sliding_window_mask(n, window - 1, sinks=sinks) if window > 1 else None, "the window is one too narrow: "
         "query i sees i - window + 1 .. i, that is `window` keys counting itself"),
        (plain, "the sinks are missing: every query must also see the first `sinks` tokens"),
        (causal & ~sliding_window_mask(n, window, sinks=sinks), "True and False are swapped inside the causal "
         "part: True means \"may attend\""),
        (~sliding_window_mask(n, window, sinks=sinks), "True and False are swapped: True means \"may attend\""),
        (sink_cols | (np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]) < window),
         "the window looks into the future: a causal model sees only keys j <= i"),
    ]


@plain_numpy()
def sink_window_mask(fn) -> bool:
    """Check ``fn(n, window, sinks) -> bool (n, n)``: a causal sliding window plus the first ``sinks`` keys."""
    if not_done(fn):
        return not_attempted("no answer yet: define my_sink_window_mask(n, window, sinks) and pass it in")
    for n, window, sinks in ((8, 3, 1), (10, 4, 2), (6, 2, 0), (5, 8, 1)):
        out, err = _call(fn, n, window, sinks)
        if err:
            return report_failure(err if err == STUB else f"for n = {n}, window = {window}, sinks = {sinks}: {err}",
                                  stub=STUB)
        got = np.asarray(out)
        case = f"for n = {n}, window = {window}, sinks = {sinks}"
        if got.shape != (n, n):
            return report(False, f"{case}: expected a mask of shape ({n}, {n}), got {got.shape}")
        if got.dtype != np.bool_:
            return report(False, f"{case}: return a boolean mask (True = may attend), got dtype {got.dtype}; "
                                 "compare with >= or <= to get booleans, or use .astype(bool)")
        want = sliding_window_mask(n, window, sinks=sinks)
        if np.array_equal(got, want):
            continue
        for value, hint in _mask_variants(n, window, sinks):
            if value is not None and np.array_equal(got, value):
                return report(False, f"{case}: {hint}")
        i, j = np.argwhere(got != want)[0]
        return report(False, f"{case}: mask[{i}, {j}] should be {bool(want[i, j])}. Query i sees key j when "
                             f"j <= i and (i - j < window or j < sinks)")
    return report(True, "the StreamingLLM mask: a causal window of the last `window` tokens plus the first `sinks`")
