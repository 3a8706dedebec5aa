"""The exercises of attention at scale, declared once: for each exercise of
notebook 07, its statement and checker, and its grader's part (hidden cases, reference, comparison,
the samples its tests try); see ``declare.py``."""

from __future__ import annotations

import math

import numpy as np

from ..scale.kvcache import kv_cache_bytes
from ..scale.tiled import tile_counts
from . import at_scale
from .declare import Exercise, Grading, Hidden, draw_sizes, exact_count, grades, online_ok
from .recorded import reference

EXERCISES = (
    Exercise("07.1", "online softmax update", ("my_online_update",), at_scale.online_update),
    Exercise("07.2", "skipped tiles", ("my_skipped_tiles",), at_scale.skipped_tiles),
    Exercise("07.3", "KV cache size", ("my_kv_cache_bytes",), at_scale.kv_cache_size),
)


# ---------------------------------------------------------------- 07.1 online softmax update


@reference
def online_step(m, l, o, s, V):
    """One step with the output kept normalised: o is the softmax average of the values so far."""
    m_new = max(m, float(np.max(s)))
    p = np.exp(s - m_new)  # (b,) the new terms
    l_new = math.exp(m - m_new) * l + float(p.sum())
    w_old = math.exp(m - m_new) * l / l_new  # the old average's share of the new one (0 at the start)
    return m_new, l_new, w_old * o + (p / l_new) @ V


@reference
def online_cases(rng):
    """(m, l, o, s, V): the first block (m = -inf, l = 0, o = 0), a block whose maximum rises, one
    whose maximum does not."""
    b, d_v = int(rng.choice([1, 5, 6])), int(rng.choice([2, 4, 5]))
    s1, s2, s3 = (rng.normal(scale=2.0, size=b) for _ in range(3))
    s2 += s1.max() - s2.max() + rng.uniform(1.0, 3.0)  # the maximum rises
    s3 += s2.max() - s3.max() - rng.uniform(1.0, 3.0)  # it does not
    s = np.concatenate([s1, s2, s3])
    V = rng.normal(size=(3 * b, d_v))
    state = (-math.inf, 0.0, np.zeros(d_v))
    out = []
    for k in range(3):
        blk = slice(k * b, (k + 1) * b)
        out.append((state[0], state[1], state[2].copy(), s[blk].copy(), V[blk].copy()))
        state = online_step(*state, s[blk], V[blk])
    return out


@reference
def online_ref(m, l, o, s, V):
    return online_step(m, l, o, s, V)


@grades("07.1")
def grading_online_update():
    return Grading(
        task='`my_online_update(m, l, o, s, V)`, one step of one query row with the output `o` kept '
             "normalised after every block (Dao et al. 2022's form; section 3's `my_tiled` keeps it "
             'unnormalised, so its lines do not pass)',
        catches='the old output not turned back into a sum (times the old ℓ); the old output or the old sum '
                "not rescaled; section 3's unnormalised accumulator returned; the output rescaled twice; the "
                'factor upside down, $e^{m_\\text{new} - m}$ (NaN from $m = -\\infty$, named as such); the new '
                'terms taken against the old maximum (inf from $m = -\\infty$, told apart from the factor upside '
                'down by a step from a finite state); the old maximum returned; a wrong shape; not three values '
                'returned (m and l as 1-element arrays are numbers, in class and at grading). Values of two '
                'widths. Hints name the idea, not the update',
        hidden=(Hidden(online_cases, online_ref, online_ok),),
        # section 3's unnormalised accumulator
        wrong={0: "def f(m, l, o, s, V):\n    m_new = max(m, s.max())\n    a = np.exp(m - m_new)\n"
                  "    p = np.exp(s - m_new)\n    return m_new, a * l + p.sum(), a * o + p @ V"},
        other_right={0: "def f(m, l, o, s, V):\n    m_new = float(np.max([m, *s]))\n    a = np.exp(m - m_new)\n"
                        "    p = np.exp(s - m_new)\n    l_new = a * l + p.sum()\n"
                        "    return [m_new, l_new, a * (l / l_new) * o + V.T @ (p / l_new)]"},
    )


# ---------------------------------------------------------------- 07.2 skipped tiles


