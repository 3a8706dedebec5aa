"""The notebook-02 checkers accept right answers and name the usual mistakes."""

import numpy as np
import pytest

import attention_kit as ak
import attention_kit.check.self_attention as check
from attention_kit.check.self_attention_cases import OUTPUT_ROW_X

# --- reference answers written independently of attention_kit (plain loops) ------------------


def loop_softmax_rows(S):
    S = np.asarray(S, dtype=float)
    out = np.empty_like(S)
    for idx in np.ndindex(S.shape[:-1]):   # every row, whatever is in front of it
        row = S[idx]
        e = [np.exp(v - max(row)) for v in row]
        out[idx] = [v / sum(e) for v in e]
    return out


def loop_self_attention(X, W_q, W_k, W_v):
    if X.ndim == 3:   # a batch: one sequence at a time
        return np.stack([loop_self_attention(x, W_q, W_k, W_v) for x in X])
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    d_k = Q.shape[1]
    out = np.zeros((len(X), V.shape[1]))
    for i in range(len(X)):
        s = np.array([Q[i] @ K[j] / np.sqrt(d_k) for j in range(len(X))])
        a = np.exp(s - s.max())
        a /= a.sum()
        for j in range(len(X)):
            out[i] += a[j] * V[j]
    return out


def sm(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def run(capsys, checker, *args, **kwargs):
    ok = checker(*args, **kwargs)
    out = capsys.readouterr().out
    assert out.count("\n") >= 1
    return ok, out


# --- softmax_rows ----------------------------------------------------------------------------


def test_softmax_rows_accepts_loop_and_attention_kit(capsys):
    for fn in (loop_softmax_rows, ak.softmax, lambda S: sm(S, -1)):
        ok, out = run(capsys, check.softmax_rows.__wrapped__, fn)  # without the plain-numpy guard
        assert ok and out.startswith("✓"), out


@pytest.mark.parametrize(
    "fn, hint",
    [
        (lambda S: sm(S, 0), "COLUMN"),
        (lambda S: sm(S, 1).T, "transposed"),
        (lambda S: np.exp(S - S.max()) / np.exp(S - S.max()).sum(), "whole matrix"),
        (lambda S: np.exp(S) / np.exp(S).sum(axis=1), "kept as a column"),
        (lambda S: S / S.sum(axis=1, keepdims=True), "without the exponential"),
        (lambda S: np.exp(S - S.max(axis=1, keepdims=True)), "do not sum to 1"),
        (lambda S: np.exp(S) / np.exp(S).sum(axis=1, keepdims=True), "overflows"),
        # the global maximum: the row near -1000 underflows to 0/0, not an overflow
        (lambda S: np.exp(S - S.max()) / np.exp(S - S.max()).sum(axis=-1, keepdims=True), "0/0"),
        (lambda S: sm(S, -1).tolist(), "returned a list"),
        # the 2-D-only answers: right on a matrix, wrong on a stack of them (h, n_q, n_k)
        (lambda S: sm(S, 1), "LAST axis"),
        # no recorded mistake: what is wrong is named, the expected weights are not printed
        (lambda S: sm(2 * S, -1), "work that row out by hand"),
        (lambda S: sm(S, -1) * 0.5, "your rows sum to [0.5"),
        (lambda S: None, "return"),
        (lambda S: 1 / 0, "ZeroDivisionError"),
        (..., "not answered"),
    ],
)
def test_softmax_rows_names_the_mistake(capsys, fn, hint):
    ok, out = run(capsys, check.softmax_rows, fn)
    assert not ok and out.startswith("✗") and hint in out, out
    assert "expected" not in out, out   # the hint never prints the right weights


def test_checkers_know_only_the_exercises_inputs(capsys):
    ok, out = run(capsys, check.output_row, np.zeros(2), X=TOY + 1, W_q=I2, W_k=I2, W_v=I2, i=2)
    assert not ok and "exercise's inputs only" in out, out
    ok, out = run(capsys, check.dot_variance, 48, 6.93, d_k=48)
    assert not ok and "exercise's numbers only" in out, out


def test_softmax_given_of_section_6_does_not_pass(capsys):
    # notebook 02's section 6 defines this correct 2-D softmax; exercise 1 asks for any stack of rows
    def softmax_given(X):
        x_row_max = X.max(axis=1).reshape(list(X.shape)[:-1] + [1])
        X = X - x_row_max
        x_exp = np.exp(X)
        x_exp_row_sum = x_exp.sum(axis=1).reshape(list(X.shape)[:-1] + [1])
        return x_exp / x_exp_row_sum

    ok, out = run(capsys, check.softmax_rows, softmax_given)
    assert not ok and "last axis" in out, out


def test_softmax_rows_catches_in_place_change(capsys):
    def in_place(S):
        S -= S.max(axis=1, keepdims=True)
        e = np.exp(S)
        return e / e.sum(axis=1, keepdims=True)

    ok, out = run(capsys, check.softmax_rows, in_place)
    assert not ok and "in place" in out


# --- scaled_scores ---------------------------------------------------------------------------


def loop_scores(Q, K):
    if Q.ndim == 3:   # a stack of heads: one head at a time
        return np.stack([loop_scores(q, k) for q, k in zip(Q, K, strict=True)])
    return np.array([[q @ k / np.sqrt(len(q)) for k in K] for q in Q])


def test_scaled_scores_accepts(capsys):
    for fn in (loop_scores, lambda Q, K: Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]),
               lambda Q, K: np.einsum("...id,...jd->...ij", Q, K) / Q.shape[-1] ** 0.5):
        ok, out = run(capsys, check.scaled_scores, fn)
        assert ok and out.startswith("✓"), out


