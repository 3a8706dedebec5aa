"""The feedback file a learner gets back: every exercise with its verdict and the checker's
hint (``feedback/<learner>.md``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

from ..i18n import N_, _
from . import (
    COULD_NOT_RUN,
    FAILED,
    MISSING,
    NOT_ATTEMPTED,
    NOT_SUBMITTED,
    PASSED,
    SOLUTION,
)
from .class_grades import ClassGrades, number_text

__all__ = ["feedback_file_name", "feedback_markdown", "write_feedback", "grade_line"]

_MARK = {PASSED: "✓", FAILED: "✗", NOT_ATTEMPTED: "·", SOLUTION: "⊘", COULD_NOT_RUN: "⚠",
         MISSING: "?", NOT_SUBMITTED: "·"}
_VERDICT = {PASSED: N_("passed"), FAILED: N_("not yet"), NOT_ATTEMPTED: N_("not attempted"),
            SOLUTION: N_("contains the worked solution"), COULD_NOT_RUN: N_("could not run"),
            MISSING: N_("missing"), NOT_SUBMITTED: N_("not submitted")}



def feedback_file_name(learner: str) -> str:
    """A safe file name for ``learner``'s feedback (letters, digits, ``-``, ``_`` and ``.``)."""
    return (re.sub(r"[^\w.-]+", "_", learner).strip("._") or "learner") + ".md"


def feedback_markdown(grades: ClassGrades, learner: str, numbers: Iterable[str] | None = None) -> str:
    """The feedback file of one learner, in Markdown (``numbers``: only these notebooks'
    sections, after the totals of all)."""
    row = grades.row(learner)
    n_pass = sum(g.status == PASSED for g in row)
    weighted = "" if grades.whole_course else _(
        " ({points} of {max_points} points; the exercises set: {exercises})").format(
        points=number_text(grades.points(learner)), max_points=number_text(grades.max_points),
        exercises=grades.exercises_text())
    lines = ["# " + _("{assignment}: feedback for {name}").format(assignment=grades.assignment,
                                                                 name=grades.name(learner)), "",
             _("You passed **{n_pass} of {n}** exercises{weighted}. Each exercise below was checked "
               "by running your notebook from the top in a fresh kernel and calling the same checker "
               "as in the notebook on your answer. ✓ passed, ✗ not yet (with the hint), · not "
               "attempted or not returned, ⊘ contains the course's worked solution (scores "
               "nothing), ⚠ could not run, ? missing.").format(n_pass=n_pass, n=len(row), weighted=weighted),
             "", grade_line(grades, learner), ""]
    for nb in grades.notebooks:
        if numbers is not None and nb.number not in numbers:
            continue
        exercises = grades.notebook(learner, nb)
        graded = grades.by_key.get((learner, nb.number))
        passed = sum(g.status == PASSED for g in exercises)
        if graded is None:
            lines += ["## " + _("{number} · {title}: not returned").format(number=nb.number, title=nb.title), ""]
            continue
        lines += ["## " + _("{number} · {title}: {passed} of {total} passed").format(
            number=nb.number, title=nb.title, passed=passed, total=len(exercises)), ""]
        shared = {g.message for g in exercises}
        shared = (shared.pop() if len(shared) == 1 and len(exercises) > 1
                  and exercises[0].status in (COULD_NOT_RUN, SOLUTION) else None)
        if shared:  # one reason for the whole notebook (unreadable file, a copy): say it once
            lines += [f"{_MARK[exercises[0].status]} " + _("{text}.").format(text=shared[:1].upper() + shared[1:]), ""]
        for g in exercises:
            text = f"- {_MARK[g.status]} " + _("**Exercise {number}, {title}**: {verdict}").format(
                number=g.id.split('.')[-1], title=g.title, verdict=_(_VERDICT[g.status]))
            first, _sep, rest = g.message.partition("\n")
            if first and g.status != NOT_ATTEMPTED and not shared:
                text += f" — {first}"
            lines.append(text)
            if rest and g.status != NOT_ATTEMPTED:  # a printed matrix: keep its lines
                lines += ["", "  ```text"] + [f"  {ln}" for ln in rest.splitlines()] + ["  ```", ""]
        notes = [n for n in graded.notes if not (shared and shared in n)]
        if notes:
            lines += ["", _("Notes on this notebook:"), ""] + [f"- {note}" for note in notes]
        lines.append("")
    extra = grades.extra_notes.get(learner, [])
    if extra:
        lines += ["## " + _("Other files"), ""] + [f"- {note}" for note in extra] + [""]
    return "\n".join(lines)


def grade_line(grades: ClassGrades, learner: str) -> str:
    """The grade that goes to the LMS, and the late penalty that made it, in one paragraph."""
    final, total = grades.final(learner), grades.max_points
    text = _("**Your grade: {final} of {total} points**").format(final=number_text(final), total=number_text(total))
    late = grades.late(learner)
    if late:
        text += _(". Returned late: notebook {notebooks}; the late penalty is "
                  "{penalty} % of a late notebook's points: "
                  "{off} points off {points}").format(
            notebooks=", ".join(late), penalty=number_text(grades.late_penalty),
            off=number_text(grades.penalty(learner)), points=number_text(grades.points(learner)))
    info = grades.info[learner]  # a learner of one LMS is told that LMS's scale only
    own = "Canvas" if info.canvas_id or info.anonymous_id else "Moodle" if info.moodle_id else None
    scales = [_("{value} of {top} in {lms}").format(value=number_text(round(final / total * top, 2) if total else 0),
                                                    top=number_text(top), lms=lms)
              for lms, top in grades.scales.items() if top != total and own in (None, lms)]
    if scales:
        text += _(" (the LMS's scale: {scales})").format(scales=", ".join(scales))
    return _("{text}.").format(text=text)


def write_feedback(grades: ClassGrades, folder: Path) -> list[Path]:
    """Write ``folder/<learner>.md`` for every learner (old ``.md`` files there are removed)."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.md"):
        old.unlink()
    paths: list[Path] = []
    for learner in grades.learners:
        path = folder / feedback_file_name(learner)
        k = 2
        while path in paths:  # two names that differ only in characters a file name cannot hold
            path = folder / feedback_file_name(f"{learner}-{k}")
            k += 1
        path.write_text(feedback_markdown(grades, learner), encoding="utf-8")
        paths.append(path)
    return paths


