"""Exercise checkers for notebook 07 (attention at scale).

Every checker prints one line, ``✓ ...`` or ``✗ ...`` with a hint aimed at the usual mistake, and
returns True or False. The learner's exceptions are reported, never raised.

* ``online_update(fn)``: ``fn(m, l, o, s, V) -> (m_new, l_new, o_new)``, one online-softmax step of
  one query row over a new block of scores ``s`` (b,) and values ``V`` (b, d_v), in the form of
  FlashAttention's first paper (Dao et al., 2022), where the output ``o`` is kept *normalised* after
  every block (notebook 07's ``my_tiled`` keeps it unnormalised and divides at the end); catches
  the old output not turned back into a sum, the old output or the old sum not rescaled, the
  unnormalised accumulator returned, the output rescaled twice, the factor upside down (NaN from
  ``m = -inf``) and the maximum not updated.
* ``skipped_tiles(fn)``: ``fn(n, block_q, block_k) -> int``, the tiles a causal mask skips;
  catches counted (query, key) pairs, a forgotten last partial block, the diagonal tiles counted
  as skipped, the computed tiles, half of all tiles, and a count that is not an int.
* ``kv_cache_size(fn)``: ``fn(n_tokens, layers, heads, kv_heads, d_head, bytes_per_value) -> int``
  bytes; catches the forgotten 2 (keys *and* values), query heads instead of key/value heads, the
  layers or the bytes per value forgotten, bits instead of bytes, and a size that is not an int.
* ``quietly()``: a context manager (from ``attention_kit.check``) that silences the checkers;
  the worked solutions use it so that their cells store no output.
"""

from __future__ import annotations

import math

import numpy as np

from .. import kv_cache_bytes, tile_counts
from ..scale.kvcache import MODEL_SHAPES
from . import close, not_attempted, not_done, quietly, report, report_failure, try_call
from .plain import plain_numpy

__all__ = ["quietly", "online_update", "skipped_tiles", "kv_cache_size"]

STUB = "no answer yet: replace the `...` after `return` with your code, then run the cell again"


def _stub(got) -> bool:
    return got is Ellipsis or (isinstance(got, tuple) and any(x is Ellipsis for x in got))


# ---------------------------------------------------------------- online update


def _right(m, l, o, s, V):
    m_new = max(m, float(np.max(s)))
    alpha = math.exp(m - m_new)  # 0 from m = -inf
    p = np.exp(s - m_new)
    l_new = alpha * l + p.sum()
    return m_new, l_new, (alpha * l * o + p @ V) / l_new


def _wrong_updates():
    """(update, hint) for the usual mistakes, each a full step (m, l, o, s, V) -> state."""
    def step(o_new, *, l_scaled=True, m_fixed=False):
        def f(m, l, o, s, V):
            m_new = max(m, float(np.max(s)))
            a = math.exp(m - m_new)
            p = np.exp(s - m_new)
            l_new = (a if l_scaled else 1.0) * l + p.sum()
            return (m if m_fixed else m_new), l_new, o_new(a, l, o, p @ V, l_new)
        return f

    return [
        (step(lambda a, l, o, pv, ln: (a * o + pv) / ln),
         "o is normalised (divided by the old l), so before new terms can be added it must be turned back "
         "into a sum against the old maximum, which is what the old l undoes"),
        (step(lambda a, l, o, pv, ln: (l * o + pv) / ln),
         "the old output was not rescaled: its terms were taken against the old maximum, and when the "
         "maximum rises every one of them shrinks by the same factor"),
        (step(lambda a, l, o, pv, ln: (a * l * o + pv) / ln, l_scaled=False),
         "the old sum l was not rescaled: its terms were taken against the old maximum too, so they shrink "
         "by the same factor as the output's"),
        (step(lambda a, l, o, pv, ln: a * o + pv),
         "that is section 3's unnormalised accumulator: this exercise keeps o normalised after every block, "
         "so that o is at each step the softmax-weighted average of the values seen so far"),
        (step(lambda a, l, o, pv, ln: (a * a * l * o + pv) / ln),
         "the old output was rescaled twice: the factor applies once to each old term"),
        (step(lambda a, l, o, pv, ln: (a * l * o + pv) / ln, m_fixed=True),
         "return the new maximum, not the old m: the next block is compared with it"),
    ]


