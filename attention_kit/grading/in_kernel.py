"""The grading code that runs inside the learner's kernel, after the learner's notebook.

The grader appends one cell, :func:`grading_cell`, to the executed notebook. That cell uses only
Python statements (``def``, ``import``, ``del``): no name the learner could have redefined. It
drops every ``attention_kit`` module from ``sys.modules`` and loads the package again from the
course's own folder (by its path, so an ``attention_kit.py`` the notebook wrote into its working
folder is never picked up): the checkers and this module are fresh copies that the learner's
code has never touched (redefining ``check``, ``check.dot_scores`` or
``attention_kit.check.report`` gains nothing). Then :func:`grade_here`
looks up each answer by name in the learner's namespace and calls the real checker on it, with
a time limit per exercise, with the graded hints of prediction exercises
(``check.graded_hints``: the idea, not the answer), collecting the verdict through ``attention_kit.check.recording``, not
from what the notebook printed.

Each verdict is written as one line ``<nonce> <json>``. The nonce is drawn by the grader for this
run only and appears nowhere before this cell, so a line the notebook printed cannot pass for
one; anything the learner's functions print while they are checked is captured and discarded.
"""

from __future__ import annotations

import contextlib
import io
import json
import signal
import sys
import threading
from pathlib import Path

from . import COULD_NOT_RUN, MISSING

__all__ = ["grading_cell", "grade_here"]

_CELL = '''\
def __attention_kit_grade__():
    import importlib.util
    import sys
    for __name in [__m for __m in sys.modules if __m == "attention_kit" or __m.startswith("attention_kit.")]:
        del sys.modules[__name]
    __spec = importlib.util.spec_from_file_location(
        "attention_kit", {init!r}, submodule_search_locations=[{package!r}])
    sys.modules["attention_kit"] = importlib.util.module_from_spec(__spec)
    __spec.loader.exec_module(sys.modules["attention_kit"])
    from attention_kit.grading.in_kernel import grade_here
    grade_here(sys._getframe(0).f_globals, {number!r}, {nonce!r}, {timeout!r})
__attention_kit_grade__()
'''


def grading_cell(number: str, nonce: str, timeout: float) -> str:
    """Source of the cell that grades notebook ``number`` in the learner's kernel."""
    package = Path(__file__).resolve().parents[1]  # the attention_kit folder the grader runs from
    return _CELL.format(init=str(package / "__init__.py"), package=str(package), number=number,
                        nonce=nonce, timeout=float(timeout))


class _TimeLimit(BaseException):
    """Raised in the kernel when an exercise's checker runs past its time limit.

    A BaseException, so that the checkers' ``except Exception`` around the learner's code does
    not turn it into a hint.
    """


@contextlib.contextmanager
def _time_limit(seconds: float):
    if threading.current_thread() is not threading.main_thread():  # signals need the main thread
        yield
        return

    def on_alarm(signum, frame):
        raise _TimeLimit()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _grade_one(ex, namespace: dict, timeout: float) -> dict:
    from ..check import graded_hints, recording

    missing = [name for name in ex.answers if name not in namespace]
    if missing:
        return {"status": MISSING, "message": ", ".join(missing)}
    answers = [namespace[name] for name in ex.answers]
    captured = io.StringIO()
    try:
        with _time_limit(timeout), recording() as results, graded_hints(), \
                contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
            ex.checker(*answers, **ex.kwargs)
    except _TimeLimit:
        return {"status": COULD_NOT_RUN,
                "message": f"your answer did not finish within {timeout:g} s when the grader called it"}
    except KeyboardInterrupt:
        return {"status": COULD_NOT_RUN, "message": "your answer was stopped: it ran past the time limit"}
    except MemoryError:
        return {"status": COULD_NOT_RUN, "message": "your answer ran out of memory when the grader called it"}
    except BaseException as exc:  # SystemExit from exit(), or a checker bug: never stop the grading
        return {"status": COULD_NOT_RUN,
                "message": f"checking your answer raised {type(exc).__name__}: {exc}"[:500]}
    if not results:
        return {"status": COULD_NOT_RUN, "message": "the checker gave no verdict"}
    return {"status": results[-1].status, "message": results[-1].message}


def grade_here(namespace: dict, number: str, nonce: str, timeout: float) -> None:
    """Grade every exercise of notebook ``number`` on the answers in ``namespace``; write one
    ``<nonce> <json>`` line per exercise to the cell's output, as soon as it is known."""
    from ..check import registry

    out = sys.stdout
    for ex_id, ex in registry.notebook(number).numbered():
        verdict = _grade_one(ex, namespace, timeout)
        verdict["id"] = ex_id
        out.write(f"{nonce} {json.dumps(verdict)}\n")
        out.flush()