def test_scaled_scores_rejects_the_one_matrix_forms_on_a_stack(capsys):
    # right for one (n_q, d_k) matrix, wrong or failing on a stack of heads (h, n_q, d_k)
    for fn, hint in ((lambda Q, K: Q @ K.T / np.sqrt(Q.shape[-1]), ".T reverses every axis"),
                     (lambda Q, K: np.einsum("id,jd->ij", Q, K) / np.sqrt(Q.shape[-1]), "Whatever stands in front"),
                     (lambda Q, K: np.tensordot(Q, K, axes=([1], [1])) / np.sqrt(Q.shape[-1]), "stack of heads")):
        ok, out = run(capsys, check.scaled_scores, fn)
        assert not ok and hint in out, out


@pytest.mark.parametrize(
    "fn, hint",
    [
        (lambda Q, K: Q @ K.T, "forgot the scaling"),
        (lambda Q, K: Q @ K.T / Q.shape[-1], "square root"),
        (lambda Q, K: Q @ K.T / np.sqrt(K.shape[0]), "sqrt(n_k)"),
        (lambda Q, K: Q @ K.T / np.sqrt(Q.shape[0]), "sqrt(n_q)"),
        (lambda Q, K: Q @ K.T * np.sqrt(Q.shape[-1]), "multiplied"),
        (lambda Q, K: K @ Q.T / np.sqrt(Q.shape[-1]), "transposed layout"),
        (lambda Q, K: Q @ K / np.sqrt(Q.shape[-1]), "pair the d_k axis"),
        # a constant that is right for one width only: the checker tries d_k = 9 and d_k = 4
        (lambda Q, K: Q @ K.T / 3, "a fixed number cannot be right for every width"),
        (lambda Q, K: Q @ K.T / np.sqrt(7), "a fixed number cannot be right for every width"),
        # a number typed in that equals a shape-based mistake on one case is still a fixed number:
        # sqrt(2) is sqrt(n_q) and 2 is sqrt(n_k) on the first case, 9 and 4 are its d_k and the second's
        (lambda Q, K: Q @ np.swapaxes(K, -1, -2) / np.sqrt(2), "a fixed number cannot be right for every width"),
        (lambda Q, K: Q @ np.swapaxes(K, -1, -2) / 2, "a fixed number cannot be right for every width"),
        (lambda Q, K: Q @ np.swapaxes(K, -1, -2) / 9, "a fixed number cannot be right for every width"),
        (lambda Q, K: Q @ np.swapaxes(K, -1, -2) / 4, "a fixed number cannot be right for every width"),
        (lambda Q, K: Q @ np.swapaxes(K, -1, -2) * 3, "multiplied by 3 for every width"),
        # a divisor read from the shapes, but the wrong one for this case: not called a fixed number
        (lambda Q, K: Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-2] + K.shape[-2]), "which axis of which input"),
        (lambda Q, K: Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]) + 0.1, "wrong values"),
    ],
)
def test_scaled_scores_names_the_mistake(capsys, fn, hint):
    ok, out = run(capsys, check.scaled_scores, fn)
    assert not ok and hint in out, out


