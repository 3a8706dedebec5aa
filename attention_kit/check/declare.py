"""How an exercise is declared: once, in a module ``attention_kit/check/exercises_*.py``, from which
the registry, the grader, the student edition, and the course repository's answer sheets, guide
tables and tests all follow.

A declaration is an :class:`Exercise` (its id ``"NN.k"``, title, the names of its answers in the
kernel, its checker and the settings the notebook passes) in the module's ``EXERCISES``, and, for
the grader and the teacher, a function marked :func:`grades` that returns its :class:`Grading`:
the task and the mistakes its hints name (the course repository's teaching guide tabulates them), the hidden cases
(:class:`Hidden`: how they are drawn, the reference, the comparison), a typical wrong answer and
other right answers of each function answer, forms the exercise refuses, and honest answers in
several styles that the copy flags must not accuse. The registry (``registry.py``) finds every
``exercises_*`` module by itself; a new exercise may live in a module of its own.

The grader's part holds right answers (references, samples), so it is code the student edition
leaves out: ``make student`` drops every function marked :func:`grades` or
:func:`~attention_kit.check.recorded.reference` (the hidden cases' draws and references are marked
``@reference``), and the module-level code it keeps (the ``Exercise`` statements, the comparisons
below) names none of them. The grader reaches them through :func:`grading` only.

The comparisons here accept what the in-class checkers accept as right, with their tolerance, and
never raise (``got`` is whatever the learner's function returned, as data). Where an exercise asks
for a numpy array, a list or a tuple is refused, as in class (:func:`array_close`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from . import as_floats, close

__all__ = ["Exercise", "Notebook", "Hidden", "Grading", "grades", "grading",
           "draw_sizes", "is_number", "one_float", "array_close", "pair_close", "exact_count",
           "bool_mask_equal", "bool_array_equal", "same_shape_close", "float_close", "close_1e9",
           "masked_ok", "online_ok", "gradient_ok"]


@dataclass(frozen=True)
class Exercise:
    """One exercise: its id (``"02.3"``: notebook 02, the third), a short title, the names of its
    answers in the kernel, and its checker.

    The checker is called as ``checker(*answers, **kwargs)``; ``kwargs`` holds fixed inputs that
    the notebook passes too (the grader never takes them from the learner's kernel).
    """

    id: str
    title: str
    answers: tuple[str, ...]
    checker: Callable[..., bool]
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def checker_name(self) -> str:
        """``module.function`` under ``attention_kit.check``, e.g. ``general.dot_scores``."""
        return f"{self.checker.__module__.rsplit('.', 1)[-1]}.{self.checker.__name__}"

    @property
    def plain(self) -> tuple[str, ...] | None:
        """None, or the ``attention_kit`` names the answer may use (``()``: plain numpy only).

        Marked on the checker by :func:`attention_kit.check.plain.plain_numpy`.
        """
        return getattr(self.checker, "plain_numpy", None)

    @property
    def notebook(self) -> str:
        """The notebook's number, ``"02"``."""
        return self.id.split(".")[0]

    @property
    def position(self) -> int:
        """The place in its notebook, from 1."""
        return int(self.id.split(".")[1])


@dataclass(frozen=True)
class Notebook:
    """A notebook of the course: its number ``"NN"``, file name, title and exercises in order."""

    number: str
    file: str
    title: str
    exercises: tuple[Exercise, ...]

    def numbered(self) -> list[tuple[str, Exercise]]:
        """``[("01.1", exercise), ("01.2", exercise), ...]``."""
        return [(ex.id, ex) for ex in self.exercises]


@dataclass(frozen=True)
class Hidden:
    """One answer's hidden cases: ``cases(rng)`` returns argument tuples for the answer function
    ``answers[answer]``; ``reference(*args)`` the expected result; ``compare(got, expected)`` True
    when right (default: same shape and close)."""

    cases: Callable[[np.random.Generator], list[tuple]]
    reference: Callable[..., Any]
    compare: Callable[[Any, Any], bool] = close
    answer: int = 0


@dataclass(frozen=True)
class Grading:
    """The grader's part of one exercise, and the samples its tests try.

    ``hidden``: one :class:`Hidden` per function answer (none for a value or a prediction).
    ``wrong``, ``other_right``, ``refused``: per answer index, the source of a function ``f``: a
    typical wrong answer (it must fail the hidden cases), a right answer written another way than
    the teacher's (it must pass in class and hidden), a form the exercise refuses (both refuse
    it). ``honest``: whole answer cells in different honest styles, the textbook ones included
    (the grader's copy flags must not accuse learners who write them). ``task`` and ``catches``:
    the exercise's row in the course repository's teaching guide, in its table of what the checkers
    catch (the task, and the mistakes its hints name), which the guide's table tool writes there.
    """

    task: str = ""
    catches: str = ""
    hidden: tuple[Hidden, ...] = ()
    wrong: Mapping[int, str] = field(default_factory=dict)
    other_right: Mapping[int, str] = field(default_factory=dict)
    refused: Mapping[int, str] = field(default_factory=dict)
    honest: tuple[str, ...] = ()


_PARTS: dict[str, Callable[[], Grading]] = {}
_MADE: dict[str, Grading] = {}


def grades(ex_id: str) -> Callable[[Callable[[], Grading]], Callable[[], Grading]]:
    """Mark a function without arguments as exercise ``ex_id``'s grader part: it returns the
    exercise's :class:`Grading`. The student edition leaves the function out (it names right answers)."""
    def mark(fn: Callable[[], Grading]) -> Callable[[], Grading]:
        if ex_id in _PARTS and _PARTS[ex_id].__qualname__ != fn.__qualname__:
            raise ValueError(f"exercise {ex_id} has two grader parts: {_PARTS[ex_id].__qualname__} "
                             f"and {fn.__qualname__}")
        _PARTS[ex_id] = fn
        fn.reference = True
        return fn
    return mark


def grading(ex_id: str) -> Grading:
    """Exercise ``ex_id``'s :class:`Grading` (an empty one when it declares none). The registry must
    have been imported (it imports every declaration)."""
    if ex_id not in _MADE:
        part = _PARTS.get(ex_id)
        _MADE[ex_id] = part() if part is not None else Grading()
    return _MADE[ex_id]


# ---------------------------------------------------------------- drawing cases and comparing


def draw_sizes(rng, low: int, high: int, k: int, *, avoid=()) -> list[int]:
    """``k`` different whole numbers in ``low .. high - 1``, none in ``avoid``."""
    pool = [v for v in range(low, high) if v not in avoid]
    return [int(v) for v in rng.choice(pool, size=k, replace=False)]


def is_number(x) -> bool:
    return not isinstance(x, (bool, np.bool_)) and isinstance(x, (int, float, np.integer, np.floating))


def one_float(got) -> float | None:
    g = as_floats(got)
    if g is None or g.size != 1:
        return None
    return float(g.reshape(()))


def array_close(got, expected) -> bool:
    """A numpy array (not a list, not the tuple ``(output, weights)``), close to ``expected``."""
    return isinstance(got, np.ndarray) and close(got, expected)


def pair_close(got, expected) -> bool:
    """Two numpy arrays ``(a, b)`` (in a tuple or a list), each close to ``expected``'s (a list of
    numbers is not an array: the in-class checkers say so too)."""
    return isinstance(got, (tuple, list)) and len(got) == 2 and all(
        isinstance(g, np.ndarray) and close(g, e) for g, e in zip(got, expected, strict=True))


def exact_count(got, expected) -> bool:
    """A whole number of type int (Python's or numpy's, not a bool, not a float such as 6.0),
    equal to ``expected``."""
    return is_number(got) and isinstance(got, (int, np.integer)) and got == expected


def bool_mask_equal(got, expected) -> bool:
    """A boolean array (a list of bools is one) of ``expected``'s pattern."""
    try:
        arr = np.asarray(got)
    except Exception:  # the learner's object: never raise
        return False
    return arr.dtype == np.bool_ and arr.shape == expected.shape and bool(np.array_equal(arr, expected))


def bool_array_equal(got, expected) -> bool:
    """A numpy array of dtype bool (not a list of bools, not 0/1) of ``expected``'s pattern."""
    return isinstance(got, np.ndarray) and bool_mask_equal(got, expected)


def same_shape_close(got, expected) -> bool:
    """A numpy array (not a list) of ``expected``'s shape (checked first, as in class), and close."""
    return isinstance(got, np.ndarray) and got.shape == expected.shape and close(got, expected)


def float_close(got, expected) -> bool:
    v = one_float(got)
    return v is not None and close(v, expected)


def close_1e9(got, expected) -> bool:
    return close(got, expected, atol=1e-9)


def masked_ok(got, expected) -> bool:
    """Close to the masked softmax, and exactly 0 where the mask is False (``expected`` is the
    pair ``(weights, mask)``)."""
    want, mask = expected
    if not array_close(got, want):
        return False
    return bool(np.all(as_floats(got)[~mask] == 0))


def online_ok(got, expected) -> bool:
    """Three values ``(m, l, o)``, each close to ``expected``'s to 1e-9: m and l numbers (or
    1-element arrays), o a numpy array, as the in-class checker accepts them (a list is refused
    there too)."""
    try:
        m, l, o = got
        if not isinstance(o, np.ndarray):
            return False
        m, l, o = one_float(m), one_float(l), np.asarray(o, dtype=float)
    except Exception:  # the learner's object: never raise
        return False
    if m is None or l is None:
        return False
    return all(close(g, e, atol=1e-9) for g, e in zip((m, l, o), expected, strict=True))


def gradient_ok(got, expected) -> bool:
    """As the in-class checker: at most 1e-6 for a correct gradient; for the wrong one, a multiple of
    the right one, the relative error itself (any measure that treats both gradients alike and stays
    between 0 and 1 gives it; one against a single gradient does not)."""
    v = one_float(got)
    if v is None or not math.isfinite(v) or v < 0:
        return False
    if expected <= 1e-6:
        return v <= 1e-6
    return math.isclose(v, expected, rel_tol=0.01)
