"""The notebook-07 checkers accept right answers and name the usual mistakes."""

import math

import numpy as np
import pytest
from test_check_masks_positions import STUB, boom, one_line  # (tests/ is on sys.path)

import attention_kit as ak
from attention_kit.check import at_scale as chk

# ---------------------------------------------------------------- online update

def update_right(m, l, o, s, V):
    """One step with the output kept normalised (Dao et al. 2022's loop), written independently."""
    m_new = max(m, np.max(s))
    alpha = np.exp(m - m_new)
    p = np.exp(s - m_new)
    l_new = alpha * l + p.sum()
    return m_new, l_new, (alpha * l * o + p @ V) / l_new


def update_loop(m, l, o, s, V):
    """The same step one score at a time (an online softmax inside the block): also right."""
    for sj, vj in zip(s, V, strict=True):
        m_new = max(m, sj)
        a = math.exp(m - m_new)
        p = math.exp(sj - m_new)
        l_new = a * l + p
        m, l, o = m_new, l_new, (a * l * o + p * vj) / l_new
    return m, l, o


def test_update_reference_gives_softmax_times_values_after_every_block():
    rng = np.random.default_rng(0)
    s, V = rng.normal(size=10) * 3, rng.normal(size=(10, 2))
    m, l, o = -np.inf, 0.0, np.zeros(2)
    for start in range(0, 10, 3):
        m, l, o = update_right(m, l, o, s[start:start + 3], V[start:start + 3])
        np.testing.assert_allclose(o, ak.softmax(s[:start + 3]) @ V[:start + 3])   # normalised at every step


@pytest.mark.parametrize("right", [update_right, update_loop])
def test_online_update_accepts_right_answers(capsys, right):
    assert chk.online_update(right) is True
    assert one_line(capsys).startswith("✓")


def section_3_update(m, l, acc, s, V):
    """Notebook 07's my_tiled, one row: the unnormalised accumulator, lifted into the exercise."""
    m_new = max(m, np.max(s))
    alpha = np.exp(m - m_new)
    p = np.exp(s - m_new)
    return m_new, alpha * l + p.sum(), alpha * acc + p @ V


def _variant(o_rule, *, l_scaled=True, keep_m=False, inverted=False, guarded=False):
    def f(m, l, o, s, V):
        m_new = max(m, np.max(s))
        a = np.exp(m_new - m) if inverted else np.exp(m - m_new)   # inverted: inf from m = -inf
        if inverted and guarded:   # the upside-down factor, but 0 for the first block (m = -inf)
            a = np.exp(m_new - m) if np.isfinite(m) else 0.0
        p = np.exp(s - m_new)
        l_new = (a if l_scaled else 1.0) * l + p.sum()
        return (m if keep_m else m_new), l_new, o_rule(a, l, o, p @ V, l_new)
    return f


