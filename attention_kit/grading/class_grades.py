"""A class's grades: who passed what, by learner and notebook, over the exercises set
(:class:`ClassGrades`), with points, late penalties and the one-line LMS comment. The files
made from them: ``reports.py`` (grade sheet, feedback, summary) and ``lms.py`` (Canvas, Moodle)."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from typing import Iterable, Mapping

from ..check import registry
from ..i18n import _
from . import (
    COULD_NOT_RUN,
    NOT_SUBMITTED,
    PASSED,
    SOLUTION,
    ExerciseGrade,
    NotebookGrade,
)
from .submissions import Learner

__all__ = ["ClassGrades", "default_assignment", "DEFAULT_ASSIGNMENT", "lms_comment", "number_text",
           "whole_points", "percent_text", "grading_time"]

DEFAULT_ASSIGNMENT = "Attention course"


class ClassGrades:
    """Every learner's grades, by learner and notebook number, over the notebooks that were set.

    ``notebooks``: the numbers of the notebooks set (default: every notebook of the course); the
    rows, totals and reports cover those only. ``exercises``: ``{exercise id: weight}``, the
    exercises set and the points each is worth (default: every exercise of the notebooks set,
    one point each); the notebooks set are then those of these exercises. A notebook a learner
    did not return counts as ``not submitted`` for each of its exercises. ``info``: the
    learners' LMS ids (from the submissions' names); ``assignment``: the name of the
    assignment in the LMS exports; ``graded_at``: when (the Moodle worksheet's "Last modified
    (grade)").
    """

    def __init__(self, learners: Iterable[str], grades: Iterable[NotebookGrade], *,
                 notebooks: Iterable[str] | None = None, info: dict[str, Learner] | None = None,
                 assignment: str | None = None, late_penalty: float = 0.0,
                 not_graded: Iterable[tuple[str, str]] = (),
                 exercises: Mapping[str, float] | None = None, graded_at: datetime | None = None):
        self.learners = sorted(set(learners))
        wanted = set(notebooks) if notebooks is not None else None
        known = {ex_id: nb.number for nb in registry.NOTEBOOKS for ex_id, _ in nb.numbered()}
        if exercises is not None:
            unknown = [e for e in exercises if e not in known]
            if unknown:
                raise ValueError(_("exercise(s) {exercises} are not part of this course").format(
                    exercises=", ".join(unknown)))
            if any(float(w) < 0 for w in exercises.values()):
                raise ValueError(_("an exercise's weight cannot be negative"))
            wanted = {known[e] for e in exercises}
        self.notebooks = [nb for nb in registry.NOTEBOOKS if wanted is None or nb.number in wanted]
        #: exercise id -> points it is worth, for every exercise set, in the course's order
        self.weights = {ex_id: (1.0 if exercises is None else float(exercises[ex_id]))
                        for nb in self.notebooks for ex_id, _ in nb.numbered()
                        if exercises is None or ex_id in exercises}
        self.graded_at = graded_at or grading_time()
        self.info = {name: (info or {}).get(name) or Learner(name) for name in self.learners}
        self.assignment = assignment or default_assignment([nb.number for nb in self.notebooks])
        self.late_penalty = float(late_penalty)  # percent of a late notebook's points taken off
        self.not_graded = list(not_graded)  # (file, why): every file that is not in a row
        self.flags: dict[str, list[str]] = {}  # learner -> notes for the teacher (similar answers)
        self.by_key: dict[tuple[str, str], NotebookGrade] = {}
        self.extra_notes: dict[str, list[str]] = {}  # notes on notebooks outside the course
        #: learner -> when their grade was made, if not ``graded_at`` (a regrade keeps the others')
        self.modified: dict[str, datetime] = {}
        #: LMS -> the scale its file is on ({"Canvas": 10, "Moodle": 100}), for the feedback
        self.scales: dict[str, float] = {}
        for g in grades:
            if g.exercises or g.number in {n.number for n in registry.NOTEBOOKS}:
                self.by_key[(g.learner, g.number)] = g
            else:
                self.extra_notes.setdefault(g.learner, []).extend(g.notes)

    def exercises(self) -> list[tuple[str, registry.Exercise]]:
        """``(id, exercise)`` of every exercise set, in the course's order."""
        return [(ex_id, ex) for nb in self.notebooks for ex_id, ex in nb.numbered()
                if ex_id in self.weights]

    @property
    def max_points(self) -> float:
        """The points of all the exercises set (an int when whole)."""
        return whole_points(sum(self.weights.values()))

    def notebook_max(self, nb: registry.Notebook) -> float:
        """The points of the exercises set in notebook ``nb``."""
        return whole_points(sum(w for ex_id, w in self.weights.items() if ex_id.startswith(nb.number + ".")))

    @property
    def whole_course(self) -> bool:
        """Every exercise of the notebooks set, one point each (no subset, no weights)."""
        return all(ex_id in self.weights for nb in self.notebooks for ex_id, _ in nb.numbered()) \
            and all(w == 1 for w in self.weights.values())

    def exercises_text(self, nb: registry.Notebook | None = None) -> str:
        """The exercises set, in short: ``02.1-02.5, 02.6 ×0.5, 04.1-04.4``."""
        parts = []
        for book in ([nb] if nb is not None else self.notebooks):
            run: list[str] = []
            for ex_id, _ex in book.numbered() + [("", None)]:
                w = self.weights.get(ex_id)
                if run and (w is None or w != self.weights[run[0]]):
                    text = run[0] if len(run) == 1 else f"{run[0]}-{run[-1]}"
                    weight = self.weights[run[0]]
                    parts.append(text + ("" if weight == 1 else f" ×{number_text(weight)}"))
                    run = []
                if w is not None:
                    run.append(ex_id)
        return ", ".join(parts)

    def notebook(self, learner: str, nb: registry.Notebook) -> list[ExerciseGrade]:
        """The verdicts on the exercises set in notebook ``nb``."""
        grade = self.by_key.get((learner, nb.number))
        if grade is None:
            return [ExerciseGrade(ex_id, ex.title, NOT_SUBMITTED,
                                  _("no notebook {number} returned").format(number=nb.number))
                    for ex_id, ex in nb.numbered() if ex_id in self.weights]
        return [g for g in grade.exercises if g.id in self.weights]

    def row(self, learner: str) -> list[ExerciseGrade]:
        """Every exercise set for ``learner``, in the course's order."""
        return [g for nb in self.notebooks for g in self.notebook(learner, nb)]

    def points(self, learner: str, nb: registry.Notebook | None = None) -> float:
        """The points of the exercises passed, in notebook ``nb`` or in all the notebooks set."""
        row = self.notebook(learner, nb) if nb is not None else self.row(learner)
        return whole_points(sum(self.weights.get(g.id, 0.0) for g in row if g.status == PASSED))

    def late_warning(self) -> str:
        """A warning when a late penalty is set but no learner whose files cannot say they were
        late (a Moodle download, a plain folder) is marked late (``--late`` names them)."""
        if not self.late_penalty:
            return ""
        blind = [ln for ln in self.learners if not carries_late(self.info.get(ln))
                 and any((ln, nb.number) in self.by_key for nb in self.notebooks)]
        if not blind or any(self.late(ln) for ln in blind):
            return ""
        shown = ", ".join(blind[:5]) + (_(" and {n} more").format(n=len(blind) - 5) if len(blind) > 5 else "")
        return _("a late penalty of {penalty} % is set, but {n} learner(s) come from a Moodle download "
                 "or a plain folder, whose file names carry no late mark ({learners}): none of them is "
                 "marked late or penalised. Name the late ones by id or name: --late 4712,alice (make "
                 "grade ... LATE=4712,alice), e.g. from the Status column of Moodle's grading table "
                 "(docs/teaching.md, Late work in Moodle)").format(
            penalty=number_text(self.late_penalty), n=len(blind), learners=shown)

    def late(self, learner: str) -> list[str]:
        """The numbers of the notebooks set that ``learner`` returned late."""
        return [nb.number for nb in self.notebooks
                if (g := self.by_key.get((learner, nb.number))) is not None and g.late]

    def penalty(self, learner: str) -> float:
        """Points taken off for late notebooks: ``late_penalty`` percent of each one's points."""
        return round(sum(self.points(learner, nb) * self.late_penalty / 100 for nb in self.notebooks
                         if nb.number in self.late(learner)), 2)

    def final(self, learner: str) -> float:
        """The points after the late penalty (what the LMS files carry)."""
        return round(self.points(learner) - self.penalty(learner), 2)

    def modified_at(self, learner: str) -> datetime:
        """When ``learner``'s grade was made (Moodle's "Last modified (grade)")."""
        return self.modified.get(learner, self.graded_at)

    def name(self, learner: str) -> str:
        """The learner's name as the LMS wrote it, with the id when there is one."""
        info = self.info[learner]
        return info.name if info.key == info.name else f"{info.name} ({info.lms_id})"

    def notes(self, learner: str) -> list[str]:
        out = list(self.flags.get(learner, []))
        for nb in self.notebooks:
            grade = self.by_key.get((learner, nb.number))
            if grade is not None:
                out.extend(f"{nb.number}: {' '.join(note.split())}" for note in grade.notes)
                out.extend(_("{number}: for the teacher: {note}").format(number=nb.number, note=note)
                           for note in grade.teacher_notes)
                out.extend(self._why_not_run(grade))
        return out + self.extra_notes.get(learner, [])


    def _why_not_run(self, grade: NotebookGrade) -> list[str]:
        """Why the exercises set that could not run did not, when no note says it already (the
        feedback file says it to the learner)."""
        said = " ".join(" ".join(n.split()) for n in grade.notes)
        why: dict[str, list[str]] = {}
        for g in grade.exercises:
            text = " ".join(g.message.split())
            if g.status == COULD_NOT_RUN and g.id in self.weights and text and text not in said:
                why.setdefault(text, []).append(g.id)
        every = [e for e in self.weights if e.startswith(grade.number + ".")]
        return [_("{exercises}: could not run: {why}").format(
                    exercises=grade.number if ids == every else ", ".join(ids), why=text)
                for text, ids in why.items()]


def carries_late(learner) -> bool:
    """The learner's files come from a download that marks late work (Canvas's ``LATE_``)."""
    return bool(learner is not None and (learner.canvas_id or learner.anonymous_id))


def grading_time() -> datetime:
    """Now, in UTC, to the second: when a class is graded (Moodle's "Last modified (grade)"). With
    ``SOURCE_DATE_EPOCH`` set (seconds since 1970, the reproducible-builds convention) that time
    instead, so that two runs over the same notebooks write the same bytes."""
    fixed = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if fixed:
        try:
            return datetime.fromtimestamp(int(fixed), timezone.utc)
        except (ValueError, OverflowError, OSError):
            raise ValueError(f"SOURCE_DATE_EPOCH={fixed!r}: not a number of seconds since 1970") from None
    return datetime.now(timezone.utc).replace(microsecond=0)


def default_assignment(numbers: list[str]) -> str:
    """``Attention course`` for the whole course, else ``Attention course, notebooks 02, 04``."""
    if not numbers or len(numbers) == len(registry.NOTEBOOKS):
        return DEFAULT_ASSIGNMENT
    word = "notebook" if len(numbers) == 1 else "notebooks"
    return f"{DEFAULT_ASSIGNMENT}, {word} {', '.join(numbers)}"


def whole_points(x: float) -> float:
    """``x`` rounded to 2 decimals; an int when whole (so ``6``, not ``6.0``, in the files)."""
    x = round(float(x), 2)
    return int(x) if x.is_integer() else x


def percent_text(points: float, total: float) -> str:
    return f"{100 * points / total:.1f}" if total else ""


def number_text(x: float) -> str:
    """``3`` for a whole number, ``2.7`` otherwise."""
    return f"{x:g}"


def lms_comment(grades: ClassGrades, learner: str) -> str:
    """A one-line feedback comment for an LMS: the score per notebook, and what to read."""
    parts = [f"{nb.number}: {number_text(grades.points(learner, nb))}/{number_text(grades.notebook_max(nb))}"
             if (learner, nb.number) in grades.by_key else _("{number}: not returned").format(number=nb.number)
             for nb in grades.notebooks]
    row = grades.row(learner)
    copied = sum(g.status == SOLUTION for g in row)
    if grades.whole_course:
        text = _("Passed {points} of {max_points} exercises ({parts}).").format(
            points=grades.points(learner), max_points=grades.max_points, parts="; ".join(parts))
    else:
        text = _("Passed {passed} of {n} exercises, {points} of {max_points} points "
                 "({parts}). Exercises set: {exercises}.").format(
            passed=sum(g.status == PASSED for g in row), n=len(row), points=number_text(grades.points(learner)),
            max_points=number_text(grades.max_points), parts="; ".join(parts), exercises=grades.exercises_text())
    if copied:
        text += _(" {copied} exercise(s) contain the course's worked solution and score nothing.").format(copied=copied)
    if grades.late(learner):
        text += _(" Returned late: {notebooks}").format(notebooks=", ".join(grades.late(learner)))
        text += (_(" ({off} points off).").format(off=number_text(grades.penalty(learner)))
                 if grades.penalty(learner) else _("."))
    return text + _(" Your feedback file explains each exercise.")


