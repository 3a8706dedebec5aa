"""Grade a class's returned notebooks with the course's own checkers.

``python -m attention_kit.grading SUBMISSIONS`` (or ``make grade SUBMISSIONS=...``) runs every
returned notebook top to bottom in a fresh kernel of the course's environment, in a temporary
working copy, with time and memory limits; then, in the same kernel, calls the checker of each
exercise (``attention_kit.check.registry``) on the learner's answer as it stands, and writes
``grades.csv``, one feedback file per learner and a summary.

Modules: ``submissions`` (the folder layouts: the course's two, Canvas and Moodle downloads,
zips), ``kernel`` (a kernel with resource limits), ``in_kernel`` (the grading code that runs
inside the learner's kernel), ``solutions`` (a returned worked solution), ``execute`` (one
notebook, start to verdicts), ``reports`` (CSV, feedback, summary, the Canvas and Moodle
imports), ``output`` (everything a grades folder holds, written in one place), ``shards`` (a
class graded in shards, ``--shard i/N``, and their merge) and ``__main__`` (the command).
This package is imported only by the grader; ``import attention_kit`` does not load it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..check import FAILED, NOT_ATTEMPTED, PASSED

__all__ = ["PASSED", "FAILED", "NOT_ATTEMPTED", "COULD_NOT_RUN", "MISSING", "NOT_SUBMITTED",
           "SOLUTION", "STATUSES", "ExerciseGrade", "NotebookGrade"]

COULD_NOT_RUN = "could not run"
MISSING = "missing"
NOT_SUBMITTED = "not submitted"
#: The notebook still holds the course's worked solution of this exercise: it scores nothing.
SOLUTION = "contains the worked solution"
#: Every verdict an exercise can get, in the order the summary lists them.
STATUSES = (PASSED, FAILED, NOT_ATTEMPTED, SOLUTION, COULD_NOT_RUN, MISSING, NOT_SUBMITTED)


@dataclass
class ExerciseGrade:
    """The verdict on one exercise: ``status`` (one of ``STATUSES``) and ``message`` (the
    checker's hint, the error of the cell, or why the exercise could not be graded)."""

    id: str
    title: str
    status: str
    message: str = ""


@dataclass
class NotebookGrade:
    """One learner's notebook: where it came from, a verdict per exercise, and notes (errors in
    the notebook, missing exercises, limits reached) for the teacher and the learner."""

    learner: str
    number: str
    source: str | None
    exercises: list[ExerciseGrade]
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    late: bool = False  # the LMS marked the submission late
    requests: int = 0  # the grader's requests to the kernel (answers asked for, calls made)
    check_seconds: float = 0.0  # time the checking took, the kernel's share included
    teacher_notes: list[str] = field(default_factory=list)  # for grades.csv and the summary, not the feedback
