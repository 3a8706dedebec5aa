"""The notebook-05 checkers accept right answers and name the usual mistakes."""

import numpy as np
import pytest

# the helpers of the notebook-04 checker tests: one line of output, a raising answer, and an object
# that breaks everything a checker might do with it
from test_check_masks_positions import Weird, boom, one_line  # (tests/ is on sys.path)

from attention_kit.check import backprop as chk
from attention_kit.check import grad_check
from attention_kit.learn.backward import numerical_gradient, relative_error

STUB = "✗ no answer yet: replace the `...` after `return` with your code, then run the cell again"


# ---------------------------------------------------------------- gradient check

def gc_right(f, x, analytic, eps=1e-4):
    return relative_error(analytic, numerical_gradient(f, x, eps))


def gc_elementwise(f, x, analytic, eps=1e-4):  # the other common relative error: the worst entry
    n = numerical_gradient(f, x, eps)
    return float(np.max(np.abs(analytic - n) / np.maximum(np.abs(analytic) + np.abs(n), 1e-300)))


def _numeric(f, x, eps, kind):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (f(up) - f(x)) / eps if kind == "one-sided" else (f(up) - f(down)) / eps
    return g


def _over_one(f, x, a, eps, which):
    """The difference against one gradient alone (or the larger): not a relative error (learner trial, 05.3)."""
    n = numerical_gradient(f, x, eps)
    den = {"analytic": np.linalg.norm(a), "numerical": np.linalg.norm(n),
           "larger": max(np.linalg.norm(a), np.linalg.norm(n))}[which]
    return float(np.linalg.norm(a - n) / den)


def gc_l1(f, x, analytic, eps=1e-4):  # sums of absolute values instead of norms: treats both alike too
    n = numerical_gradient(f, x, eps)
    return float(np.abs(analytic - n).sum() / (np.abs(analytic).sum() + np.abs(n).sum()))


@pytest.mark.parametrize("right", [gc_right, gc_elementwise, gc_l1])
def test_gradient_check_accepts_right_answers(capsys, right):
    # __wrapped__: the checker without its plain-numpy guard (these use attention_kit's helpers)
    assert chk.gradient_check.__wrapped__(right) is True
    assert one_line(capsys).startswith("✓")


@pytest.mark.parametrize("wrong, words", [
    (lambda f, x, a, eps: float(np.max(np.abs(a - numerical_gradient(f, x, eps)))), "absolute error"),
    (lambda f, x, a, eps: float(np.linalg.norm(a - numerical_gradient(f, x, eps))), "absolute error"),
    (lambda f, x, a, eps: relative_error(a, _numeric(f, x, eps, "one-sided")), "one-sided difference"),
    (lambda f, x, a, eps: relative_error(a, _numeric(f, x, eps, "over")), "how far apart are the two points"),
    (lambda f, x, a, eps: -1.0, "never negative"),
    (lambda f, x, a, eps: np.ones(3), "return one finite number"),
    (lambda f, x, a, eps: float("nan"), "return one finite number"),
    (lambda f, x, a, eps: 0.5, "below 1e-6"),
    (lambda f, x, a, eps: 1e-7, "stays between 0 and 1"),
    (lambda f, x, a, eps: _over_one(f, x, a, eps, "analytic"), "against the analytic gradient alone"),
    (lambda f, x, a, eps: _over_one(f, x, a, eps, "numerical"), "against the numerical gradient alone"),
    # it treats the two alike, but can exceed 1: not told it measures against the analytic one alone
    (lambda f, x, a, eps: _over_one(f, x, a, eps, "larger"), "the larger of the two gradients' sizes"),
    # a step of its own: passed only while the checker tried a single eps (learner trial, issue 46)
    (lambda f, x, a, eps: relative_error(a, numerical_gradient(f, x, 1e-5)), "use the eps it is passed"),
    (lambda f, x, a, eps: 2.0, "more than 1"),
    (lambda f, x, a, eps: float(np.linalg.norm(a - numerical_gradient(f, x, eps))
                                / np.hypot(np.linalg.norm(a), np.linalg.norm(numerical_gradient(f, x, eps)))),
     "stays between 0 and 1"),
    (lambda f, x, a, eps: ..., STUB),
    (boom, "RuntimeError: boom"),
])
def test_gradient_check_names_the_mistake(capsys, wrong, words):
    assert chk.gradient_check.__wrapped__(wrong) is False  # without the plain-numpy guard
    out = one_line(capsys)
    assert out.startswith("✗") and words in out, out