@pytest.mark.parametrize("divisor", [np.sqrt(2), 2.0, 9.0, 4.0, 3.0])
def test_scaled_scores_a_fixed_divisor_is_not_called_a_shape_mistake(capsys, divisor):
    # the trial: a hard-coded / np.sqrt(2) was told "you divided by sqrt(n_q), the number of queries"
    ok, out = run(capsys, check.scaled_scores, lambda Q, K: Q @ np.swapaxes(K, -1, -2) / divisor)
    assert not ok and "fixed number" in out, out
    assert not any(s in out for s in ("n_q", "n_k", "you divided by d_k")), out


# --- output_row --------------------------------------------------------------------------------

TOY = OUTPUT_ROW_X  # the exercise's toy sentence, x3 moved: the checker's recorded case
I2 = np.eye(2)


def test_output_row_accepts_hand_computation(capsys):
    s = TOY @ TOY[2] / np.sqrt(2)  # scores of x3 against every key
    a = np.exp(s) / np.exp(s).sum()
    y3 = a[0] * TOY[0] + a[1] * TOY[1] + a[2] * TOY[2]
    ok, out = run(capsys, check.output_row, np.round(y3, 4), X=TOY, W_q=I2, W_k=I2, W_v=I2, i=2)
    assert ok, out


@pytest.mark.parametrize(
    "make, hint",
    [
        (lambda: sm(TOY @ TOY.T, 1)[2] @ TOY, "forgot the scaling"),
        (lambda: (TOY @ TOY.T @ TOY)[2], "no softmax"),
        (lambda: (sm(TOY @ TOY.T / np.sqrt(2), 0) @ TOY)[2], "wrong axis"),
        (lambda: sm(TOY @ TOY.T / np.sqrt(2), 1)[2], "weight row"),
        (lambda: TOY[2], "input"),
        (lambda: loop_self_attention(TOY, I2, I2, I2)[1], "counts from 0"),
        (lambda: np.array([1.0, 2.0, 3.0]), "shape"),
        # right, but rounded to 2 decimals: was told to redo it step by step (issue 46)
        (lambda: np.round(sm(TOY @ TOY[2] / np.sqrt(2), 0) @ TOY, 2), "rounded too coarsely"),
    ],
)
def test_output_row_names_the_mistake(capsys, make, hint):
    ok, out = run(capsys, check.output_row, make(), X=TOY, W_q=I2, W_k=I2, W_v=I2, i=2)
    assert not ok and hint in out, out


def test_output_row_fallback_names_where_to_look_not_the_recipe(capsys):
    # the trial: the fallback spelled out "scores q_i . k_j / sqrt(d_k), softmax over j, then sum_j a_ij v_j"
    ok, out = run(capsys, check.output_row, TOY.mean(axis=0), X=TOY, W_q=I2, W_k=I2, W_v=I2, i=2)
    assert not ok and "section 4.1" in out, out
    for recipe in ("sqrt", "softmax over j", "sum_j", "q_i . k_j", "a_ij"):
        assert recipe not in out, (recipe, out)


# --- full_self_attention ------------------------------------------------------------------------


def test_full_self_attention_accepts(capsys):
    ok, out = run(capsys, check.full_self_attention, loop_self_attention)
    assert ok, out
    assert run(capsys, check.full_self_attention.__wrapped__,  # without the plain-numpy guard
               lambda X, a, b, c: ak.self_attention(X, a, b, c)[0])[0]


