"""Exercise checkers for notebook 03 (multi-head attention).

Every checker prints one line, ``✓ ...`` or ``✗ ...`` with a hint aimed at the usual mistake, and
returns True or False. The learner's exceptions are reported, never raised.

* ``split_merge(split_fn, merge_fn)``: ``(n, h*d_head) -> (h, n, d_head)`` and back; catches the
  transposed reshape ``X.reshape(h, n, d_head)``.
* ``one_head(fn)``: one head of scaled dot-product attention by hand.
* ``concat_project(fn)``: concatenate the heads, then apply ``W_o``.
* ``n_parameters(answer, d_model=..., n_heads=..., bias=...)``: count the parameters of a layer.
* ``quietly()``: a context manager (from ``attention_kit.check``) that silences the checkers;
  the worked solutions use it so that their cells store no output.
"""

from __future__ import annotations

import numpy as np

from .. import init_multi_head, merge_heads, scaled_dot_product_attention, softmax, split_heads
from . import close, not_attempted, not_done, quietly, report, try_call
from .plain import plain_numpy

__all__ = ["quietly", "split_merge", "one_head", "concat_project", "n_parameters"]

# (n, h, d_head): n differs from h and from d_head, so a wrong reshape can never look right by accident.
_SPLIT_CASES = ((4, 2, 3), (3, 3, 2), (5, 4, 1))


def _shape_error(err: str) -> bool:
    return any(w in err for w in ("shape", "align", "dimension", "matmul"))


def _shape(x) -> tuple:
    return tuple(np.shape(x))


def _split_hint(got, X, n: int, h: int, d: int) -> str:
    """Name the mistake behind a wrong ``split_heads`` answer."""
    if close(got, X.reshape(h, n, d)):
        return ("this is the transposed reshape X.reshape(h, n, d_head): it cuts the row-major data into "
                "h runs of whole tokens, so each head gets the wrong rows and columns. Reshape to "
                "(n, h, d_head) first, then move the head axis to the front with .transpose(1, 0, 2)")
    if close(got, X.reshape(n, h, d)):
        return ("you reshaped to (n, h, d_head) but did not move the head axis to the front; "
                "add .transpose(1, 0, 2) to get (h, n, d_head)")
    if close(got, X.reshape(n, d, h).transpose(2, 0, 1)):
        return (f"head i got the interleaved columns i, i+h, i+2h, ...; each head owns a contiguous block "
                f"of d_head columns (head 0: columns 0..{d - 1}). Reshape to (n, h, d_head), not (n, d_head, h)")
    if close(got, X.T.reshape(h, d, n)):
        return "the last two axes are swapped: each head should be (n, d_head), one row per token"
    if _shape(got) != (h, n, d):
        return f"expected shape (h, n, d_head) = {(h, n, d)} for X of shape {X.shape} and h = {h}, got {_shape(got)}"
    return "the shape is right but the numbers are not: head i should hold columns i*d_head .. (i+1)*d_head - 1 of X"


def _merge_hint(got, Xh, n: int, h: int, d: int) -> str:
    """Name the mistake behind a wrong ``merge_heads`` answer."""
    if close(got, Xh.reshape(n, h * d)):
        return ("this is the transposed reshape Xh.reshape(n, h*d_head): it glues the heads together in "
                "memory order, not token by token. Move the head axis next to d_head first: "
                "Xh.transpose(1, 0, 2).reshape(n, h * d_head)")
    if close(got, Xh.transpose(1, 2, 0).reshape(n, h * d)):
        return ("the columns come out interleaved (d_head-major); transpose to (n, h, d_head), "
                "i.e. .transpose(1, 0, 2), before the reshape")
    if _shape(got) != (n, h * d):
        return f"expected shape (n, h*d_head) = {(n, h * d)} for heads of shape {Xh.shape}, got {_shape(got)}"
    return "merge_heads should undo split_heads: merge(split(X, h)) must give back X exactly"


@plain_numpy()
def split_merge(split_fn, merge_fn=None) -> bool:
    """Check ``split_fn(X, h) -> (h, n, d_head)`` and ``merge_fn(Xh) -> (n, h*d_head)``."""
    if not_done(split_fn):
        return not_attempted("no answer yet: write split(X, h) (and merge(Xh)) and pass them in")
    for n, h, d in _SPLIT_CASES:
        X = np.arange(n * h * d, dtype=float).reshape(n, h * d) / 10  # (n, h*d_head), every entry distinct
        got, err = try_call(split_fn, X.copy(), h)
        if got is Ellipsis:
            return not_attempted("no answer yet: replace the `...` after `return` with your code, then run the cell again")
        if err:
            return report(False, f"split: {err}")
        if not close(got, split_heads(X, h)):
            return report(False, f"split with n={n}, h={h}, d_head={d}: " + _split_hint(got, X, n, h, d))
    if merge_fn is None:
        return report(True, "split is right: head i holds columns i*d_head to (i+1)*d_head - 1 of every token")
    if not_done(merge_fn):
        return report(False, "split is right; merge has no answer yet")
    for n, h, d in _SPLIT_CASES:
        X = np.arange(n * h * d, dtype=float).reshape(n, h * d) / 10  # (n, h*d_head)
        Xh = split_heads(X, h)  # (h, n, d_head)
        got, err = try_call(merge_fn, Xh.copy())
        if got is Ellipsis:
            return report(False, "split is right; merge has no answer yet: replace the `...` after `return` with your code, then run the cell again")
        if err:
            return report(False, f"merge: {err}")
        if not close(got, merge_heads(Xh)):
            return report(False, f"merge with n={n}, h={h}, d_head={d}: " + _merge_hint(got, Xh, n, h, d))
    return report(True, "split and merge are right, and merge(split(X, h)) gives X back")


