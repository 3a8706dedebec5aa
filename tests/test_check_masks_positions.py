"""The notebook-04 checkers accept right answers and name the usual mistakes."""

import re

import numpy as np
import pytest

import attention_kit as ak
from attention_kit.check import masks_positions as chk

STUB = "✗ no answer yet: replace the `...` after `return` with your code, then run the cell again"


def one_line(capsys):
    out = capsys.readouterr().out.strip()
    assert "\n" not in out, out
    return out


def boom(*args):
    raise RuntimeError("boom")


# ---------------------------------------------------------------- causal mask

def mask_loop(n):
    """Reference written independently of attention_kit: one entry at a time."""
    m = np.zeros((n, n), dtype=bool)
    for i in range(n):
        for j in range(n):
            m[i, j] = j <= i
    return m


def test_mask_loop_agrees_with_package():
    for n in (1, 4, 6):
        np.testing.assert_array_equal(mask_loop(n), ak.causal_mask(n))


@pytest.mark.parametrize("right", [
    mask_loop,
    lambda n: np.tril(np.ones((n, n), dtype=bool)),
    lambda n: np.arange(n)[None, :] <= np.arange(n)[:, None],
    lambda n: ~np.triu(np.ones((n, n), dtype=bool), k=1),
])
def test_causal_mask_accepts_right_answers(capsys, right):
    assert chk.causal_mask(right) is True
    assert one_line(capsys).startswith("✓")


@pytest.mark.parametrize("wrong, words", [
    (lambda n: np.triu(np.ones((n, n), dtype=bool), k=1), "nn.MultiheadAttention polarity"),
    (lambda n: ~np.tril(np.ones((n, n), dtype=bool)), "mask of the future"),
    (lambda n: np.triu(np.ones((n, n), dtype=bool)), "this is the future"),
    (lambda n: np.tril(np.ones((n, n), dtype=bool), k=-1), "the diagonal belongs to the allowed part"),
    (lambda n: np.tril(np.ones((n, n))), "right pattern, but the task asks for a boolean array (dtype bool)"),
    (lambda n: np.tril(np.ones((n, n), dtype=int)), "dtype bool"),
    # one rule with the other checkers: a list is not an array, even a list of bools
    (lambda n: [[j <= i for j in range(n)] for i in range(n)], "returned a list"),
    (lambda n: np.tril(np.ones((n, n + 1), dtype=bool)), "expected shape (n, n) = (4, 4)"),
    (lambda n: np.tril(np.ones((n, n), dtype=bool))[None], "got (1, 4, 4)"),
    (lambda n: np.ones((n, n), dtype=bool), "the shape is right but the pattern is not"),
    (lambda n: np.eye(n, dtype=bool), "the shape is right but the pattern is not"),
    (lambda n: [[True] * (i + 1) for i in range(n)], "a ragged list with no single shape"),  # ragged: no shape at all
    (lambda n: None, "forget `return`"),
    (boom, "RuntimeError: boom"),
    (lambda n: ..., STUB),
    (np.tril(np.ones((4, 4), dtype=bool)), "expected a function, got ndarray"),
])
def test_causal_mask_names_the_mistake(capsys, wrong, words):
    assert chk.causal_mask(wrong) is False
    out = one_line(capsys)
    assert out.startswith("✗") and words in out, out
    assert "np.tril" not in out and "astype" not in out, out   # the idea, not the code


def test_causal_mask_not_fooled_by_n1(capsys):
    # a function right for n = 1 only must still fail (triu and tril agree at n = 1)
    assert chk.causal_mask(lambda n: np.triu(np.ones((n, n), dtype=bool))) is False
    assert "n = 4" in one_line(capsys)


# ---------------------------------------------------------------- masked softmax

def masked_softmax_loop(S, mask):
    """Reference with loops: softmax over each row's allowed entries only; zeros for an empty row."""
    out = np.zeros(S.shape)
    for i in range(S.shape[0]):
        keep = [j for j in range(S.shape[1]) if mask[i, j]]
        if not keep:
            continue
        top = max(S[i, j] for j in keep)
        e = {j: np.exp(S[i, j] - top) for j in keep}
        total = sum(e.values())
        for j in keep:
            out[i, j] = e[j] / total
    return out


def test_masked_softmax_loop_agrees_with_package():
    rng = np.random.default_rng(0)
    S = rng.normal(size=(5, 6)) * 300
    mask = rng.random((5, 6)) < 0.5
    mask[2] = False
    np.testing.assert_allclose(masked_softmax_loop(S, mask), ak.softmax(S, mask=mask), atol=1e-12)


