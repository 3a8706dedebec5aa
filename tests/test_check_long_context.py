"""The notebook-09 checkers accept right answers and name the usual mistakes."""

import numpy as np
import pytest
from test_check_masks_positions import STUB, boom, one_line  # (tests/ is on sys.path)

import attention_kit as ak
from attention_kit.check import graded_hints
from attention_kit.check import long_context as chk
from attention_kit.long import streaming

# ---------------------------------------------------------------- exercise 1: RoPE's matrix of the distance


def _theta(d):
    return 10000.0 ** (-np.arange(0, d, 2) / d)


def matrix_right(d, delta):  # one 2 x 2 block per pair, by -delta * theta_i
    M = np.zeros((d, d))
    for i, t in enumerate(_theta(d)):
        c, s = np.cos(delta * t), np.sin(delta * t)
        M[2 * i: 2 * i + 2, 2 * i: 2 * i + 2] = [[c, s], [-s, c]]
    return M


def matrix_probed(d, delta):  # written another way: M[a, b] = rope(e_a, delta) . rope(e_b, 0), by hand
    def turn(x, m):
        z = (x[0::2] + 1j * x[1::2]) * np.exp(1j * m * _theta(d))
        return np.stack([z.real, z.imag], axis=1).reshape(d)
    E = np.eye(d)
    return np.array([[turn(E[a], delta) @ turn(E[b], 0) for b in range(d)] for a in range(d)])


def matrix_halves(d, delta):
    M = np.zeros((d, d))
    h = d // 2
    for i, t in enumerate(_theta(d)):
        c, s = np.cos(delta * t), np.sin(delta * t)
        M[i, i], M[i, i + h], M[i + h, i], M[i + h, i + h] = c, s, -s, c
    return M


def test_the_reference_is_the_score_of_rotated_vectors():
    rng = np.random.default_rng(0)
    for d, m, n in ((8, 13, 5), (16, 3, 40), (2, 7, 7)):
        q, k = rng.normal(size=(2, d))
        s = ak.rope(q[None], [m])[0] @ ak.rope(k[None], [n])[0]
        assert abs(q @ matrix_right(d, m - n) @ k - s) < 1e-12


@pytest.mark.parametrize("fn, ok, words", [
    (matrix_right, True, "m - n only"),
    (matrix_probed, True, "m - n only"),
    (lambda d, delta: matrix_right(d, delta).T, False, "transpose"),
    (lambda d, delta: matrix_right(d, -delta), False, "transpose"),
    (lambda d, delta: matrix_right(d, delta) / np.sqrt(d), False, "1/sqrt(d)"),
    (matrix_halves, False, "half-split layout of GPT-NeoX"),
    (lambda d, delta: np.eye(d), False, "nothing turned"),
    (lambda d, delta: matrix_right(d, delta)[:-1], False, "give a"),
    (lambda d, delta: matrix_right(d, delta + 1), False, "wrong numbers"),
    (lambda d, delta: matrix_right(d, delta + 1), False, "Check d = 2 by hand"),
    (lambda d, delta: ak.rope(np.eye(d), np.full(d, -delta)), False, "attention_kit"),
    (boom, False, "boom"),
])
def test_rope_matrix(fn, ok, words, capsys):
    assert chk.rope_matrix(fn) is ok
    assert words in one_line(capsys)


