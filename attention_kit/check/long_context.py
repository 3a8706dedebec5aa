"""Exercise checkers for notebook 09 (positions for long texts).

Every checker prints one line, ``✓ ...`` or ``✗ ...`` with a hint aimed at the usual mistake, and
returns True or False. The learner's exceptions are reported, never raised.

* ``rope_vector(fn)``: ``fn(x, m) -> x_rotated``, RoPE for one vector ``x`` (d,) at position ``m``
  in plain numpy; catches one angle for every pair (theta not per pair), the rotation the wrong
  way (sign), the halves paired instead of neighbours (Llama's layout), the frequencies the wrong
  way round, and degrees for radians.
* ``rope_score(fn)``: ``fn(q, k, m, n) -> float``, the score of a query at ``m`` and a key at ``n``
  with ``my_rope``; catches only the query (or only the key) rotated, nothing rotated (or both
  at the same position, which cancels), and a forgotten 1 / sqrt(d).
* ``alibi_row(fn)``: ``fn(slope, i) -> row`` (i + 1,), ALiBi's biases of query ``i`` over keys
  ``0 .. i``; catches the wrong sign, the row reversed (the distance counted from the first key),
  and the slope forgotten.
* ``cache_keeps(answer)``: a prediction, the positions a cache with ``window=4, sinks=1`` holds
  after token 9; catches the sink forgotten, the sink counted in the window, and off-by-ones.
"""

from __future__ import annotations

import numpy as np

from ..long.alibi import alibi_bias
from ..long.rope import rope
from . import close, not_attempted, not_done, quietly, report, try_call
from .plain import plain_numpy

__all__ = ["quietly", "rope_vector", "rope_score", "alibi_row", "cache_keeps"]

STUB = "no answer yet: replace the `...` after `return` with your code, then run the cell again"


def _rot(x, angles):
    x = np.asarray(x, float)
    c, s = np.cos(angles), np.sin(angles)
    out = np.empty_like(x)
    out[0::2] = x[0::2] * c - x[1::2] * s
    out[1::2] = x[0::2] * s + x[1::2] * c
    return out


def _theta(d):
    return 10000.0 ** (-np.arange(0, d, 2) / d)


def _rope_mistakes(x, m):
    """Usual wrong versions of RoPE for one vector, with the hint each deserves."""
    d = len(x)
    th = _theta(d)
    return [
        (_rot(x, -m * th), "you rotated the wrong way: pair i becomes (x0 cos - x1 sin, x0 sin + x1 cos) "
                           "with the angle +m theta_i (a rotation by -m theta_i is its inverse)"),
        (_rot(x, m * np.ones_like(th)), "every pair turned by the same angle m: each pair has its own "
                                        "frequency, theta_i = 10000^(-2i/d), so the angle is m * theta_i"),
        (_rot(x, m * th[::-1]), "the frequencies are the wrong way round: pair 0 turns fastest "
                                "(theta_0 = 1) and the last pair slowest"),
        (_rot(x, np.deg2rad(m * th)), "the angles went in as degrees: np.cos and np.sin take radians"),
        (_halves(x, m), "you paired feature i with feature i + d/2 (the layout of Llama's code); here the "
                        "pairs are neighbours, (x[0], x[1]), (x[2], x[3]), ..."),
        (_rot(x, (m + 1) * th), "off by one position: the token at position m turns by m * theta_i "
                                "(position 0 is not rotated at all)"),
    ]


