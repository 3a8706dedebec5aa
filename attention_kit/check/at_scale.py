"""Exercise checkers for notebook 07 (attention at scale).

Every checker prints one line, ``✓ ...`` or ``✗ ...`` with a hint aimed at the usual mistake, and
returns True or False. The learner's exceptions are reported, never raised.

* ``online_update(fn)``: ``fn(m, l, o, s, V) -> (m_new, l_new, o_new)``, one online-softmax step of
  one query row over a new block of scores ``s`` (b,) and values ``V`` (b, d_v), in the form of
  FlashAttention's first paper (Dao et al., 2022), where the output ``o`` is kept *normalised* after
  every block (notebook 07's ``my_tiled`` keeps it unnormalised and divides at the end); catches
  the old output not turned back into a sum, the old output or the old sum not rescaled, the
  unnormalised accumulator returned, the output rescaled twice, the factor upside down (NaN from
  ``m = -inf``, or guarded against it), the new terms taken against the old maximum (inf from
  ``m = -inf``) and the maximum not updated; ``o_new`` must be a numpy array, ``m_new`` and ``l_new``
  numbers (a 1-element array is one).
* ``skipped_tiles(fn)``: ``fn(n, block_q, block_k) -> int``, the tiles a causal mask skips;
  catches counted (query, key) pairs, a forgotten last partial block, the diagonal tiles counted
  as skipped, the computed tiles, half of all tiles, and a count that is not an int.
* ``kv_cache_size(fn)``: ``fn(n_tokens, layers, heads, kv_heads, d_head, bytes_per_value) -> int``
  bytes; catches the forgotten 2 (keys *and* values), query heads instead of key/value heads, the
  layers or the bytes per value forgotten, bits instead of bytes, a size in GiB, GB, MiB, MB, KiB or kB
  instead of bytes, and a size that is not an int.
* ``quietly()``: a context manager (from ``attention_kit.check``) that silences the checkers.

What a checker compares with (its cases, their right answers and the usual mistakes' outputs) is
computed once by the functions marked ``@recorded`` (``check/recorded.py``).
"""

from __future__ import annotations

import math

import numpy as np

from ..i18n import N_, _
from ..scale.kvcache import MODEL_SHAPES
from . import as_floats, close, not_attempted, not_done, quietly, report, report_failure, try_call
from .plain import plain_numpy
from .recorded import recorded, reference

__all__ = ["quietly", "online_update", "skipped_tiles", "kv_cache_size"]

STUB = N_("no answer yet: replace the `...` after `return` with your code, then run the cell again")


def _stub(got) -> bool:
    return got is Ellipsis or (isinstance(got, tuple) and any(x is Ellipsis for x in got))


# ---------------------------------------------------------------- online update

# The hints of the usual slips, in the order of the recorded table's mistakes.
_UPDATE_HINTS = (
    N_("o is normalised (divided by the old l), so before new terms can be added it must be turned back "
       "into a sum against the old maximum, which is what the old l undoes"),
    N_("the old output was not rescaled: its terms were taken against the old maximum, and when the "
       "maximum rises every one of them shrinks by the same factor"),
    N_("the old sum l was not rescaled: its terms were taken against the old maximum too, so they shrink "
       "by the same factor as the output's"),
    N_("that is section 3's unnormalised accumulator: this exercise keeps o normalised after every block, "
       "so that o is at each step the softmax-weighted average of the values seen so far"),
    N_("the old output was rescaled twice: the factor applies once to each old term"),
    N_("return the new maximum, not the old m: the next block is compared with it"),
    N_("the factor is upside down: when the maximum rises, the old terms, taken against a smaller maximum, "
       "must shrink, and your factor makes them grow. The factor is at most 1"),
)


@reference
def _update_step(m, l, o, s, V, slip=None):
    """One normalised online step (``slip=None``), or the usual mistake number ``slip``."""
    m_new = max(m, float(np.max(s)))
    a = math.exp(m - m_new)  # 0 from m = -inf
    if slip == 6:  # the factor upside down, guarded against m = -inf for the first block
        a = math.exp(m_new - m) if math.isfinite(m) else 0.0
    p = np.exp(s - m_new)
    pv = p @ V
    l_new = (1.0 if slip == 2 else a) * l + p.sum()
    o_new = {None: lambda: (a * l * o + pv) / l_new, 0: lambda: (a * o + pv) / l_new,
             1: lambda: (l * o + pv) / l_new, 2: lambda: (a * l * o + pv) / l_new,
             3: lambda: a * o + pv, 4: lambda: (a * a * l * o + pv) / l_new,
             5: lambda: (a * l * o + pv) / l_new, 6: lambda: (a * l * o + pv) / l_new}[slip]()
    return (m if slip == 5 else m_new), l_new, o_new