def gc_in_place(f, x, analytic, eps=1e-4):
    """Perturbs x itself and never restores it: the task says to perturb a copy."""
    n = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        x[i] += eps
        up = f(x)
        x[i] -= 2 * eps
        n[i] = (up - f(x)) / (2 * eps)      # x[i] is left at x - eps
    return np.linalg.norm(analytic - n) / (np.linalg.norm(analytic) + np.linalg.norm(n))


def gc_in_place_restored(f, x, analytic, eps=1e-4):
    """Perturbs x itself and puts it back: still not a copy."""
    n = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + eps
        up = f(x)
        x[i] = old - eps
        n[i] = (up - f(x)) / (2 * eps)
        x[i] = old
    return np.linalg.norm(analytic - n) / (np.linalg.norm(analytic) + np.linalg.norm(n))


def test_gradient_check_rejects_perturbing_x_in_place(capsys):
    # without the check, the unrestored version passes: its error is still tiny at each point it reaches
    assert chk.gradient_check(gc_in_place) is False
    out = one_line(capsys)
    assert "perturbs x itself (in place)" in out, out
    assert chk.gradient_check(gc_in_place_restored) is False
    out = one_line(capsys)
    assert "perturbs x itself (in place)" in out, out


def test_gradient_check_cases_separate_the_mistakes():
    """The absolute error of the tiny wrong gradient is far below any sane threshold, and of the huge
    right one far above: only a relative error judges both correctly."""
    (_, f1, x1, a1, _), (_, f2, x2, a2, _), (_, f3, x3, a3, _) = grad_check._cases()[:3]
    assert np.max(np.abs(a2 - numerical_gradient(f2, x2, 1e-4))) < 1e-8
    assert np.max(np.abs(a3 - numerical_gradient(f3, x3, 1e-4))) > 1e-6
    assert relative_error(a1, _numeric(f1, x1, 1e-4, "one-sided")) > 1e-5


# ---------------------------------------------------------------- rotate pattern

@pytest.mark.parametrize("answer, words", [
    ([1, 2, 3, 4, 5, 0], "✓"),
    (np.array([1, 2, 3, 4, 5, 0]), "✓"),
    ([5, 0, 1, 2, 3, 4], "the query that reads it"),
    ([5, 0, 1, 2, 3, 4], "the key whose word"),
    ([0, 1, 2, 3, 4, 5], "copy each word in place"),
    ([5, 4, 3, 2, 1, 0], "reverse task"),
    ([1, 2, 3, 4, 5, 6], "has no position after it"),
    ({1, 2, 3, 4, 5, 0}, "a set has no order"),
    ([1, 2, 3], "give a list of 6 key indices"),
    ([1.0, 2, 3, 4, 5, 0], "whole numbers"),
    ("1 2 3 4 5 0", "give a list of 6"),
    ((1, 2, 3, 4, 5, 0), "✓"),
    ([3, 3, 3, 3, 3, 3], "which key holds"),
    (..., "no answer yet"),
])
def test_rotate_pattern(capsys, answer, words):
    assert chk.rotate_pattern(answer) is (words == "✓")
    out = one_line(capsys)
    assert words in out, out


# ---------------------------------------------------------------- dQ and dK of the general score S = Q W K^T

def gs_loop(Q, K, W, dS):
    """Reference with loops, from s_ij = sum_a,b Q[i, a] W[a, b] K[j, b]."""
    dQ, dK = np.zeros(Q.shape), np.zeros(K.shape)
    for i in range(Q.shape[0]):
        for j in range(K.shape[0]):
            for a in range(Q.shape[1]):
                for b in range(K.shape[1]):
                    dQ[i, a] += dS[i, j] * W[a, b] * K[j, b]
                    dK[j, b] += dS[i, j] * Q[i, a] * W[a, b]
    return dQ, dK


