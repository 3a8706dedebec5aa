"""What the grader writes: ``grades.csv``, one feedback file per learner, the summary, and the
files a learning-management system imports.

Only the notebooks that were set are graded and counted (``ClassGrades.notebooks``). Each
exercise is worth one point.

* ``grades.csv``: one row per learner (and the id a Canvas or Moodle download gave), per
  exercise of the notebooks set in the course's order (the registry's) its verdict
  (``passed``, ``failed``, ``not attempted``, ``contains the worked solution``, ``could not
  run``, ``missing`` or ``not submitted``) and its points (1 or 0); then each notebook's score,
  ``points``, ``max points``, ``percent`` and ``notes`` (what went wrong, for the teacher).
* ``feedback/<learner>.md``: every exercise with its verdict and the checker's hint, written to
  the learner, to hand back as it is.
* the summary (printed, and saved as ``summary.md`` with every hint): per exercise how many
  passed, and the most frequent hint, i.e. the mistake to explain in the next class.
* ``canvas.csv``: Canvas's gradebook import (Student, ID, SIS User ID, SIS Login ID, Section,
  then one column named after the assignment holding the points; a "Points Possible" row first,
  as in Canvas's export).
* ``moodle.csv``: Moodle's offline grading worksheet (Identifier "Participant N", Full name,
  Email address, Status, Grade, Maximum Grade, Grade can be changed, Last modified
  (submission), Last modified (grade), Feedback comments).
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
    SOLUTION,
    STATUSES,
    ExerciseGrade,
    NotebookGrade,
)
from .submissions import Learner

__all__ = ["ClassGrades", "write_csv", "feedback_markdown", "write_feedback", "summary_text",
           "summary_markdown", "feedback_file_name", "write_canvas", "write_moodle",
           "DEFAULT_ASSIGNMENT"]

_MARK = {PASSED: "✓", FAILED: "✗", NOT_ATTEMPTED: "·", SOLUTION: "⊘", COULD_NOT_RUN: "⚠",
         MISSING: "?", NOT_SUBMITTED: "·"}
_VERDICT = {PASSED: "passed", FAILED: "not yet", NOT_ATTEMPTED: "not attempted",
            SOLUTION: "contains the worked solution", COULD_NOT_RUN: "could not run",
            MISSING: "missing", NOT_SUBMITTED: "not submitted"}
DEFAULT_ASSIGNMENT = "Attention course"


class ClassGrades:
    """Every learner's grades, by learner and notebook number, over the notebooks that were set.

    ``notebooks``: the numbers of the notebooks set (default: every notebook of the course); the
    rows, totals and reports cover those only. A notebook a learner did not return counts as
    ``not submitted`` for each of its exercises. ``info``: the learners' LMS ids (from the
    submissions' names); ``assignment``: the name of the assignment in the LMS exports.
    """

    def __init__(self, learners: Iterable[str], grades: Iterable[NotebookGrade], *,
                 notebooks: Iterable[str] | None = None, info: dict[str, Learner] | None = None,
                 assignment: str | None = None, late_penalty: float = 0.0,
                 not_graded: Iterable[tuple[str, str]] = ()):
        self.learners = sorted(set(learners))
        wanted = set(notebooks) if notebooks is not None else None
        self.notebooks = [nb for nb in registry.NOTEBOOKS if wanted is None or nb.number in wanted]
        self.info = {name: (info or {}).get(name) or Learner(name) for name in self.learners}
        self.assignment = assignment or default_assignment([nb.number for nb in self.notebooks])
        self.late_penalty = float(late_penalty)  # percent of a late notebook's points taken off
        self.not_graded = list(not_graded)  # (file, why): every file that is not in a row
        self.flags: dict[str, list[str]] = {}  # learner -> notes for the teacher (similar answers)
        self.by_key: dict[tuple[str, str], NotebookGrade] = {}
        self.extra_notes: dict[str, list[str]] = {}  # notes on notebooks outside the course
        for g in grades:
            if g.exercises or g.number in {n.number for n in registry.NOTEBOOKS}:
                self.by_key[(g.learner, g.number)] = g
            else:
                self.extra_notes.setdefault(g.learner, []).extend(g.notes)

    def exercises(self) -> list[tuple[str, registry.Exercise]]:
        """``(id, exercise)`` of every exercise set, in the course's order."""
        return [(ex_id, ex) for nb in self.notebooks for ex_id, ex in nb.numbered()]

    @property
    def max_points(self) -> int:
        return len(self.exercises())

    def notebook(self, learner: str, nb: registry.Notebook) -> list[ExerciseGrade]:
        grade = self.by_key.get((learner, nb.number))
        if grade is None:
            return [ExerciseGrade(ex_id, ex.title, NOT_SUBMITTED, f"no notebook {nb.number} returned")
                    for ex_id, ex in nb.numbered()]
        return grade.exercises

    def row(self, learner: str) -> list[ExerciseGrade]:
        """Every exercise set for ``learner``, in the course's order."""
        return [g for nb in self.notebooks for g in self.notebook(learner, nb)]

    def points(self, learner: str, nb: registry.Notebook | None = None) -> int:
        """Exercises passed, in notebook ``nb`` or in all the notebooks set (one point each)."""
        row = self.notebook(learner, nb) if nb is not None else self.row(learner)
        return sum(g.status == PASSED for g in row)

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

    def notes(self, learner: str) -> list[str]:
        out = list(self.flags.get(learner, []))
        for nb in self.notebooks:
            grade = self.by_key.get((learner, nb.number))
            if grade is not None:
                out.extend(f"{nb.number}: {' '.join(note.split())}" for note in grade.notes)
        return out + self.extra_notes.get(learner, [])


