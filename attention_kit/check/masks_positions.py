"""Exercise checkers for notebook 04 (masks and positions).

Every checker prints one line, ``✓ ...`` or ``✗ ...`` with a hint aimed at the usual mistake, and
returns True or False. The learner's exceptions are reported, never raised. Masks are boolean and
**True means "may attend"**.

* ``causal_mask(fn)``: ``fn(n) -> (n, n)`` numpy array of dtype bool, True where key j <= query i;
  catches the opposite polarity, the upper triangle, the missing diagonal, a 0/1 mask of another
  dtype and a list.
* ``masked_softmax(fn)``: ``fn(S, mask) -> (n_q, n_k)`` weights; masked entries exactly 0, a row with
  nothing allowed all zeros (never NaN), no overflow for scores of +-1000, ``S`` and ``mask`` left
  unchanged; catches masking with 0 instead of -inf, zeroing without renormalising, the reversed
  polarity, the wrong axis and a list.
* ``positions(fn)``: ``fn(pos, d) -> (len(pos), d)``, the sinusoidal encoding of Vaswani et al. (2017)
  at the given positions (not always 0 .. n-1: a cache continues at the next position); catches
  sin/cos swapped, sin (or cos) in both columns of a pair, a wrong exponent (i/d, j/d, 2j/d), the
  halves concatenated, the positions ignored (counted from 0 or 1), and a list.
* ``future_unchanged(answer)``: which query rows change when token 3 of 6 is edited under a causal mask.
* ``quietly()``: a context manager (from ``attention_kit.check``) that silences the checkers;
  the worked solutions use it so that their cells store no output.
"""

from __future__ import annotations

import numpy as np

from .. import causal_mask as _causal_mask
from .. import sinusoidal_positions, softmax
from . import (
    as_floats,
    close,
    not_attempted,
    not_done,
    prediction,
    quietly,
    report,
    shape_of,
    shape_text,
    try_call,
)
from .general import array_answer
from .plain import plain_numpy

__all__ = ["quietly", "causal_mask", "masked_softmax", "positions", "future_unchanged"]

STUB = "no answer yet: replace the `...` after `return` with your code, then run the cell again"


def _array(x) -> np.ndarray | None:
    try:
        return np.asarray(x)
    except Exception:  # the learner's object: never raise
        return None


# ---------------------------------------------------------------- causal mask

# n = 4 and 6 first: at n = 1 several wrong masks coincide ([[False]]), so their hints would blur.
_MASK_SIZES = (4, 6, 1)


def _mask_hint(got, n: int) -> str:
    ones = np.ones((n, n), dtype=bool)
    wrong = [
        (np.triu(ones, k=1),
         "True must mean \"may attend\"; this is the mask of the future (PyTorch's nn.MultiheadAttention "
         "polarity, True = blocked): every entry is the opposite of what it should be"),
        (np.triu(ones),
         "this is the upper triangle (the future): query i may look at keys 0..i, the past, which lies on "
         "and below the diagonal"),
        (np.tril(ones, k=-1),
         "each token may attend to itself: the diagonal belongs to the allowed part"),
    ]
    for w, hint in wrong:
        if close(got, w):
            return hint
    if shape_of(got) != (n, n):
        return f"expected shape (n, n) = {(n, n)}, got {shape_text(got)}"
    return "the shape is right but the pattern is not: mask[i, j] must be True exactly when j <= i"


@plain_numpy()
def causal_mask(fn) -> bool:
    """Check ``fn(n) -> (n, n)`` bool: True where key ``j <= i`` (query i may attend to keys 0..i)."""
    if not_done(fn):
        return not_attempted("no answer yet: write my_causal_mask(n) and pass it in")
    for n in _MASK_SIZES:
        got, err = try_call(fn, n)
        if got is Ellipsis:
            return not_attempted(STUB)
        if err:
            return report(False, err)
        want = _causal_mask(n)  # (n, n) bool
        if not close(got, want):
            return report(False, f"n = {n}: " + _mask_hint(got, n))
        if (msg := array_answer(got)):   # one rule: a list of bools is not a boolean array either
            return report(False, msg)
        arr = _array(got)
        if arr is None or arr.dtype != bool:
            got_kind = f"dtype {arr.dtype}" if arr is not None else type(got).__name__
            return report(False, f"right pattern, but the task asks for a boolean array (dtype bool); yours has "
                                 f"{got_kind}. ~mask and np.where(mask, ...) need True/False, not 0/1")
    return report(True, "the causal mask is right: query i may attend to keys 0..i, the lower triangle with its diagonal")


