"""What the grader writes: ``grades.csv``, one feedback file per learner, and the summary.

* ``grades.csv``: one row per learner, one column per exercise in the course's order (the
  registry's), holding the verdict (``passed``, ``failed``, ``not attempted``, ``could not
  run``, ``missing`` or ``not submitted``), then ``passed`` and ``exercises`` (the totals) and
  ``notes`` (what went wrong with a notebook, for the teacher).
* ``feedback/<learner>.md``: every exercise with its verdict and the checker's hint, written to
  the learner, to hand back as it is.
* the summary (printed, and saved as ``summary.md`` with every hint): per exercise how many
  passed, and the most frequent hint, i.e. the mistake to explain in the next class.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path
from typing import Iterable

from ..check import registry
from . import (
    COULD_NOT_RUN,
    FAILED,
    MISSING,
    NOT_ATTEMPTED,
    NOT_SUBMITTED,
    PASSED,
    ExerciseGrade,
    NotebookGrade,
)

__all__ = ["ClassGrades", "write_csv", "feedback_markdown", "write_feedback", "summary_text",
           "summary_markdown", "feedback_file_name"]

_MARK = {PASSED: "✓", FAILED: "✗", NOT_ATTEMPTED: "·", COULD_NOT_RUN: "⚠", MISSING: "?",
         NOT_SUBMITTED: "·"}
_VERDICT = {PASSED: "passed", FAILED: "not yet", NOT_ATTEMPTED: "not attempted",
            COULD_NOT_RUN: "could not run", MISSING: "missing", NOT_SUBMITTED: "not submitted"}


class ClassGrades:
    """Every learner's grades, by learner and notebook number, with the course's exercise order.

    A notebook a learner did not return counts as ``not submitted`` for each of its exercises.
    """

    def __init__(self, learners: Iterable[str], grades: Iterable[NotebookGrade]):
        self.learners = sorted(set(learners))
        self.by_key: dict[tuple[str, str], NotebookGrade] = {}
        self.extra_notes: dict[str, list[str]] = {}  # notes on notebooks outside the course
        for g in grades:
            if g.exercises or g.number in {n.number for n in registry.NOTEBOOKS}:
                self.by_key[(g.learner, g.number)] = g
            else:
                self.extra_notes.setdefault(g.learner, []).extend(g.notes)

    def notebook(self, learner: str, nb: registry.Notebook) -> list[ExerciseGrade]:
        grade = self.by_key.get((learner, nb.number))
        if grade is None:
            return [ExerciseGrade(ex_id, ex.title, NOT_SUBMITTED, f"no notebook {nb.number} returned")
                    for ex_id, ex in nb.numbered()]
        return grade.exercises

    def row(self, learner: str) -> list[ExerciseGrade]:
        """Every exercise of the course for ``learner``, in the course's order."""
        return [g for nb in registry.NOTEBOOKS for g in self.notebook(learner, nb)]

    def notes(self, learner: str) -> list[str]:
        out = []
        for nb in registry.NOTEBOOKS:
            grade = self.by_key.get((learner, nb.number))
            if grade is not None:
                out.extend(f"{nb.number}: {' '.join(note.split())}" for note in grade.notes)
        return out + self.extra_notes.get(learner, [])


def write_csv(grades: ClassGrades, path: Path) -> None:
    """``grades.csv``: learner, one verdict per exercise, passed, exercises, notes."""
    header = ["learner"] + [f"{ex_id} {ex.title}" for ex_id, _, ex in registry.exercises()]
    header += ["passed", "exercises", "notes"]
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        for learner in grades.learners:
            row = grades.row(learner)
            writer.writerow([learner] + [g.status for g in row]
                            + [sum(g.status == PASSED for g in row), len(row),
                               " | ".join(grades.notes(learner))])


def feedback_file_name(learner: str) -> str:
    """A safe file name for ``learner``'s feedback (letters, digits, ``-``, ``_`` and ``.``)."""
    return (re.sub(r"[^\w.-]+", "_", learner).strip("._") or "learner") + ".md"


