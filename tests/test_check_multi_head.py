"""The notebook-03 checkers accept right answers and name the usual mistakes."""

import numpy as np
import pytest

import attention_kit as ak
from attention_kit.check import multi_head as chk
from attention_kit.check import multi_head_count


def _line(capsys):
    out = capsys.readouterr().out.strip()
    assert "\n" not in out, out
    return out


# ---------------------------------------------------------------- split and merge

def split_loop(X, h):
    """Reference written independently of attention_kit: copy column blocks one head at a time."""
    b, n, D = X.shape
    d = D // h
    out = np.empty((b, h, n, d))
    for s in range(b):
        for i in range(h):
            for t in range(n):
                out[s, i, t] = X[s, t, i * d:(i + 1) * d]
    return out


def merge_loop(Xh):
    return np.concatenate([Xh[:, i] for i in range(Xh.shape[1])], axis=-1)   # (b, n, h*d)


def test_split_loop_agrees_with_package():
    X = np.arange(48.0).reshape(2, 4, 6)
    for s in range(2):
        np.testing.assert_array_equal(split_loop(X, 3)[s], ak.split_heads(X[s], 3))


def test_split_merge_accepts_right_answers(capsys):
    assert chk.split_merge(split_loop, merge_loop) is True
    assert _line(capsys).startswith("✓")
    assert chk.split_merge(lambda X, h: X.reshape(*X.shape[:2], h, -1).transpose(0, 2, 1, 3),
                           lambda Xh: np.swapaxes(Xh, 1, 2).reshape(Xh.shape[0], Xh.shape[2], -1)) is True
    assert _line(capsys).startswith("✓")