# ---------------------------------------------------------------- masked softmax

def _softmax_cases():
    """(name, S (n_q, n_k), mask (n_q, n_k) bool); n_q != n_k so a transposed answer cannot fit."""
    rng = np.random.default_rng(4)
    S1 = rng.normal(scale=2.0, size=(4, 5))
    m1 = _causal_mask(4, 5)  # row i allows keys 0..i; key 4 is never allowed
    S2 = rng.normal(scale=2.0, size=(3, 4))
    m2 = np.array([[True, False, True, True],
                   [False, False, False, False],  # nothing allowed: the answer is a row of zeros
                   [False, True, True, False]])
    # Scores of +-1000: exp overflows (exp(710) is already inf) or underflows to 0 unless the row's
    # maximum over the allowed entries is subtracted first. Row 0's largest score (1000) is masked,
    # so subtracting the maximum of the whole row is not enough either.
    S3 = np.array([[1000.0, -1000.0, -999.0, -998.0],
                   [998.0, 1000.0, 997.0, -1000.0],
                   [-1000.0, -1001.0, 1000.0, -999.5]])
    m3 = np.array([[False, True, True, True],
                   [True, True, True, False],
                   [True, True, False, True]])
    return [("a 4x5 causal mask", S1, m1), ("a row with nothing allowed", S2, m2),
            ("scores of +-1000", S3, m3)]


def _softmax_hint(got, S, mask) -> str:
    """Name the mistake behind a wrong masked softmax (``got`` may hold NaN or inf)."""
    overflow = ("your weights are NaN, inf or all 0 where keys are allowed: exp overflows (or underflows). "
                "Subtract each row's maximum (over the allowed entries) before exp")
    g = as_floats(got)
    live = mask.any(axis=-1)  # rows with at least one allowed key
    if g is not None and g.shape == S.shape and np.abs(S).max() > 700:  # exp(710) = inf in float64
        with np.errstate(all="ignore"):
            if np.any(~np.isfinite(g[live])) or np.any(np.all(g[live] == 0, axis=-1)):
                return overflow
    with np.errstate(all="ignore"):
        wrong = [
            (softmax(np.where(mask, S, 0.0)),
             "a masked score of 0 still gets weight exp(0); a blocked score must be minus infinity, "
             "so that its exponential is exactly 0"),
            (softmax(S) * mask,
             "rows no longer sum to 1: renormalise after zeroing, or mask the scores before the softmax"),
            (softmax(S, mask=~mask),
             "the polarity is reversed: True means \"may attend\", so keep the scores where mask is True "
             "and block them where it is False"),
            (softmax(S), "you ignored the mask: entries where mask is False must get weight exactly 0"),
        ]
    for w, hint in wrong:
        if close(got, w):
            return hint
    # Softmax down the columns: compare only the columns with an allowed entry, since an unguarded
    # version gives 0/0 = NaN in a column that is all False.
    cols = mask.any(axis=0)
    if g is not None and g.shape == S.shape and close(g[:, cols], softmax(S, axis=0, mask=mask)[:, cols]):
        return "softmax over the wrong axis: each query's row must sum to 1, so normalise over the keys, the last axis"
    shape = shape_of(got)
    if shape != S.shape:
        return f"expected shape (n_q, n_k) = {S.shape}, the shape of S, got {shape_text(got)}"
    if g is None:
        return f"expected an array of numbers, got {type(got).__name__}"
    want = softmax(S, mask=mask)
    with np.errstate(all="ignore"):
        bad = ~np.isfinite(g)  # (n_q, n_k)
        row_ok = np.all(np.isclose(g, want, atol=1e-6, rtol=1e-6), axis=-1)  # (n_q,)
    if bad.any() and not bad[live].any() and row_ok[live].all():
        return ("the all-False row gives 0/0 = NaN: its row sum is 0. Such a row attends to nothing, so its "
                "weights must be zeros: guard the division where the sum is 0")
    if not live.all() and row_ok[live].all() and np.allclose(g[~live], 1 / S.shape[1]):
        return ("a row with nothing allowed must give all zeros (it attends to nothing), not uniform weights: "
                "a large negative score like -1e9 leaves that row's scores all equal. Return zeros for it")
    if bad.any():
        return "your weights contain NaN or inf; every weight must be a finite number between 0 and 1"
    if np.any(g[~mask] != 0):
        return "entries where mask is False must get weight exactly 0"
    if not np.allclose(g[live].sum(axis=-1), 1, atol=1e-6):
        return "each row with at least one allowed key must sum to 1"
    return "the shape is right but the numbers are not; compare with a plain softmax over each row's allowed entries"