def test_general_score_grads_reference_matches_central_differences():
    rng = np.random.default_rng(0)
    Q, K, W, G = rng.normal(size=(2, 3)), rng.normal(size=(5, 4)), rng.normal(size=(3, 4)), rng.normal(size=(2, 5))
    dQ, dK = gs_loop(Q, K, W, G)
    assert relative_error(dQ, numerical_gradient(lambda q: np.sum(q @ W @ K.T * G), Q)) < 1e-8
    assert relative_error(dK, numerical_gradient(lambda k: np.sum(Q @ W @ k.T * G), K)) < 1e-8


@pytest.mark.parametrize("right", [
    gs_loop,
    lambda Q, K, W, dS: (dS @ K @ W.T, dS.T @ Q @ W),
    lambda Q, K, W, dS: [dS @ (K @ W.T), (dS.T @ (Q @ W)).astype(np.float32)],
    lambda Q, K, W, dS: (np.einsum("ij,jb,ab->ia", dS, K, W), np.einsum("ij,ia,ab->jb", dS, Q, W)),
])
def test_general_score_grads_accepts_right_answers(capsys, right):
    assert chk.general_score_grads(right) is True
    assert one_line(capsys).startswith("✓")


@pytest.mark.parametrize("wrong, words", [
    (lambda Q, K, W, dS: (dS @ K @ W, dS.T @ Q @ W), "dQ takes W the wrong way round"),
    (lambda Q, K, W, dS: (dS @ K, dS.T @ Q @ W), "dQ leaves W out"),
    (lambda Q, K, W, dS: (dS @ K @ W.T / np.sqrt(K.shape[1]), dS.T @ Q @ W), "no scaling"),
    (lambda Q, K, W, dS: (-(dS @ K @ W.T), dS.T @ Q @ W), "wrong sign"),
    (lambda Q, K, W, dS: (dS @ K @ W.T, dS @ Q @ W), "wrong index of dS"),
    (lambda Q, K, W, dS: (dS @ K @ W.T, dS.T @ Q @ W.T), "dK takes W the wrong way round"),
    (lambda Q, K, W, dS: (dS @ K @ W.T, dS.T @ Q), "dK leaves W out"),
    (lambda Q, K, W, dS: (dS.T @ Q @ W, dS @ K @ W.T), "swapped"),
    (lambda Q, K, W, dS: (dS @ K @ W.T + 0.1, dS.T @ Q @ W), "the terms that contain Q[i, a]"),
    (lambda Q, K, W, dS: (dS @ K @ W.T, dS.T @ Q @ W + 0.1), "the terms that contain K[j, b]"),
    (lambda Q, K, W, dS: (dS @ K @ W.T, (dS.T @ Q @ W)[:, :2]), "must have the shape of K"),
    (lambda Q, K, W, dS: dS @ K @ W.T, "return the two arrays as a pair"),
    (lambda Q, K, W, dS: (dS @ K @ W.T, dS.T @ Q @ W, 0), "a tuple of 3"),
    # the course's rule (learner trial): the pair may be a list, its elements must be numpy arrays
    (lambda Q, K, W, dS: [(dS @ K @ W.T).tolist(), (dS.T @ Q @ W).tolist()], "dQ is a list"),
    (lambda Q, K, W, dS: (dS @ K @ W.T, (dS.T @ Q @ W).tolist()), "dK is a list"),
    (lambda Q, K, W, dS: (tuple(dS @ K @ W.T), dS.T @ Q @ W), "dQ is a tuple"),
    (lambda Q, K, W, dS: ((dS @ K @ W.T).tolist(), dS.T @ Q @ W), "dQ is a list"),
    (lambda Q, K, W, dS: (..., ...), STUB),
    (boom, "RuntimeError: boom"),
    (..., "no answer yet: write my_general_score_grads"),
])
def test_general_score_grads_names_the_mistake(capsys, wrong, words):
    assert chk.general_score_grads(wrong) is False
    out = one_line(capsys)
    assert words in out, out


def test_general_score_grads_hints_do_not_hand_over_the_answer(capsys):
    wrongs = [lambda Q, K, W, dS: (dS @ K @ W.T + 0.1, dS.T @ Q @ W),
              lambda Q, K, W, dS: (dS @ K @ W.T, dS.T @ Q @ W + 0.1),
              lambda Q, K, W, dS: (dS @ K @ W.T, (dS.T @ Q @ W)[:, :2])]
    for wrong in wrongs:
        chk.general_score_grads(wrong)
        out = one_line(capsys)
        assert "dS @ K @ W.T" not in out and "dS.T @ Q @ W" not in out and "dS K W^T" not in out, out


