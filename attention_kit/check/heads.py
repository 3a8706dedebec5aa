"""Exercise checkers for notebook 08 (what trained heads do).

Every checker prints one line, ``✓ ...`` or ``✗ ...`` with a hint aimed at the usual mistake, and
returns True or False. The learner's exceptions are reported, never raised.

* ``prefix_matching(fn)``: ``fn(w, ids) -> float``, one head's prefix-matching score from its
  weights ``w`` (n, n) and the tokens ``ids`` (n,), averaged over the queries that have a key
  j < i with ``ids[j - 1] == ids[i]``; catches the earlier copy itself instead of the token after
  it (off by one), queries without such a key counted (also an immediate repeat "A A", whose
  token occurred before), the weights read by columns (keys) instead of rows (queries), keys at or
  after the query (not causal, or the query itself, j <= i), and the key ``i - 1`` for every query. A mistake is named only when it explains the answer on every case.
* ``failing_queries(answer)``: a prediction, the list of queries 14 .. 23 where the two-layer model
  fails on a prefix of 10 tokens followed by a repeated segment of 4 (where the previous-token head
  wrote nothing); catches the predicted tokens' positions instead of the queries, the earlier copy's
  position instead of the key after it, a second copy taken to help, only queries that work (such as
  the complement of the answer), and non-integer answers.
* ``sink_window_mask(fn)``: ``fn(n, window, sinks) -> bool (n, n)``, the sliding-window mask that
  keeps the first ``sinks`` tokens; catches sinks that see the future, a window one too wide or too
  narrow, the sinks forgotten, a window that replaces the causal mask, and the polarity reversed.
"""

from __future__ import annotations

import functools

import numpy as np

from ..heads.diagnostics import prefix_match_mask
from ..scale.sliding_window import sliding_window_mask
from . import close, not_attempted, not_done, prediction, quietly, report, report_failure, try_call
from .plain import plain_numpy

