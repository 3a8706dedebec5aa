"""Exercise checkers for notebook 04 (masks and positions).

Every checker prints one line, ``✓ ...`` or ``✗ ...`` with a hint aimed at the usual mistake, and
returns True or False. The learner's exceptions are reported, never raised. Masks are boolean and
**True means "may attend"**.

* ``causal_mask(fn)``: ``fn(n) -> (n, n)`` numpy array of dtype bool, True where query i may attend
  to key j.
* ``masked_softmax(fn)``: ``fn(S, mask) -> (n_q, n_k)`` weights; masked entries exactly 0, a row with
  nothing allowed all zeros (never NaN), no overflow for scores of +-1000, ``S`` and ``mask`` left
  unchanged.
* ``positions(fn)``: ``fn(pos, d) -> (len(pos), d)``, the sinusoidal encoding of Vaswani et al. (2017)
  at the given positions (not always 0 .. n-1: a cache continues at the next position).
* ``future_unchanged(answer)``: which query rows change when token 3 of 6 is edited under a causal mask.
* ``quietly()``: a context manager (from ``attention_kit.check``) that silences the checkers.

What a checker compares with (its cases, their right answers, the usual mistakes' outputs) comes
from ``@recorded`` tables; the course repository's teaching guide lists the mistakes each hint names.
"""

from __future__ import annotations

import numpy as np

from ..i18n import N_, _
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
from .recorded import recorded, reference

__all__ = ["quietly", "causal_mask", "masked_softmax", "positions", "future_unchanged"]

STUB = N_("no answer yet: replace the `...` after `return` with your code, then run the cell again")


# ---------------------------------------------------------------- causal mask

# n = 4 and 6 first: at n = 1 several wrong masks coincide ([[False]]), so their hints would blur.
_MASK_SIZES = (4, 6, 1)


@reference
def _causal(n: int, n_k: int | None = None) -> np.ndarray:
    from .. import causal_mask as ak_causal_mask
    return ak_causal_mask(n, n_k)


@recorded
def _mask_table() -> list[dict]:
    """Per size n: the mask and the usual wrong masks."""
    out = []
    for n in _MASK_SIZES:
        want = _causal(n)  # (n, n) bool
        wrong = [
            (~want, N_("True must mean \"may attend\"; this is the mask of the future (PyTorch's nn.MultiheadAttention "
                       "polarity, True = blocked): every entry is the opposite of what it should be")),
            (~want | np.eye(n, dtype=bool),
             N_("this is the future: query i may look at itself and at the keys before it, the past, not after it")),
            (want & ~np.eye(n, dtype=bool),
             N_("each token may attend to itself: the diagonal belongs to the allowed part")),
        ] + [(np.where(want, 0.0, blocked), N_(  # an additive mask: the pattern is right, the encoding is not
            "right pattern, but written as an additive mask (0 where a key is allowed, a large negative number where "
            "it is blocked): the task asks for a boolean array (dtype bool), True where query i may attend; the "
            "masked softmax turns it into scores later")) for blocked in (-np.inf, -1e9)]
        out.append({"n": n, "want": want, "wrong": wrong})
    return out


@plain_numpy()
def causal_mask(fn) -> bool:
    """Check ``fn(n) -> (n, n)`` bool: True where query i may attend to key j (itself and the past)."""
    if not_done(fn):
        return not_attempted(_("no answer yet: write my_causal_mask(n) and pass it in"))
    for case in _mask_table():
        n, want = case["n"], case["want"]
        got, err = try_call(fn, n)
        if got is Ellipsis:
            return not_attempted(_(STUB))
        if err:
            return report(False, err)
        if not close(got, want):
            hint = next((_(h) for w, h in case["wrong"] if close(got, w)), None)
            if hint is None and shape_of(got) != (n, n):
                hint = _("expected shape (n, n) = {want}, got {got}").format(want=(n, n), got=shape_text(got))
            return report(False, _("n = {n}: {hint}").format(n=n, hint=hint or _(
                "the shape is right but the pattern is not: query i may attend to itself and to every key before it, "
                "and to nothing after")))
        if (msg := array_answer(got)):   # one rule: a list of bools is not a boolean array either
            return report(False, msg)
        arr = np.asarray(got)  # close() passed: got converts
        if arr.dtype != bool:
            return report(False, _("right pattern, but the task asks for a boolean array (dtype bool); yours has "
                                   "dtype {dtype}. ~mask and np.where(mask, ...) need True/False, not 0/1").format(dtype=arr.dtype))
    return report(True, _("the causal mask is right: query i may attend to itself and to every key before it"))