def test_notebook_3_one_sequence_split_does_not_pass(capsys):
    # section 4's lines for one sequence, copied: they do not handle the batch axis
    def split_2d(X, h):
        n, hd = X.shape[-2:]
        return X.reshape(n, h, hd // h).transpose(1, 0, 2)
    assert chk.split_merge(split_2d, merge_loop) is False
    out = _line(capsys)
    assert out.startswith("✗") and "batch" in out, out


@pytest.mark.parametrize("wrong, words", [
    (lambda X, h: X.reshape(X.shape[0], h, X.shape[1], -1), "reshape without the transpose"),
    (lambda X, h: X.reshape(*X.shape[:2], h, -1), "still comes after the token axis"),
    (lambda X, h: X.reshape(*X.shape[:2], -1, h).transpose(0, 3, 1, 2), "interleaved"),
    (lambda X, h: X.reshape(*X.shape[:2], h, -1).transpose(2, 0, 1, 3), "batch axis stays first"),
    (lambda X, h: X, "expected shape (b, h, n, d_head)"),
    (lambda X, h: list(split_loop(X, h)), "returned a list"),
    (lambda X, h: None, "forget `return`"),
    (lambda X, h: 1 / 0, "ZeroDivisionError"),
    # d_head typed in: right for the first case (d_head = 3); was told to account for the batch axis (issue 46)
    (lambda X, h: X.reshape(*X.shape[:2], h, 3).transpose(0, 2, 1, 3), "not typed in"),
])
def test_split_names_the_mistake(capsys, wrong, words):
    assert chk.split_merge(wrong, merge_loop) is False
    out = _line(capsys)
    assert out.startswith("✗") and words in out, out
    assert ".transpose(" not in out and "transposed reshape" not in out, out   # the idea, not the code


@pytest.mark.parametrize("wrong, words", [
    (lambda Xh: Xh.reshape(Xh.shape[0], Xh.shape[2], -1), "reshape without the transpose"),
    (lambda Xh: Xh.transpose(0, 2, 3, 1).reshape(Xh.shape[0], Xh.shape[2], -1), "interleaved"),
    (lambda Xh: Xh, "expected shape (b, n, h*d_head)"),
    (lambda Xh: np.swapaxes(Xh, 1, 2).reshape(Xh.shape[0], Xh.shape[2], Xh.shape[1] * 3), "not typed in"),
])
def test_merge_names_the_mistake(capsys, wrong, words):
    assert chk.split_merge(split_loop, wrong) is False
    out = _line(capsys)
    assert out.startswith("✗") and words in out, out
    assert ".transpose(" not in out, out


def test_split_not_done(capsys):
    assert chk.split_merge(None) is False
    assert "no answer yet" in _line(capsys)


# ---------------------------------------------------------------- one head

def head_loop(X, W_q, W_k, W_v):
    """One head with explicit loops over sequences, queries and keys (an independent reference)."""
    if X.ndim == 3:
        return np.stack([head_loop(x, W_q, W_k, W_v) for x in X])
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    out = np.zeros((X.shape[0], V.shape[1]))
    for i in range(X.shape[0]):
        e = np.array([Q[i] @ K[j] / np.sqrt(K.shape[1]) for j in range(X.shape[0])])
        a = np.exp(e - e.max())
        a /= a.sum()
        for j in range(X.shape[0]):
            out[i] += a[j] * V[j]
    return out


def _sm(S, axis=-1):
    E = np.exp(S - S.max(axis=axis, keepdims=True))
    return E / E.sum(axis=axis, keepdims=True)


def _global_sm(S):
    E = np.exp(S)
    return E / E.sum()  # the usual slip: no axis


def _no_keepdims_sm(S):
    E = np.exp(S)
    return E / E.sum(axis=-1)  # (n, n) / (n,): divides column j by row j's sum


def test_one_head_accepts_loop_rejects_tuple(capsys):
    assert chk.one_head(head_loop) is True
    assert _line(capsys).startswith("✓")
    # the task asks for one array: (A @ V, A) is not it
    assert chk.one_head.__wrapped__(lambda X, Wq, Wk, Wv: ak.self_attention(X, Wq, Wk, Wv)) is False  # unguarded
    assert "tuple" in _line(capsys)
    assert chk.one_head(lambda X, Wq, Wk, Wv: head_loop(X, Wq, Wk, Wv).tolist()) is False
    assert "returned a list" in _line(capsys)


@pytest.mark.parametrize("wrong, words", [
    (lambda X, Wq, Wk, Wv: _sm((X @ Wq) @ (X @ Wk).T) @ (X @ Wv), "unscaled"),
    (lambda X, Wq, Wk, Wv: _sm((X @ Wq) @ (X @ Wk).T / Wq.shape[1]) @ (X @ Wv), "scaled by d_k itself"),
    (lambda X, Wq, Wk, Wv: _sm((X @ Wq) @ (X @ Wk).T / np.sqrt(2), axis=0) @ (X @ Wv), "wrong axis"),
    (lambda X, Wq, Wk, Wv: (X @ Wq) @ (X @ Wk).T / np.sqrt(2) @ (X @ Wv), "forgot the softmax"),
    (lambda X, Wq, Wk, Wv: _sm((X @ Wq) @ (X @ Wk).T / np.sqrt(2)), "returned the weights"),
    (lambda X, Wq, Wk, Wv: _sm((X @ Wq) @ (X @ Wk).T / np.sqrt(X.shape[1])) @ (X @ Wv), "size of the tokens, d_model"),
    (lambda X, Wq, Wk, Wv: _global_sm((X @ Wq) @ (X @ Wk).T / np.sqrt(2)) @ (X @ Wv), "whole matrix"),
    (lambda X, Wq, Wk, Wv: _no_keepdims_sm((X @ Wq) @ (X @ Wk).T / np.sqrt(2)) @ (X @ Wv), "row j's sum"),
    (lambda X, Wq, Wk, Wv: _sm((X @ Wk) @ (X @ Wq).T / np.sqrt(2)) @ (X @ Wv), "scores are transposed"),
    (lambda X, Wq, Wk, Wv: _sm((X @ Wq) @ (X @ Wk).T / np.sqrt(2)) @ X, "projected by W_v"),
    (lambda X, Wq, Wk, Wv: (X @ Wq.T), "rows are tokens"),
    (lambda X, Wq, Wk, Wv: np.zeros((4, 3)), "shape is right"),
])
def test_one_head_names_the_mistake(capsys, wrong, words):
    assert chk.one_head(wrong) is False
    out = _line(capsys)
    assert out.startswith("✗") and words in out, out
    assert "sqrt(d_k)" not in out and "weights @ V" not in out, out   # the idea, not the formula


def _head_2d(X, Wq, Wk, Wv, scale=None):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    return _sm(Q @ K.T / (np.sqrt(K.shape[1]) if scale is None else scale)) @ V


@pytest.mark.parametrize("wrong, words", [
    # a scale typed in: right for the first case's d_k = 2 only (issue 46: both cases had d_k = 2)
    (lambda X, Wq, Wk, Wv: _sm(X @ Wq @ np.swapaxes(X @ Wk, -1, -2) / np.sqrt(2)) @ (X @ Wv),
     "fits keys of another size"),
    (_head_2d, "X is a batch here"),   # section 2's one-sequence head: .T reverses the batch axis too
    (lambda X, Wq, Wk, Wv: _sm(X @ Wq @ np.swapaxes(X @ Wk, -1, -2) / np.sqrt(Wq.shape[1]), axis=1) @ (X @ Wv),
     "wrong axis"),   # axis=1 is the keys for one sequence, the queries for a batch
])
def test_one_head_needs_every_size_and_the_batch(capsys, wrong, words):
    assert chk.one_head(wrong) is False
    out = _line(capsys)
    assert out.startswith("✗") and words in out, out


@pytest.mark.parametrize("c, where, words", [
    # a 2.0 typed in: d_k itself on the first case (d_k = 2), right on the batch (d_k = 4); not
    # "you scaled by d_k itself" (the trial's wrong verdict), the number's hint where it is neither
    (2.0, "d_k = 3", "fits keys of another size"),
    (np.sqrt(6), "d_k = 3", "the same number whatever the size of the keys"),   # d_model of the first case
    (np.sqrt(7), "d_k = 2", "the same number whatever the size of the keys"),   # d_model of the second case
    (3.0, "d_k = 2", "fits keys of another size"),                              # d_k itself of the second case
])
def test_one_head_a_number_typed_in_gets_its_own_hint(capsys, c, where, words):
    assert chk.one_head(lambda X, Wq, Wk, Wv: _sm(X @ Wq @ np.swapaxes(X @ Wk, -1, -2) / c) @ (X @ Wv)) is False
    out = _line(capsys)
    assert out.startswith("✗") and where in out and words in out, out
    assert "d_k itself" not in out and "d_model" not in out, out


def test_one_head_scaling_by_the_values_size_is_named(capsys):
    """Scaled by sqrt(d_v): was told "not a number typed in" (issue 46)."""
    assert chk.one_head(lambda X, Wq, Wk, Wv: _sm(X @ Wq @ np.swapaxes(X @ Wk, -1, -2) / np.sqrt(Wv.shape[1]))
                        @ (X @ Wv)) is False
    out = _line(capsys)
    assert "size of the values, d_v" in out and "typed in" not in out, out


def test_one_head_scaling_by_a_size_still_named(capsys):
    assert chk.one_head(lambda X, Wq, Wk, Wv: _sm(X @ Wq @ np.swapaxes(X @ Wk, -1, -2) / Wk.shape[1]) @ (X @ Wv)) is False
    assert "scaled by d_k itself" in _line(capsys)
    assert chk.one_head(lambda X, Wq, Wk, Wv: _sm(X @ Wq @ np.swapaxes(X @ Wk, -1, -2) / np.sqrt(X.shape[-1]))
                        @ (X @ Wv)) is False
    assert "size of the tokens, d_model" in _line(capsys)


def test_one_head_cases_have_keys_of_several_sizes_and_a_batch():
    cases = chk._head_table()
    assert len({c["d_k"] for c in cases}) == len(cases) >= 2
    assert {c["args"][0].ndim for c in cases} == {2, 3}
    for c in cases:
        np.testing.assert_allclose(c["want"], head_loop(*c["args"]))


# ---------------------------------------------------------------- concat then W_o

def combine_loop(heads, W_o):
    concat = np.concatenate([heads[:, i] for i in range(heads.shape[1])], axis=-1)  # (b, n, h*d_v)
    return concat @ W_o


def test_concat_project_accepts_right_answer(capsys):
    assert chk.concat_project(combine_loop) is True
    assert _line(capsys).startswith("✓")
    # the same thing written as a sum over heads of head_l @ (its block of W_o)
    def by_blocks(heads, W_o):
        d_v = heads.shape[-1]
        return sum(heads[:, i] @ W_o[i * d_v:(i + 1) * d_v] for i in range(heads.shape[1]))
    assert chk.concat_project(by_blocks) is True
    assert _line(capsys).startswith("✓")


def _merge_b(H):
    return np.stack([ak.merge_heads(x) for x in H])


@pytest.mark.parametrize("wrong, words", [
    (lambda H, W: _merge_b(H), "forgot the output projection"),
    (lambda H, W: H.reshape(H.shape[0], H.shape[2], -1) @ W, "reshape without the transpose"),
    (lambda H, W: H.transpose(0, 2, 3, 1).reshape(H.shape[0], H.shape[2], -1) @ W, "interleaved"),
    (lambda H, W: H.sum(axis=1), "added the heads"),
    (lambda H, W: H.mean(axis=1), "averaged the heads"),
    (lambda H, W: _merge_b(H) @ W.T, "read W_o's shape, (h*d_v, d_model)"),
    (lambda H, W: H.transpose(1, 0, 2).reshape(H.shape[1], -1) @ W, "batch axis stays first"),   # one-sequence merge
    (lambda H, W: list(_merge_b(H) @ W), "returned a list"),
])
def test_concat_project_names_the_mistake(capsys, wrong, words):
    assert chk.concat_project.__wrapped__(wrong) is False  # without the plain-numpy guard
    out = _line(capsys)
    assert out.startswith("✗") and words in out, out
    # the idea (what W_o's shape says), not the recipe: no steps, no intermediate shape to aim for
    assert "first put" not in out and "(b, n, h*d_v)" not in out and "; then" not in out, out


# ---------------------------------------------------------------- parameter count

def count_by_hand(d_model, h, bias):
    d_head = d_model // h
    per_head = 3 * d_model * d_head + (3 * d_head if bias else 0)
    return h * per_head + h * d_head * d_model + (d_model if bias else 0)


@pytest.mark.parametrize("d_model, h, bias", [(512, 8, False), (512, 8, True), (8, 2, False), (6, 3, True)])
def test_n_parameters_right(capsys, d_model, h, bias):
    assert count_by_hand(d_model, h, bias) == 4 * d_model**2 + (4 * d_model if bias else 0)
    assert chk.n_parameters(count_by_hand(d_model, h, bias), d_model=d_model, n_heads=h, bias=bias) is True
    assert _line(capsys).startswith("✓")


@pytest.mark.parametrize("answer, bias, words", [
    (3 * 512**2, False, "forgot the output projection"),
    (3 * 512**2 + 3 * 512, True, "forgot the output projection"),
    (4 * 512**2 + 4 * 512, False, "no biases"),
    (4 * 512**2, True, "forgot the biases"),
    (4 * 512**2 + 3 * 512, True, "forgot the output bias b_o"),
    (4 * 512**2 + 512, True, "forgot the biases of the heads"),
    (4 * 512**2 + 8 * 3 * 512 + 512, True, "biases have d_head entries, not d_model"),
    (8 * 3 * 512**2 + 512**2, False, "not d_model"),
    (8 * 4 * 512**2, False, "share one W_o"),
    (3 * 512 * 64 + 512**2, False, "W_q, W_k, W_v of one head only"),
    (4 * 512 * 64, False, "one head only"),
    (12345, False, "your count, 12,345, is not"),
    (4 * 512**2 + 0.4, False, "not a whole number"),
    ("many", False, "give a whole number"),
    (True, False, "give a whole number"),
    (None, False, "no answer yet"),
])
def test_n_parameters_names_the_mistake(capsys, answer, bias, words):
    assert chk.n_parameters(answer, d_model=512, n_heads=8, bias=bias) is False
    out = _line(capsys)
    assert out.startswith("✗") and words in out, out


def test_reference_count_is_the_size_of_the_arrays_the_package_builds():
    table = multi_head_count.parameter_counts().open()
    assert set(table) == set(chk.PARAMETER_LAYERS)
    for d_model, h, d_head, bias in chk.PARAMETER_LAYERS:
        built = ak.init_multi_head(d_model, h, rng=np.random.default_rng(0), d_k=d_head, d_v=d_head, bias=bias)
        assert table[(d_model, h, d_head, bias)]["want"] == built.n_parameters()


def test_n_parameters_knows_only_its_layers(capsys):
    assert chk.n_parameters(100, d_model=10, n_heads=2) is False
    out = _line(capsys)
    assert out.startswith("✗") and "knows the layers" in out, out


def test_n_parameters_fallback_names_no_formula(capsys):
    assert chk.n_parameters(12345, d_model=1024, n_heads=128, d_head=128) is False
    out = _line(capsys)
    assert "x d_head" not in out and "h*d_v" not in out and "from its shape" in out, out


# T5-11B (Raffel et al. 2020): d_model 1024, 128 heads of d_kv = 128, no biases: h*d_head = 16,384 != d_model
@pytest.mark.parametrize("answer, ok_expected, words", [
    (4 * 1024 * 128 * 128, True, "67,108,864 parameters"),
    (4 * 1024**2, False, "4 d_model^2 holds only"),
    (4 * 1024**2 + 4 * 1024, False, "section 5 assumes"),
    (3 * 1024 * 128 * 128, False, "forgot the output projection"),
    (3 * 1024 * 128 + 128 * 128 * 1024, False, "one head only"),
])
def test_n_parameters_wide_heads(capsys, answer, ok_expected, words):
    assert chk.n_parameters(answer, d_model=1024, n_heads=128, d_head=128) is ok_expected
    out = _line(capsys)
    assert words in out, out


@pytest.mark.parametrize("checker, args, words", [
    (chk.split_merge, (lambda X, h: ...,), "no answer yet"),
    (chk.split_merge, (split_loop, lambda Xh: ...), "merge has no answer yet"),
    (chk.one_head, (lambda X, Wq, Wk, Wv: ...,), "no answer yet"),
    (chk.concat_project, (lambda H, W: ...,), "no answer yet"),
    (chk.n_parameters, (..., ), "no answer yet"),
])
def test_untouched_stubs_count_as_not_answered(capsys, checker, args, words):
    kwargs = {"d_model": 8, "n_heads": 2} if checker is chk.n_parameters else {}
    assert checker(*args, **kwargs) is False
    out = _line(capsys)
    assert out.startswith("✗") and words in out, out


# ---------------------------------------------------------------- trial report (2026-11-28): M3, M8

def test_concat_along_the_batch_is_not_sent_to_w_o(capsys):
    assert chk.concat_project(lambda heads, W_o: np.concatenate(list(heads), axis=-1) @ W_o) is False
    out = _line(capsys)
    assert "joined the batch's sequences" in out and "W_o takes those features" not in out, out


def test_split_for_one_sequence_is_told_about_the_batch_axis(capsys):
    def one_sequence(X, h):
        n, hd = X.shape
        return X.reshape(n, h, hd // h).transpose(1, 0, 2)

    assert chk.split_merge(one_sequence) is False
    out = _line(capsys)
    assert "X is a batch" in out and "one axis too few" in out, out


def test_one_head_scaling_by_axis_1_of_a_batch_is_not_called_d_v(capsys):
    """Trial 3, M9: K.shape[1] is n for a batch; it was told "you scaled by the size of the values, d_v"
    (the batch case had n = d_v)."""
    def by_axis_1(X, Wq, Wk, Wv):
        K = X @ Wk
        return _sm(X @ Wq @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[1])) @ (X @ Wv)

    assert chk.one_head(by_axis_1) is False
    out = _line(capsys)
    assert "d_v" not in out and "number of tokens" in out and "last axis" in out, out


def test_the_count_modules_docstring_does_not_say_how_to_open_its_sealed_answer():
    """Trial 3, Q1: "``parameter_counts()`` is the sealed ``@recorded`` table (``.open()`` reads it)"."""
    assert ".open()" not in (multi_head_count.__doc__ or "")


def test_one_head_hidden_batches_catch_a_scale_read_from_axis_1():
    """Trial 3, M9's answer passed the grader: its only batch had n = d_k."""
    from attention_kit.check import exercises_03 as ex

    def by_axis_1(X, Wq, Wk, Wv):
        K = X @ Wk
        return _sm(X @ Wq @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[1])) @ (X @ Wv)

    for seed in range(20):
        cases = ex.head_cases(np.random.default_rng(seed))
        assert any(not np.allclose(by_axis_1(*args), ex.head_ref(*args)) for args in cases if args[0].ndim == 3), seed
