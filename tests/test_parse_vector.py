"""parse_vector: what a learner types becomes a vector, or a short message; never eval."""

import builtins

import numpy as np
import pytest

from attention_kit.errors import AttentionError
from attention_kit.widgets import VectorParseError, parse_vector

GOOD = [
    ("0.1, 0.5", [0.1, 0.5]),
    ("[0.1 0.5]", [0.1, 0.5]),
    ("(0.1, 0.5)", [0.1, 0.5]),
    ("-1e-2; 3", [-0.01, 3.0]),
    ("  1 ,2  ", [1.0, 2.0]),
    ("+.5 -2.", [0.5, -2.0]),
    ("1E3,\t-4e+0", [1000.0, -4.0]),
    ("[ 7 ]", [7.0]),
]

# (text, a fragment the message must contain)
BAD = [
    ("", "empty"),
    ("   ", "empty"),
    ("[]", "empty"),
    ("abc", "'abc' is not a number"),
    ("1, two", "'two' is not a number"),
    ("nan, 1", "'nan' is not a finite number"),
    ("0.5, NaN", "'NaN' is not a finite number"),
    ("inf, 0", "'inf' is not a finite number"),
    ("-inf 1", "'-inf' is not a finite number"),
    ("1e999, 2", "too large"),
    ("1" * 300, "too long (300 characters"),
    ("1, 2, 3", "expected 2 numbers"),
    ("1", "expected 2 numbers"),
    ("__import__('os')", "is not a number"),
    ("__import__('os').system('ls')", "is not a number"),
    ("[1, 2", "'[' is not closed"),
    ("1, 2]", "']' has no opening bracket"),
    ("[[1, 2]]", "only one pair of brackets"),
    ("1,,2", "two separators in a row"),
    ("0x10, 2", "'0x10' is not a number"),
    ("1e, 2", "'1e' is not a number"),
    ("--1, 2", "'--1' is not a number"),
    ("1_000, 2", "'1_000' is not a number"),
    ("1.2.3, 4", "'1.2.3' is not a number"),
    ("1/2, 3", "is not a number"),
    ("2**10, 1", "is not a number"),
]


@pytest.mark.parametrize("text, expected", GOOD)
def test_accepts_what_people_type(text, expected):
    v = parse_vector(text)
    assert v.dtype == np.float64
    np.testing.assert_array_equal(v, expected)


@pytest.mark.parametrize("text, fragment", BAD)
def test_rejects_with_a_message_that_names_the_problem(text, fragment):
    with pytest.raises(VectorParseError) as info:
        parse_vector(text, length=2)
    msg = str(info.value)
    assert fragment in msg
    assert len(msg) < 160, "messages stay short"
    assert "Traceback" not in msg


def test_error_class_is_an_attention_error_and_a_value_error():
    assert issubclass(VectorParseError, AttentionError)
    assert issubclass(VectorParseError, ValueError)


def test_non_string_input():
    with pytest.raises(VectorParseError, match="expected text"):
        parse_vector(3.0)


def test_length_cap_is_checked_before_anything_else():
    with pytest.raises(VectorParseError, match="at most 10"):
        parse_vector("1, 2, 3, 4, 5", max_chars=10)


def test_never_evaluates(monkeypatch):
    import ast

    def boom(*a, **k):
        raise AssertionError("eval-like function called")

    monkeypatch.setattr(builtins, "eval", boom)
    monkeypatch.setattr(builtins, "exec", boom)
    monkeypatch.setattr(ast, "literal_eval", boom)
    for text, expected in GOOD:
        np.testing.assert_array_equal(parse_vector(text), expected)
    for text, _ in BAD:
        with pytest.raises(VectorParseError):
            parse_vector(text, length=2)