@reference
def _update_states(s, V, b, slip=None):
    m, l, o = -np.inf, 0.0, np.zeros(V.shape[1])
    states = []
    for start in range(0, len(s), b):
        m, l, o = _update_step(m, l, o, s[start:start + b], V[start:start + b], slip)
        states.append((float(m), float(l), np.asarray(o, dtype=float)))
    return states


@recorded
def _update_table() -> dict:
    """Blocks of one row whose maximum rises (so the rescaling matters), one where it does not,
    and two widths of values; the right states after every block and the usual slips' states."""
    rng = np.random.default_rng(7)
    V = rng.normal(size=(9, 3))  # (n_k, d_v)
    rising = np.array([-1.0, 0.5, 0.2, 2.0, 1.0, -0.5, 4.0, 3.0, 0.0])  # new maxima in blocks 2 and 3
    falling = np.array([5.0, 1.0, 2.0, 0.0, -1.0, 3.0, 1.5, -2.0, 0.5])
    cases = [(N_("blocks of 3 scores whose maximum rises"), rising, V, 3),
             (N_("blocks of 2 scores (the last block shorter)"), rising[::-1].copy(), V, 2),
             (N_("blocks whose maximum comes first, two value features"), falling, V[:, :2].copy(), 4)]
    # from a finite state whose maximum rises: l_new with the new terms taken against the old maximum (the
    # factor right), and with the factor upside down (the new terms right); both give NaN or inf from m = -inf
    m0, l0, s0 = 0.5, 2.0, np.array([1.5, -0.3, 2.5])
    m1 = float(s0.max())
    probe = {"args": (m0, l0, np.zeros(2), s0, V[:3, :2].copy()),
             "old maximum": math.exp(m0 - m1) * l0 + float(np.exp(s0 - m0).sum()),
             "upside down": math.exp(m1 - m0) * l0 + float(np.exp(s0 - m1).sum())}
    return {"cases": cases, "probe": probe,
            "want": [_update_states(s, V_, b) for _i, s, V_, b in cases],
            "slips": [[_update_states(s, V_, b, k) for k in range(len(_UPDATE_HINTS))] for _i, s, V_, b in cases]}


def _run(fn, s, V, b):
    """The learner's states after each block, from m = -inf, l = 0, o = 0; or an error text."""
    m, l, o = -np.inf, 0.0, np.zeros(V.shape[1])
    states = []
    for start in range(0, len(s), b):
        with np.errstate(all="ignore"):
            got, err = try_call(fn, m, l, o.copy(), s[start:start + b].copy(), V[start:start + b].copy())
        if err or _stub(got):
            return None, (_(STUB) if _stub(got) else err)
        try:
            m, l, o = got
        except Exception:  # the learner's object: never raise
            return None, _("return the three values (m_new, l_new, o_new), got {kind} {value}").format(
                kind=type(got).__name__, value=str(got)[:60])
        if isinstance(o, (list, tuple)):
            return None, _("o_new is a {kind}; the task asks for a numpy array: compute with "
                           "numpy arrays all the way").format(kind=type(o).__name__)
        m_arr, l_arr, o = as_floats(m), as_floats(l), as_floats(o)
        if m_arr is None or l_arr is None or o is None or m_arr.size != 1 or l_arr.size != 1:
            return None, _("return the three values (m_new, l_new, o_new), m_new and l_new one number each, "
                           "got {kind} {value}").format(kind=type(got).__name__, value=str(got)[:60])
        m, l = float(m_arr.reshape(())), float(l_arr.reshape(()))  # a 1-element array is a number here
        states.append((m, l, o))
    return states, None


def _probe_l(fn, probe) -> str | None:
    """From a finite state whose maximum rises: which slip ``fn``'s l_new shows ("old maximum": the new
    terms against the old maximum; "upside down": the factor upside down), or None."""
    with np.errstate(all="ignore"):
        got, err = try_call(fn, *(a.copy() if isinstance(a, np.ndarray) else a for a in probe["args"]))
    try:
        l_new = float(np.asarray(got[1], dtype=float).reshape(()))
    except Exception:  # the learner's object: never raise
        return None
    return next((k for k in ("old maximum", "upside down") if not err and close(l_new, probe[k], atol=1e-9)), None)


def _same_states(a, b) -> bool:
    return len(a) == len(b) and all(
        close(x[0], y[0], atol=1e-9) and close(x[1], y[1], atol=1e-9) and close(x[2], y[2], atol=1e-9)
        for x, y in zip(a, b, strict=True))