def _one_head_case(seed: int):
    rng = np.random.default_rng(seed)
    n, d_model, d_k, d_v = 4, 6, 2, 3  # non-square projections, so a transposed W fails loudly
    X = rng.normal(size=(n, d_model))
    W_q, W_k = rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_k))
    W_v = rng.normal(size=(d_model, d_v))
    return X, W_q, W_k, W_v


@plain_numpy()
def one_head(fn) -> bool:
    """Check ``fn(X, W_q, W_k, W_v) -> (n, d_v)``: one head of scaled dot-product attention."""
    if not_done(fn):
        return not_attempted("no answer yet: write head(X, W_q, W_k, W_v) and pass it in")
    for seed in (0, 1):
        X, W_q, W_k, W_v = _one_head_case(seed)
        got, err = try_call(fn, X.copy(), W_q.copy(), W_k.copy(), W_v.copy())
        if got is Ellipsis:
            return not_attempted("no answer yet: replace the `...` after `return` with your code, then run the cell again")
        if err:
            hint = " (rows are tokens: Q = X @ W_q with W_q of shape (d_model, d_k))" if _shape_error(err) else ""
            return report(False, err + hint)
        if isinstance(got, tuple) and got:
            got = got[0]
        Q, K, V = X @ W_q, X @ W_k, X @ W_v  # (n, d_k), (n, d_k), (n, d_v)
        want, weights = scaled_dot_product_attention(Q, K, V)
        if close(got, want):
            continue
        d_k, d_model = Q.shape[1], X.shape[1]
        S = Q @ K.T  # (n, n)
        E = np.exp(S / np.sqrt(d_k))  # (n, n) unnormalised weights
        wrong = [
            (softmax(S) @ V, "you forgot to divide the scores by sqrt(d_k) before the softmax"),
            (softmax(S / d_k) @ V, "divide the scores by sqrt(d_k), not by d_k"),
            (softmax(S / np.sqrt(d_model)) @ V,
             "divide by sqrt(d_k), the size of one head's keys (W_k.shape[1]), not by sqrt(d_model)"),
            (softmax(S / np.sqrt(d_k), axis=0) @ V,
             "softmax over the wrong axis: each query's row must sum to 1, so normalise with axis=-1"),
            (E / E.sum() @ V,
             "your softmax divided by the sum of the whole matrix; divide each row by its own sum: "
             "E.sum(axis=-1, keepdims=True)"),
            ((E / E.sum(axis=-1)) @ V,
             "E / E.sum(axis=-1) without keepdims=True divides column j by row j's sum; "
             "write E.sum(axis=-1, keepdims=True) so each row is divided by its own sum"),
            (softmax(S.T / np.sqrt(d_k)) @ V,
             "your scores are transposed (K @ Q.T): row i must hold query i's scores, so use Q @ K.T"),
            ((S / np.sqrt(d_k)) @ V, "you forgot the softmax: the scaled scores are not weights yet"),
            (weights @ X, "you averaged the rows of X; the head averages the values V = X @ W_v"),
            (weights, "you returned the weights (n, n); the head's output is weights @ V, shape (n, d_v)"),
        ]
        for w, hint in wrong:
            if close(got, w):
                return report(False, hint)
        if _shape(got) != want.shape:
            return report(False, f"expected shape (n, d_v) = {want.shape}, got {_shape(got)}")
        return report(False, "the shape is right but the numbers are not; compare with "
                             "softmax(Q @ K.T / sqrt(d_k), axis=-1) @ V")
    return report(True, "one head is right: softmax(Q K^T / sqrt(d_k)) V, one row per query")