def default_assignment(numbers: list[str]) -> str:
    """``Attention course`` for the whole course, else ``Attention course, notebooks 02, 04``."""
    if not numbers or len(numbers) == len(registry.NOTEBOOKS):
        return DEFAULT_ASSIGNMENT
    word = "notebook" if len(numbers) == 1 else "notebooks"
    return f"{DEFAULT_ASSIGNMENT}, {word} {', '.join(numbers)}"


def _percent(points: float, total: int) -> str:
    return f"{100 * points / total:.1f}" if total else ""


def write_csv(grades: ClassGrades, path: Path) -> None:
    """``grades.csv``: learner, id, per exercise its verdict and points, per notebook its score,
    points, max points, percent, notes."""
    header = ["learner", "id"]
    for ex_id, ex in grades.exercises():
        header += [f"{ex_id} {ex.title}", f"{ex_id} points"]
    header += [f"{nb.number} score (of {len(nb.exercises)})" for nb in grades.notebooks]
    header += ["late", "late penalty", "points", "max points", "percent", "notes"]
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        for learner in grades.learners:
            cells = [learner, grades.info[learner].lms_id]
            for g in grades.row(learner):
                cells += [g.status, int(g.status == PASSED)]
            cells += [grades.points(learner, nb) for nb in grades.notebooks]
            points = grades.final(learner)
            cells += [" ".join(grades.late(learner)), _num(grades.penalty(learner)), _num(points),
                      grades.max_points, _percent(points, grades.max_points),
                      " | ".join(grades.notes(learner))]
            writer.writerow(cells)
        for file, why in grades.not_graded:  # every file of the submissions is in this file
            writer.writerow(["", ""] + [""] * (len(header) - 3) + [f"not graded: {file}: {why}"])


def _num(x: float) -> str:
    """``3`` for a whole number, ``2.7`` otherwise."""
    return f"{x:g}"