@plain_numpy()
def online_update(fn) -> bool:
    """Check ``fn(m, l, o, s, V) -> (m_new, l_new, o_new)``, one online-softmax step of one row with
    the output ``o`` kept normalised (``o = softmax(scores so far) @ values so far`` after every block)."""
    if not_done(fn):
        return not_attempted(_("no answer yet: write my_online_update(m, l, o, s, V) and pass it in"))
    table = _update_table()
    for (case, s, V, b), want, slips in zip(table["cases"], table["want"], table["slips"], strict=True):
        got, err = _run(fn, s, V, b)
        if err:
            return report_failure(err, stub=_(STUB))
        if _same_states(got, want):
            continue
        case = _(case)
        first = got[0]
        if not (np.isfinite(first[1]) and np.all(np.isfinite(first[2]))):
            probe = _probe_l(fn, table["probe"])
            if probe == "old maximum":
                return report(False, _("{case}: the first block gives NaN or inf: your new terms are taken against "
                                       "the old maximum, which is -inf before the first block, so they are "
                                       "exp(+inf) = inf. Take the block's new terms against the new maximum, the "
                                       "one l and o are kept against from now on").format(case=case))
            if probe == "upside down":
                return report(False, _("{case}: the first block gives NaN or inf. From m = -inf the factor for the "
                                       "old terms must be exp(-inf) = 0 (there are none yet); the factor upside down "
                                       "is exp(+inf) = inf, and inf times l = 0 is NaN. The old terms shrink when the "
                                       "maximum rises: the factor is at most 1").format(case=case))
            return report(False, _("{case}: the first block gives NaN or inf. Before it, m = -inf and there are no "
                                   "old terms: the factor for them must come out as 0, and every new term must be "
                                   "taken against the new maximum, which is finite").format(case=case))
        for states, hint in zip(slips, _UPDATE_HINTS, strict=True):
            if _same_states(got, states):
                return report(False, _("{case}: {hint}").format(case=case, hint=_(hint)))
        shape = np.shape(got[-1][2])
        if shape != (V.shape[1],):
            return report(False, _("{case}: o_new must have shape (d_v,) = ({d_v},), one number per "
                                   "value feature, got {got}").format(case=case, d_v=V.shape[1], got=shape))
        bad = next(i for i, (x, y) in enumerate(zip(got, want, strict=True))
                   if not _same_states([x], [y]))
        part = ("m_new" if not close(got[bad][0], want[bad][0], atol=1e-9) else
                "l_new" if not close(got[bad][1], want[bad][1], atol=1e-9) else "o_new")
        return report(False, _("{case}: after block {block}, {part} is off. After every block m must be the "
                               "largest score so far, l the sum of the exponentials so far taken against that "
                               "maximum, and o the softmax-weighted average of the values so far").format(
                                   case=case, block=bad + 1, part=part))
    return report(True, _("the online update is right: after every block o is the softmax average of every value "
                          "so far, for blocks of any size and a maximum that rises or not"))


# ---------------------------------------------------------------- skipped tiles

_TILE_HINTS = (
    N_("that is the number of (query, key) pairs above the diagonal; the question counts tiles, blocks of "
       "block_q x block_k pairs"),
    N_("the last, shorter block was left out: when a block size does not divide n, the leftover queries (or "
       "keys) still form a block of their own"),
    N_("the diagonal tiles were counted as skipped: a tile is skipped only when *every* pair in it is masked; "
       "a diagonal tile still holds allowed pairs and must be computed"),
    N_("that is the number of tiles that are computed; the question asks for the skipped ones"),
    N_("about half is right for large n, but count exactly: which one pair of a tile decides whether all of "
       "its pairs are masked?"),
    N_("about half is right for large n, but count exactly: which one pair of a tile decides whether all of "
       "its pairs are masked?"),
    N_("a triangle of tiles holds only when both blocks have the same size; with unequal blocks the tiles "
       "are not squares on the diagonal: go through the query blocks one at a time and count the key blocks "
       "each one does not need"),
)