def one_line(axis=-1, scale="d_k", softmax=True):
    def fn(X, W_q, W_k, W_v):
        S = (X @ W_q) @ np.swapaxes(X @ W_k, -1, -2)
        S = S / {"d_k": np.sqrt(W_q.shape[1]), "d_model": np.sqrt(X.shape[-1]), "d_v": np.sqrt(W_v.shape[1]),
                 "none": 1.0}[scale]
        A = sm(S, axis) if softmax else S
        return A @ (X @ W_v)
    return fn


def section_2_5(X, W_q, W_k, W_v):
    # notebook 02's section 2.5 for one sequence, copied: K.T reverses the batch axis too
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    return ak.softmax(Q @ K.T / np.sqrt(K.shape[-1])) @ V


def test_full_self_attention_rejects_section_2_5_copied(capsys):
    ok, out = run(capsys, check.full_self_attention, section_2_5)
    assert not ok and "batch" in out, out


def test_full_self_attention_accepts_the_batch_forms(capsys):
    for fn in (one_line(), lambda X, a, b, c: ak.softmax((X @ a) @ (X @ b).swapaxes(-1, -2)
                                                          / np.sqrt(a.shape[1])) @ (X @ c)):
        ok, out = run(capsys, check.full_self_attention, fn)
        assert ok, out


@pytest.mark.parametrize(
    "fn, hint",
    [
        (one_line(scale="none"), "forgot the scaling"),
        (one_line(scale="d_model"), "sqrt(d_model)"),
        (one_line(scale="d_v"), "width of the values, d_v"),   # was "each sequence is attended on its own"
        # a transpose for 3-D arrays only: numpy's error alone did not say why (issue 46)
        (lambda X, a, b, c: sm((X @ a) @ (X @ b).transpose(0, 2, 1) / np.sqrt(a.shape[1]), -1) @ (X @ c),
         "also one sequence (n, d_model)"),
        (one_line(axis=-2), "wrong axis"),
        (lambda X, a, b, c: list(one_line()(X, a, b, c)), "returned a list"),
        (one_line(softmax=False), "no softmax"),
        (lambda X, a, b, c: np.swapaxes(one_line()(X, a, b, c), -1, -2), "transposed layout"),
        (lambda X, a, b, c: ak.self_attention(X, a, b, c), "tuple"),
        (lambda X, a, b, c: ak.self_attention(X.T, a, b, c)[0], "ShapeError"),
        (lambda X, a, b, c: (X @ a), "must have shape"),
        (lambda X, a, b, c: one_line()(X, a, b, c) + 0.1, "wrong values"),
        (lambda X, a, b, c: np.stack([sm(((x @ a) @ (x @ b).T / np.sqrt(a.shape[1])).ravel(), 0).reshape(
            len(x), len(x)) @ (x @ c) for x in np.reshape(X, (-1, *X.shape[-2:]))]).reshape(
            *X.shape[:-1], c.shape[1]), "whole matrix"),
        (lambda X, a, b, c: sm((X @ a) @ np.swapaxes(X @ b, -1, -2) / np.sqrt(a.shape[1]), -1) @ X,
         "mixed the inputs X"),
    ],
)
def test_full_self_attention_names_the_mistake(capsys, fn, hint):
    ok, out = run(capsys, check.full_self_attention.__wrapped__, fn)  # without the plain-numpy guard
    assert not ok and hint in out, out
    for code in ("Q @ K.T", "X @ W_q", "np.sqrt(d_k)", "axis=-1"):   # hints name the idea, not the code
        assert code not in out, (code, out)


# --- dot_variance --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "var, std, ok_expected, hint",
    [
        (64, 8, True, "variance 64"),
        (8, 8, False, "standard deviation, not the variance"),
        (1, 1, False, "AFTER dividing"),
        (64, 64, False, "how is a standard deviation related to its variance"),
        (4096, 64, False, "add"),
        (..., 8, False, "not answered"),
        ("a lot", 8, False, "not as text"),      # trial report, W3: '32', '5.66' passed
        ("32", "5.66", False, "not as text"),
        (True, True, False, "True and False are not numbers"),   # M5: not "variance 1"
        ([1, 2], 8, False, "two numbers"),
    ],
)
def test_dot_variance(capsys, var, std, ok_expected, hint):
    ok, out = run(capsys, check.dot_variance, var, std)
    assert ok is ok_expected and hint in out, out


