"""Notebook 03 (multi-head attention), exercise 1: the checker ``check.multi_head.split_merge``, which
splits a batch of sequences into heads, ``(b, n, h*d_head) -> (b, h, n, d_head)``, and merges them back
(the layout of nanoGPT's ``(B, nh, T, hs)``). ``attention_kit.check.multi_head`` imports it, with
notebook 03's other checkers.
"""

from __future__ import annotations

import re

import numpy as np

from ..i18n import N_, _
from . import close, not_attempted, not_done, report, shape_of, try_call
from .general import array_answer, first_match
from .plain import plain_numpy
from .recorded import recorded, reference

__all__ = ["split_merge"]

STUB = N_("no answer yet: replace the `...` after `return` with your code, then run the cell again")

# (b, n, h, d_head): b, n, h and d_head mostly differ, so a wrong reshape rarely looks right by accident;
# the last case has n == h, where the reshape without the transpose keeps the shape and only the entries differ.
_SPLIT_CASES = ((2, 4, 2, 3), (3, 2, 4, 1), (2, 3, 3, 2))


def _reshape_rank(err: str) -> int | None:
    """How many axes the shape in numpy's "cannot reshape array of size N into shape (...)" has, else None."""
    m = re.search(r"into shape \(([^)]*)\)", err)
    return None if m is None else len([p for p in m.group(1).split(",") if p.strip()])


# ---------------------------------------------------------------- split and merge

_GLUED = N_("this is the reshape without the transpose: it glues the heads together in memory order, head after "
            "head, not token by token. Bring the token axis in front of the head axis first")
INTERLEAVED = N_("the columns come out interleaved: each head's columns must stay side by side, head 1's block first")

@reference
def _split(X: np.ndarray, h: int) -> np.ndarray:
    from .. import split_heads
    return split_heads(X, h)  # (b, n, h*d_head) -> (b, h, n, d_head)


@recorded
def _split_table() -> list[dict]:
    """Per case: the batch X, its heads, and what the usual wrong splits and merges give."""
    out = []
    for b, n, h, d in _SPLIT_CASES:
        X = np.arange(b * n * h * d, dtype=float).reshape(b, n, h * d) / 10  # (b, n, h*d_head), entries distinct
        Xh = _split(X, h)  # (b, h, n, d_head)
        split_wrong = [
            (X.reshape(b, h, n, d),
             N_("this is the reshape without the transpose: numpy fills the new shape in memory order, token after "
                "token, so 'head 1' gets whole tokens instead of every token's first d_head columns. Cut each token's "
                "features into the heads' blocks first, then move the head axis in front of the token axis")),
            (X.reshape(b, n, h, d),
             N_("you cut the features into the heads' blocks but the head axis still comes after the token axis: "
                "the result must be (b, h, n, d_head)")),
            (X.reshape(b, n, d, h).transpose(0, 3, 1, 2),
             N_("head i got the interleaved columns i, i+h, i+2h, ...; each head owns a contiguous block of d_head "
                "columns (head 0: columns 0 up to, not including, d_head): the head index must vary slower than the "
                "column within the head")),
            (Xh.transpose(1, 0, 2, 3), N_("the head axis went in front of the batch axis: the batch axis stays first, "
                                          "(b, h, n, d_head)")),
        ]
        merge_wrong = [
            (Xh.reshape(b, n, h * d), _GLUED),
            (Xh.transpose(0, 2, 3, 1).reshape(b, n, h * d), INTERLEAVED),
        ]
        out.append({"shape": (b, n, h, d), "X": X, "heads": Xh, "split_wrong": split_wrong,
                    "merge_wrong": merge_wrong})
    return out


def _split_hint(got, case: dict) -> str:
    """Name the mistake behind a wrong split."""
    b, n, h, d = case["shape"]
    if (hint := first_match(got, case["split_wrong"])):
        return hint
    if shape_of(got) != (b, h, n, d):
        return _("expected shape (b, h, n, d_head) = {want} for X of shape {X} and h = {h}, got {got}; X is a batch "
                 "of sequences, (b, n, h*d_head)").format(want=(b, h, n, d), X=case['X'].shape, h=h, got=shape_of(got))
    return _("the shape is right but the numbers are not: head i of sequence s should hold columns i*d_head "
             "up to, not including, (i+1)*d_head of every token of sequence s")