def ms_where_guarded(S, mask):
    Z = np.where(mask, S, -np.inf)
    top = Z.max(axis=-1, keepdims=True)
    E = np.exp(Z - np.where(np.isfinite(top), top, 0.0))
    s = E.sum(axis=-1, keepdims=True)
    return E / np.where(s == 0, 1, s)


def test_masked_softmax_accepts_right_answers(capsys):
    assert chk.masked_softmax(masked_softmax_loop) is True
    assert one_line(capsys).startswith("✓")
    assert chk.masked_softmax(ms_where_guarded) is True
    assert one_line(capsys).startswith("✓")
    assert chk.masked_softmax.__wrapped__(lambda S, m: ak.softmax(S, mask=m)) is True  # unguarded
    assert one_line(capsys).startswith("✓")

    def on_a_copy(S, mask):  # overwrite the blocked scores of a copy, then softmax
        S = S.copy()
        S[~mask] = -np.inf
        top = np.max(S, axis=-1, keepdims=True)
        top[~np.isfinite(top)] = 0
        E = np.exp(S - top)
        s = E.sum(axis=-1, keepdims=True)
        s[s == 0] = 1
        return (E / s).astype(np.float32)  # float32 is close enough
    assert chk.masked_softmax(on_a_copy) is True
    assert one_line(capsys).startswith("✓")


def test_masked_softmax_rejects_changing_S_or_mask_in_place(capsys):
    # as notebook 02's exercise 1 does: the caller's S must be left unchanged
    def in_place(S, mask):
        S[~mask] = -np.inf
        top = np.max(S, axis=-1, keepdims=True)
        top[~np.isfinite(top)] = 0
        E = np.exp(S - top)
        s = E.sum(axis=-1, keepdims=True)
        s[s == 0] = 1
        return E / s
    assert chk.masked_softmax(in_place) is False
    out = one_line(capsys)
    assert "changed its input S in place" in out, out

    def mask_in_place(S, mask):
        out = ms_where_guarded(S, mask)
        mask[:] = True
        return out
    assert chk.masked_softmax(mask_in_place) is False
    assert "changed its input mask in place" in one_line(capsys)
    assert chk.masked_softmax.__wrapped__(lambda S, m: ak.softmax(S, mask=m).tolist()) is False
    assert "returned a list" in one_line(capsys)


def test_big_case_really_breaks_the_naive_softmax():
    # The +-1000 case exists so that a softmax without max subtraction fails: check that it does.
    with np.errstate(all="ignore"):
        for name, S, mask in ((t["case"], t["S"], t["mask"]) for t in chk._softmax_table()):
            E = np.exp(np.where(mask, S, -np.inf))
            s = E.sum(axis=-1, keepdims=True)
            naive = E / np.where(s == 0, 1, s)
            fine = np.allclose(naive, masked_softmax_loop(S, mask))
            assert fine == (name != "scores of +-1000"), name
        assert np.isinf(np.exp(np.float64(1000.0))) and np.isfinite(np.exp(np.float64(500.0)))


def _stable(Z, axis=-1):
    E = np.exp(Z - Z.max(axis=axis, keepdims=True))
    return E / E.sum(axis=axis, keepdims=True)


def ms_zero_not_inf(S, mask):
    return _stable(np.where(mask, S, 0.0))


def ms_no_renormalise(S, mask):
    return _stable(S) * mask


def ms_reversed(S, mask):
    return ms_where_guarded(S, ~mask)


def ms_reversed_naive(S, mask):
    return _stable(np.where(mask, -np.inf, S))


def ms_nan_row(S, mask):
    return _stable(np.where(mask, S, -np.inf))  # -inf - (-inf) = NaN in the all-False row


def ms_nan_row_no_max(S, mask):
    E = np.exp(np.where(mask, S, -np.inf))
    return E / E.sum(axis=-1, keepdims=True)  # 0/0 in the all-False row


def ms_no_max(S, mask):
    E = np.exp(np.where(mask, S, -np.inf))
    s = E.sum(axis=-1, keepdims=True)
    return E / np.where(s == 0, 1, s)  # guarded, but exp(1000) = inf


def ms_max_of_whole_row(S, mask):
    E = np.exp(S - S.max(axis=-1, keepdims=True)) * mask  # the max may be a masked score
    s = E.sum(axis=-1, keepdims=True)
    return E / np.where(s == 0, 1, s)


