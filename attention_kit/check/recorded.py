"""What a checker compares with, kept as data in the student edition.

A checker needs the right answers to its public cases and the outputs of the usual mistakes on
them (to name the mistake in its hint). Here, in the teacher's edition, they are computed by
functions marked :func:`recorded`: functions without arguments that return the cases and those
outputs (a dict, a tuple, arrays: anything ``pickle`` keeps). Code that computes a right answer
lives only inside them, or in helpers marked :func:`reference` that only they call.

The student-edition builder (``make student``) calls every recorded function once, stores the
results in ``check/recorded.pkl``, replaces each recorded function's body with a lookup, and
drops the ``reference`` helpers: what a learner can read (``check.dot_scores??``) or call holds
the public cases and their answers as data, and no formula that answers a new input
(a test calls every function of the student edition's ``check`` on the
grader's hidden inputs and finds none that answers them).

Example::

    @reference
    def _context(a, V):          # computes a right answer: dropped from the student edition
        return a @ V

    @recorded
    def _context_table():        # in the student edition: the same dict, read from recorded.pkl
        cases = [(a, V), ...]
        return {"cases": cases, "want": [_context(a, V) for a, V in cases]}
"""

from __future__ import annotations

import copy
import functools
import pickle
from pathlib import Path
from typing import Any, Callable

__all__ = ["recorded", "reference", "STORE", "load_store", "recorded_functions"]

#: The student edition's data file (absent in the teacher's edition).
STORE = Path(__file__).with_name("recorded.pkl")

_cache: dict[str, Any] = {}
_store: dict[str, Any] | None = None
_REGISTERED: dict[str, Callable[[], Any]] = {}


def load_store() -> dict[str, Any]:
    """The student edition's recorded data (``{}`` in the teacher's edition)."""
    global _store
    if _store is None:
        try:
            with STORE.open("rb") as f:
                _store = pickle.load(f)
        except FileNotFoundError:
            _store = {}
    return _store


def _key(fn: Callable) -> str:
    return f"{(fn.__module__ or '?').rsplit('.', 1)[-1]}.{fn.__qualname__}"


def recorded(fn: Callable[[], Any]) -> Callable[[], Any]:
    """Mark ``fn`` (no arguments) as a checker's data: its cases, right answers and mistakes'
    outputs. Computed once here; read from ``recorded.pkl`` in the student edition. Each call
    returns a fresh copy, so a checker (or a learner's function) may change what it gets."""
    key = _key(fn)

    @functools.wraps(fn)
    def wrapper():
        store = load_store()
        if key in store:
            return copy.deepcopy(store[key])
        if key not in _cache:
            if store:  # a student edition without this entry: built from other sources
                raise RuntimeError(f"attention_kit.check: no recorded data for {key}; rebuild the "
                                   "student edition (make student)")
            _cache[key] = fn()
        return copy.deepcopy(_cache[key])

    wrapper.recorded_key = key
    _REGISTERED[key] = fn
    return wrapper


def reference(fn: Callable) -> Callable:
    """Mark a helper that computes a right answer (called only by :func:`recorded` functions):
    the student edition leaves it out."""
    fn.reference = True
    return fn


def recorded_functions() -> dict[str, Callable[[], Any]]:
    """``{key: function}`` for every recorded function of the modules imported so far (the
    student-edition builder imports every ``check`` module first)."""
    return dict(_REGISTERED)


def save_store(path: Path, data: dict[str, Any]) -> None:
    """Write the student edition's data file."""
    with Path(path).open("wb") as f:
        pickle.dump(data, f, protocol=4)