def _update_cases():
    """Blocks of one row whose maximum rises (so the rescaling matters), and one where it does not."""
    rng = np.random.default_rng(7)
    V = rng.normal(size=(9, 3))  # (n_k, d_v)
    rising = np.array([-1.0, 0.5, 0.2, 2.0, 1.0, -0.5, 4.0, 3.0, 0.0])  # new maxima in blocks 2 and 3
    falling = np.array([5.0, 1.0, 2.0, 0.0, -1.0, 3.0, 1.5, -2.0, 0.5])
    return [("blocks of 3 scores whose maximum rises", rising, V, 3),
            ("blocks of 2 scores (the last block shorter)", rising[::-1].copy(), V, 2),
            ("blocks whose maximum comes first", falling, V, 4)]


def _run(fn, s, V, b):
    """The learner's states after each block, from m = -inf, l = 0, o = 0; or an error text."""
    m, l, o = -np.inf, 0.0, np.zeros(V.shape[1])
    states = []
    for start in range(0, len(s), b):
        with np.errstate(all="ignore"):
            got, err = try_call(fn, m, l, o.copy(), s[start:start + b].copy(), V[start:start + b].copy())
        if err or _stub(got):
            return None, (STUB if _stub(got) else err)
        try:
            m, l, o = got
            m, l, o = float(m), float(l), np.asarray(o, dtype=float)
        except Exception:  # the learner's object: never raise
            return None, (f"return the three values (m_new, l_new, o_new), got {type(got).__name__} "
                          f"{str(got)[:60]}")
        states.append((m, l, o))
    return states, None


def _same_states(a, b) -> bool:
    return len(a) == len(b) and all(
        close(x[0], y[0], atol=1e-9) and close(x[1], y[1], atol=1e-9) and close(x[2], y[2], atol=1e-9)
        for x, y in zip(a, b, strict=True))


@plain_numpy()
def online_update(fn) -> bool:
    """Check ``fn(m, l, o, s, V) -> (m_new, l_new, o_new)``, one online-softmax step of one row with
    the output ``o`` kept normalised (``o = softmax(scores so far) @ values so far`` after every block)."""
    if not_done(fn):
        return not_attempted("no answer yet: write my_online_update(m, l, o, s, V) and pass it in")
    for case, s, V, b in _update_cases():
        got, err = _run(fn, s, V, b)
        if err:
            return report_failure(err, stub=STUB)
        want, _ = _run(_right, s, V, b)
        if _same_states(got, want):
            continue
        first = got[0]
        if not (np.isfinite(first[1]) and np.all(np.isfinite(first[2]))):
            return report(False, f"{case}: the first block gives NaN or inf. From m = -inf the factor for the "
                                 "old terms must be exp(-inf) = 0 (there are none yet); the factor upside down "
                                 "is exp(+inf) = inf, and inf times l = 0 is NaN. The old terms shrink when the "
                                 "maximum rises: the factor is at most 1")
        for wrong, hint in _wrong_updates():
            ref, _ = _run(wrong, s, V, b)
            if ref is not None and _same_states(got, ref):
                return report(False, f"{case}: {hint}")
        shape = np.shape(got[-1][2])
        if shape != (V.shape[1],):
            return report(False, f"{case}: o_new must have shape (d_v,) = ({V.shape[1]},), one number per "
                                 f"value feature, got {shape}")
        bad = next(i for i, (x, y) in enumerate(zip(got, want, strict=True))
                   if not _same_states([x], [y]))
        part = ("m_new" if not close(got[bad][0], want[bad][0], atol=1e-9) else
                "l_new" if not close(got[bad][1], want[bad][1], atol=1e-9) else "o_new")
        return report(False, f"{case}: after block {bad + 1}, {part} is off. After every block m must be the "
                             "largest score so far, l the sum of exp(score - m) so far, and o the "
                             "softmax-weighted average of the values so far")
    return report(True, "the online update is right: the old output, turned back into a sum and rescaled once "
                        "by exp(m - m_new), plus the new terms, divided by the new l: o is the softmax "
                        "average of every value so far, after every block")


# ---------------------------------------------------------------- skipped tiles

