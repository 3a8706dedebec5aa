"""Exercise checkers for the notebooks.

Each checker takes the learner's answer (a number, an array or a function), compares it with
``attention_kit``, prints one line, ``✓ ...`` or ``✗ ...`` with a hint aimed at the usual mistake,
and returns True or False. A checker never lets the learner's exception escape as a traceback:
it prints what went wrong instead.

Every verdict is also a machine-readable :class:`Result` (``passed``, ``failed`` with the hint, or
``not attempted`` for the ``...`` stub). Code that needs it, such as a grader of returned notebooks,
collects the results with :func:`recording`; learners see only the
printed line.

Submodules by concept: ``check.general`` (notebook 01), ``check.self_attention`` (notebook 02),
``check.multi_head`` (notebook 03), ``check.masks_positions`` (notebook 04),
``check.backprop`` and ``check.grad_check`` (notebook 05), ``check.tiny_lm`` (notebook 06), ``check.at_scale`` (notebook
07), ``check.heads`` (notebook 08); ``check.plain`` rejects ``attention_kit`` calls in exercises that ask for plain numpy.

Prediction exercises (which rows change, where a query looks) give two hints: in class, one that
may name the answer; in the grader's feedback (:func:`graded_hints`), one that explains the
idea only.
"""

from __future__ import annotations

import functools
import json
import numbers
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from ..i18n import _

__all__ = ["Result", "recording", "prediction", "predictions_recorded", "RECORDED", "report",
           "not_attempted", "try_call", "try_repeat", "not_done", "close",
           "PASSED", "FAILED", "NOT_ATTEMPTED", "quietly", "report_failure", "graded_hints", "record_only"]

PASS = "✓"
FAIL = "✗"


class _State(threading.local):
    """Per thread (the grader checks two notebooks at once in two threads): how deep inside
    ``quietly()`` and ``graded_hints()``, and the active ``recording()`` lists, innermost last."""

    def __init__(self):
        self.quiet = 0
        self.graded = 0
        self.recorders: list[list[Result]] = []


_state = _State()


@contextmanager
def quietly() -> Iterator[None]:
    """Run checkers without printing; they still return True or False.

    A cell that only confirms an answer uses it (``with check.quietly(): assert check.x(answer)``),
    so that it stores no output and the saved notebook gives no answer away before the learner tries.
    """
    _state.quiet += 1
    try:
        yield
    finally:
        _state.quiet -= 1


@contextmanager
def graded_hints() -> Iterator[None]:
    """Give the graded hint of a prediction exercise where it has one.

    In class a wrong prediction gets a hint that may state the answer (the learner is meant to
    compare with the explorer and learn from it). The grader writes feedback inside this
    block: there the hint explains the idea and leaves the answer to the learner.
    """
    _state.graded += 1
    try:
        yield
    finally:
        _state.graded -= 1


PASSED = "passed"
FAILED = "failed"
NOT_ATTEMPTED = "not attempted"
#: In a student edition whose teacher chose it, a prediction is recorded in class, not judged.
RECORDED = "recorded"


@dataclass(frozen=True)
class Result:
    """One checker verdict: ``status`` is PASSED, FAILED or NOT_ATTEMPTED; ``message`` is the
    explanation (for FAILED, the hint) without the ✓ or ✗."""

    status: str
    message: str

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    @property
    def line(self) -> str:
        """The line the learner sees, ``✓ message`` or ``✗ message``."""
        mark = PASS if self.passed else ("●" if self.status == RECORDED else FAIL)
        return f"{mark} {self.message}"


@contextmanager
def recording() -> Iterator[list[Result]]:
    """Collect the :class:`Result` of every checker called inside the ``with`` block.

    >>> from attention_kit.check import general, recording
    >>> with recording() as results:
    ...     general.softmax_by_hand(...)
    ✗ no answer yet: replace the ... with your three weights
    False
    >>> results[-1].status
    'not attempted'
    """
    results: list[Result] = []
    _state.recorders.append(results)
    try:
        yield results
    finally:
        _state.recorders.remove(results)


def _emit(result: Result) -> None:
    """Print the verdict (unless inside ``quietly()``) and record it (always)."""
    if not _state.quiet:
        print(result.line)
    for results in _state.recorders:
        results.append(result)


def report(ok: bool, message: str, *, graded: str | None = None) -> bool:
    """Print ``✓ message`` or ``✗ message`` (nothing inside ``quietly()``) and return ``ok``.

    ``graded``: the hint to give instead inside :func:`graded_hints` (one that does not state
    the answer of a prediction exercise).
    """
    _emit(Result(PASSED if ok else FAILED, graded if _state.graded and graded is not None else message))
    return bool(ok)


def not_attempted(message: str) -> bool:
    """Print ``✗ message`` for an answer that is still the ``...`` stub, and return False."""
    _emit(Result(NOT_ATTEMPTED, message))
    return False


def report_failure(message: str, *, stub: str) -> bool:
    """Report a failed answer; when ``message`` is the checker's ``stub`` text (the learner's
    function still returns ``...``), report it as not attempted."""
    return not_attempted(message) if message == stub else report(False, message)


def not_done(answer: Any) -> bool:
    """True when the learner has not answered yet (``None``, ``...`` or a function returning None)."""
    return answer is None or answer is Ellipsis


