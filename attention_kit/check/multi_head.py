"""Exercise checkers for notebook 03 (multi-head attention).

Every checker prints one line, ``✓ ...`` or ``✗ ...`` with a hint aimed at the usual mistake (the
idea, not the line of code that fixes it), and returns True or False. The learner's exceptions are
reported, never raised. What a checker compares with (its cases, their right answers and the
outputs of the usual mistakes) comes from ``@recorded`` tables.

* ``split_merge(split_fn, merge_fn)``: for a batch of sequences, ``(b, n, h*d_head) -> (b, h, n, d_head)``
  and back (the layout of nanoGPT's ``(B, nh, T, hs)``).
* ``one_head(fn)``: one head of scaled dot-product attention by hand, for one sequence ``(n, d_model)``
  and for a batch ``(b, n, d_model)``, with keys of several sizes (one array, not a tuple).
* ``concat_project(fn)``: for a batch, concatenate the heads ``(b, h, n, d_v)``, then apply ``W_o``.
* ``n_parameters(answer, d_model=..., n_heads=..., d_head=..., bias=...)``: the parameter count of one
  of the layers of ``PARAMETER_LAYERS`` (heads of ``d_head`` columns, ``d_model / n_heads`` when not
  given); a whole number.
* ``quietly()``: a context manager (from ``attention_kit.check``) that silences the checkers.
"""

from __future__ import annotations

import numbers
import re

import numpy as np

from ..i18n import N_, _
from . import close, not_attempted, not_done, quietly, report, shape_of, try_call
from .general import array_answer
from .multi_head_count import PARAMETER_LAYERS, parameter_counts
from .multi_head_split import INTERLEAVED, split_merge
from .plain import plain_numpy
from .recorded import recorded, reference

__all__ = ["quietly", "split_merge", "one_head", "concat_project", "n_parameters", "PARAMETER_LAYERS"]

STUB = N_("no answer yet: replace the `...` after `return` with your code, then run the cell again")
WHERE = N_("for X of shape {X} and keys of size d_k = {d_k}: {hint}")
ON_HEADS = N_("for heads of shape {heads} and W_o of shape {W_o}: {hint}")


def _shape_error(err: str) -> bool:
    return any(w in err for w in ("shape", "align", "dimension", "matmul", "axes", "broadcast"))


def _first(got, mistakes) -> str | None:
    """The hint of the first recorded mistake whose output ``got`` matches, else None."""
    for out, hint in mistakes:
        if close(got, out):
            return _(hint)
    return None


_GLUED_CONCAT = N_("the concatenation is the reshape without the transpose: it glues the heads together in memory "
                   "order, head after head, not token by token. Bring the token axis in front of the head axis first")


# ---------------------------------------------------------------- one head

# (seed, sizes): one sequence (n, d_model, d_k, d_v), then keys of another size, then a batch
# (b, n, d_model, d_k, d_v) with b != d_k, so transposing the batch axis too fails loudly. The key
# sizes d_k differ from case to case (a fixed scale fits one of them at most) and from d_model; the
# batch's n differs from every other size (a scale read from axis 1, n for a batch, shows as such).
_HEAD_CASES = ((0, (4, 6, 2, 3)), (1, (5, 7, 3, 2)), (2, (2, 6, 5, 4, 3)))


@reference
def _softmax(S: np.ndarray, axis: int = -1) -> np.ndarray:
    from .. import softmax
    return softmax(S, axis=axis)