# ---------------------------------------------------------------- masked softmax

@reference
def _masked(S: np.ndarray, mask: np.ndarray | None = None, axis: int = -1) -> np.ndarray:
    from .. import softmax
    return softmax(S, axis=axis, mask=mask)


_ZERO_SCORE = N_("a blocked score of 0 still counts: exp(0) = 1 gives that key a weight. A blocked key must get "
                 "no weight at all, whatever number stands in its place")


@recorded
def _softmax_table() -> list[dict]:
    """(case, S (n_q, n_k), mask (n_q, n_k) bool, the weights, the usual mistakes' weights); n_q != n_k,
    so a transposed answer cannot fit."""
    rng = np.random.default_rng(4)
    S1 = rng.normal(scale=2.0, size=(4, 5))
    m1 = _causal(4, 5)  # row i allows keys 0..i; key 4 is never allowed
    S2 = rng.normal(scale=2.0, size=(3, 4))
    m2 = np.array([[True, False, True, True],
                   [False, False, False, False],  # nothing allowed: the answer is a row of zeros
                   [False, True, True, False]])
    # Scores of +-1000: exp overflows (exp(710) is already inf) or underflows to 0 unless the row's
    # maximum over the allowed entries is subtracted first. Row 0's largest score (1000) is masked,
    # so subtracting the maximum of the whole row is not enough either; row 1's first, minimum, mean
    # or median score overflows too.
    S3 = np.array([[1000.0, -1000.0, -999.0, -998.0],
                   [-1000.0, 1000.0, -999.0, -998.0],
                   [-1000.0, -1001.0, 1000.0, -999.5]])
    m3 = np.array([[False, True, True, True],
                   [True, True, True, True],
                   [True, True, False, True]])
    out = []
    for case, S, mask in ((N_("a 4x5 causal mask"), S1, m1), (N_("a row with nothing allowed"), S2, m2),
                          (N_("scores of +-1000"), S3, m3)):
        with np.errstate(all="ignore"):
            wrong = [
                (_masked(np.where(mask, S, 0.0)), _ZERO_SCORE),
                (_masked(S) * mask,
                 N_("rows no longer sum to 1: zeroing the blocked weights after the softmax leaves the allowed "
                    "ones sharing less than 1")),
                (_masked(S, ~mask),
                 N_("the polarity is reversed: True means \"may attend\", so the keys where mask is True take part "
                    "and the others are blocked")),
                (_masked(S), N_("you ignored the mask: entries where mask is False must get weight exactly 0")),
            ]
        out.append({"case": case, "S": S, "mask": mask, "want": _masked(S, mask), "wrong": wrong,
                    "by_column": _masked(S, mask, axis=0)})
    return out


def _softmax_hint(got, t: dict) -> str:
    """Name the mistake behind a wrong masked softmax (``got`` may hold NaN or inf)."""
    S, mask, want = t["S"], t["mask"], t["want"]
    overflow = _("your weights are NaN, inf or all 0 where keys are allowed: exp overflows (or underflows) for "
                 "scores of +-1000. A row's softmax does not change when the same number is subtracted from all "
                 "its scores: choose that number so that no exp overflows, among the keys the row may see")
    g = as_floats(got)
    live = mask.any(axis=-1)  # rows with at least one allowed key
    if g is not None and g.shape == S.shape and np.abs(S).max() > 700:  # exp(710) = inf in float64
        with np.errstate(all="ignore"):
            if np.any(~np.isfinite(g[live])) or np.any(np.all(g[live] == 0, axis=-1)):
                return overflow
    for w, hint in t["wrong"]:
        if close(got, w):
            return _(hint)
    # Softmax down the columns: compare only the columns with an allowed entry, since an unguarded
    # version gives 0/0 = NaN in a column that is all False.
    cols = mask.any(axis=0)
    if g is not None and g.shape == S.shape and close(g[:, cols], t["by_column"][:, cols]):
        return _("softmax over the wrong axis: each query's row must sum to 1, so normalise along the keys")
    shape = shape_of(got)
    if shape != S.shape:
        return _("expected shape (n_q, n_k) = {want}, the shape of S, got {got}").format(want=S.shape, got=shape_text(got))
    if g is None:
        return _("expected an array of numbers, got {kind}").format(kind=type(got).__name__)
    with np.errstate(all="ignore"):
        bad = ~np.isfinite(g)  # (n_q, n_k)
        row_ok = np.all(np.isclose(g, want, atol=1e-6, rtol=1e-6), axis=-1)  # (n_q,)
    if bad.any() and not bad[live].any() and row_ok[live].all():
        return _("the all-False row gives 0/0 = NaN: its row sum is 0. Such a row attends to nothing, so its "
                 "weights must be zeros, not the result of dividing by that 0")
    if not live.all() and row_ok[live].all() and np.allclose(g[~live], 1 / S.shape[1]):
        return _("a row with nothing allowed must give all zeros (it attends to nothing), not uniform weights: "
                 "a large negative score like -1e9 leaves that row's scores all equal")
    if bad.any():
        return _("your weights contain NaN or inf; every weight must be a finite number between 0 and 1")
    if np.any(g[~mask] != 0):
        return _("entries where mask is False must get weight exactly 0")
    if not np.allclose(g[live].sum(axis=-1), 1, atol=1e-6):
        return _("each row with at least one allowed key must sum to 1")
    return _("the shape is right but the numbers are not; compare with a plain softmax over each row's allowed entries")