__all__ = ["quietly", "prefix_matching", "failing_queries", "sink_window_mask"]

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
    """(w, ids) pairs: random causal weights on sequences with repeats (one with a token seen twice, one with
    immediate repeats "5 5", where the query's own token occurred before but no key j < i follows a copy)."""
    rng = np.random.default_rng(8)
    cases = []
    for ids in ([3, 1, 4, 5, 3, 1, 4, 5, 3, 1], [2, 7, 2, 7, 2, 9, 0], [6, 0, 1, 6, 1, 0, 6, 0, 1],
                [5, 5, 2, 5, 2, 7, 5]):
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
    anywhere = np.zeros((n, n), dtype=bool)  # no causal limit: key j may lie at or after query i
    anywhere[:, 1:] = ids[:, None] == ids[None, :-1]
    with_self = anywhere & np.tri(n, dtype=bool)  # j <= i: the query itself counted as a key
    seen = copy.any(axis=1)  # queries whose token occurred before (with or without a key after a copy)
    right = _score(w, match, has)
    wrong = [
        (_score(w, copy, copy.any(axis=1)), "you summed the weight on the earlier copy of the token itself; an "
         "induction head looks one step further, at the token that FOLLOWED the earlier copy (key j with "
         "ids[j - 1] == ids[i])"),
        (_score(w, anywhere, anywhere.any(axis=1)), "your match also counts keys at or after the query (j >= i): "
         "then the query's own position counts as an \"earlier\" copy, and almost every query seems to have "
         "one. Keep only the keys before the query, j < i, both in the sum and in choosing the queries"),
        (_score(w, with_self, with_self.any(axis=1)), "your match counts the query itself as a key (j <= i): "
         "after an immediate repeat \"A A\", key i follows a copy of token i. Keep only the keys before the "
         "query, j < i"),
        (_score(w, match, np.ones(n, dtype=bool)), "you averaged over every query; average only over the queries "
         "that have such a key (the others have nothing to match, and would pull the score down)"),
        (_score(w, match, np.arange(n) > 0), "you averaged over queries 1..n-1; average only over the queries that "
         "have a key j < i with ids[j - 1] == ids[i]"),
        (_score(w, match, seen), "you averaged over every query whose token occurred before; average only over "
         "those that have a key j < i with ids[j - 1] == ids[i]. In an immediate repeat \"A A\" the second A has "
         "an earlier copy, but no earlier key follows it: it has nothing to match"),
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
    """Check ``fn(w, ids) -> float``: one head's prefix-matching score (w (n, n), ids (n,)).

    The answer is compared on every case first; a usual mistake is named only when it explains the
    answer on every case (two mistakes can agree on one sequence).
    """
    if not_done(fn):
        return not_attempted("no answer yet: define my_prefix_matching(w, ids) and pass it in")
    cases, got = _prefix_cases(), []
    for w, ids in cases:
        out, err = _call(fn, w.copy(), ids.copy())
        if err:
            return report_failure(err if err == STUB else f"for ids = {ids.tolist()}: {err}", stub=STUB)
        try:
            got.append(float(np.asarray(out, dtype=float).reshape(())))
        except Exception:  # the learner's object: never raise
            return report(False, f"return one number (a float), got {type(out).__name__} "
                                 f"{getattr(out, 'shape', '')}; average over the queries")
    variants = [_prefix_variants(w, ids) for w, ids in cases]
    bad = [k for k, (right, _) in enumerate(variants) if not close(got[k], right)]
    if not bad:
        return report(True, "the prefix-matching score: for each query with a key right after an earlier copy, the "
                            "weight on such keys, averaged over those queries")
    first = bad[0]
    ids = cases[first][1]
    for m, (_, hint) in enumerate(variants[first][1]):
        if all(close(got[k], variants[k][1][m][0]) for k in range(len(cases))):
            return report(False, f"for ids = {ids.tolist()}: {hint}")
    right = variants[first][0]
    return report(False, f"for ids = {ids.tolist()}: expected {right:.4f}, got {got[first]:.4f}. For each query i "
                         "that has such a key, add up w[i, j] over the keys j < i with ids[j - 1] == "
                         "ids[i]; then average those sums")


# ---------------------------------------------------------------- where the circuit fails

#: The exercise's sequences: a prefix of 10 distinct tokens, then a segment of 4 other tokens repeated.
PREFIX, SEGMENT = 10, 4
_QUERIES = range(PREFIX + SEGMENT, 24)  # 14 .. 23: the queries whose token occurred before


@functools.lru_cache(maxsize=1)
def _failing() -> frozenset:
    """The queries of the exercise's sequences that the shipped two-layer model gets right less than
    half the time, measured here on 512 draws (the student edition ships this file, so the answer
    is measured, not written down; tests/test_check_heads.py measures it on other draws too)."""
    from ..heads.model import run
    from ..heads.trained import load_trained

    params, _, _ = load_trained("induction")
    order = np.argsort(np.random.default_rng(5).random((512, 16)), axis=1)  # random distinct tokens
    seqs = np.concatenate([order[:, :PREFIX], order[:, PREFIX + np.arange(15) % SEGMENT]], axis=1)
    acc = (run(params, seqs[:, :24])[0].argmax(axis=-1) == seqs[:, 1:]).mean(axis=0)  # (24,)
    return frozenset(int(i) for i in _QUERIES if acc[i] < 0.5)


def _listed(queries) -> str:
    q = sorted(queries)
    return ", ".join(str(k) for k in q[:-1]) + f" and {q[-1]}" if len(q) > 1 else str(q[0])

_GRADED_FAILS = ("for each query from 14 to 23, list the keys right after the earlier copies of its token; "
                 "then ask where layer 0 head 0 writes \"my previous token was X\" (section 2's plot of its "
                 "weight on key i - 1). The induction head can only find a key that carries it")


def _whole_numbers(answer):
    """``answer`` as a list of ints, or the reason it is not one (bools, floats and strings are refused)."""
    if isinstance(answer, (str, bytes, dict)) or not hasattr(answer, "__iter__"):
        return None, f"give a list of query positions such as [14, 15], got {type(answer).__name__} {answer!r}"
    try:
        items = list(answer)
    except Exception:  # the learner's object: never raise
        return None, f"give a list of query positions such as [14, 15], got {type(answer).__name__}"
    odd = [k for k in items if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer))]
    if odd:
        return None, f"give the query positions as whole numbers (ints) such as [14, 15], got {odd[0]!r}"
    got = [int(k) for k in items]
    if len(set(got)) != len(got):
        return None, f"list each query position once, got {sorted(got)}"
    return got, None