@recorded
def _head_table() -> list[dict]:
    """Per case: X, W_q, W_k, W_v, the head's output and the usual mistakes' outputs."""
    sm = _softmax
    out = []
    for seed, sizes in _HEAD_CASES:
        rng = np.random.default_rng(seed)
        *lead, d_model, d_k, d_v = sizes
        X = rng.normal(size=(*lead, d_model))  # (n, d_model) or (b, n, d_model)
        W_q, W_k, W_v = (rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_k)),
                         rng.normal(size=(d_model, d_v)))
        Q, K, V = X @ W_q, X @ W_k, X @ W_v  # (..., n, d_k), (..., n, d_k), (..., n, d_v)
        S = Q @ np.swapaxes(K, -1, -2)  # (..., n, n)
        A = sm(S / np.sqrt(d_k))  # (..., n, n)
        E = np.exp(S / np.sqrt(d_k))  # (..., n, n) unnormalised weights
        wrong = [
            (sm(S) @ V, N_("the scores go into the softmax unscaled: their spread grows with the size of the keys, so "
                           "larger heads get ever sharper weights. Scale them so that their spread does not depend on d_k")),
            (sm(S / d_k) @ V, N_("you scaled by d_k itself, which shrinks the scores too much: the spread of a dot "
                                 "product of d_k random terms grows like the square root of d_k, not like d_k")),
            (sm(S / np.sqrt(d_model)) @ V,
             N_("you scaled by the size of the tokens, d_model; the scores are dot products of one head's queries and "
                "keys, so the size that matters is theirs, d_k")),
            (sm(S / np.sqrt(d_k), axis=-2) @ V,
             N_("softmax over the wrong axis: each query's weights must sum to 1, so normalise along the keys, not "
                "along the queries")),
            (E / E.sum(axis=(-2, -1), keepdims=True) @ V,
             N_("your weights sum to 1 over the whole matrix; each query's row must sum to 1 on its own")),
            (sm(np.swapaxes(S, -1, -2) / np.sqrt(d_k)) @ V,
             N_("your scores are transposed: row i must hold query i's scores against every key")),
            ((S / np.sqrt(d_k)) @ V, N_("you forgot the softmax: the scaled scores are not weights yet")),
            (A @ X, N_("you averaged the rows of X; the head averages the values, X projected by W_v")),
            (A, N_("you returned the weights (n, n); the head's output is what the weights make of the values, "
                   "one row of d_v numbers per query")),
        ]
        n = X.shape[-2]
        if n not in (d_k, d_v, d_model):
            wrong.append((sm(S / np.sqrt(n)) @ V,
                          N_("you scaled by the number of tokens n: in a batch (b, n, d_k) the second axis counts "
                             "the tokens, and the size of the keys, d_k, is their last axis, whatever stands in "
                             "front of it") if X.ndim == 3 else
                          N_("you scaled by the number of tokens n; the scores are dot products of queries and "
                             "keys, so the size that matters is theirs, d_k, the keys' last axis")))
        if d_v != d_k:
            wrong.append((sm(S / np.sqrt(d_v)) @ V,
                          N_("you scaled by the size of the values, d_v; the scores are dot products of queries "
                             "and keys, so the size that matters is theirs, d_k")))
        if X.ndim == 2:
            wrong.insert(5, ((E / E.sum(axis=-1)) @ V,
                             N_("your row sums lost their axis, so broadcasting divided column j by row j's sum: "
                                "each row must be divided by its own sum")))
        out.append({"args": (X, W_q, W_k, W_v), "d_k": d_k, "want": A @ V, "wrong": wrong, "other_scale": [],
                    "own_scales": (np.sqrt(d_k), float(d_k), np.sqrt(d_model)), "by_number": []})
    for case in out:  # a scale that fits another case's d_k: a number typed in, not read from the keys
        X, W_q, W_k, W_v = case["args"]
        S = (X @ W_q) @ np.swapaxes(X @ W_k, -1, -2)
        for other in out:
            if other["d_k"] != case["d_k"]:
                case["other_scale"].append(sm(S / np.sqrt(other["d_k"])) @ (X @ W_v))
                case["other_scale"].append(sm(S / other["d_k"]) @ (X @ W_v))
    # Every number typed in as the scale that one case's sizes explain (sqrt(d_k), d_k, sqrt(d_model)):
    # per case, what dividing by it gives, whether this case's sizes explain it (then its verdict there
    # would name a size: right by coincidence, "d_k itself", "d_model") and whether it is another case's
    # sqrt(d_k) or d_k. A number that fits every case is a number typed in, and its hint goes on a case
    # that its value does not explain.
    numbers = sorted({float(c) for case in out for c in case["own_scales"]})
    for case in out:
        X, W_q, W_k, W_v = case["args"]
        S = (X @ W_q) @ np.swapaxes(X @ W_k, -1, -2)
        for c in numbers:
            case["by_number"].append({
                "out": sm(S / c) @ (X @ W_v),
                "own": any(np.isclose(c, s) for s in case["own_scales"]),
                "other": any(np.isclose(c, s) for o in out if o["d_k"] != case["d_k"]
                             for s in (np.sqrt(o["d_k"]), o["d_k"]))})
    for case in out:
        del case["own_scales"]
    return out


_OTHER_SIZE = N_("your scaling fits keys of another size: it must follow the size of the keys your function is "
                 "given, not a number typed in")
_TYPED_NUMBER = N_("your scaling is the same number whatever the size of the keys: it must follow the size of the "
                   "keys your function is given, not a number typed in")