def _merge_hint(got, case: dict) -> str:
    """Name the mistake behind a wrong merge."""
    b, n, h, d = case["shape"]
    if (hint := first_match(got, case["merge_wrong"])):
        return hint
    if shape_of(got) != (b, n, h * d):
        return _("expected shape (b, n, h*d_head) = {want} for heads of shape {heads}, got {got}").format(
            want=(b, n, h * d), heads=(b, h, n, d), got=shape_of(got))
    return _("merge should undo split: merge(split(X, h)) must give back X exactly")


@plain_numpy()
def split_merge(split_fn, merge_fn=None) -> bool:
    """Check ``split_fn(X, h) -> (b, h, n, d_head)`` and ``merge_fn(Xh) -> (b, n, h*d_head)`` for a
    batch ``X`` of shape ``(b, n, h*d_head)``."""
    if not_done(split_fn):
        return not_attempted(_("no answer yet: write split(X, h) (and merge(Xh)) and pass them in"))
    table = _split_table()
    for case in table:
        (b, n, h, d), X = case["shape"], case["X"]
        got, err = try_call(split_fn, X.copy(), h)
        if got is Ellipsis:
            return not_attempted(_(STUB))
        if err:
            if _reshape_rank(err) == 4:  # the batch axis kept, but a size typed in (trial: d_head = 3)
                return report(False, _("split with b={b}, n={n}, h={h}, d_head={d}: {error}. The checker tries "
                                       "several sizes: every size in your reshape must be read from the shape of X "
                                       "and from h, d_head too, not typed in").format(b=b, n=n, h=h, d=d, error=err))
            if "axes" in err or "reshape" in err:
                return report(False, _("split: {error}. X is a batch, shape (b, n, h*d_head) = {X}: every reshape and "
                                       "transpose must account for the batch axis in front, which stays first").format(error=err, X=X.shape))
            if "values to unpack" in err:  # n, hd = X.shape: written for one sequence
                return report(False, _("split: {error}. X is a batch, shape (b, n, h*d_head) = {X}, with {k} axes: "
                                       "code written for one sequence (n, h*d_head) reads one axis too few").format(
                                           error=err, X=X.shape, k=X.ndim))
            return report(False, _("split: {error}").format(error=err))
        if (msg := array_answer(got)):
            return report(False, _("split: {error}").format(error=msg))
        if not close(got, case["heads"]):
            return report(False, _("split with b={b}, n={n}, h={h}, d_head={d}: {hint}").format(
                b=b, n=n, h=h, d=d, hint=_split_hint(got, case)))
    if merge_fn is None:
        return report(True, _("split is right: head i holds columns i*d_head up to (i+1)*d_head of every token"))
    if not_done(merge_fn):
        return report(False, _("split is right; merge has no answer yet"))
    for case in table:
        (b, n, h, d), Xh = case["shape"], case["heads"]
        got, err = try_call(merge_fn, Xh.copy())
        if got is Ellipsis:
            return report(False, _("split is right; merge has no answer yet: replace the `...` after `return` with "
                                   "your code, then run the cell again"))
        if err and _reshape_rank(err) == 3:  # the batch axis kept, but a size typed in
            return report(False, _("merge with b={b}, n={n}, h={h}, d_head={d}: {error}. The checker tries several "
                                   "sizes: every size in your reshape must be read from the shape of the heads, "
                                   "not typed in").format(b=b, n=n, h=h, d=d, error=err))
        if err:
            message = (_("merge: {error}. The heads come as a batch, (b, h, n, d_head): the batch axis stays first")
                       if ("axes" in err or "reshape" in err or "values to unpack" in err) else _("merge: {error}"))
            return report(False, message.format(error=err))
        if (msg := array_answer(got)):
            return report(False, _("merge: {error}").format(error=msg))
        if not close(got, case["X"]):
            return report(False, _("merge with b={b}, n={n}, h={h}, d_head={d}: {hint}").format(
                b=b, n=n, h=h, d=d, hint=_merge_hint(got, case)))
    return report(True, _("split and merge are right for a batch, and merge(split(X, h)) gives X back"))