@plain_numpy()
def masked_softmax(fn) -> bool:
    """Check ``fn(S (n_q, n_k), mask (n_q, n_k) bool) -> weights (n_q, n_k)``."""
    if not_done(fn):
        return not_attempted("no answer yet: write my_masked_softmax(S, mask) and pass it in")
    for case, S, mask in _softmax_cases():
        S_in, mask_in = S.copy(), mask.copy()
        with np.errstate(all="ignore"):
            got, err = try_call(fn, S_in, mask_in)
        if got is Ellipsis:
            return not_attempted(STUB)
        if err:
            return report(False, err)
        if not (np.array_equal(S_in, S) and np.array_equal(mask_in, mask)):
            which = "S" if not np.array_equal(S_in, S) else "mask"
            return report(False, f"{case}: your function changed its input {which} in place (writing into the "
                                 "caller's array, say setting blocked scores there); compute into a new array instead")
        if (msg := array_answer(got)):
            return report(False, f"{case}: {msg}")
        if not close(got, softmax(S, mask=mask)):
            return report(False, f"{case}: " + _softmax_hint(got, S, mask))
        blocked = as_floats(got)[~mask]  # close() passed, so got converts to floats of S's shape
        if np.any(blocked != 0):
            return report(False, f"{case}: almost right, but a blocked key must get weight exactly 0, and yours get "
                                 f"up to {np.abs(blocked).max():.1e}: a finite score like -100 still leaves exp(-100) > 0. "
                                 "A blocked score must be minus infinity (or the entry left out)")
    return report(True, "the masked softmax is right: blocked keys get exactly 0, each row sums to 1, "
                        "an all-False row gives zeros, and +-1000 does not overflow")


# ---------------------------------------------------------------- sinusoidal positions

# (positions, d): len(pos) differs from d, so a transposed answer cannot fit; the second case continues at
# position 5 (a cache that appends tokens 5, 6, 7), the third has gaps and slow pairs whose angles are small.
_POSITION_CASES = ((np.arange(6), 8), (np.arange(5, 8), 4), (np.array([0, 2, 9, 4, 30, 1, 7, 3, 11, 5]), 16))


def _reference(pos: np.ndarray, d: int) -> np.ndarray:
    """Rows of the encoding at the integer positions ``pos`` (n,), shape (n, d)."""
    return sinusoidal_positions(int(pos.max()) + 1, d)[pos]


def _interleave(sin_part, cos_part) -> np.ndarray:
    """Columns ``[s0, c0, s1, c1, ...]`` from ``sin_part`` and ``cos_part`` (n, d/2) each."""
    n, half = sin_part.shape
    P = np.empty((n, 2 * half))
    P[:, 0::2], P[:, 1::2] = sin_part, cos_part
    return P


