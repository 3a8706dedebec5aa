"""Hidden cases: inputs the grader tries that no notebook or in-class checker shows.

An answer that hard-codes the in-class checker's cases passes in class and fails here. After an
exercise's checker has passed, :func:`check_hidden` calls the learner's function(s) on inputs
drawn from a generator seeded by the teacher's seed, the learner and the exercise (so two learners
get different inputs, and a regrade gets the same), and compares with the reference. The
references live here, in the grader, which the student edition does not ship.

A :class:`Hidden` spec per exercise id in :data:`HIDDEN`: ``cases(rng)`` returns argument tuples
for the answer function ``answers[answer]``; ``reference(*args)`` the expected result;
``compare(got, expected)`` True when right (default: same shape and close).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..check import close
from ..mechanism.alignment import softmax

__all__ = ["Hidden", "HIDDEN", "check_hidden", "case_rng"]


@dataclass(frozen=True)
class Hidden:
    cases: Callable[[np.random.Generator], list[tuple]]
    reference: Callable[..., Any]
    compare: Callable[[Any, Any], bool] = close
    answer: int = 0


def _same(got, expected) -> bool:
    return close(got, expected)


def _softmax_rows_cases(rng):
    out = []
    for _ in range(3):
        n_q, n_k = rng.integers(2, 7, size=2)
        out.append((np.round(rng.normal(scale=3.0, size=(n_q, n_k)), 3),))
    return out


HIDDEN: dict[str, tuple[Hidden, ...]] = {
    "02.1": (Hidden(_softmax_rows_cases, lambda S: softmax(S, axis=-1)),),
}


def case_rng(seed: int | str, learner: str, ex_id: str) -> np.random.Generator:
    """The generator of one learner's hidden cases of one exercise (stable across runs)."""
    digest = hashlib.sha256(f"{seed}\0{learner}\0{ex_id}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def _shape(args: tuple) -> str:
    shapes = [str(np.shape(a)) if isinstance(a, np.ndarray) else repr(a) for a in args]
    return ", ".join(shapes)


def check_hidden(ex_id: str, answers: list, rng: np.random.Generator) -> str | None:
    """None when the answers are right on the exercise's hidden cases (or it has none), else a
    message for the learner that names the inputs' shapes, never the expected values."""
    for spec in HIDDEN.get(ex_id, ()):
        fn = answers[spec.answer]
        for args in spec.cases(rng):
            expected = spec.reference(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
            try:
                got = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
            except Exception as exc:  # the learner's function: a verdict, never a crash
                return (f"right on the notebook's cases, but on other inputs the grader tried "
                        f"({_shape(args)}) your function raised {type(exc).__name__}: {exc}"[:400])
            if not spec.compare(got, expected):
                return ("right on the notebook's cases, but wrong on other inputs the grader tried "
                        f"({_shape(args)}): does your answer depend on the examples' sizes or values?")
    return None
