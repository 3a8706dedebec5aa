"""Exercise checkers for notebook 03 (multi-head attention).

Every checker prints one line, ``✓ ...`` or ``✗ ...`` with a hint aimed at the usual mistake, and
returns True or False. The learner's exceptions are reported, never raised. Hints name the mistake
and the idea, not the line of code that fixes it.

* ``split_merge(split_fn, merge_fn)``: for a batch of sequences, ``(b, n, h*d_head) -> (b, h, n, d_head)``
  and back (the layout of nanoGPT's ``(B, nh, T, hs)``); catches the reshape without the
  transpose, ``X.reshape(b, h, n, d_head)``, which has the right shape and the wrong entries.
* ``one_head(fn)``: one head of scaled dot-product attention by hand (one array, not a tuple).
* ``concat_project(fn)``: for a batch, concatenate the heads ``(b, h, n, d_v)``, then apply ``W_o``.
* ``n_parameters(answer, d_model=..., n_heads=..., d_head=..., bias=...)``: count the parameters of
  a layer whose heads have ``d_head`` columns each (``d_model / n_heads`` when not given); the
  answer is a whole number.
* ``quietly()``: a context manager (from ``attention_kit.check``) that silences the checkers;
  the worked solutions use it so that their cells store no output.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import merge_heads, scaled_dot_product_attention, softmax
from . import close, not_attempted, not_done, quietly, report, try_call
from .general import array_answer
from .plain import plain_numpy

__all__ = ["quietly", "split_merge", "one_head", "concat_project", "n_parameters"]

# (b, n, h, d_head): b, n, h and d_head mostly differ, so a wrong reshape rarely looks right by accident;
# the last case has n == h, where the reshape without the transpose keeps the shape and only the entries differ.
_SPLIT_CASES = ((2, 4, 2, 3), (3, 2, 4, 1), (2, 3, 3, 2))


def _shape_error(err: str) -> bool:
    return any(w in err for w in ("shape", "align", "dimension", "matmul", "axes"))


def _shape(x) -> tuple:
    try:
        return tuple(np.shape(x))
    except Exception:  # the learner's object: never raise
        return ()


def _split_ref(X: np.ndarray, h: int) -> np.ndarray:
    b, n, hd = X.shape
    return X.reshape(b, n, h, hd // h).transpose(0, 2, 1, 3)  # (b, n, h, d_head) -> (b, h, n, d_head)


def _merge_ref(Xh: np.ndarray) -> np.ndarray:
    b, h, n, d = Xh.shape
    return Xh.transpose(0, 2, 1, 3).reshape(b, n, h * d)  # (b, h, n, d) -> (b, n, h, d) -> (b, n, h*d)


def _split_hint(got, X, b: int, n: int, h: int, d: int) -> str:
    """Name the mistake behind a wrong split."""
    if close(got, X.reshape(b, h, n, d)):
        return ("this is the reshape without the transpose, X.reshape(b, h, n, d_head): numpy fills the new "
                "shape in memory order, token after token, so 'head 1' gets whole tokens instead of every token's "
                "first d_head columns. Split the features into (h, d_head) first, then bring the head axis in "
                "front of the token axis")
    if close(got, X.reshape(b, n, h, d)):
        return ("you split the features into (h, d_head) but the head axis still comes after the token axis: "
                "the result must be (b, h, n, d_head)")
    if close(got, X.reshape(b, n, d, h).transpose(0, 3, 1, 2)):
        return (f"head i got the interleaved columns i, i+h, i+2h, ...; each head owns a contiguous block "
                f"of d_head columns (head 1: columns 0 up to, not including, {d}). Split into (h, d_head), not (d_head, h)")
    if close(got, X.reshape(b, n, h, d).transpose(2, 0, 1, 3)):
        return "the head axis went in front of the batch axis: the batch axis stays first, (b, h, n, d_head)"
    if _shape(got) != (b, h, n, d):
        return (f"expected shape (b, h, n, d_head) = {(b, h, n, d)} for X of shape {X.shape} and h = {h}, "
                f"got {_shape(got)}; X is a batch of sequences, (b, n, h*d_head)")
    return ("the shape is right but the numbers are not: head i of sequence s should hold columns i*d_head "
            "up to, not including, (i+1)*d_head of every token of sequence s")


def _merge_hint(got, Xh, b: int, n: int, h: int, d: int) -> str:
    """Name the mistake behind a wrong merge."""
    if close(got, Xh.reshape(b, n, h * d)):
        return ("this is the reshape without the transpose: it glues the heads together in memory order, "
                "head after head, not token by token. Bring the token axis in front of the head axis first")
    if close(got, Xh.transpose(0, 2, 3, 1).reshape(b, n, h * d)):
        return ("the columns come out interleaved (d_head-major): each head's d_head columns must stay "
                "side by side, head 1's block first")
    if _shape(got) != (b, n, h * d):
        return f"expected shape (b, n, h*d_head) = {(b, n, h * d)} for heads of shape {Xh.shape}, got {_shape(got)}"
    return "merge should undo split: merge(split(X, h)) must give back X exactly"


@plain_numpy()
def split_merge(split_fn, merge_fn=None) -> bool:
    """Check ``split_fn(X, h) -> (b, h, n, d_head)`` and ``merge_fn(Xh) -> (b, n, h*d_head)`` for a
    batch ``X`` of shape ``(b, n, h*d_head)``."""
    if not_done(split_fn):
        return not_attempted("no answer yet: write split(X, h) (and merge(Xh)) and pass them in")
    for b, n, h, d in _SPLIT_CASES:
        X = np.arange(b * n * h * d, dtype=float).reshape(b, n, h * d) / 10  # (b, n, h*d_head), entries distinct
        got, err = try_call(split_fn, X.copy(), h)
        if got is Ellipsis:
            return not_attempted("no answer yet: replace the `...` after `return` with your code, then run the cell again")
        if err:
            hint = ""
            if "axes" in err or "reshape" in err:
                hint = (f" X is a batch, shape (b, n, h*d_head) = {X.shape}: every reshape and transpose must "
                        "account for the batch axis in front, which stays first")
            return report(False, f"split: {err}.{hint}" if hint else f"split: {err}")
        if (msg := array_answer(got)):
            return report(False, f"split: {msg}")
        if not close(got, _split_ref(X, h)):
            return report(False, f"split with b={b}, n={n}, h={h}, d_head={d}: " + _split_hint(got, X, b, n, h, d))
    if merge_fn is None:
        return report(True, "split is right: head i holds columns i*d_head up to (i+1)*d_head of every token")
    if not_done(merge_fn):
        return report(False, "split is right; merge has no answer yet")
    for b, n, h, d in _SPLIT_CASES:
        X = np.arange(b * n * h * d, dtype=float).reshape(b, n, h * d) / 10  # (b, n, h*d_head)
        Xh = _split_ref(X, h)  # (b, h, n, d_head)
        got, err = try_call(merge_fn, Xh.copy())
        if got is Ellipsis:
            return report(False, "split is right; merge has no answer yet: replace the `...` after `return` with your code, then run the cell again")
        if err:
            hint = (" The heads come as a batch, (b, h, n, d_head): the batch axis stays first"
                    if ("axes" in err or "reshape" in err) else "")
            return report(False, f"merge: {err}.{hint}" if hint else f"merge: {err}")
        if (msg := array_answer(got)):
            return report(False, f"merge: {msg}")
        if not close(got, _merge_ref(Xh)):
            return report(False, f"merge with b={b}, n={n}, h={h}, d_head={d}: " + _merge_hint(got, Xh, b, n, h, d))
    return report(True, "split and merge are right for a batch, and merge(split(X, h)) gives X back")


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
            hint = (" (rows are tokens: each row of X multiplies W_q, shape (d_model, d_k), from the left)"
                    if _shape_error(err) else "")
            return report(False, err + hint)
        if isinstance(got, tuple):
            return report(False, "your function returned a tuple; the task asks for one array, the head's output "
                                 "(n, d_v), not the weights with it")
        if (msg := array_answer(got)):
            return report(False, msg)
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
             "divide by sqrt(d_k), the size of one head's keys, not by sqrt(d_model)"),
            (softmax(S / np.sqrt(d_k), axis=0) @ V,
             "softmax over the wrong axis: each query's row must sum to 1, so normalise over the keys, the last axis"),
            (E / E.sum() @ V,
             "your softmax divided by the sum of the whole matrix; divide each row by its own sum"),
            ((E / E.sum(axis=-1)) @ V,
             "your row sums lost their axis, so column j was divided by row j's sum; keep the sums as a "
             "column so that each row is divided by its own sum"),
            (softmax(S.T / np.sqrt(d_k)) @ V,
             "your scores are transposed: row i must hold query i's scores against every key"),
            ((S / np.sqrt(d_k)) @ V, "you forgot the softmax: the scaled scores are not weights yet"),
            (weights @ X, "you averaged the rows of X; the head averages the values, X projected by W_v"),
            (weights, "you returned the weights (n, n); the head's output is weights @ V, shape (n, d_v)"),
        ]
        for w, hint in wrong:
            if close(got, w):
                return report(False, hint)
        if _shape(got) != want.shape:
            return report(False, f"expected shape (n, d_v) = {want.shape}, got {_shape(got)}")
        return report(False, "the shape is right but the numbers are not: scores of each query against every "
                             "key, scaled by sqrt(d_k), softmax over the keys, then the weighted values")
    return report(True, "one head is right: softmax(Q K^T / sqrt(d_k)) V, one row per query")


@plain_numpy()
def concat_project(fn) -> bool:
    """Check ``fn(heads (b, h, n, d_v), W_o (h*d_v, d_model)) -> (b, n, d_model)`` for a batch."""
    if not_done(fn):
        return not_attempted("no answer yet: write combine(heads, W_o) and pass it in")
    rng = np.random.default_rng(3)
    b, h, n, d_v, d_model = 3, 2, 5, 3, 4  # h*d_v = 6 differs from d_model, so W_o is not square
    heads = rng.normal(size=(b, h, n, d_v))
    W_o = rng.normal(size=(h * d_v, d_model))
    got, err = try_call(fn, heads.copy(), W_o.copy())
    if got is Ellipsis:
        return not_attempted("no answer yet: replace the `...` after `return` with your code, then run the cell again")
    if err:
        hint = (f" (the heads come as a batch, {heads.shape} = (b, h, n, d_v): first put each token's heads "
                "side by side along the features, (b, n, h*d_v), keeping the batch axis first; then W_o, of shape "
                "(h*d_v, d_model), maps the features)") if _shape_error(err) else ""
        return report(False, err + hint)
    if (msg := array_answer(got)):
        return report(False, msg)
    concat = np.stack([merge_heads(x) for x in heads])  # (b, n, h*d_v)
    want = concat @ W_o  # (b, n, d_model)
    if close(got, want):
        return report(True, "concatenate, then W_o: every output feature can now mix all the heads")
    wrong = [
        (concat, "you concatenated the heads but forgot the output projection W_o"),
        (heads.reshape(b, n, h * d_v) @ W_o,
         "the concatenation is the reshape without the transpose: it glues the heads in memory order, "
         "not token by token. Bring the token axis in front of the head axis first"),
        (heads.transpose(0, 2, 3, 1).reshape(b, n, h * d_v) @ W_o,
         "the concatenated columns are interleaved; head 1's d_v columns must come first, side by side"),
        (heads.sum(axis=1), "you added the heads instead of concatenating them, and W_o is missing"),
        (heads.mean(axis=1), "you averaged the heads instead of concatenating them, and W_o is missing"),
    ]
    for w, hint in wrong:
        if close(got, w):
            return report(False, hint)
    if _shape(got) != want.shape:
        return report(False, f"expected shape (b, n, d_model) = {want.shape}, got {_shape(got)}")
    return report(False, "the shape is right but the numbers are not: each token's heads side by side "
                         "(head 1 first), then the output projection")


def _count(d_model: int, n_heads: int, d_head: int, bias: bool) -> int:
    """The parameters of a layer: W_q, W_k, W_v (d_model x h*d_head each), W_o (h*d_head x d_model), and
    with ``bias`` b_q, b_k, b_v (h*d_head each) and b_o (d_model). Counted from the shapes, without building
    the arrays (T5-11B's layer has 67 million); the tests compare it with ``init_multi_head``'s arrays."""
    width = n_heads * d_head
    return 4 * d_model * width + ((3 * width + d_model) if bias else 0)


def n_parameters(answer, *, d_model: int, n_heads: int, d_head: int | None = None, bias: bool = False) -> bool:
    """Check a parameter count for multi-head attention whose heads have ``d_k = d_v = d_head``
    columns each (``d_model / n_heads`` when ``d_head`` is not given). The answer is a whole number."""
    if not_done(answer):
        return not_attempted("no answer yet: replace the `...` after `answer =` with your number, then run the cell again")
    if isinstance(answer, (bool, np.bool_)) or not isinstance(answer, numbers.Real):
        return report(False, f"give a whole number, got {type(answer).__name__}")
    value = float(answer)
    if not value.is_integer():
        return report(False, f"{value:,} is not a whole number: a count of parameters has no fraction")
    d, h = d_model, n_heads
    dh = d // h if d_head is None else d_head
    want = _count(d, h, dh, bias)
    if value == want:
        return report(True, f"{want:,} parameters: W_q, W_k, W_v are {d} x {h * dh} in total, W_o is {h * dh} x {d}"
                            + (f", plus {3 * h * dh + d:,} biases" if bias else "")
                            + ("" if h * dh != d else "; the head count does not change it"))
    qkv_b, o_b = (3 * dh, d) if bias else (0, 0)  # biases of one head's q, k, v; bias of W_o
    wrong = [
        (h * 3 * d * dh + h * qkv_b, "you forgot the output projection W_o, shape (h*d_v, d_model)"),
        (4 * d * d if h * dh != d else None,
         f"4 d_model^2 holds only when the heads together are d_model wide; here h*d_head = {h * dh}, "
         f"not {d}: count each matrix from its shape"),
        (4 * d * d + 4 * d if h * dh != d else None,
         "the formula of section 5 assumes h*d_head = d_model" + (" and biases" if not bias else "")
         + "; count each matrix of this layer from its shape"),
        (4 * d * h * dh + 4 * d if not bias else None, "this layer has no biases; count only the weight matrices"),
        (4 * d * h * dh if bias else None, "you forgot the biases: b_q, b_k, b_v (h*d_head each) and b_o (d_model)"),
        (4 * d * h * dh + 3 * h * dh if bias else None,
         "you forgot the output bias b_o, one number per output feature (d_model)"),
        (4 * d * h * dh + d if bias else None,
         "you forgot the biases of the heads: b_q, b_k and b_v have d_head entries per head"),
        (4 * d * h * dh + 3 * h * d + d if bias else None,
         "each head's biases have d_head entries, not d_model: b_q[l] matches the columns of W_q[l]"),
        (h * 3 * (d * d + (d if bias else 0)) + d * d + o_b if dh != d else None,
         "each head projects to d_head columns, not d_model: one head's W_q is d_model x d_head"),
        (h * (3 * d * dh + qkv_b + dh * d + o_b) if h > 1 else None,
         "all heads share one W_o (h*d_v x d_model) and one b_o: you counted it once per head"),
        (h * (4 * d * d + (4 * d if bias else 0)) if h > 1 else None,
         "each head projects to d_head columns, and all heads share one W_o"),
        (3 * d * dh + qkv_b + h * dh * d + o_b if h > 1 else None,
         "you counted W_q, W_k, W_v of one head only; there are h of them"),
        (3 * d * dh + qkv_b + dh * d + o_b if h > 1 else None,
         "you counted one head only (and its share of W_o); there are h heads"),
    ]
    for w, hint in wrong:
        if w is not None and value == w:
            return report(False, hint)
    return report(False, f"your count, {value:,.0f}, is not the layer's: count W_q, W_k, W_v (h heads of d_model x "
                         "d_head each) and W_o (h*d_v x d_model)" + (" plus every bias" if bias else ""))