def ms_minus_1e9(S, mask):
    return _stable(np.where(mask, S, -1e9))  # the all-False row comes out uniform


def ms_wrong_axis(S, mask):
    return ms_where_guarded(S.T, mask.T).T


def ms_wrong_axis_naive(S, mask):
    return _stable(np.where(mask, S, -np.inf), axis=0)  # NaN in the all-False column


def test_wrong_answers_really_are_wrong_and_finite_where_expected():
    # the candidates above differ from the reference on the first case the checker tries
    t = chk._softmax_table()[0]
    S, mask = t["S"], t["mask"]
    np.testing.assert_allclose(t["want"], masked_softmax_loop(S, mask))
    right = masked_softmax_loop(S, mask)
    with np.errstate(all="ignore"):
        for f in (ms_zero_not_inf, ms_no_renormalise, ms_reversed, ms_wrong_axis, ms_wrong_axis_naive):
            assert not np.allclose(f(S, mask), right, equal_nan=True), f.__name__
        # ...and the NaN / overflow / -1e9 versions are right there: they fail later, on their own case
        for f in (ms_nan_row, ms_no_max, ms_minus_1e9, ms_max_of_whole_row):
            np.testing.assert_allclose(f(S, mask), right, atol=1e-12, err_msg=f.__name__)


@pytest.mark.parametrize("wrong, words", [
    (ms_zero_not_inf, "a blocked score of 0 still counts"),
    (ms_no_renormalise, "rows no longer sum to 1"),
    (ms_reversed, "polarity is reversed"),
    (ms_reversed_naive, "polarity is reversed"),
    (ms_nan_row, "the all-False row gives 0/0 = NaN: its row sum is 0"),
    (ms_nan_row_no_max, "not the result of dividing by that 0"),
    (ms_no_max, "exp overflows"),
    (ms_max_of_whole_row, "among the keys the row may see"),
    (ms_minus_1e9, "not uniform weights"),
    (ms_wrong_axis, "wrong axis"),
    (ms_wrong_axis_naive, "wrong axis"),
    (lambda S, m: _stable(S), "ignored the mask"),
    (lambda S, m: _stable(np.where(m, S, -30.0)), "exactly 0"),  # exp(-30) ~ 1e-13: close, but not blocked
    (lambda S, m: masked_softmax_loop(S, m).T, "expected shape (n_q, n_k) = (4, 5)"),
    (lambda S, m: masked_softmax_loop(S, m)[0], "got (5,)"),
    (lambda S, m: masked_softmax_loop(S, m) + 0.01 * m, "each row with at least one allowed key must sum to 1"),
    (lambda S, m: masked_softmax_loop(S, m) * 0.9 + 0.1 / S.shape[1], "must get weight exactly 0"),
    (lambda S, m: m / np.maximum(m.sum(axis=-1, keepdims=True), 1), "numbers are not"),  # uniform, scores ignored
    (lambda S, m: "weights", "got () (a str)"),
    (lambda S, m: None, "forget `return`"),
    (boom, "RuntimeError: boom"),
    (lambda S, m: ..., STUB),
    (None, "no answer yet"),
])
def test_masked_softmax_names_the_mistake(capsys, wrong, words):
    with np.errstate(all="ignore"):
        assert chk.masked_softmax(wrong) is False
    out = one_line(capsys)
    assert out.startswith("✗") and words in out, out


def test_masked_softmax_does_not_let_the_learner_change_its_cases(capsys):
    def vandal(S, mask):
        mask[:] = True  # the checker passes copies: this must not change the reference
        return masked_softmax_loop(S, mask)
    assert chk.masked_softmax(vandal) is False
    assert one_line(capsys).startswith("✗")
    assert chk.masked_softmax(masked_softmax_loop) is True
    one_line(capsys)


# ---------------------------------------------------------------- sinusoidal positions