@prediction
def failing_queries(answer) -> bool:
    """Check the prediction ``answer``: the queries 14 .. 23 at which the two-layer model gets the next token
    right less than half the time, on a prefix of 10 distinct tokens followed by a segment of 4 repeated."""
    if not_done(answer):
        return not_attempted("no answer yet: set my_failing_queries to a list of query positions from 14 to 23 "
                             "(possibly empty), then run the cell again")
    got, err = _whole_numbers(answer)
    if err:
        return report(False, err)
    outside = sorted(k for k in got if k not in _QUERIES)
    if outside:
        return report(False, f"the question is about queries 14 to 23, whose token occurred before; got {outside}. "
                             "Queries 0 to 13 have no earlier copy: no induction head can answer them")
    have = set(got)
    _FAILING = set(_failing())
    if have == _FAILING:
        return report(True, f"queries {_listed(_FAILING)}: every earlier copy of their token is followed by a "
                            "key above 12, where layer 0 writes no \"my previous token was X\", so the induction "
                            "head cannot find it. The model gets them right less than 0.4 of the time, the "
                            "others more than 0.9")
    if have == {k + 1 for k in _FAILING}:
        return report(False, "those are the positions of the tokens to be predicted: query i predicts token "
                             "i + 1. Give the queries", graded="query i predicts token i + 1: give the queries, "
                                                               "not the tokens they predict")
    if have == {k for k in _FAILING if k % SEGMENT == (PREFIX + 3) % SEGMENT}:  # the copy itself lies above 12
        return report(False, "you looked at where the earlier copy itself lies; the induction head reads the key "
                             "right AFTER it, and that key is the one that must carry \"my previous token was X\"",
                      graded="the induction head attends to the key right after the earlier copy, not the copy "
                             "itself. " + _GRADED_FAILS)
    if not have:
        return report(False, "some queries do fail: the previous-token head writes \"my previous token was X\" "
                             "only at keys 1 to 12, and here some tokens' earlier copies are followed only by keys "
                             "above 12", graded=_GRADED_FAILS)
    if have == set(_QUERIES):
        return report(False, "most queries still work: queries 14, 15, 18, 19, 22 and 23 have an earlier copy "
                             "followed by a key of at most 12, which carries what the previous-token head wrote",
                      graded="not every query fails. " + _GRADED_FAILS)
    if not have & _FAILING:  # only queries that work, e.g. the complement of the answer
        works = sorted(have)
        return report(False, f"query {works[0]} works: its token has an earlier copy followed by a key of at most "
                             "12, where the previous-token head wrote \"my previous token was X\". "
                             + ("You listed the queries that succeed; the question asks for those that fail"
                                if have == set(_QUERIES) - _FAILING else "None of your queries fails"),
                      graded="none of your queries fails: each has a copy the induction head can find. "
                             + _GRADED_FAILS)
    first_repeat = {k for k in _FAILING if k < PREFIX + 2 * SEGMENT}
    if first_repeat and have == first_repeat:
        later = _FAILING - first_repeat
        return report(False, f"queries {_listed(later)} fail too: their tokens occurred twice before, and both "
                             "copies are followed by keys above 12",
                      graded="a second earlier copy helps only if the key after it is one the previous-token head "
                             "wrote to. " + _GRADED_FAILS)
    if have >= _FAILING:
        extra = sorted(have - _FAILING)
        return report(False, f"query {extra[0]} works: its token has an earlier copy followed by a key of at most "
                             "12, where the previous-token head wrote \"my previous token was X\"",
                      graded="one of your queries has a copy the induction head can find. " + _GRADED_FAILS)
    missing = sorted(_FAILING - have)
    return report(False, f"query {missing[0]} fails too: every earlier copy of its token is followed by a key "
                         "above 12, where layer 0 writes no previous token", graded=_GRADED_FAILS)


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