@reference
def _ceil(a: int, b: int) -> int:
    return -(-a // b)


@reference
def _tile_values(n: int, bq: int, bk: int) -> tuple[int, list]:
    """The right count, then the usual mistakes' counts (in the order of ``_TILE_HINTS``)."""
    starts_q, starts_k = range(0, n, bq), range(0, n, bk)
    last_q = [min(r0 + bq, n) - 1 for r0 in starts_q]
    skipped = sum(c0 > lq for lq in last_q for c0 in starts_k)
    last_k = [min(c0 + bk, n) - 1 for c0 in starts_k]
    return skipped, [
        n * (n - 1) // 2,
        sum(1 for i in range(n // bq) for j in range(n // bk) if j * bk > (i + 1) * bq - 1),
        sum(lk > r0 for r0 in starts_q for lk in last_k),
        len(last_q) * len(last_k) - skipped,
        _ceil(n, bq) * _ceil(n, bk) / 2,
        _ceil(n, bq) * _ceil(n, bk) // 2,
        _ceil(n, bq) * (_ceil(n, bq) - 1) // 2,
    ]


@recorded
def _tiles_table() -> dict:
    """(n, block_q, block_k): blocks that divide n and blocks that do not, equal and unequal, several
    sizes; the right counts and, per mistake, its counts on every case."""
    cases = ((13, 4, 4), (12, 4, 4), (10, 4, 2), (16, 4, 8), (7, 3, 3), (9, 2, 3))
    values = [_tile_values(*c) for c in cases]
    return {"cases": cases, "want": [v[0] for v in values],
            "wrong": [[v[1][k] for v in values] for k in range(len(_TILE_HINTS))]}


def _answers(fn, cases, what: str):
    """The learner's answer for every case, or ``(None, message)`` at the first that is not a number;
    ``what``: the message's template, with the fields ``{kind}`` and ``{value}``."""
    out = []
    for args in cases:
        got, err = try_call(fn, *args)
        if _stub(got):
            return None, _(STUB)
        if err:
            return None, err
        if isinstance(got, (bool, np.bool_)) or not isinstance(got, (int, float, np.integer, np.floating)):
            return None, what.format(kind=type(got).__name__, value=str(got)[:40])
        out.append(got)
    return out, None


def _not_int(got: list, what: str) -> str | None:
    """The hint when a count is right in value but not an int (a float such as 6.0 from a division);
    ``what``: its template, with the fields ``{kind}`` and ``{value}``."""
    odd = next((g for g in got if not isinstance(g, (int, np.integer))), None)
    if odd is None:
        return None
    return what.format(kind=type(odd).__name__, value=repr(odd))


def _diagnose(got: list, wrongs: list) -> str | None:
    """The hint of the first mistake that reproduces the learner's answer in *every* case."""
    for values, hint in wrongs:
        if all(math.isclose(g, w, rel_tol=1e-9) for g, w in zip(got, values, strict=True)):
            return _(hint)
    return None


@plain_numpy()
def skipped_tiles(fn) -> bool:
    """Check ``fn(n, block_q, block_k) -> int``: the tiles a causal mask lets tiled attention skip."""
    if not_done(fn):
        return not_attempted(_("no answer yet: write my_skipped_tiles(n, block_q, block_k) and pass it in"))
    table = _tiles_table()
    cases, want = table["cases"], table["want"]
    got, err = _answers(fn, cases, _("return a whole number of tiles, got {kind} {value}"))
    if err:
        return report_failure(err, stub=_(STUB))
    if got == want and (msg := _not_int(got, _(
            "the numbers are right, but return the number of tiles as an int, not a {kind} ({value}): a count "
            "has no fraction, and a float from a division can lose the last units for large counts"))):
        return report(False, msg)
    if got == want:
        return report(True, _("the count is right, for equal and unequal blocks and for a last block that is "
                              "shorter: for long texts about half of the tiles"))
    i = next(k for k, (g, w) in enumerate(zip(got, want, strict=True)) if g != w)
    (n, bq, bk) = cases[i]
    case = _("n = {n}, block_q = {block_q}, block_k = {block_k}: expected {want} skipped tiles, got {got}").format(
        n=n, block_q=bq, block_k=bk, want=want[i], got=f"{got[i]:g}")
    hint = _diagnose(got, list(zip(table["wrong"], _TILE_HINTS, strict=True)))
    return report(False, (_("{case}; {hint}") if hint else
                          _("{case}. Draw the tiles of this case on squared paper, mark the masked pairs, and count the "
                            "tiles in which every pair is masked: which of a tile's pairs is the last to be masked?"))
                  .format(case=case, hint=hint))


# ---------------------------------------------------------------- KV cache size

_KV_HINTS = (
    N_("half the right size: what else does the cache keep for every token, beside its key?"),
    N_("that counts the query heads: which heads' keys and values does the cache keep? (in GQA and MQA "
       "there are fewer of them)"),
    N_("that is the cache of one layer: every layer keeps its own keys and values"),
    N_("that counts numbers, not bytes: how many bytes does each number take?"),
    N_("that is in bits: a byte is 8 bits, and bytes_per_value already counts bytes"),
    N_("the cache grows in proportion to the tokens, one key and one value each, not with their square"),
)

# The units a size in bytes is often converted to, and how many bytes each holds.
_UNITS = (("GiB", 2**30), ("GB", 1e9), ("MiB", 2**20), ("MB", 1e6), ("KiB", 2**10), ("kB", 1e3))


@reference
def _kv_values(n, L, H, Hkv, d, b) -> tuple[int, list]:
    """The right size, then the usual mistakes' sizes (in the order of ``_KV_HINTS``)."""
    def size(n=n, L=L, heads=Hkv, b=b):
        return 2 * L * heads * d * b * n
    right = size()
    return right, [right // 2, size(heads=H), size(L=1), size(b=1), 8 * right, n * right]


@recorded
def _kv_table() -> dict:
    """Real shapes (``MODEL_SHAPES``), several sizes: Mistral 7B at 4,096 tokens, its window, where the
    rolling buffer is full; and one case past 4,096 tokens (Code Llama 7B: Llama 2 7B's shapes, trained
    on 16,384-token sequences), so that no cap at 4,096 tokens passes; the right sizes and, per
    mistake, its sizes on every case."""
    picks = (("Llama 2 70B", 4096, 2), ("Falcon 7B", 2048, 2), ("Llama 2 7B", 1000, 4), ("Mistral 7B", 4096, 2),
             ("Code Llama 7B", 16384, 2))
    names, cases = [], []
    for name, n, b in picks:  # float16, float16, float32, bfloat16, float16
        s = MODEL_SHAPES["Llama 2 7B" if name == "Code Llama 7B" else name]  # the same shapes
        names.append(name)
        cases.append((n, s["layers"], s["heads"], s["kv_heads"], s["d_head"], b))
    values = [_kv_values(*c) for c in cases]
    return {"names": names, "cases": cases, "want": [v[0] for v in values],
            "wrong": [[v[1][k] for v in values] for k in range(len(_KV_HINTS))]}


@plain_numpy()
def kv_cache_size(fn) -> bool:
    """Check ``fn(n_tokens, layers, heads, kv_heads, d_head, bytes_per_value) -> bytes`` on real shapes."""
    if not_done(fn):
        return not_attempted(_("no answer yet: write my_kv_cache_bytes(n_tokens, layers, heads, kv_heads, d_head, "
                               "bytes_per_value) and pass it in"))
    table = _kv_table()
    cases, want = table["cases"], table["want"]
    got, err = _answers(fn, cases, _("return a number of bytes, got {kind} {value}"))
    if err:
        return report_failure(err, stub=_(STUB))
    if all(g == w for g, w in zip(got, want, strict=True)) and (msg := _not_int(got, _(
            "the numbers are right, but return the number of bytes as an int, not a {kind} ({value}): a count "
            "has no fraction, and a float from a division can lose the last units for large counts"))):
        return report(False, msg)
    if all(g == w for g, w in zip(got, want, strict=True)):
        return report(True, _("the cache size is right for all five models, up to 16,384 tokens; GQA and MQA shrink it by as many times "
                              "as there are query heads per key/value head"))
    i = next(k for k, (g, w) in enumerate(zip(got, want, strict=True)) if g != w)
    name, (n, L, H, Hkv, d, b) = table["names"][i], cases[i]
    # a size converted to a larger unit (5%: it may have been rounded to print it)
    unit = next((u for u, size in _UNITS
                 if all(math.isclose(g * size, w, rel_tol=0.05) for g, w in zip(got, want, strict=True))), None)
    if unit:
        return report(False, _("{name} at {n} tokens: your {got} is the right size in {unit}, but the unit "
                               "asked for is bytes: return the number of bytes, as an int, "
                               "and convert only to print it").format(name=name, n=n, got=f"{got[i]:.4g}", unit=unit))
    case = _("{name} ({L} layers, {H} heads, {Hkv} key/value heads, d_head {d}, {b} bytes) at {n} tokens: "
             "expected {want} GiB, got {got} GiB").format(name=name, L=L, H=H, Hkv=Hkv, d=d, b=b, n=n,
                                                           want=f"{want[i] / 2**30:.3g}", got=f"{got[i] / 2**30:.3g}")
    hint = _diagnose(got, list(zip(table["wrong"], _KV_HINTS, strict=True)))
    return report(False, (_("{case}; {hint}") if hint else
                          _("{case}. Count what one token leaves behind: in each layer, which vectors, for which heads, "
                            "of how many numbers, each of how many bytes; then the tokens")).format(case=case, hint=hint))