# ---------------------------------------------------------------- why the key bias learns nothing

def bias_right(Q, K, dS):
    d_k = Q.shape[1]
    return (dS @ K).sum(axis=0) / np.sqrt(d_k), (dS.T @ Q).sum(axis=0) / np.sqrt(d_k)


def test_key_bias_reference_matches_central_differences():
    rng = np.random.default_rng(1)
    X, W_q, W_k = rng.normal(size=(4, 5)), rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    b_q, b_k, G = rng.normal(size=3), rng.normal(size=3), rng.normal(size=(4, 4))

    def loss(bq, bk):
        S = (X @ W_q + bq) @ (X @ W_k + bk).T / np.sqrt(3)
        A = np.exp(S - S.max(axis=1, keepdims=True))
        return np.sum(A / A.sum(axis=1, keepdims=True) * G)

    Q, K = X @ W_q + b_q, X @ W_k + b_k
    A = np.exp(Q @ K.T / np.sqrt(3))
    A /= A.sum(axis=1, keepdims=True)
    dS = A * (G - (G * A).sum(axis=1, keepdims=True))
    db_q, db_k = bias_right(Q, K, dS)
    assert relative_error(db_q, numerical_gradient(lambda b: loss(b, b_k), b_q)) < 1e-7
    assert np.abs(db_k).max() < 1e-12 and np.abs(numerical_gradient(lambda b: loss(b_q, b), b_k)).max() < 1e-8


@pytest.mark.parametrize("fn, why, words", [
    (bias_right, "b", "✓"),
    (bias_right, "B", "✓"),
    (bias_right, "(b)", "✓"),
    (bias_right, "a", "the starting value is not the reason"),
    (bias_right, "c", "does not remove it"),
    (bias_right, "d", "before the softmax"),
    (bias_right, "e", "give one of the letters"),
    (bias_right, "b ", "✓"),
    (bias_right, ..., "now replace the `...` after `why =`"),
    (lambda Q, K, dS: (bias_right(Q, K, dS)[0], np.zeros(Q.shape[1])), "b", "do not write down the 0"),
    (lambda Q, K, dS: (dS @ K / np.sqrt(Q.shape[1]), bias_right(Q, K, dS)[1]), "b", "one row per token"),
    (lambda Q, K, dS: ((dS @ K).sum(axis=1) / np.sqrt(Q.shape[1]), bias_right(Q, K, dS)[1]), "b", "wrong axis"),
    # a hard-coded d_k: right for the first case (d_k = 3), wrong for the second (d_k = 2)
    (lambda Q, K, dS: ((dS @ K).sum(axis=0) / np.sqrt(3), (dS.T @ Q).sum(axis=0) / np.sqrt(3)), "b",
     "scaled by a fixed number"),
    (lambda Q, K, dS: ((dS @ K).mean(axis=0) / np.sqrt(Q.shape[1]), bias_right(Q, K, dS)[1]), "b", "not averaged"),
    (lambda Q, K, dS: (bias_right(Q, K, dS)[0], (dS.T @ Q).mean(axis=0) / np.sqrt(Q.shape[1])), "b", "not averaged"),
    (lambda Q, K, dS: ((dS @ K).sum(axis=0), bias_right(Q, K, dS)[1]), "b", "1/sqrt(d_k)"),
    (lambda Q, K, dS: (bias_right(Q, K, dS)[0] + 1, bias_right(Q, K, dS)[1]), "b", "right shape but the wrong"),
    (lambda Q, K, dS: bias_right(Q, K, dS)[0], "b", "return the two arrays as a pair"),
    # the course's rule (learner trial): the pair may be a list, its elements must be numpy arrays
    (lambda Q, K, dS: list(bias_right(Q, K, dS)), "b", "✓"),
    (lambda Q, K, dS: [list(bias_right(Q, K, dS)[0]), list(bias_right(Q, K, dS)[1])], "b", "db_q is a list"),
    (lambda Q, K, dS: (bias_right(Q, K, dS)[0], tuple(bias_right(Q, K, dS)[1])), "b", "db_k is a tuple"),
    (lambda Q, K, dS: (bias_right(Q, K, dS)[0], bias_right(Q, K, dS)[1].tolist()), "b", "db_k is a list"),
    (lambda Q, K, dS: ..., "b", STUB),
    (boom, "b", "RuntimeError: boom"),
    (..., "b", "no answer yet: write my_bias_grads"),
])
def test_key_bias(capsys, fn, why, words):
    assert chk.key_bias(fn, why) is (words == "✓")
    out = one_line(capsys)
    assert words in out, out


