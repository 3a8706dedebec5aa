"""The checkers of notebook 01 accept right answers and give the targeted hint for the usual wrong ones."""

import math

import numpy as np
import pytest

from attention_kit.check import general as chk


def run(capsys, fn, *args):
    ok = fn(*args)
    line = capsys.readouterr().out
    assert line.count("\n") == 1, line  # exactly one printed line
    return ok, line


# --- softmax by hand -------------------------------------------------------------------------


def test_softmax_by_hand_accepts_closed_form_rounded_to_three_decimals(capsys):
    e = [2.0, 1.0, 0.0]
    z = sum(math.exp(x) for x in e)
    by_hand = [round(math.exp(x) / z, 3) for x in e]  # 0.665, 0.245, 0.090
    assert by_hand == [0.665, 0.245, 0.09]
    ok, line = run(capsys, chk.softmax_by_hand, by_hand)
    assert ok and line.startswith("✓")


@pytest.mark.parametrize(
    "answer, phrase",
    [
        ([math.e**2, math.e, 1.0], "not yet weights"),
        ([2 / 3, 1 / 3, 0.0], "skips a step"),
        ([0.090, 0.245, 0.665], "smallest score"),
        ([0.245, 0.665, 0.090], "wrong order"),
        ([0.5, 0.3, 0.1], "sum to 0.900"),
        ([0.6, 0.3, 0.1], "not the softmax"),
        ([0.7, 0.2, 0.1], "rounded too coarsely"),          # right, to one decimal
        ([0.66, 0.26, 0.08], "rounded too coarsely"),
        ([0.66, 0.24, 0.09], "rounded too coarsely"),      # cut after two decimals: sums to 0.99, no step wrong
        ([0.6, 0.2, 0.0], "rounded too coarsely"),         # cut after one
        ([0.67, 0.25, 0.09], "sum to 1.010, not to 1"),    # 1.01 is not "sums to 1"
        ([0.6, 0.4], "shape (3,)"),
        (["0.665", "0.245", "0.090"], "numbers, not as text"),   # numpy reads them as numbers (issue 46)
        (np.array(["0.665", "0.245", "0.090"]), "numbers, not as text"),
        (..., "no answer yet"),
    ],
)
def test_softmax_by_hand_hints(capsys, answer, phrase):
    ok, line = run(capsys, chk.softmax_by_hand, answer)
    assert not ok and line.startswith("✗") and phrase in line, line


# --- dot scores ------------------------------------------------------------------------------


def test_dot_scores_accepts_loop_and_vectorised(capsys):
    def loop(q, K):
        return np.array([sum(qi * ki for qi, ki in zip(q, k, strict=True)) for k in K])

    for fn in (loop, lambda q, K: K @ q, lambda q, K: q @ K.T, lambda q, K: (q * K).sum(axis=-1)):
        ok, line = run(capsys, chk.dot_scores, fn)
        assert ok and line.startswith("✓"), line


@pytest.mark.parametrize(
    "fn, phrase",
    [
        (lambda q, K: q @ K, "rows of K are the keys"),
        (lambda q, K: list(K @ q), "returned a list"),
        (lambda q, K: tuple(K @ q), "returned a tuple"),
        (lambda q, K: q * K, "sum them over the features"),
        (lambda q, K: (q * K).sum(axis=0), "summed over the keys' axis"),
        (lambda q, K: K @ q / np.sqrt(len(q)), "scaled dot product"),
        (lambda q, K: np.exp(K @ q) / np.exp(K @ q).sum(), "applied the softmax"),
        (lambda q, K: K @ q / (np.linalg.norm(q) * np.linalg.norm(K, axis=1)), "cosine score"),
        (lambda q, K: None, "forget `return`"),
        (lambda q, K: K @ q + 1, "work that one out by hand"),
        (lambda q, K: np.sum(K * q), "one number for all the keys"),
        (lambda q, K: np.dot(q, K), "rows of K are the keys"),
    ],
)
def test_dot_scores_hints(capsys, fn, phrase):
    ok, line = run(capsys, chk.dot_scores, fn)
    assert not ok and line.startswith("✗") and phrase in line, line


def test_dot_scores_catches_transposed_when_square(capsys):
    # K.T @ q never raises: it only differs from K @ q numerically, on the square case
    ok, line = run(capsys, chk.dot_scores, lambda q, K: K.T @ q if K.shape[0] == K.shape[1] else K @ q)
    assert not ok and "keys as columns" in line, line