def _comment(grades: ClassGrades, learner: str) -> str:
    """A one-line feedback comment for an LMS: the score per notebook, and what to read."""
    parts = [f"{nb.number}: {grades.points(learner, nb)}/{len(nb.exercises)}"
             if (learner, nb.number) in grades.by_key else f"{nb.number}: not returned"
             for nb in grades.notebooks]
    copied = sum(g.status == SOLUTION for g in grades.row(learner))
    text = (f"Passed {grades.points(learner)} of {grades.max_points} exercises "
            f"({'; '.join(parts)}).")
    if copied:
        text += f" {copied} exercise(s) contain the course's worked solution and score nothing."
    if grades.late(learner):
        text += f" Returned late: {', '.join(grades.late(learner))}"
        text += (f" ({_num(grades.penalty(learner))} points off)." if grades.penalty(learner) else ".")
    return text + " Your feedback file explains each exercise."


def write_canvas(grades: ClassGrades, path: Path) -> int:
    """``canvas.csv`` in Canvas's gradebook import format; returns how many rows lack a Canvas
    id (learners not named by a Canvas download, whom Canvas cannot match)."""
    missing = 0
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", grades.assignment])
        # as in Canvas's own export: the points a new assignment of this name is out of
        writer.writerow(["    Points Possible", "", "", "", "", grades.max_points])
        for learner in grades.learners:
            info = grades.info[learner]
            missing += not info.canvas_id
            writer.writerow([learner, info.canvas_id, "", "", "", _num(grades.final(learner))])
    return missing


MOODLE_COLUMNS = ["Identifier", "Full name", "Email address", "Status", "Grade", "Maximum Grade",
                  "Grade can be changed", "Last modified (submission)", "Last modified (grade)",
                  "Feedback comments"]


def write_moodle(grades: ClassGrades, path: Path) -> int:
    """``moodle.csv`` in the columns of Moodle's offline grading worksheet (upload it with
    "Upload grading worksheet"); returns how many rows lack a participant number."""
    missing = 0
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(MOODLE_COLUMNS)
        for learner in grades.learners:
            info = grades.info[learner]
            missing += not info.moodle_id
            returned = any((learner, nb.number) in grades.by_key for nb in grades.notebooks)
            writer.writerow([f"Participant {info.moodle_id}" if info.moodle_id else "", learner, "",
                             "Submitted for grading" if returned else "No submission",
                             f"{grades.final(learner):.2f}", f"{grades.max_points:.2f}", "Yes",
                             "", "", _comment(grades, learner)])
    return missing


def feedback_file_name(learner: str) -> str:
    """A safe file name for ``learner``'s feedback (letters, digits, ``-``, ``_`` and ``.``)."""
    return (re.sub(r"[^\w.-]+", "_", learner).strip("._") or "learner") + ".md"