# --- fixed_source_code --------------------------------------------------------------------------


def source_003_fixed(X, W_q, W_k, W_v):
    d = X.shape[1]
    Q, K, V = np.matmul(X, W_q), np.matmul(X, W_k), np.matmul(X, W_v)
    W = np.matmul(Q, np.transpose(K)) / np.sqrt(d)
    return np.matmul(sm(W, 1), V)


def test_fixed_source_code_accepts(capsys):
    ok, out = run(capsys, check.fixed_source_code, source_003_fixed)
    assert ok, out


@pytest.mark.parametrize(
    "fn, hint",
    [
        (lambda X, a, b, c: source_003_fixed(X, a.T, b.T, c.T), "column convention"),
        (lambda X, a, b, c: np.matmul(a, X), "not on the tokens"),
        (lambda X, a, b, c: source_003_fixed(X, *np.random.default_rng().normal(size=(3, 3, 3))),
         "do not draw new random"),
        (lambda X, a, b, c: sm((X @ a) @ (X @ b).T, 1) @ (X @ c), "forgot the scaling"),
        (lambda X, a, b, c: (source_003_fixed(X, a, b, c), None), "return only Y"),
    ],
)
def test_fixed_source_code_names_the_mistake(capsys, fn, hint):
    ok, out = run(capsys, check.fixed_source_code, fn)
    assert not ok and hint in out, out


def test_fixed_source_code_fallback_names_where_to_look_not_the_recipe(capsys):
    # the trial: the fallback listed the steps to type ("project X..., scale the scores by sqrt(d),
    # softmax each row, then mix the values")
    ok, out = run(capsys, check.fixed_source_code, lambda X, a, b, c: source_003_fixed(X, a, b, c) + 0.1)
    assert not ok and "section 2.5" in out, out
    for recipe in ("sqrt", "softmax each row", "scale the scores", "project X", "mix the values"):
        assert recipe not in out, (recipe, out)


def test_source_003_original_code_fails_the_checker(capsys):
    """The source's own code (flat W of length n*n, W @ X) is rejected with the matmul hint."""

    def source_003(X, W_q, W_k, W_v):
        n, d = X.shape[:2]
        W_q = np.random.default_rng(0).random(n * n)
        return np.matmul(W_q, X)

    ok, out = run(capsys, check.fixed_source_code, source_003)
    assert not ok and "acts on the features" in out, out


@pytest.mark.parametrize(
    "checker, stub",
    [
        (check.softmax_rows, lambda S: ...),
        (check.scaled_scores, lambda Q, K: ...),
        (check.full_self_attention, lambda X, a, b, c: ...),
        (check.fixed_source_code, lambda X, a, b, c: ...),
    ],
)
def test_untouched_stub_is_reported_as_not_answered(capsys, checker, stub):
    ok, out = run(capsys, checker, stub)
    assert not ok and "not answered yet" in out, out


# d_k = 16, E(q) = 1, Var(q) = Var(k) = 1, E(k) = 0: each term has variance 1 + 0 + 1 = 2, so 32
@pytest.mark.parametrize(
    "var, std, ok_expected, hint",
    [
        (32, 32**0.5, True, "variance 32"),
        (16, 4, False, "left the means out"),
        (32 ** 0.5, 32 ** 0.5, False, "standard deviation, not the variance"),
        (32, 32, False, "how is a standard deviation related to its variance"),
        (512, 32 ** 0.5, False, "add"),
        (40, 6, False, "the means count"),
        (32, 5.66, True, "variance 32"),       # two decimals, as the task asks: sqrt(32) = 5.657
        (32, 5.657, True, "variance 32"),
        (32, 5.65, False, "close but not to two decimals"),
        (32, 5.7, False, "close but not to two decimals"),
    ],
)
def test_dot_variance_with_a_mean(capsys, var, std, ok_expected, hint):
    ok, out = run(capsys, check.dot_variance, var, std, d_k=16, mean_q=1.0)
    assert ok is ok_expected and hint in out, out
    assert "square root" not in out  # trial 4: with the variance right, that names the step to type


