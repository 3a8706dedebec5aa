"""Hidden cases: inputs the grader tries that no notebook or in-class checker shows.

An answer that hard-codes the in-class checker's cases passes in class and fails here. After an
exercise's checker has passed, :func:`check_hidden` calls the learner's function(s) on inputs
drawn from a generator seeded by the teacher's seed, the learner and the exercise (so two learners
get different inputs, and a regrade gets the same), and compares with the reference. The
references live here, in the grader, which the student edition does not ship.

A :class:`Hidden` spec per exercise id in :data:`HIDDEN`: ``cases(rng)`` returns argument tuples
for the answer function ``answers[answer]``; ``reference(*args)`` the expected result;
``compare(got, expected)`` True when right (default: same shape and close). The cases, references
and comparisons are in ``hidden_refs.py`` (notebooks 01-04) and ``hidden_refs_learn.py`` (05-08).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..check import close
from ..i18n import _
from . import hidden_refs as r
from . import hidden_refs_learn as r2
from . import hidden_refs_long as r3

__all__ = ["Hidden", "HIDDEN", "check_hidden", "case_rng"]


@dataclass(frozen=True)
class Hidden:
    cases: Callable[[np.random.Generator], list[tuple]]
    reference: Callable[..., Any]
    compare: Callable[[Any, Any], bool] = close
    answer: int = 0


def _spec(cases, reference, compare=close, answer: int = 0) -> Hidden:
    return Hidden(cases, reference, compare, answer)


# Function exercises of notebooks 01-09. Not here: the value and prediction exercises (nothing to
# call), 06.3 (sampling: a right answer may draw from the generator in its own way, so no draw
# can be predicted). Notebook 09's two function exercises are in hidden_refs_long.py.
HIDDEN: dict[str, tuple[Hidden, ...]] = {
    "01.2": (_spec(r.dot_cases, r.dot_ref, r.array_close),),
    "01.4": (_spec(r.context_cases, r.context_ref, r.array_close),),
    "01.5": (_spec(r.output_cases, r.output_ref, r.array_close),),
    "02.1": (_spec(r.softmax_rows_cases, r.softmax_rows_ref, r.array_close),),
    "02.2": (_spec(r.scores_cases, r.scores_ref, r.array_close),),
    "02.5": (_spec(r.attention_cases, r.attention_ref, r.array_close),),
    "02.6": (_spec(r.fixed_cases, r.attention_ref, r.array_close),),
    "03.1": (_spec(r.split_cases, r.split_ref, r.array_close),
             _spec(r.merge_cases, r.merge_ref, r.array_close, answer=1)),
    "03.2": (_spec(r.head_cases, r.head_ref, r.array_close),),
    "03.3": (_spec(r.combine_cases, r.combine_ref, r.array_close),),
    "04.1": (_spec(r.mask_cases, r.mask_ref, r.bool_array_equal),),
    "04.2": (_spec(r.masked_cases, r.masked_ref, r.masked_ok),),
    "04.3": (_spec(r.positions_cases, r.positions_ref, r.array_close),),
    "05.1": (_spec(r2.general_cases, r2.general_ref, r.pair_close),),
    "05.2": (_spec(r2.bias_cases, r2.bias_ref, r.pair_close),),
    "05.3": (_spec(r2.gradient_cases, r2.gradient_ref, r2.gradient_ok),),
    "06.1": (_spec(r2.layer_norm_cases, r2.layer_norm_ref, r2.same_shape_close),),
    "07.1": (_spec(r2.online_cases, r2.online_ref, r2.online_ok),),
    "07.2": (_spec(r2.tiles_cases, r2.tiles_ref, r.exact_count),),
    "07.3": (_spec(r2.kv_cases, r2.kv_ref, r.exact_count),),
    "08.1": (_spec(r2.prefix_cases, r2.prefix_ref, r2.float_close),),
    "08.3": (_spec(r2.sink_cases, r2.sink_ref, r.bool_array_equal),),
    "09.1": (_spec(r3.rope_matrix_cases, r3.rope_matrix_ref, r3.close_1e9),),
    "09.3": (_spec(r3.alibi_weights_cases, r3.alibi_weights_ref, r3.close_1e9),),
}


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