def _by_column(p: np.ndarray, d: int, exponent) -> np.ndarray:
    """sin in even columns, cos in odd ones, column j at the angle pos / 10000^exponent(j)."""
    pos = p.astype(float)[:, None]  # (n, 1)
    j = np.arange(d)
    angle = pos / 10000.0 ** exponent(j)[None, :]  # (n, d)
    return np.where(j % 2 == 0, np.sin(angle), np.cos(angle))


def _positions_hint(got, p: np.ndarray, d: int) -> str:
    n = len(p)
    pos = p.astype(float)[:, None]  # (n, 1)
    i = np.arange(d // 2)[None, :]  # pair index, (1, d/2)
    angle = pos / 10000.0 ** (2 * i / d)  # (n, d/2)
    with np.errstate(all="ignore"):
        wrong = [
            (_interleave(np.cos(angle), np.sin(angle)),
             "sin and cos are swapped: column 2i is sin(pos / 10000^(2i/d)) and column 2i+1 is the cos"),
            (_interleave(np.sin(angle), np.sin(angle)),
             "every column is a sin: the odd columns 2i+1 hold cos(pos / 10000^(2i/d)), the even ones the sin"),
            (_interleave(np.cos(angle), np.cos(angle)),
             "every column is a cos: the even columns 2i hold sin(pos / 10000^(2i/d)), the odd ones the cos"),
            (_interleave(np.sin(pos / 10000.0 ** (i / d)), np.cos(pos / 10000.0 ** (i / d))),
             "the exponent is 2i/d with i the pair index (0 .. d/2 - 1); you used i/d, so the slowest pair "
             "turns far too fast"),
            (_by_column(p, d, lambda j: j / d),
             "you used the column index j in the exponent, j/d, so the sin and cos of a pair turn at different "
             "speeds; both columns of pair i use 10000^(2i/d)"),
            (_by_column(p, d, lambda j: 2 * j / d),
             "you used the column index j as i in 2i/d; i is the pair index, so columns 2i and 2i+1 "
             "share the exponent 2i/d"),
            (np.concatenate([np.sin(angle), np.cos(angle)], axis=1),
             "these are the halves [sin of every pair, cos of every pair] side by side; some libraries do that, "
             "but the paper interleaves: column 2i is sin, 2i+1 is cos"),
            (sinusoidal_positions(n, d),
             f"you encoded positions 0 .. {n - 1}, not the positions you were given ({p.tolist()}): "
             "row k is the encoding of position pos[k]"),
            (sinusoidal_positions(n, d, start=1),
             f"you encoded positions 1 .. {n}, not the positions you were given ({p.tolist()}): "
             "row k is the encoding of position pos[k]"),
            (_interleave(np.sin(pos * 10000.0 ** (2 * i / d)), np.cos(pos * 10000.0 ** (2 * i / d))),
             "divide pos by 10000^(2i/d), do not multiply: the frequencies must shrink from pair to pair"),
            (_reference(p, d).T, "rows are positions: return shape (len(pos), d), one row per token"),
        ]
    for w, hint in wrong:
        if close(got, w):
            return hint
    if shape_of(got) != (n, d):
        return f"expected shape (len(pos), d) = {(n, d)}, one row per position, got {shape_text(got)}"
    return ("the shape is right but the numbers are not: P[k, 2i] = sin(pos[k] / 10000^(2i/d)), "
            "P[k, 2i+1] = cos(pos[k] / 10000^(2i/d))")


@plain_numpy()
def positions(fn) -> bool:
    """Check ``fn(pos, d) -> (len(pos), d)``: the sinusoidal positional encoding of the integer
    positions ``pos`` (a 1-D array), one row per position."""
    if not_done(fn):
        return not_attempted("no answer yet: write my_positions(pos, d) and pass it in")
    for p, d in _POSITION_CASES:
        got, err = try_call(fn, p.copy(), d)
        if got is Ellipsis:
            return not_attempted(STUB)
        if err:
            hint = ""
            if "range" in err or "integer" in err or "interpreted" in err:
                hint = (f". pos is an array of positions, {p.tolist()}, not a count: each row of the result "
                        "belongs to one entry of pos")
            return report(False, err + hint)
        if (msg := array_answer(got)):
            return report(False, msg)
        if not close(got, _reference(p, d)):
            return report(False, f"pos = {p.tolist()}, d = {d}: " + _positions_hint(got, p, d))
    return report(True, "the positional encoding is right: pair i is (sin, cos) of pos / 10000^(2i/d), "
                        "one frequency per pair, from fast to slow, at any positions you give it")


# ---------------------------------------------------------------- which rows change

_N_TOKENS, _EDITED = 6, 3  # token 3 of a 6-token sequence is edited; a causal mask is applied


# The hint make grade gives for a wrong set of rows: the idea, not the rows.
_GRADED_ROWS = ("a row can change only if the edited token is among its keys: under a causal mask "
                "query i sees keys 0..i, its own position included. Go through the rows one by one")


@prediction
def future_unchanged(answer) -> bool:
    """Check ``answer``: the query indices whose output rows change when token 3 of 6 is edited (causal mask)."""
    if not_done(answer):
        return not_attempted("no answer yet: replace the `...` after `answer =` with your list of query "
                             "indices, then run the cell again")
    items = None
    if not isinstance(answer, (str, bytes, dict)):
        try:
            items = list(answer)
        except Exception:  # not iterable (a single number, say): never raise
            items = None
    if items is None:
        return report(False, f"give a list of query indices such as [1, 2], got {type(answer).__name__} {answer!r}")
    if any(isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) for k in items):
        odd = next(k for k in items if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)))
        return report(False, f"give the query indices as whole numbers (ints) such as [1, 2], got {odd!r}")
    got = [int(k) for k in items]
    if len(set(got)) != len(got):
        return report(False, f"list each query index once, got {got}")
    out = [k for k in got if not 0 <= k < _N_TOKENS]
    if out:
        return report(False, f"the queries of a {_N_TOKENS}-token sequence are 0 .. {_N_TOKENS - 1}, got {out}")
    have = set(got)
    want = set(range(_EDITED, _N_TOKENS))  # query i sees token 3 exactly when 3 <= i
    if have == want:
        return report(True, "rows 3, 4 and 5 change: token 3 is a key (and value) only for queries i >= 3, "
                            "and row 3 is its own query; rows 0..2 cannot see it and stay exactly the same")
    if have == set(range(_N_TOKENS)):
        return report(False, "rows 0..2 never see token 3: under a causal mask query i only sees keys 0..i",
                      graded="not every row can see token 3: under a causal mask query i sees keys "
                             "0..i only. For each row, ask whether token 3 is among its keys")
    if have and max(have) <= _EDITED and have & set(range(_EDITED)):
        early = sorted(have & set(range(_EDITED)))
        return report(False, f"{'row' if len(early) == 1 else 'rows'} {', '.join(map(str, early))} cannot see token 3 "
                             "(a causal mask lets query i see keys 0..i only), while the rows after 3 can: "
                             "every query i >= 3 sees token 3", graded=_GRADED_ROWS)
    if have == want - {_EDITED}:
        return report(False, "row 3 changes too: token 3 is its own query, and it attends to itself",
                      graded=_GRADED_ROWS)
    if have == {_EDITED}:
        return report(False, "queries after 3 also attend to token 3: query i sees keys 0..i, so 4 and 5 see it",
                      graded=_GRADED_ROWS)
    if not have:
        return report(False, "something changes: at least row 3, the edited token's own query",
                      graded="something changes: the edited token is a key of at least one row")
    early = sorted(have & set(range(_EDITED)))
    if early:
        rows = f"row {early[0]} cannot" if len(early) == 1 else f"rows {', '.join(map(str, early))} cannot"
        return report(False, f"{rows} see token 3: query i sees keys 0..i only, so only queries i >= 3 change",
                      graded=_GRADED_ROWS)
    missing = sorted(want - have)
    rows = f"row {missing[0]}" if len(missing) == 1 else f"rows {', '.join(map(str, missing))}"
    return report(False, f"{rows} changes too: every query i >= 3 has token 3 among its keys 0..i",
                  graded=_GRADED_ROWS)