def try_call(fn: Callable, *args, **kwargs) -> tuple[Any, str | None]:
    """Call the learner's function; return ``(result, None)`` or ``(None, 'what went wrong')``."""
    if not callable(fn):
        return None, _("expected a function, got {kind}").format(kind=type(fn).__name__)
    try:
        out = fn(*args, **kwargs)
    except Exception as exc:  # the learner's code: report it, never raise
        return None, _("your function raised {error}: {message}").format(error=type(exc).__name__, message=exc)
    if out is None:
        return None, _("your function returned None: did you forget `return`?")
    return out, None


def try_repeat(fn: Callable, n: int, *args) -> tuple[list, str | None]:
    """Call the learner's function ``n`` times on ``args`` (arrays copied for each call, other
    arguments such as a random generator shared): ``(results, None)`` or ``(results so far, 'what
    went wrong')``. Under the grader the ``n`` calls cross to the learner's kernel at once."""
    if not callable(fn):
        return [], _("expected a function, got {kind}").format(kind=type(fn).__name__)
    if hasattr(fn, "repeat"):  # the grader's stand-in for a function in the learner's kernel
        try:
            return fn.repeat(n, *args), None
        except Exception as exc:  # the learner's exception, as try_call reports it
            return getattr(exc, "results", []), _("your function raised {error}: {message}").format(
                error=type(exc).__name__, message=exc)
    out = []
    for _i in range(n):
        got, err = try_call(fn, *[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        if err is not None:
            return out, err
        out.append(got)
    return out, None


def close(a, b, *, atol: float = 1e-6) -> bool:
    """Shape-aware closeness test that never raises (whatever object the learner returned)."""
    try:
        a = np.asarray(a, dtype=float)
        b = np.asarray(b, dtype=float)
        return a.shape == b.shape and bool(np.allclose(a, b, atol=atol, rtol=1e-6))
    except Exception:  # the learner's object: never raise
        return False


def shape_of(x) -> tuple | None:
    """The shape of ``x``, or None when it has none (a ragged list, an odd object)."""
    try:
        return tuple(np.shape(x))
    except Exception:  # the learner's object: never raise
        return None


def shape_text(x) -> str:
    """``(4, 5)``, or what the learner gave when it is not an array (a ragged list has no shape)."""
    shape = shape_of(x)
    if shape is None:
        return _("a ragged {kind} with no single shape").format(kind=type(x).__name__)
    if isinstance(x, (np.ndarray, list, tuple)):
        return str(shape)
    return _("{shape} (a {kind})").format(shape=shape, kind=type(x).__name__)


def as_floats(x) -> np.ndarray | None:
    """``x`` as a float array, or None when it is not one (never raises)."""
    try:
        return np.asarray(x, dtype=float)
    except Exception:  # the learner's object: never raise
        return None


def whole_number(x) -> int | None:
    """``x`` as an int when it is a whole number (int or numpy integer, not bool), else None."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        return None
    return int(x)


def whole_list(answer) -> list[int] | None:
    """``answer`` (a list, tuple, set or 1-D array) as a list of ints, or None if any entry is not whole."""
    if isinstance(answer, (str, bytes, dict)) or not_done(answer):
        return None
    try:
        items = list(answer.tolist() if isinstance(answer, np.ndarray) else answer)
    except TypeError:
        return None
    out = [whole_number(a) for a in items]
    return None if any(a is None for a in out) else out


# ---------------------------------------------------------------- predictions recorded in class

#: Written into a student edition by ``make student PREDICTIONS=record`` (the student-edition builder).
CLASS_SETTINGS = Path(__file__).with_name("class_settings.json")


def predictions_recorded() -> bool:
    """True in a student edition whose teacher chose that predictions are checked only when the
    notebook is graded (their answers are tiny sets a learner could try one by one in class)."""
    try:
        return json.loads(CLASS_SETTINGS.read_text(encoding="utf-8")).get("predictions") == "record"
    except (OSError, ValueError, AttributeError):
        return False


def _shown(answer: Any) -> str:
    try:
        text = repr(answer.tolist() if isinstance(answer, np.ndarray) else answer)
    except Exception:  # the learner's object
        text = type(answer).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def prediction(checker: Callable[..., bool]) -> Callable[..., bool]:
    """Mark a prediction exercise's checker. Where :func:`predictions_recorded`, it records the
    prediction in class (``● recorded: ...``) and judges it only under the grader."""

    @functools.wraps(checker)
    def wrapper(*answers, **kwargs):
        if predictions_recorded() and not _state.graded and not any(not_done(a) for a in answers):
            return record_only(*answers)
        return checker(*answers, **kwargs)

    wrapper.prediction = True
    return wrapper


def record_only(*answers) -> bool:
    """Record the prediction ``answers`` (``● recorded: ...``) without judging it. In a student
    edition built with ``--record-predictions`` this is the whole body of every prediction
    checker (the student-edition builder): no judging code ships, so no switch (``graded_hints``,
    ``__wrapped__``, the settings file) can give a verdict in class; the grader judges with
    the teacher's checkers."""
    if any(not_done(a) for a in answers):
        return not_attempted("no answer yet: replace the `...` with your prediction, then run the cell again")
    _emit(Result(RECORDED, f"recorded: {', '.join(_shown(a) for a in answers)}. This prediction is "
                           "checked when your notebook is graded; test it on the explorer first"))
    return True
