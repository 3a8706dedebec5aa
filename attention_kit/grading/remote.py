"""The checkers run in the grader's process; the learner's functions run in the learner's kernel.

:func:`check_notebook` asks the kernel (``in_kernel.serve``) for each exercise's answers: a value
comes back as data (``wire``), a function as a :class:`RemoteFunction`, a stand-in whose call
sends its arguments to the kernel as data, runs the learner's function there, and returns its
result as data (or raises an exception of the same name, with the learner's message). Arguments
the learner's function changed in place are changed here too, so a checker that looks for it
still sees it. The checker itself, numpy and the references it compares with are the grader's
own: nothing the learner's code did in its kernel touches them.

Time: each exercise has ``Limits.exercise_s`` seconds of the learner's code in all its calls,
timed in the kernel around the learner's function; past it the exercise "could not run". The
grader's own work (its checks, the round trips) is not charged, so a busy machine does not
turn a quick answer into a time-out.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import time
from typing import Any

import numpy as np

from ..check import graded_hints, quietly, recording
from ..i18n import _
from . import COULD_NOT_RUN, FAILED, MISSING, PASSED, wire
from .hidden import case_rng, check_hidden
from .in_kernel import request_cell

__all__ = ["RemoteFunction", "Link", "check_notebook", "OutOfTime", "KernelGone"]


class OutOfTime(BaseException):
    """The learner's code used up the exercise's time."""


class KernelGone(BaseException):
    """The kernel stopped, or did not answer."""


class Link:
    """Requests to one learner's kernel, sent from a worker thread through the grader's event
    loop (``run.execute_request`` executes a cell there and returns its outputs)."""

    def __init__(self, run, loop: asyncio.AbstractEventLoop, nonce: str):
        self.run, self.loop, self.nonce = run, loop, nonce
        self.left, self.wall = 10.0, time.monotonic() + self.WALL_MIN_S
        self.calls = 0

    def budget(self, seconds: float) -> None:
        """Start an exercise: its learner code may run for ``seconds`` in all. Whatever the
        kernel reports, the exercise ends after ``WALL_FACTOR`` times that on the clock (at
        least ``WALL_MIN_S``)."""
        self.left = float(seconds)
        self.wall = time.monotonic() + max(self.WALL_MIN_S, self.WALL_FACTOR * float(seconds))

    WALL_FACTOR, WALL_MIN_S = 10.0, 120.0

    def remaining(self) -> float:
        """The learner's time left in this exercise (seconds)."""
        return min(self.left, self.wall - time.monotonic())

    def charge(self, seconds: float) -> None:
        """Count ``seconds`` of the learner's code (as the kernel timed it) against the budget."""
        self.left -= max(0.0, float(seconds))

    def request(self, request: dict, timeout: float) -> dict:
        source = request_cell(self.nonce, request)
        future = asyncio.run_coroutine_threadsafe(self.run.execute_request(source, timeout + 5), self.loop)
        try:
            outputs = future.result(timeout + 30)
        except Exception as exc:  # DeadKernelError, a timeout of the cell, the loop closing
            raise KernelGone(f"{type(exc).__name__}: {exc}") from None
        self.calls += 1
        for out in outputs:
            if out.get("output_type") != "stream":
                continue
            for line in str(out.get("text", "")).splitlines():
                if line.startswith(self.nonce + " "):
                    try:
                        reply = json.loads(line[len(self.nonce) + 1:])
                    except ValueError:
                        continue
                    if isinstance(reply, dict):
                        return reply
        raise KernelGone("the kernel sent no reply (it was interrupted or stopped)")


_BUILTIN_ERRORS = {name: obj for name, obj in vars(builtins).items()
                   if isinstance(obj, type) and issubclass(obj, Exception)}


def _exception(name: str, message: str) -> Exception:
    """An exception of the learner's exception's name (a builtin one when it is one)."""
    cls = _BUILTIN_ERRORS.get(name)
    if cls is None:
        cls = type(str(name) or "Exception", (Exception,), {"__module__": "learner"})
    try:
        return cls(message)
    except Exception:  # a builtin whose constructor wants other arguments (UnicodeError...)
        return type(str(name), (Exception,), {"__module__": "learner"})(message)


def _write_back(before: list, after: Any) -> None:
    """Make the grader's arguments what the learner's function left them (changes in place)."""
    if not isinstance(after, list) or len(after) != len(before):
        return
    for orig, new in zip(before, after, strict=False):
        try:
            if isinstance(orig, np.ndarray) and isinstance(new, np.ndarray) and orig.shape == new.shape \
                    and orig.flags.writeable:
                orig[...] = new
            elif isinstance(orig, np.random.Generator) and isinstance(new, np.random.Generator):
                orig.bit_generator.state = new.bit_generator.state
            elif isinstance(orig, list) and isinstance(new, list):
                orig[:] = new
        except (ValueError, TypeError):  # a cast that cannot be made: leave the grader's copy
            pass