def feedback_markdown(grades: ClassGrades, learner: str) -> str:
    """The feedback file of one learner, in Markdown."""
    row = grades.row(learner)
    n_pass = sum(g.status == PASSED for g in row)
    lines = [f"# Attention course: feedback for {learner}", "",
             f"You passed **{n_pass} of {len(row)}** exercises. Each exercise below was checked "
             "by running your notebook from the top in a fresh kernel and calling the same checker "
             "as in the notebook on your answer. ✓ passed, ✗ not yet (with the hint), · not "
             "attempted or not returned, ⚠ could not run, ? missing.", ""]
    for nb in registry.NOTEBOOKS:
        exercises = grades.notebook(learner, nb)
        graded = grades.by_key.get((learner, nb.number))
        passed = sum(g.status == PASSED for g in exercises)
        if graded is None:
            lines += [f"## {nb.number} · {nb.title}: not returned", ""]
            continue
        lines += [f"## {nb.number} · {nb.title}: {passed} of {len(exercises)} passed", ""]
        shared = {g.message for g in exercises}
        shared = shared.pop() if len(shared) == 1 and exercises[0].status == COULD_NOT_RUN else None
        if shared:  # one reason for the whole notebook (unreadable file, out of time): say it once
            lines += [f"⚠ {shared[:1].upper()}{shared[1:]}.", ""]
        for g in exercises:
            text = f"- {_MARK[g.status]} **Exercise {g.id.split('.')[-1]}, {g.title}**: {_VERDICT[g.status]}"
            first, _, rest = g.message.partition("\n")
            if first and g.status != NOT_ATTEMPTED and not shared:
                text += f" — {first}"
            lines.append(text)
            if rest and g.status != NOT_ATTEMPTED:  # a printed matrix: keep its lines
                lines += ["", "  ```text"] + [f"  {ln}" for ln in rest.splitlines()] + ["  ```", ""]
        notes = [n for n in graded.notes if not (shared and shared in n)]
        if notes:
            lines += ["", "Notes on this notebook:", ""] + [f"- {note}" for note in notes]
        lines.append("")
    extra = grades.extra_notes.get(learner, [])
    if extra:
        lines += ["## Other files", ""] + [f"- {note}" for note in extra] + [""]
    return "\n".join(lines)


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


def _per_exercise(grades: ClassGrades):
    """``(id, title, Counter of statuses, Counter of failure hints)`` per exercise."""
    for ex_id, _nb, ex in registry.exercises():
        statuses, hints = Counter(), Counter()
        for learner in grades.learners:
            g = next(g for g in grades.row(learner) if g.id == ex_id)
            statuses[g.status] += 1
            if g.status == FAILED:
                hints[g.message] += 1
        yield ex_id, ex.title, statuses, hints


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def summary_text(grades: ClassGrades, width: int = 120) -> str:
    """The one-screen summary: per exercise, how many passed and the most frequent hint."""
    n = len(grades.learners)
    lines = [f"{'exercise':<32} {'passed':^7} {'failed':>6} {'not tried':>9} {'other':>5}  "
             "most frequent hint (learners)"]
    for ex_id, title, st, hints in _per_exercise(grades):
        other = n - st[PASSED] - st[FAILED] - st[NOT_ATTEMPTED]
        hint = ""
        if hints:
            text, count = hints.most_common(1)[0]
            hint = f"({count}) {text}"
        head = (f"{_clip(ex_id + ' ' + title, 32):<32} {st[PASSED]:>3}/{n:<3} {st[FAILED]:>6} "
                f"{st[NOT_ATTEMPTED]:>9} {other:>5}  ")
        lines.append(head + _clip(hint, max(20, width - len(head))))
    lines.append("other = could not run, missing or not submitted; see notes in grades.csv")
    return "\n".join(lines)


def summary_markdown(grades: ClassGrades) -> str:
    """The summary with every hint and its count, per exercise (``summary.md``)."""
    n = len(grades.learners)
    lines = ["# Class summary", "", f"{n} learners.", ""]
    for ex_id, title, st, hints in _per_exercise(grades):
        counts = ", ".join(f"{st[s]} {s}" for s in (PASSED, FAILED, NOT_ATTEMPTED, COULD_NOT_RUN,
                                                    MISSING, NOT_SUBMITTED) if st[s])
        lines += [f"## {ex_id} {title}", "", counts + ".", ""]
        if hints:
            lines += ["| learners | hint |", "|---:|---|"]
            lines += [f"| {count} | {' '.join(text.replace('|', '/').split())} |"
                      for text, count in hints.most_common()]
            lines.append("")
    return "\n".join(lines)