def _typed_scale(fn, table: list[dict]) -> str | None:
    """If one number typed in as the scale explains every case the function answers, the hint for it,
    on a case where that number is not what this case's sizes would give (else None)."""
    outs = []
    for case in table:
        X, W_q, W_k, W_v = case["args"]
        got, err = try_call(fn, X.copy(), W_q.copy(), W_k.copy(), W_v.copy())
        outs.append(None if err or not isinstance(got, np.ndarray) else got)
    answered = [(case, got) for case, got in zip(table, outs, strict=True) if got is not None]
    for k in range(len(table[0]["by_number"])):
        if len(answered) < 2 or not all(close(got, case["by_number"][k]["out"]) for case, got in answered):
            continue
        for case, _i in answered:
            entry = case["by_number"][k]
            if not entry["own"]:
                return _(WHERE).format(X=case["args"][0].shape, d_k=case['d_k'],
                                       hint=_(_OTHER_SIZE if entry["other"] else _TYPED_NUMBER))
    return None


@plain_numpy()
def one_head(fn) -> bool:
    """Check ``fn(X, W_q, W_k, W_v) -> (..., n, d_v)``: one head of scaled dot-product attention, for
    one sequence ``X`` of shape ``(n, d_model)`` and for a batch ``(b, n, d_model)``."""
    if not_done(fn):
        return not_attempted(_("no answer yet: write head(X, W_q, W_k, W_v) and pass it in"))
    for case in _head_table():
        X, W_q, W_k, W_v = case["args"]
        d_k, want = case["d_k"], case["want"]
        at = {"X": X.shape, "d_k": d_k}
        got, err = try_call(fn, X.copy(), W_q.copy(), W_k.copy(), W_v.copy())
        if got is Ellipsis:
            return not_attempted(_(STUB))
        if err:
            hint = ""
            if _shape_error(err):
                hint = _(" (X is a batch here, (b, n, d_model): the transpose of the keys must swap only their last "
                         "two axes, token and feature, and leave the batch axis in front)") if X.ndim == 3 else _(
                    " (rows are tokens: each row of X multiplies W_q, shape (d_model, d_k), from the left)")
            return report(False, _(WHERE).format(**at, hint=err + hint))
        if isinstance(got, tuple):
            return report(False, _("your function returned a tuple; the task asks for one array, the head's output "
                                   "(n, d_v), not the weights with it"))
        if (msg := array_answer(got)):
            return report(False, msg)
        if close(got, want):
            continue
        if (hint := _typed_scale(fn, _head_table())):   # a number typed in, whatever it coincides with here
            return report(False, hint)
        if (hint := _first(got, case["wrong"])):
            return report(False, _(WHERE).format(**at, hint=hint))
        if any(close(got, w) for w in case["other_scale"]):
            return report(False, _(WHERE).format(**at, hint=_(_OTHER_SIZE)))
        if shape_of(got) != want.shape:
            return report(False, _("for X of shape {X} and keys of size d_k = {d_k}: expected shape {want}, one row of d_v "
                                   "= {d_v} numbers per query, got {got}").format(**at, want=want.shape, d_v=want.shape[-1], got=shape_of(got)))
        return report(False, _("for X of shape {X} and keys of size d_k = {d_k}: the shape is right but the numbers are not: "
                               "compute one query's row by hand on a small case and compare it with yours step by step").format(**at))
    return report(True, _("one head is right, for one sequence and for a batch, whatever the size of the keys"))


# ---------------------------------------------------------------- concatenate, then W_o

@reference
def _concat(heads: np.ndarray) -> np.ndarray:
    from .. import merge_heads
    return merge_heads(heads)  # (b, h, n, d_v) -> (b, n, h*d_v)


# (seed, (b, h, n, d_v, d_model)): h*d_v differs from d_model, so W_o is not square; two sizes, so no
# shape typed in fits both; the second has n == h, where gluing the heads without moving the token
# axis keeps the shape.
_COMBINE_CASES = ((3, (3, 2, 5, 3, 4)), (4, (2, 3, 3, 2, 5)))


@recorded
def _combine_table() -> list[dict]:
    """Per case: a batch of heads, W_o, the layer's output and the usual mistakes' outputs."""
    out = []
    for seed, (b, h, n, d_v, d_model) in _COMBINE_CASES:
        rng = np.random.default_rng(seed)
        heads = rng.normal(size=(b, h, n, d_v))
        W_o = rng.normal(size=(h * d_v, d_model))
        concat = _concat(heads)  # (b, n, h*d_v)
        wrong = [
            (concat, N_("you concatenated the heads but forgot the output projection W_o")),
            (heads.reshape(b, n, h * d_v) @ W_o, _GLUED_CONCAT),
            (heads.transpose(0, 2, 3, 1).reshape(b, n, h * d_v) @ W_o, INTERLEAVED),
            (heads.sum(axis=1), N_("you added the heads instead of concatenating them, and W_o is missing")),
            (heads.mean(axis=1), N_("you averaged the heads instead of concatenating them, and W_o is missing")),
        ]
        out.append({"heads": heads, "W_o": W_o, "want": concat @ W_o, "wrong": wrong})
    return out


