"""What a checker compares with, kept as data in the student edition.

A checker needs the right answers to its public cases and the outputs of the usual mistakes on
them (to name the mistake in its hint). In the course repository, they are computed by
functions marked :func:`recorded`: functions without arguments that return the cases and those
outputs (a dict, a tuple, arrays: anything ``pickle`` keeps). Code that computes a right answer
lives only inside them, or in helpers marked :func:`reference` that only they call.

The student-edition builder (``make student``) calls every recorded function once, stores the
results in ``check/recorded.pkl``, replaces each recorded function's body with a lookup, and
drops the ``reference`` helpers: what a learner can read (``check.dot_scores??``) or call holds
the public cases and their answers as data, and no formula that answers a new input
(a test of the course repository calls every function of the student edition's ``check`` on
the grader's hidden inputs and finds none that answers them).

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
import hashlib
import pickle
import zlib
from pathlib import Path
from typing import Any, Callable

__all__ = ["recorded", "reference", "STORE", "load_store", "recorded_functions", "Sealed", "WITHHELD"]

#: The student edition's data file (absent in the teacher's edition).
STORE = Path(__file__).with_name("recorded.pkl")

_cache: dict[str, Any] = {}
_store: dict[str, Any] | None = None
_REGISTERED: dict[str, Callable[[], Any]] = {}

#: The store's entry listing the ``answers=True`` tables a ``PREDICTIONS=record`` edition leaves out.
WITHHELD = "__withheld__"


class Sealed:
    """A table that holds an exercise's answer (a prediction's, with hints that may state it, or
    a fixed value's), as a table function returns it: printing it or calling the function shows
    no answer; the checker calls :meth:`open`. This only keeps the answer out of plain sight in
    an edition whose checkers judge in class (code that can judge can be read); an edition that
    records predictions ships no prediction's table at all."""

    __slots__ = ("_key", "_blob")

    def __init__(self, key: str, blob: bytes):
        self._key, self._blob = key, blob

    def __repr__(self) -> str:
        return f"<sealed table {self._key}: an exercise's answer, opened only by its checker>"

    __str__ = __repr__

    def open(self) -> Any:
        """The table (a fresh copy)."""
        return _unseal(self._key, self._blob)


def _pad(key: str, n: int) -> bytes:
    out, block = bytearray(), 0
    while len(out) < n:
        out += hashlib.sha256(f"attention_kit.check/{key}/{block}".encode()).digest()
        block += 1
    return bytes(out[:n])


def seal(key: str, value: Any) -> bytes:
    """``value`` as the bytes a :class:`Sealed` holds (compressed and masked: no answer in plain
    form in ``recorded.pkl``, not even as a pickled string)."""
    raw = zlib.compress(pickle.dumps(value, protocol=4))
    return bytes(a ^ b for a, b in zip(raw, _pad(key, len(raw)), strict=True))


def _unseal(key: str, blob: bytes) -> Any:
    return pickle.loads(zlib.decompress(bytes(a ^ b for a, b in zip(blob, _pad(key, len(blob)), strict=True))))


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


def recorded(fn: Callable[[], Any] | None = None, *, answers: bool = False, sealed: bool = False):
    """Mark ``fn`` (no arguments) as a checker's data: its cases, right answers and mistakes'
    outputs. Computed once here; read from ``recorded.pkl`` in the student edition. Each call
    returns a fresh copy, so a checker (or a learner's function) may change what it gets.

    ``@recorded(answers=True)``: a prediction exercise's table. The function returns a
    :class:`Sealed` (its checker calls ``.open()``), in every edition; ``recorded.pkl`` holds it
    masked, and a ``PREDICTIONS=record`` edition leaves it out.

    ``@recorded(sealed=True)``: the table of an exercise with one fixed answer (a value to work
    out, not a function), which is therefore that answer: sealed like a prediction's table, in
    every edition, but kept by ``PREDICTIONS=record`` (its checker judges in class)."""
    if fn is None:
        return functools.partial(recorded, answers=answers, sealed=sealed)
    key = _key(fn)
    sealed = sealed or answers

    @functools.wraps(fn)
    def wrapper():
        store = load_store()
        if key in store:
            value = store[key]
            return Sealed(key, value) if sealed else copy.deepcopy(value)
        if key in store.get(WITHHELD, ()):
            raise RuntimeError(f"attention_kit.check: {key} holds a prediction exercise's answers, which "
                               "this edition does not ship: predictions are judged when the notebook is graded")
        if key not in _cache:
            if store:  # a student edition without this entry: built from other sources
                raise RuntimeError(f"attention_kit.check: no recorded data for {key}; rebuild the "
                                   "student edition (make student)")
            _cache[key] = seal(key, fn()) if sealed else fn()
        return Sealed(key, _cache[key]) if sealed else copy.deepcopy(_cache[key])

    wrapper.recorded_key = key
    wrapper.answers = answers
    wrapper.sealed = sealed
    _REGISTERED[key] = wrapper
    return wrapper


def reference(fn: Callable) -> Callable:
    """Mark a helper that computes a right answer (called only by :func:`recorded` functions):
    the student edition leaves it out."""
    fn.reference = True
    return fn


def recorded_functions() -> dict[str, Callable[[], Any]]:
    """``{key: function}`` for every recorded function of the modules imported so far (the
    student-edition builder imports every ``check`` module first): the marked functions, whose
    ``answers`` attribute says whether they hold a prediction's answers."""
    return dict(_REGISTERED)


def store_entry(key: str) -> Any:
    """What ``recorded.pkl`` holds for ``key``: the data, or for a sealed table (``answers=True``
    or ``sealed=True``) its sealed bytes."""
    fn = _REGISTERED[key]
    if key not in _cache:
        _cache[key] = seal(key, fn.__wrapped__()) if fn.sealed else fn.__wrapped__()
    return _cache[key]


def save_store(path: Path, data: dict[str, Any]) -> None:
    """Write the student edition's data file."""
    with Path(path).open("wb") as f:
        pickle.dump(data, f, protocol=4)