@reference
def tiles_cases(rng):
    """(n, block_q, block_k): equal blocks that do not divide n, unequal blocks, and unequal
    blocks that divide n."""
    b = int(rng.integers(3, 7))
    n1 = int(rng.integers(3, 6)) * b + int(rng.integers(1, b))
    n1 += b if (n1, b) == (13, 4) else 0  # (13, 4, 4) is an in-class case
    bq, bk = draw_sizes(rng, 2, 7, 2)
    n2 = int(rng.integers(17, 40))
    n3 = int(rng.integers(2, 5)) * bq * bk
    return [(n1, b, b), (n2, bq, bk), (n3, bk, bq)]


@reference
def tiles_ref(n, block_q, block_k):
    return tile_counts(n, n, block_q=block_q, block_k=block_k, causal=True).skipped


@grades("07.2")
def grading_skipped_tiles():
    return Grading(
        task='`my_skipped_tiles(n, block_q, block_k)` under a causal mask, an int (a right float is '
             'rejected)',
        catches='(query, key) pairs counted instead of tiles; the last, shorter block forgotten; the diagonal '
                'tiles counted as skipped; the computed tiles instead of the skipped ones; "half of the '
                'tiles"; $T(T-1)/2$ used with unequal blocks. Hints ask which pair of a tile decides, not for '
                'the rule (section 3.2 shows only equal blocks that divide $n$, drawn from `ak.tiled_trace`)',
        hidden=(Hidden(tiles_cases, tiles_ref, exact_count),),
        wrong={0: "def f(n, bq, bk):\n    return sum(1 for i in range(n // bq) for j in range(n // bk)"
                  " if j * bk > (i + 1) * bq - 1)"},
        other_right={0: "def f(n, bq, bk):\n    T = -(-n // bk)\n"
                        "    return sum(T - min(T, -(-min(r + bq, n) // bk)) for r in range(0, n, bq))"},
        refused={0: "def f(n, bq, bk):\n    T = -(-n // bk)\n"
                    "    return float(sum(T - min(T, -(-min(r + bq, n) // bk)) for r in range(0, n, bq)))"},
    )


# ---------------------------------------------------------------- 07.3 KV cache size


@reference
def kv_cases(rng):
    """Model shapes of no real model: MHA, GQA and MQA, 1, 2 and 4 bytes per value."""
    out = []
    for ratio, b in zip((1, int(rng.choice([2, 4, 8])), None), rng.permutation([1, 2, 4]), strict=True):
        heads = int(rng.choice([6, 12, 24, 40]))
        kv_heads = 1 if ratio is None else (heads // ratio if heads % ratio == 0 else heads // 2)
        out.append((int(rng.integers(300, 60_000)), int(rng.integers(3, 61)), heads, kv_heads,
                    int(rng.choice([48, 80, 96, 256])), int(b)))
    if max(c[0] for c in out) <= 4096:  # one case past a sliding window's 4,096 tokens, so that no cap passes
        out[0] = (out[0][0] + 8192, *out[0][1:])
    return out


@reference
def kv_ref(n_tokens, layers, heads, kv_heads, d_head, bytes_per_value):
    return kv_cache_bytes(n_tokens, layers=layers, kv_heads=kv_heads, d_head=d_head,
                          bytes_per_value=bytes_per_value)


@grades("07.3")
def grading_kv_cache_size():
    return Grading(
        task='`my_kv_cache_bytes(n_tokens, layers, heads, kv_heads, d_head, bytes_per_value)` on four '
             'released models (Mistral 7B at its window, 4,096 tokens, where its rolling buffer is full) '
             'and Code Llama 7B at 16,384 tokens (so a cap at 4,096 fails), an int',
        catches='the factor 2 (keys *and* values) forgotten; query heads instead of key/value heads; one '
                'layer only; numbers instead of bytes; bits; $n^2$ tokens; GiB or GB instead of bytes. Hints '
                'ask what a token leaves in the cache, never the product; section 4.1 shows what is cached '
                "and one layer's bytes, not the formula",
        hidden=(Hidden(kv_cases, kv_ref, exact_count),),
        wrong={0: "def f(n, L, H, Hkv, d, b):\n    return 2 * n * L * H * d * b"},  # the query heads
        other_right={0: "def f(n, L, H, Hkv, d, b):\n    return np.prod([2, n, L, Hkv, d, b])"},  # a numpy int
        refused={0: "def f(n, L, H, Hkv, d, b):\n    return 2.0 * n * L * Hkv * d * b"},
    )