@plain_numpy()
def masked_softmax(fn) -> bool:
    """Check ``fn(S (n_q, n_k), mask (n_q, n_k) bool) -> weights (n_q, n_k)``."""
    if not_done(fn):
        return not_attempted(_("no answer yet: write my_masked_softmax(S, mask) and pass it in"))
    for t in _softmax_table():
        case, S, mask = _(t["case"]), t["S"], t["mask"]
        S_in, mask_in = S.copy(), mask.copy()
        with np.errstate(all="ignore"):
            got, err = try_call(fn, S_in, mask_in)
        if got is Ellipsis:
            return not_attempted(_(STUB))
        if err:
            return report(False, err)
        if not (np.array_equal(S_in, S) and np.array_equal(mask_in, mask)):
            which = "S" if not np.array_equal(S_in, S) else "mask"
            return report(False, _("{case}: your function changed its input {which} in place (writing into the caller's "
                                   "array, say setting blocked scores there); compute into a new array instead")
                          .format(case=case, which=which))
        if (msg := array_answer(got)):
            return report(False, _("{case}: {hint}").format(case=case, hint=msg))
        if not close(got, t["want"]):
            return report(False, _("{case}: {hint}").format(case=case, hint=_softmax_hint(got, t)))
        blocked = as_floats(got)[~mask]  # close() passed, so got converts to floats of S's shape
        if np.any(blocked != 0):
            return report(False, _("{case}: almost right, but a blocked key must get weight exactly 0, and yours get up to "
                                   "{largest}: a finite score like -100 still leaves exp(-100) > 0. A blocked key must "
                                   "take no part in the softmax at all").format(case=case, largest=f"{np.abs(blocked).max():.1e}"))
    return report(True, _("the masked softmax is right: blocked keys get exactly 0, each row sums to 1, "
                          "an all-False row gives zeros, and +-1000 does not overflow"))


# ---------------------------------------------------------------- sinusoidal positions

# (positions, d): len(pos) differs from d, so a transposed answer cannot fit; the second case continues at
# position 5 (a cache that appends tokens 5, 6, 7), the third has gaps and slow pairs whose angles are small.
_POSITION_CASES = ((np.arange(6), 8), (np.arange(5, 8), 4), (np.array([0, 2, 9, 4, 30, 1, 7, 3, 11, 5]), 16))


@reference
def _encoding(pos: np.ndarray, d: int) -> np.ndarray:
    """Rows of the encoding at the integer positions ``pos`` (n,), shape (n, d)."""
    from .. import sinusoidal_positions
    return sinusoidal_positions(int(pos.max()) + 1, d)[pos]


@reference
def _interleave(sin_part, cos_part) -> np.ndarray:
    """Columns ``[s0, c0, s1, c1, ...]`` from ``sin_part`` and ``cos_part`` (n, d/2) each."""
    n, half = sin_part.shape
    P = np.empty((n, 2 * half))
    P[:, 0::2], P[:, 1::2] = sin_part, cos_part
    return P


@reference
def _by_column(p: np.ndarray, d: int, exponent) -> np.ndarray:
    """sin in even columns, cos in odd ones, column j at the angle pos / 10000^exponent(j)."""
    pos = p.astype(float)[:, None]  # (n, 1)
    j = np.arange(d)
    angle = pos / 10000.0 ** exponent(j)[None, :]  # (n, d)
    return np.where(j % 2 == 0, np.sin(angle), np.cos(angle))