def test_dot_variance_formula_matches_a_simulation():
    rng = np.random.default_rng(0)
    q = rng.normal(1.0, 1.0, size=(200_000, 16))
    k = rng.normal(0.0, 1.0, size=(200_000, 16))
    assert abs((q * k).sum(axis=1).var() - 32) < 0.5  # the checker's 16 x (1 + 0 + 1)


def test_dot_variance_recognises_the_subtracted_means(capsys):
    # E(q) = E(k) = 1: the wrong rule d_k (Var Var - E E) gives 16 x 0 = 0
    ok, out = run(capsys, check.dot_variance, 0.0, 0.0, d_k=16, mean_q=1.0, mean_k=1.0)
    assert not ok and "wrong rule" in out, out


def test_the_student_editions_checkers_spell_no_answer():
    """What ``check.x??`` shows in the student edition (the modules without their ``@reference``
    helpers and recorded bodies) computes no answer of notebooks 01 and 02."""
    import sys
    from pathlib import Path

    tools = Path(__file__).resolve().parents[1] / "tools"
    sys.path.insert(0, str(tools))
    import make_student

    folder = Path(check.__file__).parent
    kept = "".join(make_student.strip_references((folder / name).read_text(encoding="utf-8"), name)
                   for name in ("general.py", "general_cases.py", "self_attention.py",
                                "self_attention_cases.py"))
    for code in ("K @ q", "q @ K", "a @ V", "@ W.T", "np.exp(", "np.sqrt(9", "K.T /", "swapaxes(K",
                 "dot_score(q", "cosine_score(q", "softmax(S", "self_attention(X", "var_q * var_k"):
        assert code not in kept, code


# ---------------- trial report (2026-11-28): W1, W3, G2, M2, M6

def _shifted_softmax(shift):
    def f(S):
        e = np.exp(S - shift(S))
        return e / e.sum(axis=-1, keepdims=True)
    return f


@pytest.mark.parametrize("shift", [lambda S: S.min(axis=-1, keepdims=True),
                                   lambda S: S.mean(axis=-1, keepdims=True)], ids=["min", "mean"])
def test_softmax_rows_shifted_by_min_or_mean_overflows(capsys, shift):
    with np.errstate(all="ignore"):
        ok = check.softmax_rows(_shifted_softmax(shift))
    out = capsys.readouterr().out
    assert ok is False and "overflows" in out and "far apart" in out, out
    assert "max" not in out, out  # the idea, not the line to type


def _row_kwargs():
    I2 = np.eye(2)
    return dict(X=OUTPUT_ROW_X, W_q=I2, W_k=I2, W_v=I2, i=2)


def _row(divisor):
    s = OUTPUT_ROW_X[2] @ OUTPUT_ROW_X.T / divisor
    a = np.exp(s) / np.exp(s).sum()
    return a @ OUTPUT_ROW_X, a


@pytest.mark.parametrize("answer, words, not_words", [
    (np.array(["0.3478", "0.3943"]), "not as text", "shape"),
    (["0.3478", "0.3943"], "not as text", "shape"),
    (_row(2.0)[0], "scaled by the wrong amount", "rounded"),     # d_k, not sqrt(d_k)
    (_row(2.0), "ragged tuple", "None"),
    (np.round(_row(np.sqrt(2))[0], 2), "rounded too coarsely", "wrong amount"),
])
def test_output_row_hints_are_true(capsys, answer, words, not_words):
    ok = check.output_row(answer, **_row_kwargs())
    out = capsys.readouterr().out
    assert ok is False and words in out and not_words not in out, out


# --- trial 3: V1, H1/M6, M4, M5, M7, M8 ---------------------------------------------------------