def test_rope_matrix_one_angle_and_reversed(capsys):
    def one_angle(d, delta):
        M = np.zeros((d, d))
        for i in range(d // 2):
            c, s = np.cos(delta), np.sin(delta)
            M[2 * i: 2 * i + 2, 2 * i: 2 * i + 2] = [[c, s], [-s, c]]
        return M

    def reversed_freqs(d, delta):
        M = np.zeros((d, d))
        for i, t in enumerate(_theta(d)[::-1]):
            c, s = np.cos(delta * t), np.sin(delta * t)
            M[2 * i: 2 * i + 2, 2 * i: 2 * i + 2] = [[c, s], [-s, c]]
        return M

    assert chk.rope_matrix(one_angle) is False and "same angle" in one_line(capsys)
    assert chk.rope_matrix(reversed_freqs) is False and "wrong way round" in one_line(capsys)
    assert chk.rope_matrix(lambda d, delta: ...) is False and one_line(capsys) == STUB


# ---------------------------------------------------------------- exercise 2: how far back a sliding cache reaches


@pytest.mark.parametrize("cached, fresh, ok, words", [
    (14, 17, True, "the caches reach 14"),
    (np.int64(14), np.int64(17), True, "the caches reach 14"),
    (17, 17, False, "not the fresh window"),
    (13, 17, False, "off by one"),
    (12, 17, False, "off by one in each layer"),
    (14, 16, False, "off by one"),
    (14, 14, False, "nothing else"),
    (8, 17, False, "too far back"),
    (0, 17, False, "too far back"),
    (16, 17, False, "not far enough"),
    (14.0, 17, False, "whole number"),
    (14.5, 17, False, "whole number"),
    ("14", "17", False, "whole number"),
    (True, 17, False, "whole number"),
])
def test_sliding_reach(cached, fresh, ok, words, capsys):
    assert chk.sliding_reach(cached, fresh) is ok
    assert words in one_line(capsys)


def test_sliding_reach_stub(capsys):
    assert chk.sliding_reach(..., ...) is False
    assert "no answer yet" in one_line(capsys)


def test_sliding_reach_is_what_the_two_layer_model_does():
    """Change one token of a text and see which predictions move: at token 20, through caches of
    window 4, tokens 14..20 matter and 13 does not; through the recomputed window, 17..20 only."""
    params, cfg, _ = streaming.load_rope_lm(2)
    ids = np.arange(21) % cfg.vocab_size

    def moves(pos, how):
        other = ids.copy()
        other[pos] = (other[pos] + 5) % cfg.vocab_size
        if how == "cached":
            a, b = (streaming.stream_logits(params, cfg, x, window=4)[20] for x in (ids, other))
        else:
            a, b = (streaming.recompute_logits(params, cfg, x, window=4)[20] for x in (ids, other))
        return np.abs(a - b).max() > 1e-9

    assert moves(14, "cached") and not moves(13, "cached")
    assert moves(17, "fresh") and not moves(16, "fresh")


# ---------------------------------------------------------------- exercise 3: ALiBi's weights when the content is equal


def weights_right(slopes, i):
    b = -np.asarray(slopes)[:, None] * (i - np.arange(i + 1.0))  # (h, i + 1)
    e = np.exp(b - b.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def weights_loop(slopes, i):  # written another way: one head at a time, no max subtracted
    rows = []
    for m in slopes:
        e = np.array([np.exp(-m * (i - j)) for j in range(i + 1)])
        rows.append(e / e.sum())
    return np.array(rows)


def test_the_alibi_weights_are_the_heads_own():
    _, w, _ = ak.multi_head_forward(np.zeros((10, 8)), np.zeros((10, 8)), ak.init_multi_head(8, 2, rng=np.random.default_rng(2)),
                                    ak.causal_mask(10), bias=ak.alibi_bias([2.0 ** -4, 2.0 ** -8], 10))
    np.testing.assert_allclose(w[:, 9], weights_right([2.0 ** -4, 2.0 ** -8], 9), atol=1e-12)


RATIO = np.exp(9 * np.array([2.0 ** -4, 2.0 ** -8]))  # one back / ten back: nine steps of e^m each


def test_the_ratio_is_the_weights_own():
    w = weights_loop([2.0 ** -4, 2.0 ** -8], 15)  # query 15: one back is key 14, ten back is key 5
    np.testing.assert_allclose(w[:, 14] / w[:, 5], RATIO, rtol=1e-12)


@pytest.mark.parametrize("fn, ok, words", [
    (weights_right, True, "e^(9 m)"),
    (weights_loop, True, "e^(9 m)"),
    (lambda m, i: -np.asarray(m)[:, None] * (i - np.arange(i + 1.0)), False, "these are the biases"),
    (lambda m, i: np.exp(-np.asarray(m)[:, None] * (i - np.arange(i + 1.0))), False, "sum to 1"),
    (lambda m, i: weights_right(-np.asarray(m), i), False, "far keys"),
    (lambda m, i: weights_right(m, i)[:, ::-1], False, "the row, is reversed"),
    (lambda m, i: weights_right(np.ones(len(m)), i), False, "slope is missing"),
    (lambda m, i: weights_right(m, i)[0], False, "one row per head"),
    (lambda m, i: weights_right(m, i) + 0.01, False, "wrong numbers"),
    (lambda m, i: weights_right(m, i) + 0.01, False, "as it always does"),
    (lambda m, i: ak.softmax(ak.alibi_bias(m, i + 1)[:, i]), False, "attention_kit"),
    (lambda m, i: weights_right(m, i).astype(str), False, "returned text"),   # numpy reads them as numbers
    (boom, False, "boom"),
])
def test_alibi_weights(fn, ok, words, capsys):
    assert chk.alibi_weights(fn, RATIO) is ok
    assert words in one_line(capsys)


@pytest.mark.parametrize("ratio, ok, words", [
    (RATIO, True, "e^(9 m)"),
    ([1.76, 1.04], True, "e^(9 m)"),                       # rounded to two decimals
    (tuple(np.round(RATIO, 3)), True, "e^(9 m)"),
    (np.exp(np.array([2.0 ** -4, 2.0 ** -8])), False, "a single step"),
    (np.exp(10 * np.array([2.0 ** -4, 2.0 ** -8])), False, "10 steps apart"),
    (1 / RATIO, False, "upside down"),
    (9 * np.array([2.0 ** -4, 2.0 ** -8]), False, "difference of the biases"),
    (RATIO[0], False, "one number per head"),
    ([1.76, 1.04, 1.0], False, "one number per head"),
    ("1.76, 1.04", False, "not as text"),
    (["1.76", "1.04"], False, "not as text"),               # numpy reads these as numbers: they were accepted
    (np.array(["1.76", "1.04"]), False, "not as text"),
    (("1.76", 1.04), False, "not as text"),
    ("1.76", False, "not as text"),
    ([2.0, 3.0], False, "not the ratio"),
    ([1.8, 1.0], False, "rounded too coarsely"),   # was told "not the ratio of the weights" (issue 46)
    ([RATIO[0], RATIO[0]], False, "both heads got the same ratio"),   # trial 4: was "not the ratio"
    ([1.8, 1.8], False, "both heads got the same ratio"),             # trial 5: rounded, the same slope
    (np.exp(9 * np.array([2.0 ** -4, 2.0 ** -7])), False, "one head's ratio is right"),  # trial 5: was "too coarsely"
    ([1.76, 1.07], False, "one head's ratio is right"),
    (np.exp(9 * np.array([2.0 ** -3, 2.0 ** -8])), False, "one head's ratio is right"),  # trial 5: was "not the ratio"
])
def test_alibi_ratio(ratio, ok, words, capsys):
    assert chk.alibi_weights(weights_right, ratio) is ok
    assert words in one_line(capsys)


def test_alibi_text_is_refused_with_a_hint_that_states_no_answer(capsys):
    """Text for a number is refused (as notebook 01's checkers refuse it), and the hint shows how to write
    numbers without showing the ratio asked for."""
    for text in (["1.76", "1.04"], [f"{r}" for r in RATIO], np.array(["1.76", "1.04"])):
        assert chk.alibi_weights(weights_right, text) is False
        line = one_line(capsys)
        assert "not as text" in line and "[2.0, 3.0]" in line
        assert all(f"{r:.2f}" not in line for r in RATIO)


def test_alibi_ratio_not_given_yet(capsys):
    assert chk.alibi_weights(weights_right, ...) is False
    line = one_line(capsys)
    assert "the function is right" in line and "`my_ratio =`" in line
    for shown in (f"{r:.2f}" for r in RATIO):                  # the asked numbers are not printed before
        assert shown not in line                               # they are answered
    for wrong in (np.exp(np.array([2.0 ** -4, 2.0 ** -8])), 1 / RATIO, [2.0, 3.0]):
        assert chk.alibi_weights(weights_right, wrong) is False
        line = one_line(capsys)
        assert all(f"{r:.2f}" not in line and f"{r:.3f}" not in line for r in RATIO)


def test_alibi_weights_over_the_heads(capsys):
    def over_heads(m, i):
        b = -np.asarray(m)[:, None] * (i - np.arange(i + 1.0))
        return np.exp(b) / np.exp(b).sum(axis=0, keepdims=True)

    assert chk.alibi_weights(over_heads, RATIO) is False and "over the heads" in one_line(capsys)
    assert chk.alibi_weights(lambda m, i: ..., RATIO) is False and one_line(capsys) == STUB


# ---------------------------------------------------------------- exercise 4: what a cache with a sink keeps


@pytest.mark.parametrize("answer, ok, words", [
    ([0, 6, 7, 8, 9], True, "the sink"),
    ((9, 8, 7, 6, 0), True, "the sink"),
    (np.array([0, 6, 7, 8, 9]), True, "the sink"),
    ([6, 7, 8, 9], False, "sink is missing"),
    ([0, 7, 8, 9], False, "in addition to the window"),
    ([0, 5, 6, 7, 8], False, "off by one"),
    ([1, 2], False, "two kinds"),
    ("0 6 7 8 9", False, "list of whole numbers"),
    ([0, 6.5, 7, 8, 9.9], False, "list of whole numbers"),
    ([0.0, 6.0, 7.0, 8.0, 9.0], False, "list of whole numbers"),
    ([False, True], False, "list of whole numbers"),
    ({0, 6, 7, 8, 9}, True, "the sink"),                   # order does not matter: a set is fine too
    (frozenset({0, 6, 7, 8, 9}), True, "the sink"),
    ({6, 7, 8, 9}, False, "sink is missing"),
    ({0.0, 6.0, 7.0, 8.0, 9.0}, False, "list of whole numbers"),
    (7, False, "list of whole numbers"),
])
def test_cache_keeps(answer, ok, words, capsys):
    assert chk.cache_keeps(answer) is ok
    assert words in one_line(capsys)


def test_cache_keeps_is_what_the_cache_keeps(capsys):
    c = ak.KVCache(1, 1, window=4, sinks=1)
    for t in range(10):
        c.append([t], [t])
    assert chk.cache_keeps(c.positions.tolist())
    assert chk.cache_keeps(...) is False


@pytest.mark.parametrize("cached, fresh", [(17, 17), (13, 17), (12, 17), (14, 16), (8, 17), (16, 17), (14, 14)])
def test_graded_hints_of_the_reach_do_not_state_the_answer(cached, fresh, capsys):
    with graded_hints():
        assert chk.sliding_reach(cached, fresh) is False
    line = one_line(capsys)
    assert "14" not in line and "17" not in line


@pytest.mark.parametrize("checker", ["rope_matrix", "alibi_weights", "sliding_reach", "cache_keeps"])
def test_the_kept_code_states_no_formula(checker):
    """What ``check.x??`` shows: no rotation angle, ALiBi weight or answer in the checker or its texts."""
    import inspect

    fn = getattr(chk, checker)
    src = inspect.getsource(getattr(fn, "__wrapped__", fn))
    for formula in ("-delta", "theta_i", "10000", "_softmax(", "alibi_bias(", "e^(9", "np.exp(", "rope(E",
                    "KVCache(1", "stream_logits", "[0, 6, 7, 8, 9]"):
        assert formula not in src, (checker, formula)
    for hint in chk._MATRIX_HINTS + chk._WEIGHT_HINTS + chk._RATIO_HINTS:
        for formula in ("-(m - n)", "theta_i", "10000^", "-m_h (i - j)", "e^(9"):
            assert formula not in hint, hint


def test_array_results_must_be_numpy_arrays(capsys):
    """The array rule of every exercise: a list (``.tolist()``) of the right numbers is not accepted."""
    good_matrix = chk._matrix_table()["want"]
    table = chk._alibi_table()
    weights = {(tuple(sl), i): w for (sl, i), w in zip(table["cases"], table["want"], strict=True)}
    right_matrix = {c: w for c, w in zip(chk._matrix_table()["cases"], good_matrix, strict=True)}
    assert chk.rope_matrix(lambda d, delta: right_matrix[(d, delta)]) is True
    one_line(capsys)
    assert chk.rope_matrix(lambda d, delta: right_matrix[(d, delta)].tolist()) is False
    assert "numpy array" in one_line(capsys)
    assert chk.alibi_weights(lambda m, i: weights[(tuple(m), i)].tolist(), RATIO) is False
    assert "numpy array" in one_line(capsys)


@pytest.mark.parametrize("checker, words", [
    ("cache_keeps", ("keeps position 0 for ever", "holds 9 itself and the three before it",
                     "the window's last four", "the last four")),
    ("sliding_reach", ("two layers of three steps back each", "holds token 20 itself and the three before it",
                       "three steps back each", "three tokens back per layer", "three tokens before it")),
])
def test_the_kept_code_states_no_prediction_answer(checker, words):
    """``check.x??`` in the student edition shows the checker's code: the in-class hints of a prediction,
    which may state its answer, live in the recorded table, not in that code."""
    import inspect

    fn = getattr(chk, checker)
    src = inspect.getsource(getattr(fn, "__wrapped__", fn))
    for w in words:
        assert w not in src, (checker, w)


def test_every_checker_tries_several_sizes():
    assert len({d for d, _ in chk._matrix_table()["cases"]}) >= 2
    assert len({len(s) for s, _ in chk._alibi_table()["cases"]}) >= 2
    assert len({i for _, i in chk._alibi_table()["cases"]}) >= 2


# ---------------------------------------------------------------- trial 3: H3, H4, H5, M14

SLOPES = np.array([2.0 ** -4, 2.0 ** -8])


@pytest.mark.parametrize("ratio", [np.exp(10 * SLOPES), np.exp(SLOPES), np.exp(8 * SLOPES), np.exp(11 * SLOPES)])
def test_alibi_ratio_steps_hint_does_not_give_the_number_of_steps(ratio, capsys):
    """Trial 3, H3: exp(10 m) was told "nine steps, not ten"; the hint names the idea (the ratio
    depends on how many steps separate the two keys) and asks to count, without the count."""
    assert chk.alibi_weights(weights_right, ratio) is False
    line = one_line(capsys)
    assert "nine" not in line and "9" not in line and "not the ratio of the weights" not in line, line


@pytest.mark.parametrize("ratio, words", [
    ([1.7, 1.0], "rounded too coarsely"),                  # cut to one decimal
    ([2, 1], "rounded too coarsely"),                      # rounded to whole numbers
    ([1.76, 1.0], "rounded too coarsely"),                 # one head right, the other cut
    (np.exp(8 * SLOPES), "8 steps apart"),                 # w[:, -2] / w[:, -10]: one back over nine back
    (np.exp(9 * SLOPES[::-1]), "heads are swapped"),
    ([1.76, 1.04][::-1], "heads are swapped"),
])
def test_alibi_ratio_hints_name_what_the_answer_is(ratio, words, capsys):
    """Trial 3, M14: these are ratios of weights (rounded, of another pair of keys, or of the heads in
    the other order); they were told "not the ratio of the weights"."""
    assert chk.alibi_weights(weights_right, ratio) is False
    line = one_line(capsys)
    assert words in line and "not the ratio of the weights" not in line, line


KEEPS_GIVEAWAYS = ("position 0", "0, 6", "6 to 9", "last four", "9 itself", "the three before", "the first one")


@pytest.mark.parametrize("answer", [[6, 7, 8, 9], [0, 7, 8, 9], [0, 5, 6, 7, 8], [1, 2]])
def test_cache_keeps_in_class_hints_do_not_state_the_answer(answer, capsys):
    """Trial 3, H4: "sinks=1 keeps position 0 for ever" and "kept beside the last four" handed over
    [0, 6, 7, 8, 9]; the in-class hints name the idea."""
    assert chk.cache_keeps(answer) is False
    line = one_line(capsys)
    assert not [g for g in KEEPS_GIVEAWAYS if g in line], line


@pytest.mark.parametrize("cached, fresh", [(16, 17), (8, 17), (13, 17), (12, 17), (14, 16)])
def test_sliding_reach_in_class_hints_do_not_state_the_answer(cached, fresh, capsys):
    """Trial 3, H5: (16, 17) was told "count both layers, three steps back each" (20 - 2 * 3)."""
    assert chk.sliding_reach(cached, fresh) is False
    line = one_line(capsys)
    for giveaway in ("14", "17", "three steps back each", "three tokens before it", "three before it",
                     "three tokens back per layer", "reaches only three"):
        assert giveaway not in line, line


def test_the_graded_hints_second_sentence_starts_with_a_capital(capsys):
    """Trial 4: "... holds the token itself. a layer lets ..." in the grader's feedback."""
    from attention_kit.check import graded_hints, recording

    with graded_hints(), recording() as results:
        chk.sliding_reach(13, 17)
    message = results[-1].message
    assert ". A layer lets" in message and ". a layer" not in message, message