def feedback_markdown(grades: ClassGrades, learner: str) -> str:
    """The feedback file of one learner, in Markdown."""
    row = grades.row(learner)
    n_pass = sum(g.status == PASSED for g in row)
    lines = [f"# {grades.assignment}: feedback for {learner}", "",
             f"You passed **{n_pass} of {len(row)}** exercises. Each exercise below was checked "
             "by running your notebook from the top in a fresh kernel and calling the same checker "
             "as in the notebook on your answer. ✓ passed, ✗ not yet (with the hint), · not "
             "attempted or not returned, ⊘ contains the course's worked solution (scores "
             "nothing), ⚠ could not run, ? missing.", ""]
    for nb in grades.notebooks:
        exercises = grades.notebook(learner, nb)
        graded = grades.by_key.get((learner, nb.number))
        passed = sum(g.status == PASSED for g in exercises)
        if graded is None:
            lines += [f"## {nb.number} · {nb.title}: not returned", ""]
            continue
        lines += [f"## {nb.number} · {nb.title}: {passed} of {len(exercises)} passed", ""]
        shared = {g.message for g in exercises}
        shared = (shared.pop() if len(shared) == 1 and len(exercises) > 1
                  and exercises[0].status in (COULD_NOT_RUN, SOLUTION) else None)
        if shared:  # one reason for the whole notebook (unreadable file, a copy): say it once
            lines += [f"{_MARK[exercises[0].status]} {shared[:1].upper()}{shared[1:]}.", ""]
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
    for ex_id, ex in grades.exercises():
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
    lines = [f"{'exercise':<32} {'passed':^7} {'failed':>6} {'not tried':>9} {'copied':>6} "
             f"{'other':>5}  most frequent hint (learners)"]
    for ex_id, title, st, hints in _per_exercise(grades):
        other = n - st[PASSED] - st[FAILED] - st[NOT_ATTEMPTED] - st[SOLUTION]
        hint = ""
        if hints:
            text, count = hints.most_common(1)[0]
            hint = f"({count}) {text}"
        head = (f"{_clip(ex_id + ' ' + title, 32):<32} {st[PASSED]:>3}/{n:<3} {st[FAILED]:>6} "
                f"{st[NOT_ATTEMPTED]:>9} {st[SOLUTION]:>6} {other:>5}  ")
        lines.append(head + _clip(hint, max(20, width - len(head))))
    lines += ["copied = contains the course's worked solution, which scores nothing",
              "other = could not run, missing or not submitted; see notes in grades.csv"]
    lines += ["", "notebook                               returned  mean score"]
    for nb in grades.notebooks:
        scores = [grades.points(ln, nb) for ln in grades.learners if (ln, nb.number) in grades.by_key]
        mean = f"{sum(scores) / len(scores):.1f} of {len(nb.exercises)}" if scores else "-"
        lines.append(f"{_clip(nb.number + ' ' + nb.title, 38):<38} {len(scores):>4}/{n:<4} {mean:>10}")
    late = [f"{ln} ({', '.join(grades.late(ln))})" for ln in grades.learners if grades.late(ln)]
    if late:
        lines += ["", f"Returned late: {', '.join(late)}"]
    pairs = sorted({note for notes in grades.flags.values() for note in notes})
    if pairs:
        lines += ["", "Answers to read side by side (more alike than the worked solution explains; "
                      "no points taken):"] + [f"  {_clip(p, width - 2)}" for p in pairs]
    return "\n".join(lines)


def _extra_sections(grades: ClassGrades) -> list[str]:
    """Late notebooks, similar answers to read, and files not graded: Markdown lines."""
    lines: list[str] = []
    late = [(ln, grades.late(ln)) for ln in grades.learners if grades.late(ln)]
    if late:
        rule = (f"{_num(grades.late_penalty)} % of a late notebook's points taken off"
                if grades.late_penalty else "no penalty set (--late-penalty)")
        lines += ["## Returned late", "", f"{len(late)} learner(s); {rule}.", ""]
        lines += [f"- {ln}: {', '.join(nbs)}" + (f" ({_num(grades.penalty(ln))} points off)"
                                                 if grades.penalty(ln) else "") for ln, nbs in late]
        lines.append("")
    flagged = [(ln, notes) for ln, notes in grades.flags.items() if notes]
    if flagged:
        lines += ["## For the teacher to read: answers more alike than the worked solution explains",
                  "", "Nobody lost points for this: read the answers side by side and decide.", ""]
        seen = set()
        for _, notes in flagged:
            for note in notes:
                if note not in seen:
                    seen.add(note)
                    lines.append(f"- {note}")
        lines.append("")
    if grades.not_graded:
        lines += ["## Files not graded", ""] + [f"- `{f}`: {why}" for f, why in grades.not_graded] + [""]
    return lines


def summary_markdown(grades: ClassGrades) -> str:
    """The summary with every hint and its count, per exercise (``summary.md``)."""
    n = len(grades.learners)
    lines = [f"# Class summary: {grades.assignment}", "",
             f"{n} learners; notebooks set: {', '.join(nb.number for nb in grades.notebooks)} "
             f"({grades.max_points} exercises, one point each).", ""]
    for ex_id, title, st, hints in _per_exercise(grades):
        counts = ", ".join(f"{st[s]} {s}" for s in STATUSES if st[s])
        lines += [f"## {ex_id} {title}", "", counts + ".", ""]
        if hints:
            lines += ["| learners | hint |", "|---:|---|"]
            lines += [f"| {count} | {' '.join(text.replace('|', '/').split())} |"
                      for text, count in hints.most_common()]
            lines.append("")
    return "\n".join(lines + _extra_sections(grades))