def _scores_by_axis_1(Q, K):
    # K.shape[1] is d_k for one matrix and n_k for a stack of heads (h, n_k, d_k)
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[1])


def test_scaled_scores_a_divisor_from_axis_1_fails_on_the_stack(capsys):
    # V1: the only stack case had n_k = d_k = 3, so K.shape[1] passed
    ok, out = run(capsys, check.scaled_scores, _scores_by_axis_1)
    assert not ok and "stack of heads" in out and "last axis" in out, out
    assert "shape[" not in out and "[-1]" not in out, out   # the idea, not the code


def test_scaled_scores_hidden_stacks_catch_a_divisor_from_axis_1():
    from attention_kit.check import exercises_02 as ex

    for seed in range(20):
        cases = ex.scores_cases(np.random.default_rng(seed))
        assert any(Q.ndim == 3 and not np.allclose(_scores_by_axis_1(Q, K), ex.scores_ref(Q, K))
                   for Q, K in cases), seed


def test_full_self_attention_tuple_hint_names_no_forbidden_function_and_no_code(capsys):
    # H1/M6: "(ak.self_attention returns (output, weights): take [0])"
    def pair(X, W_q, W_k, W_v):
        Q, K, V = X @ W_q, X @ W_k, X @ W_v
        A = sm(Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1]), -1)
        return A @ V, A

    ok, out = run(capsys, check.full_self_attention, pair)
    assert not ok and "tuple" in out, out
    assert "self_attention" not in out and "[0]" not in out, out


def test_full_self_attention_an_unasked_causal_mask_is_named(capsys):
    # M7: a -inf mask passed to ak.softmax was told "look for a division by zero or an overflow upstream"
    def causal(X, W_q, W_k, W_v):
        Q, K, V = X @ W_q, X @ W_k, X @ W_v
        S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])
        n = S.shape[-1]
        return ak.softmax(np.where(np.tril(np.ones((n, n), bool)), S, -np.inf)) @ V

    def causal_finite(X, W_q, W_k, W_v):
        Q, K, V = X @ W_q, X @ W_k, X @ W_v
        S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])
        n = S.shape[-1]
        return ak.softmax(np.where(np.tril(np.ones((n, n), bool)), S, -1e9)) @ V

    for fn in (causal, causal_finite):
        ok, out = run(capsys, check.full_self_attention, fn)
        assert not ok and "mask" in out, out
        assert "division by zero" not in out, out


def test_fixed_source_code_a_transposed_score_product_is_not_called_a_projection_mistake(capsys):
    # M8: the projections were right, the score product paired the features
    def features(X, W_q, W_k, W_v):
        Q, K, V = X @ W_q, X @ W_k, X @ W_v
        return sm(Q.T @ K / np.sqrt(X.shape[1]), 1) @ V

    ok, out = run(capsys, check.fixed_source_code, features)
    assert not ok and "not on the tokens" not in out, out
    assert "score" in out, out
    # the source's own order (W before X) still gets the projection hint
    ok, out = run(capsys, check.fixed_source_code,
                  lambda X, a, b, c: sm(np.matmul(a, X) @ np.matmul(b, X).T / np.sqrt(3), 1) @ np.matmul(c, X))
    assert not ok and "not on the tokens" in out, out


def test_softmax_rows_log_sum_exp_without_a_shift_is_not_called_a_global_maximum(capsys):
    # M4: no maximum is subtracted here; exp(S) overflows
    ok, out = run(capsys, check.softmax_rows,
                  lambda S: np.exp(S - np.log(np.exp(S).sum(-1, keepdims=True))))
    assert not ok and "whole matrix" not in out and "overflows" in out, out


def test_softmax_rows_low_precision_is_named_not_a_sum_that_prints_as_1(capsys):
    # M5: "your rows sum to [1.0, 1.0, 1.0]...: each row of weights must sum to 1"
    def half(S):
        S = S.astype(np.float16)
        e = np.exp(S - S.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    ok, out = run(capsys, check.softmax_rows, half)
    assert not ok and "[1.0, 1.0, 1.0]" not in out and "float16" in out, out
