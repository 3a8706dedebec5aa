"""The exercises of what trained heads do, declared once: for each exercise of
notebook 08, its statement and checker, and its grader's part (hidden cases, reference, comparison,
the samples its tests try); see ``declare.py``."""

from __future__ import annotations

import numpy as np

from ..heads.diagnostics import prefix_matching_score
from ..scale.sliding_window import sliding_window_mask
from . import heads
from .declare import Exercise, Grading, Hidden, bool_array_equal, float_close, grades
from .recorded import reference

EXERCISES = (
    Exercise("08.1", "prefix-matching score", ("my_prefix_matching",), heads.prefix_matching),
    Exercise("08.2", "where the circuit fails", ("my_failing_queries",), heads.failing_queries),
    Exercise("08.3", "a window that keeps the sinks", ("my_sink_window_mask",), heads.sink_window_mask),
)


# ---------------------------------------------------------------- 08.1 prefix-matching score


@reference
def prefix_cases(rng):
    """(w (n, n) causal weights, ids (n,)): a repeated random segment, with other tokens around; in
    the first, the segment's first token is doubled where it comes back ("A A"): the second A comes
    right after a copy of itself and still has a key right after the earlier A."""
    out = []
    for k in range(3):
        seg = rng.choice(20, size=int(rng.integers(3, 6)), replace=False)
        again = seg[: int(rng.integers(2, len(seg) + 1))]
        if k == 0:
            again = np.concatenate([seg[:1], again])
        ids = np.concatenate([seg, rng.integers(0, 20, size=int(rng.integers(0, 3))), again])
        n = len(ids)
        s = rng.normal(0.0, 1.5, (n, n))
        s[np.triu_indices(n, 1)] = -np.inf
        w = np.exp(s - s.max(axis=1, keepdims=True))
        out.append((w / w.sum(axis=1, keepdims=True), ids.astype(int)))
    return out


@reference
def prefix_ref(w, ids):
    return float(prefix_matching_score(w, ids)[0])


@grades("08.1")
def grading_prefix_matching():
    return Grading(
        task="`my_prefix_matching(w, ids)`, one head's prefix-matching score",
        catches='the earlier copy itself instead of the token after it (off by one); keys at or after the '
                'query counted (not causal), or the query itself (j <= i, caught on an immediate repeat "A '
                'A"); every query averaged, queries 1..n-1, or every query whose token occurred before, '
                'instead of those with a key right after an earlier copy; a query right after a copy of its own '
                'token ("A A") left out though it has such keys (a public and a hidden case have one); the '
                'weights read by column; the '
                "previous token's weight; a mean over (query, key) pairs; not one number (a mistake is named "
                'only when it explains the answer on every case); otherwise the expected number for the first '
                'wrong sequence and an invitation to work it by hand (no formula)',
        hidden=(Hidden(prefix_cases, prefix_ref, float_close),),
        wrong={0: "def f(w, ids):\n    m = ak.heads.diagnostics.prefix_match_mask(ids)[0]\n"
                  "    return float((w * m).sum(axis=1).mean())"},
        other_right={0: "def f(w, ids):\n    sums = []\n    for i in range(len(ids)):\n"
                        "        js = [j for j in range(1, i) if ids[j - 1] == ids[i]]\n"
                        "        if js:\n            sums.append(sum(w[i, j] for j in js))\n    return sum(sums) / len(sums)"},
    )


# ---------------------------------------------------------------- 08.2 where the circuit fails


@grades("08.2")
def guide_where_the_circuit_fails():
    return Grading(
        task='`my_failing_queries`, a prediction: the queries 14–23 where the two-layer model fails on a '
             'prefix of 10 tokens followed by a repeated segment of 4',
        catches="the predicted tokens' positions instead of the queries; the earlier copy's position instead "
                'of the key after it; a second copy taken to help; only queries that work (such as the '
                'complement of the answer); none or all; one query too many or too few; positions outside '
                '14–23; anything but a list of distinct ints',
    )


# ---------------------------------------------------------------- 08.3 a window that keeps the sinks


@reference
def sink_cases(rng):
    public = {(8, 3, 1), (10, 4, 2), (6, 2, 0), (5, 8, 1)}
    out: list[tuple] = []
    while len(out) < 3:  # the later two beyond a table of small masks (n up to 40)
        n = int(rng.integers(5, 14) if not out else rng.integers(14, 41))
        case = (n, int(rng.integers(2, n)), int(rng.integers(0 if out else 1, 4)))
        if case not in public and case not in out:
            out.append(case)
    return out


@reference
def sink_ref(n, window, sinks):
    return sliding_window_mask(n, window, sinks=sinks)


@grades("08.3")
def grading_sink_window_mask():
    return Grading(
        task='`my_sink_window_mask(n, window, sinks)`',
        catches='sinks visible to earlier queries (not causal); a window one too wide or too narrow; a window '
                'shrunk by the number of sinks (the sinks take no place in it); the sinks forgotten; True and '
                'False swapped; a window into the future; not boolean; a wrong shape; a list instead of a '
                'numpy array. Cases of several sizes, windows and numbers of sinks (0, 1, 2): a hard-coded '
                'size fails; anything else gets three questions about the pair (future? in the window? a '
                'sink?), never the condition',
        hidden=(Hidden(sink_cases, sink_ref, bool_array_equal),),
        wrong={0: "def f(n, window, sinks):\n    return ak.sliding_window_mask(n, window)"},
        other_right={0: "def f(n, window, sinks):\n    return np.array([[j <= i and (i - j < window or j < sinks)"
                        " for j in range(n)] for i in range(n)])"},
    )
