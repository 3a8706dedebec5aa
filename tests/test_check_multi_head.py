"""The notebook-03 checkers accept right answers and name the usual mistakes."""

import numpy as np
import pytest

import attention_kit as ak
from attention_kit.check import multi_head as chk


def _line(capsys):
    out = capsys.readouterr().out.strip()
    assert "\n" not in out, out
    return out


# ---------------------------------------------------------------- split and merge

def split_loop(X, h):
    """Reference written independently of attention_kit: copy column blocks one head at a time."""
    n, D = X.shape
    d = D // h
    out = np.empty((h, n, d))
    for i in range(h):
        for t in range(n):
            out[i, t] = X[t, i * d:(i + 1) * d]
    return out


def merge_loop(Xh):
    return np.concatenate([Xh[i] for i in range(Xh.shape[0])], axis=1)


def test_split_loop_agrees_with_package():
    X = np.arange(24.0).reshape(4, 6)
    np.testing.assert_array_equal(split_loop(X, 3), ak.split_heads(X, 3))


def test_split_merge_accepts_right_answers(capsys):
    assert chk.split_merge(split_loop, merge_loop) is True
    assert _line(capsys).startswith("✓")
    assert chk.split_merge(lambda X, h: X.reshape(X.shape[0], h, -1).transpose(1, 0, 2)) is True
    assert _line(capsys).startswith("✓")


@pytest.mark.parametrize("wrong, words", [
    (lambda X, h: X.reshape(h, X.shape[0], -1), "transposed reshape"),
    (lambda X, h: X.reshape(X.shape[0], h, -1), "did not move the head axis"),
    (lambda X, h: X.reshape(X.shape[0], -1, h).transpose(2, 0, 1), "interleaved"),
    (lambda X, h: X.T.reshape(h, -1, X.shape[0]), "last two axes are swapped"),
    (lambda X, h: X, "expected shape (h, n, d_head)"),
    (lambda X, h: None, "forget `return`"),
    (lambda X, h: 1 / 0, "ZeroDivisionError"),
])
def test_split_names_the_mistake(capsys, wrong, words):
    assert chk.split_merge(wrong, merge_loop) is False
    out = _line(capsys)
    assert out.startswith("✗") and words in out, out


@pytest.mark.parametrize("wrong, words", [
    (lambda Xh: Xh.reshape(Xh.shape[1], -1), "transposed reshape"),
    (lambda Xh: Xh.transpose(1, 2, 0).reshape(Xh.shape[1], -1), "interleaved"),
    (lambda Xh: Xh, "expected shape (n, h*d_head)"),
])
def test_merge_names_the_mistake(capsys, wrong, words):
    assert chk.split_merge(split_loop, wrong) is False
    out = _line(capsys)
    assert out.startswith("✗") and words in out, out


def test_split_not_done(capsys):
    assert chk.split_merge(None) is False
    assert "no answer yet" in _line(capsys)


# ---------------------------------------------------------------- one head

def head_loop(X, W_q, W_k, W_v):
    """One head with explicit loops over queries and keys (an independent reference)."""
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


def test_one_head_accepts_loop_and_tuple(capsys):
    assert chk.one_head(head_loop) is True
    assert _line(capsys).startswith("✓")
    assert chk.one_head.__wrapped__(lambda X, Wq, Wk, Wv: ak.self_attention(X, Wq, Wk, Wv)) is True  # unguarded
    assert _line(capsys).startswith("✓")