# --- which key wins --------------------------------------------------------------------------


def test_winner_reference_numbers():
    q, K = chk.WINNER_Q, chk.WINNER_K
    dots = [float(q @ k) for k in K]
    cosines = [float(q @ k / (np.linalg.norm(q) * np.linalg.norm(k))) for k in K]
    assert np.argmax(dots) == 2 and np.argmax(cosines) == 1   # not section 3's answer (k2, k1)


@pytest.mark.parametrize(
    "dot, cos, ok_expected, phrase",
    [
        ("k3", "k2", True, "dot picks k3"),
        (" K3 ", "k2", True, "dot picks k3"),
        ("k2", "k3", False, "swapped"),
        ("k3", "k3", False, "disagree"),
        ("k2", "k2", False, "disagree"),
        ("k1", "k2", False, "dot_winner is not right"),
        ("k3", "k1", False, "cosine_winner is not right"),
        ("k2", "k1", False, "dot_winner is not right"),   # section 3's answer, lifted
        ("k4", "k2", False, "must be one of"),
        (3, "k2", False, "'k3' (a string with the k)"),
        ("k3", " 2", False, "cosine_winner: write the key's label, 'k2'"),
        (..., "k2", False, "no answer yet"),
    ],
)
def test_predict_winners(capsys, dot, cos, ok_expected, phrase):
    ok, line = run(capsys, chk.predict_winners, dot, cos)
    assert ok is ok_expected and phrase in line, line


# --- context vector --------------------------------------------------------------------------


def test_context_vector_accepts_matrix_product_and_loop(capsys):
    def loop(a, V):
        a2 = np.atleast_2d(a)
        out = np.array([[sum(a2[i, l] * V[l, j] for l in range(V.shape[0])) for j in range(V.shape[1])]
                        for i in range(a2.shape[0])])
        return out[0] if np.ndim(a) == 1 else out

    for fn in (lambda a, V: a @ V, loop, lambda a, V: np.matmul(a, V)):
        ok, line = run(capsys, chk.context_vector, fn)
        assert ok and line.startswith("✓"), line


@pytest.mark.parametrize(
    "fn, phrase",
    [
        (lambda a, V: a[:, None] * V, "not yet summed"),
        (lambda a, V: (a[:, None] * V).sum(axis=1), "instead of over the keys"),
        (lambda a, V: V.mean(axis=0), "plain average"),
        (lambda a, V: V.T @ a.T, "transposed layout"),
        (lambda a, V: a.T @ V if a.ndim == 2 and a.shape[0] == a.shape[1] else a @ V, "transposed the weights"),
        (lambda a, V: a.T @ V, "rows of V"),
        (lambda a, V: V @ a, "rows of V"),
        (lambda a, V: a @ V * 2, "wrong numbers"),
        (lambda a, V: (a @ V).tolist(), "returned a list"),
        # written for a stack of weights only: numpy's error alone did not say why (issue 46)
        (lambda a, V: np.einsum("qk,kd->qd", a, V), "one weight vector, shape (n_k,)"),
    ],
)
def test_context_vector_hints(capsys, fn, phrase):
    ok, line = run(capsys, chk.context_vector, fn)
    assert not ok and line.startswith("✗") and phrase in line, line


# --- output model ----------------------------------------------------------------------------


def _softmax(z):
    z = np.exp(z - z.max())
    return z / z.sum()


def _softmax_rows(Z):
    Z = np.exp(Z - Z.max(axis=-1, keepdims=True))
    return Z / Z.sum(axis=-1, keepdims=True)


def test_output_model_accepts_right_answer(capsys):
    def loop(C, W, b):   # the survey's column form, one context at a time
        return np.stack([_softmax(W @ c + b) for c in C])

    for fn in (lambda C, W, b: _softmax_rows(C @ W.T + b), loop):
        ok, line = run(capsys, chk.output_model, fn)
        assert ok and line.startswith("✓"), line


def test_output_model_single_context_answer_fails(capsys):
    # notebook 01's one-context output model, copied: it does not handle a stack of contexts
    ok, line = run(capsys, chk.output_model, lambda C, W, b: _softmax(W @ C + b))
    assert not ok and "row form" in line, line