def positions_loop(n, d):
    """The formula of Vaswani et al. (2017) entry by entry, independent of attention_kit."""
    P = np.zeros((n, d))
    for pos in range(n):
        for i in range(d // 2):
            angle = pos / 10000 ** (2 * i / d)
            P[pos, 2 * i] = np.sin(angle)
            P[pos, 2 * i + 1] = np.cos(angle)
    return P


def test_positions_loop_agrees_with_package():
    for n, d in ((6, 8), (3, 4), (10, 16)):
        np.testing.assert_allclose(positions_loop(n, d), ak.sinusoidal_positions(n, d), atol=1e-12)


def positions_vectorised(n, d):
    pos = np.arange(n)[:, None]
    j = np.arange(d)[None, :]
    angle = pos / 10000 ** (2 * (j // 2) / d)
    return np.where(j % 2 == 0, np.sin(angle), np.cos(angle))


def positions_at(pos, d):
    """The formula entry by entry at the given positions (a loop: the checker compares numbers only)."""
    P = np.zeros((len(pos), d))
    for k, p in enumerate(pos):
        for i in range(d // 2):
            angle = p / 10000 ** (2 * i / d)
            P[k, 2 * i] = np.sin(angle)
            P[k, 2 * i + 1] = np.cos(angle)
    return P


def on_positions(f):
    """A wrong answer written for (n, d), given the positions' count: it ignores which positions they are."""
    return lambda pos, d: f(len(pos), d)


def test_positions_accepts_right_answers(capsys):
    assert chk.positions(positions_at) is True
    assert one_line(capsys).startswith("✓")

    def vectorised(pos, d):
        j = np.arange(d)[None, :]
        angle = pos[:, None] / 10000 ** (2 * (j // 2) / d)
        return np.where(j % 2 == 0, np.sin(angle), np.cos(angle))
    assert chk.positions(vectorised) is True
    assert one_line(capsys).startswith("✓")
    assert chk.positions(lambda pos, d: vectorised(pos, d).astype(np.float32)) is True
    assert one_line(capsys).startswith("✓")


def test_section_4_1_positions_loop_does_not_pass(capsys):
    # notebook 04's positions_loop(n, d), passed the positions: it takes a count, not positions
    assert chk.positions(positions_loop) is False
    out = one_line(capsys)
    assert "not a count" in out, out
    assert chk.positions(on_positions(positions_loop)) is False   # the count only: positions from 0
    out = one_line(capsys)
    assert "not the positions you were given" in out, out


def _pairs(n, d, exponent, swap=False, start=0, concat=False, multiply=False, same=None):
    pos = np.arange(start, start + n)[:, None]
    i = np.arange(d // 2)[None, :]
    angle = pos * 10000.0 ** exponent(i, d) if multiply else pos / 10000.0 ** exponent(i, d)
    a, b = (np.cos(angle), np.sin(angle)) if swap else (np.sin(angle), np.cos(angle))
    if same is not None:  # the same function in both columns of a pair
        a = b = same(angle)
    if concat:
        return np.concatenate([a, b], axis=1)
    P = np.zeros((n, d))
    P[:, 0::2], P[:, 1::2] = a, b
    return P


def _columns(n, d, exponent):
    P = np.zeros((n, d))
    for pos in range(n):
        for j in range(d):
            angle = pos / 10000 ** exponent(j, d)
            P[pos, j] = np.sin(angle) if j % 2 == 0 else np.cos(angle)
    return P


def two_i(i, d):
    return 2 * i / d


@pytest.mark.parametrize("wrong, words", [
    (lambda n, d: _pairs(n, d, two_i, swap=True), "sin and cos are swapped"),
    (lambda n, d: _pairs(n, d, two_i, same=np.sin), "every column is a sin"),
    (lambda n, d: _pairs(n, d, two_i, same=np.cos), "every column is a cos"),
    (lambda n, d: _pairs(n, d, lambda i, d: i / d), "fall too slowly"),
    (lambda n, d: _columns(n, d, lambda j, d: j / d), "column index in the exponent"),
    (lambda n, d: _columns(n, d, lambda j, d: 2 * j / d), "column index where the pair index belongs"),
    (lambda n, d: _pairs(n, d, two_i, concat=True), "the paper interleaves them"),
    (lambda n, d: _pairs(n, d, two_i, start=1), "you encoded positions 1 .. 6"),
    (lambda n, d: _pairs(n, d, two_i, multiply=True), "your frequencies grow"),
    (lambda n, d: positions_loop(n, d).T, "rows are positions"),
    (lambda n, d: positions_loop(n, d + 2), "expected shape (len(pos), d) = (6, 8)"),
    (lambda n, d: positions_loop(n, d)[:, : d // 2], "got (6, 4)"),
    (lambda n, d: positions_loop(n, d) + 0.5, "the shape is right but the numbers are not"),
    (lambda n, d: None, "forget `return`"),
    (boom, "RuntimeError: boom"),
    (lambda n, d: ..., STUB),
    (lambda n, d: positions_loop(n, d).tolist(), "returned a list"),
    (..., "no answer yet"),
])
def test_positions_names_the_mistake(capsys, wrong, words):
    if callable(wrong):
        wrong = on_positions(wrong)   # the first case is pos = 0..5, where these agree with (n, d)
    assert chk.positions(wrong) is False
    out = one_line(capsys)
    assert out.startswith("✗") and words in out, out


def test_position_mistakes_are_told_apart():
    # every wrong variant differs from the right answer and from the other variants on (6, 8)
    variants = [
        _pairs(6, 8, two_i, swap=True), _pairs(6, 8, lambda i, d: i / d), _columns(6, 8, lambda j, d: j / d),
        _columns(6, 8, lambda j, d: 2 * j / d), _pairs(6, 8, two_i, concat=True), _pairs(6, 8, two_i, start=1),
        _pairs(6, 8, two_i, multiply=True), _pairs(6, 8, two_i, same=np.sin), _pairs(6, 8, two_i, same=np.cos),
        positions_loop(6, 8),
    ]
    for a in range(len(variants)):
        for b in range(a):
            assert not np.allclose(variants[a], variants[b], atol=1e-3), (a, b)


# ---------------------------------------------------------------- which rows change

def rows_that_change(n=6, edited=3, seed=0):
    """Run causal self-attention with attention_kit, edit token `edited`, list the rows that move."""
    rng = np.random.default_rng(seed)
    d_model, d_k = 5, 3
    X = rng.normal(size=(n, d_model))
    W_q, W_k, W_v = (rng.normal(size=(d_model, d_k)) for _ in range(3))
    mask = ak.causal_mask(n)
    before, _ = ak.self_attention(X, W_q, W_k, W_v, mask=mask)
    X2 = X.copy()
    X2[edited] += rng.normal(size=d_model)
    after, _ = ak.self_attention(X2, W_q, W_k, W_v, mask=mask)
    moved = ~np.all(before == after, axis=-1)  # exact equality: the rows that cannot see it stay identical
    return [int(i) for i in np.flatnonzero(moved)]


def test_answer_key_matches_attention_kit():
    for seed in range(3):
        assert rows_that_change(seed=seed) == [3, 4, 5]


@pytest.mark.parametrize("right", [[3, 4, 5], [5, 3, 4], (4, 5, 3), {3, 4, 5}, range(3, 6), np.array([3, 4, 5])])
def test_future_unchanged_accepts_any_order(capsys, right):
    assert chk.future_unchanged(right) is True
    assert one_line(capsys).startswith("✓")


@pytest.mark.parametrize("answer, words", [
    ([0, 1, 2], "some of your rows cannot see token 3"),
    ([0, 1, 2, 3], "some of your rows cannot see token 3"),
    ([4, 5], "the edited token is a query too"),
    ([3], "more rows change"),
    ([0, 1, 2, 3, 4, 5], "not every row can see token 3"),
    ([2, 3, 4, 5], "some of your rows cannot see token 3"),
    ([1, 2, 3, 5], "some of your rows cannot see token 3"),
    ([3, 4], "some rows that change are missing"),
    ([3, 5], "some rows that change are missing"),
    ([], "something changes"),
    ([3, 4, 4, 5], "each query index once"),
    ([3, 4, 5.0], "whole numbers"),
    ([True, 4, 5], "whole numbers"),
    (["3", "4", "5"], "whole numbers"),
    ([3, 4, 6], "0 .. 5"),
    ([-1, 3, 4, 5], "0 .. 5"),
    (3, "give a list of query indices"),
    ("3, 4, 5", "give a list of query indices"),
    (None, "no answer yet"),
    (..., "no answer yet: replace the `...` after `answer =`"),
])
def test_future_unchanged_names_the_mistake(capsys, answer, words):
    assert chk.future_unchanged(answer) is False
    out = one_line(capsys)
    assert out.startswith("✗") and words in out, out
    assert not re.search(r"rows? \d|\b[0-5] and [0-5]\b|i >= 3", out), out  # trial 4: no row named in class


# ---------------------------------------------------------------- every checker: one line, never raises

class Weird:
    """An object that breaks everything a checker might do with it."""

    def __array__(self, *args, **kwargs):
        raise RuntimeError("no array for you")

    def __iter__(self):
        raise RuntimeError("no iteration either")

    def __len__(self):
        raise RuntimeError("no length")


@pytest.mark.parametrize("checker, answer", [
    (chk.causal_mask, lambda n: Weird()),
    (chk.masked_softmax, lambda S, m: Weird()),
    (chk.positions, lambda p, d: Weird()),
    (chk.future_unchanged, Weird()),
    (chk.causal_mask, 42),
    (chk.masked_softmax, "f"),
    (chk.positions, [1, 2]),
    (chk.masked_softmax, lambda S, m: np.full(S.shape, np.nan)),
    (chk.positions, lambda p, d: np.full((len(p), d), np.inf)),
    (chk.causal_mask, lambda n: np.array([[object()]])),
])
def test_checkers_never_raise(capsys, checker, answer):
    with np.errstate(all="ignore"):
        assert checker(answer) is False
    out = one_line(capsys)
    assert out.startswith("✗"), out


def test_module_docstring_lists_every_checker():
    for name in chk.__all__:
        assert f"``{name}(" in chk.__doc__, name


def test_hints_name_the_idea_not_the_formula():
    """No recorded hint of 04's checkers spells the expression to type (issue 46)."""
    hints = [h for t in chk._mask_table() for _, h in t["wrong"]]
    hints += [h for t in chk._softmax_table() for _, h in t["wrong"]]
    hints += [h for t in chk._position_table() for _, h in t["wrong"]]
    for h in hints:
        for code in ("10000^", "sin(pos", "j <= i", "np.", "-inf", "minus infinity", "tril", "triu"):
            assert code not in h, (code, h)


def test_the_rows_table_is_the_causal_rule():
    t = chk._rows_table().open()
    edited = 3
    assert t["want"] == [i for i in range(t["n"]) if ak.causal_mask(t["n"])[i, edited]]


# ---------------------------------------------------------------- trial report (2026-11-28): W1, M4

def test_masked_softmax_shifted_by_the_allowed_minimum_overflows(capsys):
    def by_min(S, mask):
        lo = np.min(np.where(mask, S, np.inf), axis=1, keepdims=True)
        lo = np.where(np.isfinite(lo), lo, 0.0)
        e = np.where(mask, np.exp(np.where(mask, S, lo) - lo), 0.0)
        t = e.sum(axis=1, keepdims=True)
        return e / np.where(t == 0, 1.0, t)

    with np.errstate(all="ignore"):
        assert chk.masked_softmax(by_min) is False
    out = one_line(capsys)
    assert "overflows" in out, out


@pytest.mark.parametrize("blocked", [-np.inf, -1e9])
def test_causal_mask_additive_form_is_told_the_pattern_is_right(capsys, blocked):
    assert chk.causal_mask(lambda n: np.where(np.tri(n, dtype=bool), 0.0, blocked)) is False
    out = one_line(capsys)
    assert "right pattern" in out and "additive" in out and "the pattern is not" not in out, out


def test_masked_softmax_shifted_by_the_first_mean_or_median_allowed_score_fails():
    """Re-trial: a shift by the first allowed score, or their mean or median, passed 04.2 (the
    public +-1000 rows only reached about 500 above those); each overflows on row 1 now."""
    def shifted(pick):
        def f(S, mask):
            rows = [np.asarray(S[i])[np.asarray(mask[i], bool)] for i in range(S.shape[0])]
            c = np.array([[pick(r) if r.size else 0.0] for r in rows])
            with np.errstate(all="ignore"):
                e = np.where(mask, np.exp(np.where(mask, S, c) - c), 0.0)
                t = e.sum(axis=1, keepdims=True)
                return e / np.where(t == 0, 1.0, t)
        return f

    for pick in (lambda r: r[0], np.mean, np.median, np.min):
        assert chk.masked_softmax(shifted(pick)) is False
    assert chk.masked_softmax(shifted(np.max)) is True


@pytest.mark.parametrize("answer", [[0, 1, 2, 3], [0, 1, 2], [1, 2, 3], [2, 3, 4]])
def test_future_unchanged_in_class_hint_for_early_rows_states_no_answer(capsys, answer):
    """Trial 3, H2: "... while row 3 and the rows after it can: every query i >= 3 sees token 3"."""
    assert chk.future_unchanged(answer) is False
    out = one_line(capsys)
    assert "cannot see token 3" in out, out
    for told in ("i >= 3", "rows after it", "3, 4", "4 and 5", "only queries"):
        assert told not in out, (told, out)