@pytest.mark.parametrize("wrong, words", [
    (section_3_update, "section 3's unnormalised accumulator"),
    (_variant(lambda a, l, o, pv, ln: (a * o + pv) / ln), "turned back into a sum"),
    (_variant(lambda a, l, o, pv, ln: (l * o + pv) / ln), "the old output was not rescaled"),
    (_variant(lambda a, l, o, pv, ln: (a * l * o + pv) / ln, l_scaled=False), "the old sum l was not rescaled"),
    (_variant(lambda a, l, o, pv, ln: (a * a * l * o + pv) / ln), "rescaled twice"),
    # the most natural slip: the factor upside down, unguarded: inf * 0 = NaN at the first block
    (_variant(lambda a, l, o, pv, ln: (a * l * o + pv) / ln, inverted=True), "upside down"),
    # the same slip guarded against m = -inf: no NaN, but the old terms grow when the maximum rises
    (_variant(lambda a, l, o, pv, ln: (a * l * o + pv) / ln, inverted=True, guarded=True), "upside down"),
    # o_new must be a numpy array (the array rule of every exercise), not a list or a tuple
    (lambda *a: (*update_right(*a)[:2], update_right(*a)[2].tolist()), "numpy array"),
    (lambda *a: (*update_right(*a)[:2], tuple(update_right(*a)[2])), "numpy array"),
    (_variant(lambda a, l, o, pv, ln: (a * l * o + pv) / ln, keep_m=True), "return the new maximum"),
    (lambda m, l, o, s, V: (max(m, np.max(s)), l + np.exp(s).sum(), o + np.exp(s) @ V), "after block"),
    (lambda m, l, o, s, V: (max(m, np.max(s)), 1.0, np.zeros(V.shape[1] + 1)), "shape (d_v,)"),
    (lambda m, l, o, s, V: (m, l), "return the three values"),
    (lambda m, l, o, s, V: None, "forget `return`"),
    (boom, "RuntimeError: boom"),
    (lambda m, l, o, s, V: ..., STUB),
    (lambda m, l, o, s, V: (..., ..., ...), STUB),
])
def test_online_update_names_the_mistake(capsys, wrong, words):
    with np.errstate(all="ignore"):
        assert chk.online_update(wrong) is False
    out = one_line(capsys)
    assert out.startswith("✗") and words in out, out
    assert "p @ V" not in out and "acc_new =" not in out, out   # the idea, not the update


def update_old_max_terms(m, l, o, s, V):
    """Trial 3, M12: the new terms taken against the old maximum; the factor is the right way up."""
    m_new = max(m, float(np.max(s)))
    alpha = np.exp(m - m_new)
    p = np.exp(s - m)
    l_new = alpha * l + p.sum()
    return m_new, l_new, (alpha * l * o + p @ V) / l_new


def test_online_update_new_terms_against_the_old_maximum_are_not_told_upside_down(capsys):
    """Trial 3, M12: the hint named a factor upside down, which this answer does not have."""
    with np.errstate(all="ignore"):
        assert chk.online_update(update_old_max_terms) is False
    out = one_line(capsys)
    assert "upside down" not in out and "new terms" in out and "old maximum" in out, out


def update_one_element_arrays(m, l, o, s, V):
    """Trial 3, M13: m and l come back as 1-element arrays (keepdims); the numbers are right."""
    m_new = np.maximum(m, s.max(keepdims=True))
    alpha = np.exp(m - m_new)
    p = np.exp(s - m_new)
    l_new = alpha * l + p.sum(keepdims=True)
    return m_new, l_new, (alpha * l * o + p @ V) / l_new


def test_online_update_accepts_one_element_arrays_for_m_and_l(capsys):
    """Trial 3, M13: the three values were returned in order and right, and were told to 'return the
    three values'; a 1-element array is a number here, in class and at grading."""
    from attention_kit.grading.hidden import case_rng, check_hidden

    assert chk.online_update(update_one_element_arrays) is True
    assert one_line(capsys).startswith("✓")
    for seed in range(5):
        assert check_hidden("07.1", [update_one_element_arrays], case_rng(seed, "x", "07.1")) is None, seed
    # more than one number is still not a number
    assert chk.online_update(lambda m, l, o, s, V: (np.array([1.0, 2.0]), 1.0, np.zeros(V.shape[1]))) is False
    assert "return the three values" in one_line(capsys)


def test_online_update_not_done(capsys):
    assert chk.online_update(None) is False
    assert "no answer yet" in one_line(capsys)


# ---------------------------------------------------------------- skipped tiles

def tiles_loop(n, bq, bk):
    """Reference written independently: a tile is skipped when all its pairs (i, j) have j > i."""
    skipped = 0
    for r0 in range(0, n, bq):
        for c0 in range(0, n, bk):
            rows, cols = range(r0, min(r0 + bq, n)), range(c0, min(c0 + bk, n))
            skipped += all(j > i for i in rows for j in cols)
    return skipped


def test_tiles_loop_agrees_with_package():
    for n, bq, bk in [(13, 4, 4), (9, 2, 3), (20, 5, 3), (1, 1, 1)]:
        assert tiles_loop(n, bq, bk) == ak.tile_counts(n, n, block_q=bq, block_k=bk, causal=True).skipped