@pytest.mark.parametrize(
    "fn, phrase",
    [
        (lambda C, W, b: C @ W.T + b, "apply the softmax"),
        (lambda C, W, b: _softmax_rows(C @ W.T), "forgot the bias"),
        (lambda C, W, b: _softmax_rows(C @ W + b) if W.shape[0] == W.shape[1] else _softmax_rows(C @ W.T + b),
         "multiplied by W_c itself"),
        (lambda C, W, b: _softmax_rows(C @ W.T + b).T, "transposed layout"),
        (lambda C, W, b: (lambda Z: np.exp(Z) / np.exp(Z).sum(axis=0))(C @ W.T + b), "columns sum to 1"),
        (lambda C, W, b: _softmax_rows(_softmax_rows(C) @ W.T + b), "not on c"),
        (lambda C, W, b: _softmax_rows(C @ W.T + b)[:, :-1], "shape"),
        (lambda C, W, b: _softmax_rows(2 * (C @ W.T + b)), "wrong numbers"),
        (lambda C, W, b: _softmax_rows(C @ W.T - b), "subtracted the bias"),   # trial 3: was "wrong numbers"
        (lambda C, W, b: list(_softmax_rows(C @ W.T + b)), "returned a list"),
        # was told "where the transpose goes" (issue 46)
        (lambda C, W, b: _softmax_rows(C @ W.T) + b, "added after the softmax"),
    ],
)
def test_output_model_hints(capsys, fn, phrase):
    ok, line = run(capsys, chk.output_model, fn)
    assert not ok and line.startswith("✗") and phrase in line, line


def test_output_model_fallback_names_where_to_look_not_the_formula(capsys):
    # the trial: the fallback said "the logits are W_c c + b_c, and the probabilities are their softmax"
    # (trial 3: the bias subtracted, which this test used, now has its own hint)
    ok, line = run(capsys, chk.output_model, lambda C, W, b: _softmax_rows(2 * (C @ W.T + b)))
    assert not ok and "section 2's table" in line, line
    for formula in ("W_c c + b_c", "logits are", "their softmax"):
        assert formula not in line, (formula, line)


def test_hints_name_the_idea_not_the_code(capsys):
    # a hint names the mistake and the idea; it never prints the answer's expression
    wrong = [(chk.dot_scores, lambda q, K: q @ K), (chk.dot_scores, lambda q, K: (q * K).sum(axis=0)),
             (chk.context_vector, lambda a, V: a[:, None] * V), (chk.context_vector, lambda a, V: V @ a),
             (chk.context_vector, lambda a, V: a @ V * 2), (chk.output_model, lambda C, W, b: C @ W + b),
             (chk.output_model, lambda C, W, b: C @ W.T - b)]
    for checker, fn in wrong:
        _, line = run(capsys, checker, fn)
        for code in ("K @ q", "q @ K.T", "a @ V", "W_c @ c", "C @ W", "axis=-1", "W_c.T"):
            assert code not in line, (code, line)


# --- robustness: a checker reports, it never raises --------------------------------------------


def _boom(*args):
    raise ZeroDivisionError("oops")


@pytest.mark.parametrize(
    "checker, args, phrase",
    [
        (chk.softmax_by_hand, ("abc",), "not as text"),
        (chk.dot_scores, (lambda q, K: "abc",), "array of numbers"),
        (chk.dot_scores, (_boom,), "ZeroDivisionError: oops"),
        (chk.dot_scores, (42,), "expected a function"),
        (chk.context_vector, (lambda a, V: [[1, 2], [3]],), "returned a list"),
        (chk.context_vector, (_boom,), "ZeroDivisionError"),
        (chk.output_model, (_boom,), "ZeroDivisionError"),
        (chk.predict_winners, (None, "k1"), "no answer yet"),
        (chk.dot_scores, (lambda q, K: ...,), "no answer yet"),
        (chk.context_vector, (lambda a, V: ...,), "no answer yet"),
        (chk.output_model, (lambda c, W, b: ...,), "no answer yet"),
    ],
)
def test_checkers_never_raise(capsys, checker, args, phrase):
    ok, line = run(capsys, checker, *args)
    assert not ok and line.startswith("✗") and phrase in line, line


# --- quietly: what the worked solutions use ------------------------------------------------------


def test_quietly_silences_every_checker_but_keeps_the_verdict(capsys):
    from attention_kit.check import masks_positions, multi_head, self_attention

    with chk.quietly():
        assert chk.softmax_by_hand([0.665, 0.245, 0.090]) is True
        assert chk.softmax_by_hand([0.6, 0.3, 0.1]) is False
        with multi_head.quietly():  # nests; every checker module offers the same context manager
            assert multi_head.n_parameters(4 * 512**2, d_model=512, n_heads=8) is True
        assert self_attention.quietly is masks_positions.quietly is chk.quietly
    assert capsys.readouterr().out == ""
    chk.softmax_by_hand([0.665, 0.245, 0.090])  # printing is back after the block
    assert capsys.readouterr().out.startswith("✓")