# ---------------------------------------------------------------- never raise

@pytest.mark.parametrize("checker, answer", [
    (chk.gradient_check, lambda f, x, a, eps: Weird()),
    (chk.rotate_pattern, Weird()),
    (chk.rotate_pattern, 42),
    (chk.gradient_check, 42),
    (chk.general_score_grads, lambda Q, K, W, dS: (Weird(), Weird())),
    (chk.general_score_grads, lambda Q, K, W, dS: Weird()),
])
def test_checkers_never_raise(capsys, checker, answer):
    with np.errstate(all="ignore"):
        assert checker(answer) is False
    out = one_line(capsys)
    assert out.startswith("✗"), out


def test_key_bias_never_raises(capsys):
    with np.errstate(all="ignore"):
        assert chk.key_bias(lambda Q, K, dS: (Weird(), Weird()), "b") is False
        assert chk.key_bias(lambda Q, K, dS: Weird(), Weird()) is False
    assert all(line.startswith("✗") for line in capsys.readouterr().out.strip().splitlines())


def test_module_docstring_lists_every_checker():
    for name in chk.__all__:
        assert f"``{name}(" in chk.__doc__, name


def test_gradient_check_tries_two_steps_eps():
    assert len({c["eps"] for c in grad_check._gradient_table()}) >= 2


def test_the_larger_gradient_error_is_not_told_it_uses_the_analytic_one_alone(capsys):
    chk.gradient_check.__wrapped__(lambda f, x, a, eps: _over_one(f, x, a, eps, "larger"))
    out = one_line(capsys)
    assert "analytic gradient alone" not in out and "exceed 1" in out, out


def test_gradient_check_hints_teach_the_idea_not_the_formula(capsys):
    wrongs = [lambda f, x, a, eps: float(np.max(np.abs(a - numerical_gradient(f, x, eps)))),
              lambda f, x, a, eps: relative_error(a, _numeric(f, x, eps, "one-sided")),
              lambda f, x, a, eps: relative_error(a, _numeric(f, x, eps, "over")),
              lambda f, x, a, eps: -1.0, lambda f, x, a, eps: 0.5, lambda f, x, a, eps: 1e-7,
              lambda f, x, a, eps: _over_one(f, x, a, eps, "analytic"),
              lambda f, x, a, eps: _over_one(f, x, a, eps, "numerical"),
              lambda f, x, a, eps: _over_one(f, x, a, eps, "larger"),
              lambda f, x, a, eps: relative_error(a, numerical_gradient(f, x, 1e-5))]
    for wrong in wrongs:
        chk.gradient_check.__wrapped__(wrong)
        out = one_line(capsys)
        for formula in ("|a| + |n|", "(f(x + eps)", "2 * eps", "/ (2", "f(x - eps)"):
            assert formula not in out, out


def test_no_hint_of_the_rotate_pattern_names_its_keys(capsys):
    for wrong in ([5, 0, 1, 2, 3, 4], [0, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0], [3, 3, 3, 3, 3, 3]):
        chk.rotate_pattern(wrong)
        out = one_line(capsys)
        assert "key i + 1" not in out and "looks at key" not in out, out


# ---------------------------------------------------------------- trial report (2026-11-28): W2, M7

def _central(f, x, eps):  # the learner's own (plain numpy: the checker refuses ak.numerical_gradient)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (f(up) - f(down)) / (2 * eps)
    return g


def test_gradient_check_unbounded_error_fails(capsys):
    def unbounded(f, x, analytic, eps=1e-4):
        n = _central(f, x, eps)
        return float(np.linalg.norm(analytic - n) / np.linalg.norm(analytic + n))

    assert chk.gradient_check(unbounded) is False
    out = one_line(capsys)
    assert "wrong sign" in out and "more than 1" in out, out


def test_gradient_check_mean_entrywise_error_still_passes(capsys):
    def entrywise(f, x, analytic, eps=1e-4):
        n = _central(f, x, eps)
        return float(np.mean(np.abs(analytic - n) / (np.abs(analytic) + np.abs(n))))

    assert chk.gradient_check(entrywise) is True, one_line(capsys)