class RemoteFunction:
    """The learner's function ``name``, called in the learner's kernel.

    ``watch_plain(allow)``: the calls that follow run with the package refused (plain-numpy
    exercises); ``used`` then names the first ``attention_kit`` function the answer reached, and
    ``tampered`` says the answer switched the watch off.
    """

    def __init__(self, link: Link, name: str):
        self.link, self.name = link, name
        self.__name__ = self.__qualname__ = name
        self.allow: tuple[str, ...] | None = None
        self.used: str | None = None
        self.tampered = False

    def watch_plain(self, allow: tuple[str, ...]) -> None:
        self.allow = tuple(allow)

    def __repr__(self) -> str:
        return f"<your function {self.name}>"

    def __call__(self, *args, **kwargs):
        return self._call(None, args, kwargs)

    def repeat(self, n: int, *args) -> list:
        """``n`` calls on ``args`` in one request (arrays fresh for each call, a random generator
        shared, as ``check.try_repeat`` does in class): the list of results."""
        out = self._call(int(n), args, {})
        if not isinstance(out, list):
            raise _exception("TypeError", "the grader got no list of results back")
        return out

    def _call(self, repeat, args, kwargs):
        remaining = self.link.remaining()
        if remaining <= 0:
            raise OutOfTime()
        request = {"op": "call", "name": self.name, "args": wire.encode(list(args)),
                   "kwargs": wire.encode(dict(kwargs)), "timeout": remaining, "repeat": repeat,
                   "allow": None if self.allow is None else list(self.allow)}
        started = time.monotonic()
        reply = self.link.request(request, remaining)
        try:  # the kernel's timing of the learner's code; the whole round trip if it sent none
            self.link.charge(float(reply["elapsed"]))
        except (KeyError, TypeError, ValueError):
            self.link.charge(time.monotonic() - started)
        if "error" in reply:
            raise KernelGone(str(reply["error"]))
        if reply.get("used") and self.used is None:
            self.used = str(reply["used"])[:120]
        if reply.get("tampered"):
            self.tampered = True
        try:
            _write_back(list(args), wire.decode(reply.get("args_after")))
        except wire.WireError:
            pass
        if reply.get("timeout"):
            raise OutOfTime()
        if self.used is not None:
            raise _exception("PermissionError", f"{self.used} is not allowed in this exercise")
        if "raised" in reply:
            name, message = (list(reply["raised"]) + ["", ""])[:2]
            raise _exception(str(name), str(message))
        try:
            return wire.decode(reply.get("result"))
        except wire.WireError as exc:
            return wire.Opaque("unreadable", str(exc))


def _answers(link: Link, ex, timeout: float) -> tuple[list | None, list[str]]:
    """The exercise's answers (values as data, functions as stand-ins), or the missing names."""
    reply = link.request({"op": "describe", "names": list(ex.answers)}, timeout)
    described = reply.get("answers")
    if not isinstance(described, dict):
        raise KernelGone(str(reply.get("error", "no description of the answers")))
    missing = [n for n in ex.answers if described.get(n, {}).get("kind") not in ("function", "value")]
    if missing:
        return None, missing
    answers = []
    for name in ex.answers:
        item = described[name]
        if item["kind"] == "function":
            answers.append(RemoteFunction(link, name))
        else:
            try:
                answers.append(wire.decode(item.get("value")))
            except wire.WireError as exc:
                answers.append(wire.Opaque("unreadable", str(exc)))
    return answers, []


def check_exercise(link: Link, ex_id: str, ex, exercise_s: float, rng=None) -> dict:
    """The verdict on one exercise: ``{"status", "message"}``. ``rng``: the generator of this
    learner's hidden cases (``hidden.py``), tried when the checker's own cases pass."""
    link.budget(exercise_s)
    try:
        answers, missing = _answers(link, ex, exercise_s)
        if missing:
            return {"status": MISSING, "message": ", ".join(missing)}
        with recording() as results, graded_hints(), quietly():
            ex.checker(*answers, **ex.kwargs)
        if results and results[-1].status == PASSED and rng is not None:
            wrong = check_hidden(ex_id, answers, rng)
            if wrong is not None:
                return {"status": FAILED, "message": wrong}
    except OutOfTime:
        return {"status": COULD_NOT_RUN,
                "message": _("your answer did not finish within {seconds:g} s when the grader called it").format(
                    seconds=exercise_s)}
    except KernelGone as exc:
        return {"status": COULD_NOT_RUN, "kernel_gone": True,
                "message": _("the kernel stopped while the grader called your answer ({error})").format(error=exc)[:300]}
    except BaseException as exc:  # a checker bug: never stop the grading
        return {"status": COULD_NOT_RUN,
                "message": _("checking your answer raised {error}").format(error=f"{type(exc).__name__}: {exc}")[:500]}
    if not results:
        return {"status": COULD_NOT_RUN, "message": _("the checker gave no verdict")}
    return {"status": results[-1].status, "message": results[-1].message}


def check_notebook(link: Link, nb_entry, exercise_s: float, learner: str = "",
                   seed: str | None = "0") -> dict[str, dict]:
    """``{exercise id: verdict}`` for every exercise of the notebook, computed here; with the
    hidden cases of ``seed`` (the teacher's) for ``learner`` unless ``seed`` is None."""
    verdicts: dict[str, dict] = {}
    for ex_id, ex in nb_entry.numbered():
        rng = None if seed is None else case_rng(seed, learner, ex_id)
        verdicts[ex_id] = check_exercise(link, ex_id, ex, exercise_s, rng)
        if verdicts[ex_id]["status"] == COULD_NOT_RUN and verdicts[ex_id].get("kernel_gone"):
            for later_id, _ex in nb_entry.numbered():
                verdicts.setdefault(later_id, dict(verdicts[ex_id]))
            break
    return verdicts