@reference
def _position_mistakes(p: np.ndarray, d: int) -> list:
    from .. import sinusoidal_positions
    n = len(p)
    pos = p.astype(float)[:, None]  # (n, 1)
    i = np.arange(d // 2)[None, :]  # pair index, (1, d/2)
    angle = pos / 10000.0 ** (2 * i / d)  # (n, d/2)
    slow = pos / 10000.0 ** (i / d)
    # Hints are templates: positions() fills in {last} = n - 1, {n} and {given} = pos.
    with np.errstate(all="ignore"):
        return [
            (_interleave(np.cos(angle), np.sin(angle)),
             N_("sin and cos are swapped: in each pair of columns the even one holds the sine")),
            (_interleave(np.sin(angle), np.sin(angle)), N_("every column is a sin: the odd column of each pair is a cos")),
            (_interleave(np.cos(angle), np.cos(angle)), N_("every column is a cos: the even column of each pair is a sin")),
            (_interleave(np.sin(slow), np.cos(slow)),
             N_("the frequencies fall too slowly from pair to pair, so the slowest pair still turns far too fast: "
                "your exponent grows half as fast as the formula's")),
            (_by_column(p, d, lambda j: j / d),
             N_("you used the column index in the exponent, so the sin and cos of a pair turn at different speeds; "
                "both columns of a pair share one frequency")),
            (_by_column(p, d, lambda j: 2 * j / d),
             N_("you used the column index where the pair index belongs, so the two columns of a pair turn at "
                "different speeds; both columns of a pair share one frequency")),
            (np.concatenate([np.sin(angle), np.cos(angle)], axis=1),
             N_("these are the halves [sin of every pair, cos of every pair] side by side; some libraries do that, "
                "but the paper interleaves them: each pair's sin and cos sit in neighbouring columns")),
            (sinusoidal_positions(n, d), N_("you encoded positions 0 .. {last}, not the positions you were given "
                                            "({given}): row k is the encoding of position pos[k]")),
            (sinusoidal_positions(n, d, start=1), N_("you encoded positions 1 .. {n}, not the positions you were given "
                                                     "({given}): row k is the encoding of position pos[k]")),
            (_interleave(np.sin(pos * 10000.0 ** (2 * i / d)), np.cos(pos * 10000.0 ** (2 * i / d))),
             N_("your frequencies grow from pair to pair; they must shrink, from 1 radian per position down to the "
                "slowest pair")),
            (_encoding(p, d).T, N_("rows are positions: return shape (len(pos), d), one row per token")),
        ]


@recorded
def _position_table() -> list[dict]:
    """Per case: the positions, d, their encoding and the usual mistakes' outputs."""
    return [{"pos": p, "d": d, "want": _encoding(p, d), "wrong": _position_mistakes(p, d)}
            for p, d in _POSITION_CASES]


@plain_numpy()
def positions(fn) -> bool:
    """Check ``fn(pos, d) -> (len(pos), d)``: the sinusoidal positional encoding of the integer
    positions ``pos`` (a 1-D array), one row per position."""
    if not_done(fn):
        return not_attempted(_("no answer yet: write my_positions(pos, d) and pass it in"))
    for t in _position_table():
        p, d = t["pos"], t["d"]
        got, err = try_call(fn, p.copy(), d)
        if got is Ellipsis:
            return not_attempted(_(STUB))
        if err:
            hint = ""
            if "range" in err or "integer" in err or "interpreted" in err:
                hint = _(". pos is an array of positions, {pos}, not a count: each row of the result "
                         "belongs to one entry of pos").format(pos=p.tolist())
            return report(False, err + hint)
        if (msg := array_answer(got)):
            return report(False, msg)
        if not close(got, t["want"]):
            hint = next((_(h).format(last=len(p) - 1, n=len(p), given=p.tolist()) for w, h in t["wrong"] if close(got, w)), None)
            if hint is None and shape_of(got) != (len(p), d):
                hint = _("expected shape (len(pos), d) = {want}, one row per position, got {got}").format(
                    want=(len(p), d), got=shape_text(got))
            return report(False, _("pos = {pos}, d = {d}: {hint}").format(pos=p.tolist(), d=d, hint=hint or _(
                "the shape is right but the numbers are not: work out one row by hand from section "
                "4.1's formula, at a position other than 0, and compare it with yours, column by column")))
    return report(True, _("the positional encoding is right: one sin/cos pair per frequency, from fast to slow, "
                          "at any positions you give it"))


# ---------------------------------------------------------------- which rows change

# The hint the grader gives for a wrong set of rows: the idea, not the rows.
_GRADED_ROWS = N_("a row can change only if the edited token is among its keys: under a causal mask "
                  "query i sees itself and the keys before it. Go through the rows one by one")


@recorded(answers=True)  # a prediction's answers: sealed, withheld by PREDICTIONS=record
def _rows_table() -> dict:
    """Token 3 of 6 edited under a causal mask: the rows that change, and the hints for wrong sets."""
    n, edited = 6, 3
    return {
        "n": n, "want": list(range(edited, n)),
        "ok": N_("rows 3, 4 and 5 change: token 3 is a key (and value) only for queries i >= 3, and row 3 is its "
                 "own query; rows 0..2 cannot see it and stay exactly the same"),
        "all": N_("not every row can see token 3: under a causal mask query i sees keys 0..i only. For each row, ask whether token 3 is among its keys"),
        "all_graded": N_("not every row can see token 3: under a causal mask query i sees keys 0..i only. For each "
                         "row, ask whether token 3 is among its keys"),
        "before": N_("some of your rows cannot see token 3: a causal mask lets query i see keys 0..i only, so a row changes "
                     "only if token 3 is among its keys. Ask that question of each of the {n} rows in turn"),
        "no_self": N_("a row is missing: the edited token is a query too; which keys does its own row see?"),
        "only_self": N_("more rows change: which queries have token 3 among their keys 0..i?"),
        "empty": N_("something changes: the edited token is a key of at least one row"),
        "empty_graded": N_("something changes: the edited token is a key of at least one row"),
        "early": N_("some of your rows cannot see token 3: query i sees keys 0..i only, so a row changes only if "
                    "token 3 is among those keys"),
        "missing": N_("some rows that change are missing: which queries have token 3 among their keys 0..i?"),
    }


def _rows(rows: list[int]) -> str:
    return _("row {k}").format(k=rows[0]) if len(rows) == 1 else _("rows {ks}").format(ks=", ".join(map(str, rows)))


@prediction
def future_unchanged(answer) -> bool:
    """Check ``answer``: the query indices whose output rows change when token 3 of 6 is edited (causal mask)."""
    if not_done(answer):
        return not_attempted(_("no answer yet: replace the `...` after `answer =` with your list of query "
                               "indices, then run the cell again"))
    items = None
    if not isinstance(answer, (str, bytes, dict)):
        try:
            items = list(answer)
        except Exception:  # not iterable (a single number, say): never raise
            items = None
    if items is None:
        return report(False, _("give a list of query indices such as [1, 2], got {kind} {answer}").format(
            kind=type(answer).__name__, answer=repr(answer)))
    if any(isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) for k in items):
        odd = next(k for k in items if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)))
        return report(False, _("give the query indices as whole numbers (ints) such as [1, 2], got {odd}").format(odd=repr(odd)))
    got = [int(k) for k in items]
    if len(set(got)) != len(got):
        return report(False, _("list each query index once, got {got}").format(got=got))
    t = _rows_table().open()
    n = t["n"]
    out = [k for k in got if not 0 <= k < n]
    if out:
        return report(False, _("the queries of a {n}-token sequence are 0 .. {last}, got {out}").format(n=n, last=n - 1, out=out))
    have, want = set(got), set(t["want"])
    own = min(want)  # the edited token's own row
    early = sorted(have - want)
    if have == want:
        return report(True, _(t["ok"]))
    if have == set(range(n)):
        return report(False, _(t["all"]), graded=_(t["all_graded"]))
    if early and max(have) <= own:
        return report(False, _(t["before"]).format(rows=_rows(early), n=n), graded=_(_GRADED_ROWS))
    if have == want - {own}:
        return report(False, _(t["no_self"]), graded=_(_GRADED_ROWS))
    if have == {own}:
        return report(False, _(t["only_self"]), graded=_(_GRADED_ROWS))
    if not have:
        return report(False, _(t["empty"]), graded=_(t["empty_graded"]))
    if early:
        return report(False, _(t["early"]).format(rows=_rows(early)), graded=_(_GRADED_ROWS))
    return report(False, _(t["missing"]).format(rows=_rows(sorted(want - have))), graded=_(_GRADED_ROWS))