# (n, block_q, block_k): a block that divides n, one that does not, and unequal blocks
_TILE_CASES = ((13, 4, 4), (12, 4, 4), (10, 4, 2), (16, 4, 8), (7, 3, 3), (9, 2, 3))


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _partly_masked(n, bq, bk):
    """Tiles with at least one masked pair (the diagonal tiles included)."""
    return sum(c1 - 1 > r0 for r0 in range(0, n, bq) for c1 in [min(c + bk, n) for c in range(0, n, bk)])


_WRONG_TILES = [
    (lambda n, bq, bk: n * (n - 1) // 2,
     "that is the number of (query, key) pairs above the diagonal; count tiles of block_q x block_k instead"),
    (lambda n, bq, bk: sum(1 for i in range(n // bq) for j in range(n // bk) if j * bk > (i + 1) * bq - 1),
     "the last, shorter block was left out: there are ceil(n / block) blocks per side, not n // block"),
    (_partly_masked,
     "the diagonal tiles were counted as skipped: a tile is skipped only when *every* pair in it is masked; "
     "a diagonal tile still holds allowed pairs and must be computed"),
    (lambda n, bq, bk: tile_counts(n, n, block_q=bq, block_k=bk, causal=True).computed,
     "that is the number of tiles that are computed; the question asks for the skipped ones"),
    (lambda n, bq, bk: _ceil(n, bq) * _ceil(n, bk) / 2,
     "about half is right for large n, but count exactly: a tile is skipped when its first key comes after "
     "its last query"),
    (lambda n, bq, bk: _ceil(n, bq) * _ceil(n, bk) // 2,
     "about half is right for large n, but count exactly: a tile is skipped when its first key comes after "
     "its last query"),
    (lambda n, bq, bk: _ceil(n, bq) * (_ceil(n, bq) - 1) // 2,
     "T (T - 1) / 2 holds only when block_q == block_k; with unequal blocks, count for each query block "
     "the key blocks that start after its last query"),
]


def _answers(fn, cases, what: str):
    """The learner's answer for every case, or ``(None, message)`` at the first that is not a number."""
    out = []
    for args in cases:
        got, err = try_call(fn, *args)
        if _stub(got):
            return None, STUB
        if err:
            return None, err
        if isinstance(got, (bool, np.bool_)) or not isinstance(got, (int, float, np.integer, np.floating)):
            return None, f"return {what}, got {type(got).__name__} {str(got)[:40]}"
        out.append(got)
    return out, None


def _not_int(got: list, what: str) -> str | None:
    """The hint when a count is right in value but not an int (a float such as 6.0 from a division)."""
    odd = next((g for g in got if not isinstance(g, (int, np.integer))), None)
    if odd is None:
        return None
    return (f"the numbers are right, but return {what} as an int, not a {type(odd).__name__} ({odd!r}): "
            "a count has no fraction, and a float from a division can lose the last units for large counts")


def _diagnose(got: list, wrongs: list) -> str | None:
    """The hint of the first mistake that reproduces the learner's answer in *every* case."""
    for values, hint in wrongs:
        if all(math.isclose(g, w, rel_tol=1e-9) for g, w in zip(got, values, strict=True)):
            return hint
    return None


@plain_numpy()
def skipped_tiles(fn) -> bool:
    """Check ``fn(n, block_q, block_k) -> int``: the tiles a causal mask lets tiled attention skip."""
    if not_done(fn):
        return not_attempted("no answer yet: write my_skipped_tiles(n, block_q, block_k) and pass it in")
    got, err = _answers(fn, _TILE_CASES, "a whole number of tiles")
    if err:
        return report_failure(err, stub=STUB)
    want = [tile_counts(n, n, block_q=bq, block_k=bk, causal=True).skipped for n, bq, bk in _TILE_CASES]
    if got == want and (msg := _not_int(got, "the number of tiles")):
        return report(False, msg)
    if got == want:
        return report(True, "the count is right: a tile is skipped exactly when its first key comes after its "
                            "last query; with equal blocks that is T (T - 1) / 2 of the T^2 tiles")
    i = next(k for k, (g, w) in enumerate(zip(got, want, strict=True)) if g != w)
    (n, bq, bk) = _TILE_CASES[i]
    case = f"n = {n}, block_q = {bq}, block_k = {bk}: expected {want[i]} skipped tiles, got {got[i]:g}"
    hint = _diagnose(got, [([w(*c) for c in _TILE_CASES], h) for w, h in _WRONG_TILES])
    return report(False, f"{case}; {hint}" if hint else
                  f"{case}. Tile (i, j) covers queries i*block_q .. and keys j*block_k ..; it is skipped when "
                  "its first key j*block_k is after its last query")


# ---------------------------------------------------------------- KV cache size

# Mistral 7B at its window, 4,096 tokens: its rolling buffer caches min(n, W) tokens, which the learner's
# formula (without a window) gives only up to W.
_KV_CASES = [(name, shape, n) for name, n in (("Llama 2 70B", 4096), ("Falcon 7B", 2048),
                                               ("Llama 2 7B", 1000), ("Mistral 7B", 4096))
             for shape in [MODEL_SHAPES[name]]]
_BPV = (2, 2, 4, 2)  # float16, float16, float32, bfloat16


def _kv_wrong(n, L, H, Hkv, d, b):
    return [
        (kv_cache_bytes(n, layers=L, kv_heads=Hkv, d_head=d, bytes_per_value=b) // 2,
         "half the right size: the cache holds a key *and* a value per token, head and layer: the factor 2"),
        (kv_cache_bytes(n, layers=L, kv_heads=H, d_head=d, bytes_per_value=b),
         "you used the query heads: only the key/value heads are cached, kv_heads (fewer than heads in GQA and MQA)"),
        (kv_cache_bytes(n, layers=1, kv_heads=Hkv, d_head=d, bytes_per_value=b),
         "that is one layer: every layer keeps its own keys and values, so multiply by layers"),
        (kv_cache_bytes(n, layers=L, kv_heads=Hkv, d_head=d, bytes_per_value=1),
         "that counts numbers, not bytes: multiply by bytes_per_value"),
        (8 * kv_cache_bytes(n, layers=L, kv_heads=Hkv, d_head=d, bytes_per_value=b),
         "that is in bits: a byte is 8 bits, and bytes_per_value already counts bytes"),
        (n * kv_cache_bytes(n, layers=L, kv_heads=Hkv, d_head=d, bytes_per_value=b),
         "the cache grows linearly with the tokens, one key and one value each: n_tokens, not n_tokens^2"),
    ]


@plain_numpy()
def kv_cache_size(fn) -> bool:
    """Check ``fn(n_tokens, layers, heads, kv_heads, d_head, bytes_per_value) -> bytes`` on real shapes."""
    if not_done(fn):
        return not_attempted("no answer yet: write my_kv_cache_bytes(n_tokens, layers, heads, kv_heads, d_head, "
                             "bytes_per_value) and pass it in")
    cases = [(n, s["layers"], s["heads"], s["kv_heads"], s["d_head"], b)
             for (_, s, n), b in zip(_KV_CASES, _BPV, strict=True)]
    got, err = _answers(fn, cases, "a number of bytes")
    if err:
        return report_failure(err, stub=STUB)
    want = [kv_cache_bytes(n, layers=L, kv_heads=Hkv, d_head=d, bytes_per_value=b) for n, L, _, Hkv, d, b in cases]
    if all(g == w for g, w in zip(got, want, strict=True)) and (msg := _not_int(got, "the number of bytes")):
        return report(False, msg)
    if all(g == w for g, w in zip(got, want, strict=True)):
        return report(True, "the cache size is right: 2 x layers x kv_heads x d_head x bytes per token; GQA and "
                            "MQA shrink it by heads / kv_heads")
    i = next(k for k, (g, w) in enumerate(zip(got, want, strict=True)) if g != w)
    name, (n, L, H, Hkv, d, b) = _KV_CASES[i][0], cases[i]
    case = (f"{name} ({L} layers, {H} heads, {Hkv} key/value heads, d_head {d}, {b} bytes) at {n} tokens: "
            f"expected {want[i] / 2**30:.3g} GiB, got {got[i] / 2**30:.3g} GiB")
    wrongs = [[w for w, _ in _kv_wrong(*c)] for c in cases]  # per case, one value per mistake
    hints = [h for _, h in _kv_wrong(*cases[0])]
    units = ([w / 2**30 for w in want], "return bytes, not GiB or GB: leave out the division")
    units_gb = ([w / 1e9 for w in want], units[1])
    hint = _diagnose(got, [([row[k] for row in wrongs], hints[k]) for k in range(len(hints))] + [units, units_gb])
    return report(False, f"{case}; {hint}" if hint else
                  f"{case}. Per token: 2 (K and V) x layers x kv_heads x d_head x bytes_per_value")