@plain_numpy()
def concat_project(fn) -> bool:
    """Check ``fn(heads (h, n, d_v), W_o (h*d_v, d_model)) -> (n, d_model)``."""
    if not_done(fn):
        return not_attempted("no answer yet: write combine(heads, W_o) and pass it in")
    rng = np.random.default_rng(3)
    h, n, d_v, d_model = 2, 5, 3, 4  # h*d_v = 6 differs from d_model, so W_o is not square
    heads = rng.normal(size=(h, n, d_v))
    W_o = rng.normal(size=(h * d_v, d_model))
    got, err = try_call(fn, heads.copy(), W_o.copy())
    if got is Ellipsis:
        return not_attempted("no answer yet: replace the `...` after `return` with your code, then run the cell again")
    if err:
        hint = (" (first concatenate the heads along the features, concat of shape (n, h*d_v); then "
                "concat @ W_o with W_o of shape (h*d_v, d_model), not W_o.T)") if _shape_error(err) else ""
        return report(False, err + hint)
    concat = merge_heads(heads)  # (n, h*d_v)
    want = concat @ W_o  # (n, d_model)
    if close(got, want):
        return report(True, "concatenate, then W_o: every output feature can now mix all the heads")
    wrong = [
        (concat, "you concatenated the heads but forgot the output projection: multiply by W_o"),
        (heads.reshape(n, h * d_v) @ W_o,
         "the concatenation used the transposed reshape heads.reshape(n, h*d_v); first move the head axis: "
         "heads.transpose(1, 0, 2).reshape(n, h * d_v)"),
        (heads.transpose(1, 2, 0).reshape(n, h * d_v) @ W_o,
         "the concatenated columns are interleaved; use heads.transpose(1, 0, 2).reshape(n, h * d_v) "
         "so head 0's d_v columns come first"),
        (heads.sum(axis=0), "you added the heads instead of concatenating them, and W_o is missing"),
        (heads.mean(axis=0), "you averaged the heads instead of concatenating them, and W_o is missing"),
        (np.concatenate(list(heads), axis=0), "you stacked the heads along the token axis; concatenate along features (axis=-1)"),
    ]
    for w, hint in wrong:
        if close(got, w):
            return report(False, hint)
    if _shape(got) != want.shape:
        return report(False, f"expected shape (n, d_model) = {want.shape}, got {_shape(got)}")
    return report(False, "the shape is right but the numbers are not; compute merge(heads) @ W_o")


def n_parameters(answer, *, d_model: int, n_heads: int, bias: bool = False) -> bool:
    """Check a parameter count for multi-head attention with ``d_k = d_v = d_model / n_heads``."""
    if not_done(answer):
        return not_attempted("no answer yet: replace the `...` after `answer =` with your number, then run the cell again")
    try:
        value = float(answer)
    except (TypeError, ValueError):
        return report(False, f"give a number, got {type(answer).__name__}")
    # The reference comes from the package itself: the sizes of the arrays it builds.
    want = init_multi_head(d_model, n_heads, rng=np.random.default_rng(0), bias=bias).n_parameters()
    d, h = d_model, n_heads
    if value == want:
        return report(True, f"{want:,} parameters: W_q, W_k, W_v and W_o are each {d} x {d} in total"
                            + (f", plus {4 * d:,} biases" if bias else "") + "; the head count does not change it")
    dh = d // h
    qkv_b, o_b = (3 * dh, d) if bias else (0, 0)  # biases of one head's q, k, v; bias of W_o
    wrong = [
        (h * 3 * d * dh + h * qkv_b, "you forgot the output projection W_o, shape (h*d_v, d_model)"),
        (4 * d * d + 4 * d if not bias else None, "this layer has no biases; count only the weight matrices"),
        (4 * d * d if bias else None, "you forgot the biases: b_q, b_k, b_v (h*d_head each) and b_o (d_model)"),
        (4 * d * d + 3 * d if bias else None, "you forgot the output bias b_o, one number per output feature (d_model)"),
        (4 * d * d + d if bias else None,
         "you forgot the biases of the heads: b_q, b_k and b_v have d_head entries per head, h*d_head = d_model each"),
        (4 * d * d + 3 * h * d + d if bias else None,
         "each head's biases have d_head = d_model/h entries, not d_model: b_q[l] matches the columns of W_q[l]"),
        (h * 3 * (d * d + (d if bias else 0)) + d * d + o_b,
         "each head projects to d_head = d_model/h columns, not d_model: one head's W_q is d_model x d_model/h"),
        (h * (4 * d * d + (4 * d if bias else 0)),
         "each head projects to d_model/h columns, and all heads share one W_o"),
        (3 * d * dh + qkv_b + d * d + o_b, "you counted W_q, W_k, W_v of one head only; there are h of them"),
        (3 * d * dh + qkv_b + dh * d + o_b, "you counted one head only (and its share of W_o); there are h heads"),
    ]
    for w, hint in wrong:
        if w is not None and value == w:
            return report(False, hint)
    return report(False, f"not {value:,.0f}; count W_q, W_k, W_v (h heads of d_model x d_model/h each) "
                         "and W_o (h*d_v x d_model)" + (" plus every bias" if bias else ""))
