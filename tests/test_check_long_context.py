"""The notebook-09 checkers accept right answers and name the usual mistakes."""

import numpy as np
import pytest
from test_check_masks_positions import STUB, _line, _raises  # (tests/ is on sys.path)

import attention_kit as ak
from attention_kit.check import long_context as chk


def rope_right(x, m):
    d = len(x)
    a = m * 10000.0 ** (-np.arange(0, d, 2) / d)
    out = np.empty(d)
    out[0::2] = x[0::2] * np.cos(a) - x[1::2] * np.sin(a)
    out[1::2] = x[0::2] * np.sin(a) + x[1::2] * np.cos(a)
    return out


def rope_complex(x, m):  # written another way: also right
    d = len(x)
    z = (x[0::2] + 1j * x[1::2]) * np.exp(1j * m * 10000.0 ** (-np.arange(0, d, 2) / d))
    return np.stack([z.real, z.imag], axis=1).reshape(d)


def rope_one_angle(x, m):
    d = len(x)
    out = np.empty(d)
    out[0::2] = x[0::2] * np.cos(m) - x[1::2] * np.sin(m)
    out[1::2] = x[0::2] * np.sin(m) + x[1::2] * np.cos(m)
    return out


def rope_halves(x, m):
    d = len(x)
    a = m * 10000.0 ** (-np.arange(0, d, 2) / d)
    u, v = x[: d // 2], x[d // 2:]
    return np.concatenate([u * np.cos(a) - v * np.sin(a), u * np.sin(a) + v * np.cos(a)])


@pytest.mark.parametrize("fn, ok, words", [
    (rope_right, True, "its own frequency"),
    (rope_complex, True, "its own frequency"),
    (lambda x, m: rope_right(x, -m), False, "wrong way"),
    (rope_one_angle, False, "same angle"),
    (rope_halves, False, "i + d/2"),
    (lambda x, m: rope_right(x, m + 1), False, "off by one"),
    (lambda x, m: x, False, "nothing was rotated"),
    (lambda x, m: ak.rope(x[None], [m])[0], False, "attention_kit"),
    (_raises, False, "boom"),
])
def test_rope_vector(fn, ok, words, capsys):
    assert chk.rope_vector(fn) is ok
    assert words in _line(capsys)


def test_rope_vector_stub(capsys):
    assert chk.rope_vector(lambda x, m: ...) is False
    assert _line(capsys) == STUB


@pytest.mark.parametrize("fn, ok, words", [
    (lambda q, k, m, n: rope_right(q, m) @ rope_right(k, n) / np.sqrt(len(q)), True, "m - n only"),
    (lambda q, k, m, n: rope_right(q, m) @ k / np.sqrt(len(q)), False, "only one"),
    (lambda q, k, m, n: q @ rope_right(k, n) / np.sqrt(len(q)), False, "only one"),
    (lambda q, k, m, n: rope_right(q, m) @ rope_right(k, m) / np.sqrt(len(q)), False, "same position"),
    (lambda q, k, m, n: q @ k / np.sqrt(len(q)), False, "as if nothing"),
    (lambda q, k, m, n: rope_right(q, m) @ rope_right(k, n), False, "sqrt(d)"),
])
def test_rope_score(fn, ok, words, capsys):
    assert chk.rope_score(fn) is ok
    assert words in _line(capsys)


@pytest.mark.parametrize("fn, ok, words", [
    (lambda s, i: -s * (i - np.arange(i + 1)), True, "each step back"),
    (lambda s, i: s * (i - np.arange(i + 1)), False, "sign"),
    (lambda s, i: (-s * (i - np.arange(i + 1)))[::-1], False, "reversed"),
    (lambda s, i: -(i - np.arange(i + 1.0)), False, "slope is missing"),
    (lambda s, i: -s * np.arange(i + 1.0), False, "from the first key"),
    (lambda s, i: -s * np.abs(i - np.arange(12.0)), False, "one per key"),
    (lambda s, i: ak.alibi_bias([s], i + 1)[0, i], False, "attention_kit"),
])
def test_alibi_row(fn, ok, words, capsys):
    assert chk.alibi_row(fn) is ok
    assert words in _line(capsys)


@pytest.mark.parametrize("answer, ok, words", [
    ([0, 6, 7, 8, 9], True, "the sink"),
    ((9, 8, 7, 6, 0), True, "the sink"),
    ([6, 7, 8, 9], False, "sink is missing"),
    ([0, 7, 8, 9], False, "beside the last four"),
    ([0, 5, 6, 7, 8], False, "off by one"),
    ([1, 2], False, "first one"),
    ("0 6 7 8 9", False, "list of whole numbers"),
])
def test_cache_keeps(answer, ok, words, capsys):
    assert chk.cache_keeps(answer) is ok
    assert words in _line(capsys)


def test_cache_keeps_is_what_the_cache_keeps(capsys):
    c = ak.KVCache(1, 1, window=4, sinks=1)
    for t in range(10):
        c.append([t], [t])
    assert chk.cache_keeps(c.positions.tolist())
    assert chk.cache_keeps(...) is False