@pytest.mark.parametrize("right", [
    tiles_loop,
    lambda n, bq, bk: sum(1 for r0 in range(0, n, bq) for c0 in range(0, n, bk) if c0 > min(r0 + bq, n) - 1),
    lambda n, bq, bk: np.int64(tiles_loop(n, bq, bk)),
])
def test_skipped_tiles_accepts_right_answers(capsys, right):
    assert chk.skipped_tiles(right) is True
    assert one_line(capsys).startswith("✓")


def test_counts_must_be_ints(capsys):
    # a right value as a float (6.0 from a division) is not an int: rejected, with its own hint
    assert chk.skipped_tiles(lambda n, bq, bk: float(tiles_loop(n, bq, bk))) is False
    assert "as an int, not a float" in one_line(capsys)
    assert chk.kv_cache_size(lambda *a: float(kv_right(*a))) is False
    assert "as an int, not a float" in one_line(capsys)


def _ceil(a, b):
    return -(-a // b)


@pytest.mark.parametrize("wrong, words", [
    (lambda n, bq, bk: n * (n - 1) // 2, "(query, key) pairs"),
    (lambda n, bq, bk: sum(j * bk > (i + 1) * bq - 1 for i in range(n // bq) for j in range(n // bk)),
     "shorter block was left out"),
    (lambda n, bq, bk: ak.tile_counts(n, n, block_q=bq, block_k=bk, causal=True).computed, "are computed"),
    (lambda n, bq, bk: sum(any(j > i for i in range(r0, min(r0 + bq, n)) for j in range(c0, min(c0 + bk, n)))
                           for r0 in range(0, n, bq) for c0 in range(0, n, bk)), "diagonal tiles were counted"),
    (lambda n, bq, bk: _ceil(n, bq) * _ceil(n, bk) / 2, "about half"),
    (lambda n, bq, bk: _ceil(n, bq) * (_ceil(n, bq) - 1) // 2, "only when both blocks have the same size"),
    (lambda n, bq, bk: 3, "expected 6 skipped tiles, got 3"),
    (lambda n, bq, bk: 3, "Draw the tiles of this case"),
    (lambda n, bq, bk: "6", "whole number"),
    (lambda n, bq, bk: None, "forget `return`"),
    (boom, "RuntimeError: boom"),
    (lambda n, bq, bk: ..., STUB),
])
def test_skipped_tiles_names_the_mistake(capsys, wrong, words):
    # __wrapped__: the checker without its plain-numpy guard (some mistakes use attention_kit)
    assert chk.skipped_tiles.__wrapped__(wrong) is False
    out = one_line(capsys)
    assert out.startswith("✗") and words in out, out


# ---------------------------------------------------------------- KV cache size

def kv_right(n, layers, heads, kv_heads, d_head, b):
    return 2 * layers * kv_heads * d_head * b * n


@pytest.mark.parametrize("right", [kv_right, lambda *a: np.int64(kv_right(*a))])
def test_kv_cache_size_accepts_right_answers(capsys, right):
    assert chk.kv_cache_size(right) is True
    assert one_line(capsys).startswith("✓")


@pytest.mark.parametrize("wrong, words", [
    (lambda n, L, H, Hkv, d, b: L * Hkv * d * b * n, "beside its key"),
    (lambda n, L, H, Hkv, d, b: 2 * L * H * d * b * n, "query heads"),
    (lambda n, L, H, Hkv, d, b: 2 * Hkv * d * b * n, "one layer"),
    (lambda n, L, H, Hkv, d, b: 2 * L * Hkv * d * n, "how many bytes does each number take"),
    (lambda n, L, H, Hkv, d, b: 16 * L * Hkv * d * b * n, "bits"),
    (lambda n, L, H, Hkv, d, b: 2 * L * Hkv * d * b * n * n, "not with their square"),
    (lambda n, L, H, Hkv, d, b: 2 * L * Hkv * d * b * n / 2**30, "right size in GiB, but the unit asked for is bytes"),
    (lambda n, L, H, Hkv, d, b: round(2 * L * Hkv * d * b * n / 2**30, 3), "right size in GiB"),
    (lambda n, L, H, Hkv, d, b: 2 * L * Hkv * d * b * n / 2**20, "right size in MiB"),
    (lambda n, L, H, Hkv, d, b: 2 * L * Hkv * d * b * n / 2**10, "right size in KiB"),
    (lambda n, L, H, Hkv, d, b: 3 * L * Hkv * d * b * n, "Count what one token leaves behind"),
    (lambda n, L, H, Hkv, d, b: 2 * L * Hkv * d * b * n / 1e9, "right size in GB"),
    (lambda *a: [1], "number of bytes"),
    (boom, "RuntimeError: boom"),
    (lambda *a: ..., STUB),
])
def test_kv_cache_size_names_the_mistake(capsys, wrong, words):
    assert chk.kv_cache_size(wrong) is False
    out = one_line(capsys)
    assert out.startswith("✗") and words in out, out
    assert "e-0" not in out, out   # a size in GiB is not converted a second time ("got 1.16e-09 GiB")


def test_kv_cache_size_rejects_a_cap_at_4096_tokens(capsys):
    """A sliding window's cap typed into a full cache passed while no case went past 4,096 tokens
    (learner trial, issue 46)."""
    assert chk.kv_cache_size(lambda n, L, H, Hkv, d, b: 2 * min(n, 4096) * L * Hkv * d * b) is False
    out = one_line(capsys)
    assert out.startswith("✗") and "16384 tokens" in out, out
    assert max(n for n, *_ in chk._kv_table()["cases"]) > 4096


def test_first_kv_case_tells_heads_from_kv_heads():
    # the first case must have fewer key/value heads than heads, or the 'query heads' mistake would pass it
    table = chk._kv_table()
    n, L, H, Hkv, d, b = table["cases"][0]
    assert Hkv < H, table["names"][0]


def test_every_checker_tries_several_sizes():
    # a constant (a hard-coded d_v, block size or model size) must fail in class
    assert len({V.shape[1] for _, _, V, _ in chk._update_table()["cases"]}) >= 2
    assert len({b for _, _, _, b in chk._update_table()["cases"]}) >= 2
    assert len({n for n, _, _ in chk._tiles_table()["cases"]}) >= 2
    assert len({c for c in chk._kv_table()["cases"]}) >= 2


@pytest.mark.parametrize("checker, table", [("online_update", "_update_table"), ("skipped_tiles", "_tiles_table"),
                                            ("kv_cache_size", "_kv_table")])
def test_the_kept_code_states_no_formula(checker, table):
    """What ``check.x??`` shows: no update, count or size formula in the checker or its texts."""
    import inspect

    src = inspect.getsource(getattr(chk, checker).__wrapped__)
    for formula in ("p @ V", "alpha * l", "exp(m - m_new)", "T (T - 1)", "c0 >", "ceil(", "2 * L", "2 (K and V)",
                    "x layers x kv_heads", "ak.kv_cache_bytes", "tile_counts("):
        assert formula not in src, (checker, formula)
    for hint in chk._UPDATE_HINTS + chk._TILE_HINTS + chk._KV_HINTS:
        for formula in ("exp(m - m_new)", "ceil(", " // ", "2 (K and V)", "x layers x", "T (T - 1)"):
            assert formula not in hint, hint


def test_module_docstring_lists_every_checker():
    for name in chk.__all__:
        assert f"``{name}(" in chk.__doc__, name


def test_quietly_keeps_the_verdict_and_prints_nothing(capsys):
    with chk.quietly():
        assert chk.kv_cache_size(kv_right) is True
        assert chk.skipped_tiles(lambda n, bq, bk: 0) is False
    assert capsys.readouterr().out == ""