def test_rotate_pattern_counted_from_one_is_told_so(capsys):
    assert chk.rotate_pattern([2, 3, 4, 5, 6, 1]) is False
    out = one_line(capsys)
    assert "6: no such key" in out and "from 0" in out, out


# ---------------------------------------------------------------- trial 3: V2, M10, M11

def gc_drifting_copy(f, x, analytic, eps=1e-4):
    """One copy of x for every entry, never put back: each entry stays at x - eps after its turn."""
    num, xc = np.zeros(x.shape), x.astype(float).copy()
    for idx in np.ndindex(x.shape):
        xc[idx] += eps
        fp = f(xc)
        xc[idx] -= 2 * eps
        num[idx] = (fp - f(xc)) / (2 * eps)
    return np.linalg.norm(analytic - num) / (np.linalg.norm(analytic) + np.linalg.norm(num))


def gc_two_drifting_copies(f, x, analytic, eps=1e-4):
    """Two copies, one pushed up and one down, entry after entry, never put back."""
    num, up, down = np.zeros(x.shape), x.astype(float).copy(), x.astype(float).copy()
    for idx in np.ndindex(x.shape):
        up[idx] += eps
        down[idx] -= eps
        num[idx] = (f(up) - f(down)) / (2 * eps)
    return np.linalg.norm(analytic - num) / (np.linalg.norm(analytic) + np.linalg.norm(num))


@pytest.mark.parametrize("wrong", [gc_drifting_copy, gc_two_drifting_copies])
def test_gradient_check_copy_never_put_back_fails(capsys, wrong):
    """Trial 3, V2: with sums over entries only, a copy that drifts passed; a function whose entries
    interact shows it, and the hint names the idea (each entry back as it was), not the code."""
    assert chk.gradient_check(wrong) is False
    out = one_line(capsys)
    assert out.startswith("✗") and "put back" in out, out
    assert "xc[" not in out and "copy()" not in out, out


def test_gradient_check_has_a_function_whose_entries_interact():
    """A public case whose f is not a sum of one function per entry: its second differences across
    two entries are not all 0."""
    def mixes(f, x):
        e = np.eye(x.size).reshape(x.size, *x.shape) * 1e-3
        return abs(f(x + e[0] + e[1]) - f(x + e[0]) - f(x + e[1]) + f(x)) > 1e-9

    assert any(mixes(grad_check._FUNCTIONS[c["f"]], c["x"]) for c in grad_check._gradient_table())


def test_gradient_check_one_minus_cosine_is_not_called_an_absolute_error(capsys):
    """Trial 3, M10: 1 - cosine similarity is 0 for a gradient twice the right one; the hint said
    'an absolute error (0)'. It says that the error sees the direction only, not the size."""
    def one_minus_cos(f, x, analytic, eps=1e-4):
        n = _central(f, x, eps)
        return 1 - (analytic.ravel() @ n.ravel()) / (np.linalg.norm(analytic) * np.linalg.norm(n))

    assert chk.gradient_check(one_minus_cos) is False
    out = one_line(capsys)
    assert "absolute error" not in out and "never negative" not in out and "direction" in out, out


def test_gradient_check_numerical_gradient_of_the_wrong_sign_is_told_so(capsys):
    """Trial 3, M11: a numerical gradient of the wrong sign gives 1 on a correct gradient; the hint
    said 'got 1, more than 1'. It names the sign, not the formula."""
    def flipped(f, x, analytic, eps=1e-4):
        return relative_error(analytic, -_central(f, x, eps))

    assert chk.gradient_check.__wrapped__(flipped) is False  # without the plain-numpy guard
    out = one_line(capsys)
    assert "more than 1" not in out and "sign" in out, out
    assert "f(x - eps)" not in out and "f(x + eps)" not in out, out


def test_gradient_check_zero_numerical_gradient_is_not_told_its_sign(capsys):
    """A numerical gradient left at 0 gives 1 too, but its sign is not the mistake."""
    assert chk.gradient_check.__wrapped__(lambda f, x, a, eps: relative_error(a, np.zeros_like(a))) is False
    out = one_line(capsys)
    assert "sign" not in out and "more than 1" not in out, out