@pytest.mark.parametrize("wrong, words", [
    (lambda X, Wq, Wk, Wv: _sm((X @ Wq) @ (X @ Wk).T) @ (X @ Wv), "sqrt(d_k)"),
    (lambda X, Wq, Wk, Wv: _sm((X @ Wq) @ (X @ Wk).T / Wq.shape[1]) @ (X @ Wv), "not by d_k"),
    (lambda X, Wq, Wk, Wv: _sm((X @ Wq) @ (X @ Wk).T / np.sqrt(2), axis=0) @ (X @ Wv), "wrong axis"),
    (lambda X, Wq, Wk, Wv: (X @ Wq) @ (X @ Wk).T / np.sqrt(2) @ (X @ Wv), "forgot the softmax"),
    (lambda X, Wq, Wk, Wv: _sm((X @ Wq) @ (X @ Wk).T / np.sqrt(2)), "returned the weights"),
    (lambda X, Wq, Wk, Wv: _sm((X @ Wq) @ (X @ Wk).T / np.sqrt(X.shape[1])) @ (X @ Wv), "not by sqrt(d_model)"),
    (lambda X, Wq, Wk, Wv: _global_sm((X @ Wq) @ (X @ Wk).T / np.sqrt(2)) @ (X @ Wv), "whole matrix"),
    (lambda X, Wq, Wk, Wv: _no_keepdims_sm((X @ Wq) @ (X @ Wk).T / np.sqrt(2)) @ (X @ Wv), "without keepdims"),
    (lambda X, Wq, Wk, Wv: _sm((X @ Wk) @ (X @ Wq).T / np.sqrt(2)) @ (X @ Wv), "scores are transposed"),
    (lambda X, Wq, Wk, Wv: _sm((X @ Wq) @ (X @ Wk).T / np.sqrt(2)) @ X, "values V = X @ W_v"),
    (lambda X, Wq, Wk, Wv: (X @ Wq.T), "rows are tokens"),
    (lambda X, Wq, Wk, Wv: np.zeros((4, 3)), "shape is right"),
])
def test_one_head_names_the_mistake(capsys, wrong, words):
    assert chk.one_head(wrong) is False
    out = _line(capsys)
    assert out.startswith("✗") and words in out, out


# ---------------------------------------------------------------- concat then W_o

def combine_loop(heads, W_o):
    concat = np.concatenate([heads[i] for i in range(heads.shape[0])], axis=1)  # (n, h*d_v)
    return concat @ W_o


def test_concat_project_accepts_right_answer(capsys):
    assert chk.concat_project(combine_loop) is True
    assert _line(capsys).startswith("✓")
    # the same thing written as a sum over heads of head_l @ (its block of W_o)
    def by_blocks(heads, W_o):
        d_v = heads.shape[2]
        return sum(heads[i] @ W_o[i * d_v:(i + 1) * d_v] for i in range(heads.shape[0]))
    assert chk.concat_project(by_blocks) is True
    assert _line(capsys).startswith("✓")


@pytest.mark.parametrize("wrong, words", [
    (lambda H, W: ak.merge_heads(H), "forgot the output projection"),
    (lambda H, W: H.reshape(H.shape[1], -1) @ W, "transposed reshape"),
    (lambda H, W: H.transpose(1, 2, 0).reshape(H.shape[1], -1) @ W, "interleaved"),
    (lambda H, W: H.sum(axis=0), "added the heads"),
    (lambda H, W: H.mean(axis=0), "averaged the heads"),
    (lambda H, W: np.concatenate(list(H), axis=0), "token axis"),
    (lambda H, W: ak.merge_heads(H) @ W.T, "not W_o.T"),
    (lambda H, W: np.concatenate(list(H), axis=0) @ W, "concatenate the heads along the features"),
])
def test_concat_project_names_the_mistake(capsys, wrong, words):
    assert chk.concat_project.__wrapped__(wrong) is False  # without the plain-numpy guard
    out = _line(capsys)
    assert out.startswith("✗") and words in out, out


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
    (4 * 512**2 + 8 * 3 * 512 + 512, True, "biases have d_head = d_model/h entries"),
    (8 * 3 * 512**2 + 512**2, False, "not d_model"),
    (8 * 4 * 512**2, False, "share one W_o"),
    (3 * 512 * 64 + 512**2, False, "W_q, W_k, W_v of one head only"),
    (4 * 512 * 64, False, "one head only"),
    (12345, False, "not 12,345"),
    ("many", False, "give a number"),
    (None, False, "no answer yet"),
])
def test_n_parameters_names_the_mistake(capsys, answer, bias, words):
    assert chk.n_parameters(answer, d_model=512, n_heads=8, bias=bias) is False
    out = _line(capsys)
    assert out.startswith("✗") and words in out, out


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