def _halves(x, m):
    d = len(x)
    th = _theta(d)
    a, b = x[: d // 2], x[d // 2:]
    c, s = np.cos(m * th), np.sin(m * th)
    return np.concatenate([a * c - b * s, a * s + b * c])


@plain_numpy()
def rope_vector(fn) -> bool:
    """Check ``fn(x, m) -> ndarray (d,)``: the vector ``x`` (d,) rotated by RoPE at position ``m``."""
    if not_done(fn):
        return not_attempted("no answer yet: define my_rope(x, m) and pass it in")
    rng = np.random.default_rng(9)
    for x, m in ((np.array([1.0, 0.0]), 1), (rng.normal(size=4), 3), (rng.normal(size=8), 7),
                 (rng.normal(size=16), 250)):
        out, err = try_call(fn, x.copy(), m)
        if out is Ellipsis:
            return not_attempted(STUB)
        if err:
            return report(False, f"for x of shape {x.shape} and m = {m}: {err}")
        want = rope(x[None], [m])[0]
        if close(out, want, atol=1e-9):
            continue
        if np.shape(out) != x.shape:
            return report(False, f"for x of shape {x.shape} your function returned shape {np.shape(out)}: "
                                 "give back one rotated vector of the same shape")
        for wrong, hint in _rope_mistakes(x, m):
            if close(out, wrong, atol=1e-9):
                return report(False, hint)
        if close(out, x):
            return report(False, f"nothing was rotated at m = {m}: turn pair i by the angle m * theta_i")
        return report(False, f"wrong numbers for m = {m}: pair i = (x[2i], x[2i+1]) becomes "
                             "(x0 cos a - x1 sin a, x0 sin a + x1 cos a) with a = m * 10000^(-2i/d)")
    return report(True, "each pair turns by m * theta_i, its own frequency: lengths are kept, and "
                        "only the difference of two positions will reach a score")


def rope_score(fn) -> bool:
    """Check ``fn(q, k, m, n) -> float``: the RoPE score of a query at ``m`` and a key at ``n``."""
    if not_done(fn):
        return not_attempted("no answer yet: define my_rope_score(q, k, m, n) and pass it in")
    rng = np.random.default_rng(10)
    for m, n in ((5, 2), (40, 33), (3, 9)):
        q, k = rng.normal(size=8), rng.normal(size=8)
        out, err = try_call(fn, q.copy(), k.copy(), m, n)
        if out is Ellipsis:
            return not_attempted(STUB)
        if err:
            return report(False, f"for m = {m}, n = {n}: {err}")
        rq, rk = rope(q[None], [m])[0], rope(k[None], [n])[0]
        want = rq @ rk / np.sqrt(8)
        if close(out, want, atol=1e-9):
            continue
        if np.size(out) != 1:
            return report(False, f"give one number (the score), not an array of shape {np.shape(out)}")
        if close(out, rq @ k / np.sqrt(8)) or close(out, q @ rk / np.sqrt(8)):
            return report(False, "only one of the two was rotated: rotate the query at m AND the key at n; "
                                 "the score then depends on m - n")
        if close(out, q @ k / np.sqrt(8)):
            return report(False, "the score is q . k / sqrt(d), as if nothing were rotated (or both by the same "
                                 "position, which cancels): rotate the query at m and the key at n")
        if close(out, rq @ rk):
            return report(False, "the 1 / sqrt(d) scale is missing (d = 8 here)")
        return report(False, "wrong score: rotate q at m and k at n, then their dot product over sqrt(d)")
    return report(True, "the score of a query at m and a key at n, and it depends on m - n only: "
                        "shift both positions and it stays")


@plain_numpy()
def alibi_row(fn) -> bool:
    """Check ``fn(slope, i) -> ndarray (i + 1,)``: ALiBi's biases of query ``i`` over keys ``0 .. i``."""
    if not_done(fn):
        return not_attempted("no answer yet: define my_alibi_row(slope, i) and pass it in")
    for slope, i in ((0.5, 3), (0.25, 0), (1.0, 6), (0.0625, 10)):
        out, err = try_call(fn, slope, i)
        if out is Ellipsis:
            return not_attempted(STUB)
        if err:
            return report(False, f"for slope {slope} and i = {i}: {err}")
        want = alibi_bias([slope], i + 1)[0, i]  # (i + 1,)
        if close(out, want):
            continue
        if np.shape(out) != want.shape:
            return report(False, f"for i = {i} give {i + 1} biases, one per key 0 .. {i} "
                                 f"(the causal mask hides the later ones); got shape {np.shape(out)}")
        j = np.arange(i + 1)
        if close(out, -want):
            return report(False, "the sign is wrong: ALiBi subtracts m * (i - j), a penalty that grows with distance")
        if close(out, want[::-1]):
            return report(False, "the row is reversed (the distance counted from the first key): key j = i, "
                                 "the query itself, gets 0 and the first key the largest penalty")
        if close(out, -(i - j).astype(float)) and slope != 1.0:
            return report(False, "the slope is missing: multiply the distance i - j by m")
        return report(False, f"wrong numbers: key j of query i gets -m * (i - j); for m = {slope}, i = {i}, "
                             "the last entry is 0")
    return report(True, "-m (i - j): the query's own key gets 0, each step back costs m more")


_KEEPS = [0, 6, 7, 8, 9]
_GRADED_KEEPS = ("a cache with window W and k sinks keeps the first k tokens for ever and, beside "
                 "them, the W most recent ones, the new token included")


def cache_keeps(answer) -> bool:
    """Check ``answer``: the positions a KVCache(window=4, sinks=1) holds after tokens 0 .. 9."""
    if not_done(answer):
        return not_attempted("no answer yet: replace the `...` after `answer =` with a list of positions, "
                             "then run the cell again")
    try:
        got = sorted(int(a) for a in answer) if not isinstance(answer, (str, bytes, dict)) else None
    except (TypeError, ValueError):
        got = None
    if got is None:
        return report(False, f"give a list of whole numbers, the positions the cache holds; got {answer!r}")
    if got == _KEEPS:
        return report(True, "the sink (position 0) and the last four, 6 to 9: five keys, however long the text")
    if got == [6, 7, 8, 9]:
        return report(False, "the sink is missing: sinks=1 keeps position 0 for ever",
                      graded="the sink is missing. " + _GRADED_KEEPS)
    if got == [0, 7, 8, 9]:
        return report(False, "the sink does not take a place of the window: it is kept beside the last four",
                      graded="the sink is kept beside the window, not inside it. " + _GRADED_KEEPS)
    if got in ([0, 5, 6, 7, 8], [0, 5, 6, 7, 8, 9], [0, 6, 7, 8]):
        return report(False, "off by one: after token 9 the window holds 9 itself and the three before it",
                      graded="off by one: the newest token is in the window. " + _GRADED_KEEPS)
    return report(False, "which tokens stay? the first one (the sink) and the window's last four",
                  graded=_GRADED_KEEPS)