# --- trial report (2026-11-28): W4 and M1 -----------------------------------------------------


@pytest.mark.parametrize("answer, phrase", [
    ([0.669, 0.242, 0.089], "third decimal"),   # e^2 taken as 7.5: passed within 0.005
    ([0.669, 0.241, 0.094], "sum to 1.004"),
    ([0.67, 0.24, 0.09], "rounded too coarsely"),  # two decimals: the task asks for three
])
def test_softmax_by_hand_holds_three_decimals(capsys, answer, phrase):
    ok, line = run(capsys, chk.softmax_by_hand, answer)
    assert not ok and phrase in line, line


@pytest.mark.parametrize("answer", [[0.665, 0.245, 0.090], [0.665, 0.244, 0.090], [0.6652, 0.2447, 0.0900]])
def test_softmax_by_hand_passes_three_decimals_rounded_or_cut(capsys, answer):
    ok, line = run(capsys, chk.softmax_by_hand, answer)
    assert ok, line


def test_output_model_whole_matrix_is_not_sent_to_transposes(capsys):
    def whole(C, W_c, b_c):
        z = C @ W_c.T + b_c
        return np.exp(z) / np.exp(z).sum()

    ok, line = run(capsys, chk.output_model, whole)
    assert not ok and "each ROW must" in line and "transpose" not in line, line


# --- trial 3: M1, M2, M3 ------------------------------------------------------------------------


def _sigmoid(Z):
    return 1 / (1 + np.exp(-Z))


@pytest.mark.parametrize("fn, phrase", [
    (lambda C, W, b: _softmax_rows(C @ W.T - b), "subtracted the bias"),
    (lambda C, W, b: _sigmoid(C @ W.T + b), "sigmoid"),
    (lambda C, W, b: _softmax_rows((C @ W.T + b) / np.sqrt(C.shape[1])), "scaled the logits"),
    (lambda C, W, b: np.log(_softmax_rows(C @ W.T + b)), "logarithms"),
    (lambda C, W, b: np.eye(W.shape[0])[(C @ W.T + b).argmax(1)], "one-hot"),
    (lambda C, W, b: (lambda z: np.exp2(z) / np.exp2(z).sum(-1, keepdims=True))(C @ W.T + b), "base"),
    (lambda C, W, b: _softmax_rows(C @ (W.T + b)), "bias was added to W_c"),
])
def test_output_model_names_the_usual_non_transpose_mistakes(capsys, fn, phrase):
    # M1: each of these was sent to "section 2's table ... where the transpose goes"
    ok, line = run(capsys, chk.output_model, fn)
    assert not ok and phrase in line, line
    assert "transpose" not in line and "section 2's table" not in line, line


def test_output_model_fallback_does_not_assume_a_transpose(capsys):
    # rows that sum to 1 but are not the model, and match no recorded mistake
    ok, line = run(capsys, chk.output_model, lambda C, W, b: _softmax_rows(2 * (C @ W.T + b)))
    assert not ok and "where the transpose goes" not in line, line
    ok, line = run(capsys, chk.output_model, lambda C, W, b: np.abs(C @ W.T + b))   # rows do not sum to 1
    assert not ok and "sum to 1" in line and "transpose" not in line, line


@pytest.mark.parametrize("answer, phrase, not_phrase", [
    ([float("nan"), 0.245, 0.090], "NaN", "sum to 1"),                 # M2: NaN "sums to 1"
    ([float("inf"), 0.245, 0.090], "inf", "sum to"),
    ([0.665 + 0j, 0.245, 0.090], "complex", "shape None"),               # M3
    ({"a": 0.665, "b": 0.245, "c": 0.09}, "dict", "shape None"),
])
def test_softmax_by_hand_odd_values_get_a_true_hint(capsys, answer, phrase, not_phrase):
    ok, line = run(capsys, chk.softmax_by_hand, answer)
    assert not ok and phrase in line and not_phrase not in line, line


def test_a_complex_answer_prints_no_warning(capsys):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(capsys, chk.dot_scores, lambda q, K: (K @ q).astype(complex))
        run(capsys, chk.softmax_by_hand, np.array([0.665 + 0j, 0.245, 0.090]))
