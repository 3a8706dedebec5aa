"""Hidden cases: inputs the grader tries that no notebook or in-class checker shows.

An answer that hard-codes the in-class checker's cases passes in class and fails here. After an
exercise's checker has passed, :func:`check_hidden` calls the learner's function(s) on inputs
drawn from a generator seeded by the teacher's seed, the learner and the exercise (so two learners
get different inputs, and a regrade gets the same), and compares with the reference.

Each exercise declares its hidden cases with its statement (``attention_kit/check/exercises_*.py``,
``declare.py``): a :class:`Hidden` spec per function answer, in its grader part, which the student
edition leaves out. :data:`HIDDEN` collects them from the registry, in course order. Not there: the
value and prediction exercises (nothing to call) and 06.3 (sampling: a right answer may draw from
the generator in its own way, so no draw can be predicted).
"""

from __future__ import annotations

import hashlib

import numpy as np

from ..check import registry
from ..check.declare import Hidden
from ..i18n import _

__all__ = ["Hidden", "HIDDEN", "check_hidden", "case_rng"]

#: ``{exercise id: (Hidden, ...)}`` for every exercise with hidden cases, in course order.
HIDDEN: dict[str, tuple[Hidden, ...]] = {
    ex_id: registry.grading(ex_id).hidden for ex_id, _nb, _ex in registry.exercises()
    if registry.grading(ex_id).hidden}


def case_rng(seed: int | str, learner: str, ex_id: str) -> np.random.Generator:
    """The generator of one learner's hidden cases of one exercise (stable across runs)."""
    digest = hashlib.sha256(f"{seed}\0{learner}\0{ex_id}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def _shape(args: tuple) -> str:
    shapes = [str(np.shape(a)) if isinstance(a, np.ndarray) else _("a function") if callable(a) else repr(a)
              for a in args]
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
                return _("right on the notebook's cases, but on other inputs the grader tried ({inputs}) your "
                         "function raised {error}").format(inputs=_shape(args),
                                                           error=f"{type(exc).__name__}: {exc}")[:400]
            if not spec.compare(got, expected):
                return _("right on the notebook's cases, but wrong on other inputs the grader tried "
                         "({inputs}): does your answer depend on the examples' sizes or values?").format(
                    inputs=_shape(args))
    return None