@plain_numpy()
def concat_project(fn) -> bool:
    """Check ``fn(heads (b, h, n, d_v), W_o (h*d_v, d_model)) -> (b, n, d_model)`` for a batch."""
    if not_done(fn):
        return not_attempted(_("no answer yet: write combine(heads, W_o) and pass it in"))
    for t in _combine_table():
        heads, W_o, want = t["heads"], t["W_o"], t["want"]
        at = {"heads": heads.shape, "W_o": W_o.shape}
        got, err = try_call(fn, heads.copy(), W_o.copy())
        if got is Ellipsis:
            return not_attempted(_(STUB))
        if err:
            hint = ""
            b, h, _n, d_v = heads.shape
            sizes = re.search(r"size (\d+) is different from (\d+)", err)
            if sizes and int(sizes[1]) == W_o.shape[0] and int(sizes[2]) == b * d_v and b != h:
                hint = _(" (the rows you give W_o are {width} = b*d_v wide: you joined the batch's sequences, "
                         "not the heads. Each token's row must hold that token's outputs from every head, "
                         "h*d_v = {want} numbers, and the batch axis stays apart)").format(width=b * d_v, want=h * d_v)
            elif "matmul" in err or "align" in err:
                hint = _(" (read W_o's shape, (h*d_v, d_model): its h*d_v rows pair with a token's features from "
                         "all the heads together, so W_o takes those features from its left, as it is given)")
            elif _shape_error(err):
                hint = _(" (the heads come as a batch, (b, h, n, d_v): the batch axis stays first throughout)")
            return report(False, _(ON_HEADS).format(**at, hint=err + hint))
        if (msg := array_answer(got)):
            return report(False, msg)
        if close(got, want):
            continue
        if (hint := _first(got, t["wrong"])):
            return report(False, _(ON_HEADS).format(**at, hint=hint))
        if shape_of(got) != want.shape:
            return report(False, _("for heads of shape {heads} and W_o of shape {W_o}: expected shape (b, n, d_model) = "
                                   "{want}, got {got}").format(**at, want=want.shape, got=shape_of(got)))
        return report(False, _("for heads of shape {heads} and W_o of shape {W_o}: the shape is right but the numbers are "
                               "not: each token's heads side by side (head 1 first), then the output projection").format(**at))
    return report(True, _("concatenate, then W_o, for batches of two sizes: every output feature can now mix all the heads"))


# ---------------------------------------------------------------- parameter count

def n_parameters(answer, *, d_model: int, n_heads: int, d_head: int | None = None, bias: bool = False) -> bool:
    """Check a parameter count for multi-head attention whose heads have ``d_k = d_v = d_head``
    columns each (``d_model / n_heads`` when ``d_head`` is not given), for one of the layers of
    ``PARAMETER_LAYERS``. The answer is a whole number."""
    if not_done(answer):
        return not_attempted(_("no answer yet: replace the `...` after `answer =` with your number, then run the cell again"))
    layer = (d_model, n_heads, d_model // n_heads if d_head is None else d_head, bool(bias))
    t = parameter_counts().open().get(layer)
    if t is None:
        known = ", ".join(f"(d_model={d}, n_heads={h}, d_head={dh}, bias={b})" for d, h, dh, b in PARAMETER_LAYERS)
        return report(False, _("this checker knows the layers of notebook 03: {known}; got {layer}").format(known=known, layer=layer))
    if isinstance(answer, (bool, np.bool_)) or not isinstance(answer, numbers.Real):
        return report(False, _("give a whole number, got {kind}").format(kind=type(answer).__name__))
    value = float(answer)
    if not value.is_integer():
        return report(False, _("{value} is not a whole number: a count of parameters has no fraction").format(value=f"{value:,}"))
    if value == t["want"]:
        return report(True, "".join(_(text).format(**fields) for text, fields in t["ok"]))
    for w, hint in t["wrong"]:
        if value == w:
            return report(False, _(hint))
    message = (_("your count, {value}, is not the layer's: count each matrix of the layer from its shape, the query, key "
                 "and value projections of every head and the one output projection, and every bias") if bias else
               _("your count, {value}, is not the layer's: count each matrix of the layer from its shape, the query, key "
                 "and value projections of every head and the one output projection"))
    return report(False, message.format(value=f"{value:,.0f}"))
