r"""What the grader writes: ``grades.csv``, one feedback file per learner, the summary, and the
files a learning-management system imports.

Only the exercises that were set are graded and counted (``ClassGrades.weights``: by default
every exercise of the notebooks set, one point each; ``make grade EXERCISES=02.1-02.5,02.6:0.5,04``
sets a subset and weights).

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
  as in Canvas's export). The points are on the assignment's points possible
  (``--canvas-points``, default: the exercises' points), which that row states. Checked against
  instructure/canvas-lms ``lib/gradebook_importer.rb``: ``row_has_student_headers?`` (Student,
  ID), ``update_column_count`` (SIS User ID, SIS Login ID, then Section last), a row whose first
  cell includes "Points Possible" (``check_for_non_student_row``/``process_pp``: only the
  assignment columns of that row are read), learners matched by the Canvas user id in ID
  (``process_student``).
* ``canvas_reupload.zip``: one feedback notebook per returned notebook, named as Canvas's
  "Download Submissions" named the learner's file, for the gradebook's "Re-upload
  submissions": Canvas takes the first two all-digit ``_`` parts of a file name as the user id
  and the attachment id, and attaches the file as a comment to that learner's submission
  (instructure/canvas-lms ``app/models/assignment.rb``, ``infer_comment_context_from_filename``;
  ``lib/content_zipper.rb``, ``get_filename`` and ``sanitize_user_name``, which keeps ``_\d+_``
  out of the name part for this reason). The file is a notebook because Canvas shows it under
  the name of the learner's attachment.
* ``moodle.csv``: Moodle's offline grading worksheet, the columns of its own download
  (mod/assign/gradingtable.php) in the language of the Moodle (``--moodle-headers``), the grade
  on the assignment's maximum grade (``--moodle-max``, default 100, Moodle's default). Moodle's
  importer (mod/assign/feedback/offline/importgradeslib.php, ``init`` and ``next``; locallib.php,
  ``process_import_grades``) finds the columns by their exact localised names
  ("Identifier", "Grade", "Last modified (grade)", "Feedback comments"), takes the participant
  number after the string "Participant ", reads the grade with the site's decimal separator
  (``unformat_float``), and skips a grade above the maximum or a row whose grade was changed in
  Moodle after "Last modified (grade)".
* ``moodle_feedback.zip``: the feedback files in the folders of Moodle's own download
  (``<Full name>_<participant>_assignfeedback_file/<learner>.md``), for "Upload multiple
  feedback files in a zip" (mod/assign/feedback/file/importziplib.php,
  ``is_valid_filename_for_import``: a path part split on ``_`` into at least four pieces whose
  second is the participant number and third and fourth name the plugin).
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import zipfile
from collections import Counter
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import Iterable, Mapping

import nbformat

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
from .submissions import CANVAS, Learner

__all__ = ["ClassGrades", "write_csv", "feedback_markdown", "write_feedback", "summary_text",
           "summary_markdown", "feedback_file_name", "write_canvas", "write_moodle",
           "write_canvas_reupload", "write_moodle_feedback", "moodle_strings", "write_reports",
           "save_state", "load_state", "MOODLE_STRINGS", "DEFAULT_ASSIGNMENT"]

_MARK = {PASSED: "✓", FAILED: "✗", NOT_ATTEMPTED: "·", SOLUTION: "⊘", COULD_NOT_RUN: "⚠",
         MISSING: "?", NOT_SUBMITTED: "·"}
_VERDICT = {PASSED: "passed", FAILED: "not yet", NOT_ATTEMPTED: "not attempted",
            SOLUTION: "contains the worked solution", COULD_NOT_RUN: "could not run",
            MISSING: "missing", NOT_SUBMITTED: "not submitted"}
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
                raise ValueError(f"exercise(s) {', '.join(unknown)} are not part of this course")
            if any(float(w) < 0 for w in exercises.values()):
                raise ValueError("an exercise's weight cannot be negative")
            wanted = {known[e] for e in exercises}
        self.notebooks = [nb for nb in registry.NOTEBOOKS if wanted is None or nb.number in wanted]
        #: exercise id -> points it is worth, for every exercise set, in the course's order
        self.weights = {ex_id: (1.0 if exercises is None else float(exercises[ex_id]))
                        for nb in self.notebooks for ex_id, _ in nb.numbered()
                        if exercises is None or ex_id in exercises}
        self.graded_at = graded_at or datetime.now(timezone.utc).replace(microsecond=0)
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
        return [(ex_id, ex) for nb in self.notebooks for ex_id, ex in nb.numbered()
                if ex_id in self.weights]

    @property
    def max_points(self) -> float:
        """The points of all the exercises set (an int when whole)."""
        return _whole(sum(self.weights.values()))

    def notebook_max(self, nb: registry.Notebook) -> float:
        """The points of the exercises set in notebook ``nb``."""
        return _whole(sum(w for ex_id, w in self.weights.items() if ex_id.startswith(nb.number + ".")))

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
            for ex_id, _ in book.numbered() + [("", None)]:
                w = self.weights.get(ex_id)
                if run and (w is None or w != self.weights[run[0]]):
                    text = run[0] if len(run) == 1 else f"{run[0]}-{run[-1]}"
                    weight = self.weights[run[0]]
                    parts.append(text + ("" if weight == 1 else f" ×{_num(weight)}"))
                    run = []
                if w is not None:
                    run.append(ex_id)
        return ", ".join(parts)

    def notebook(self, learner: str, nb: registry.Notebook) -> list[ExerciseGrade]:
        """The verdicts on the exercises set in notebook ``nb``."""
        grade = self.by_key.get((learner, nb.number))
        if grade is None:
            return [ExerciseGrade(ex_id, ex.title, NOT_SUBMITTED, f"no notebook {nb.number} returned")
                    for ex_id, ex in nb.numbered() if ex_id in self.weights]
        return [g for g in grade.exercises if g.id in self.weights]

    def row(self, learner: str) -> list[ExerciseGrade]:
        """Every exercise set for ``learner``, in the course's order."""
        return [g for nb in self.notebooks for g in self.notebook(learner, nb)]

    def points(self, learner: str, nb: registry.Notebook | None = None) -> float:
        """The points of the exercises passed, in notebook ``nb`` or in all the notebooks set."""
        row = self.notebook(learner, nb) if nb is not None else self.row(learner)
        return _whole(sum(self.weights.get(g.id, 0.0) for g in row if g.status == PASSED))

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


def _whole(x: float) -> float:
    """``x`` rounded to 2 decimals; an int when whole (so ``6``, not ``6.0``, in the files)."""
    x = round(float(x), 2)
    return int(x) if x.is_integer() else x


def _percent(points: float, total: float) -> str:
    return f"{100 * points / total:.1f}" if total else ""


def write_csv(grades: ClassGrades, path: Path) -> None:
    """``grades.csv``: learner, id, per exercise its verdict and points, per notebook its score,
    points, max points, percent, notes."""
    header = ["learner", "id"]
    for ex_id, ex in grades.exercises():
        w = grades.weights[ex_id]
        header += [f"{ex_id} {ex.title}", f"{ex_id} points" + ("" if w == 1 else f" (of {_num(w)})")]
    header += [f"{nb.number} score (of {_num(grades.notebook_max(nb))})"
               + ("" if grades.whole_course else f": {grades.exercises_text(nb)}")
               for nb in grades.notebooks]
    header += ["late", "late penalty", "points", "max points", "percent", "notes"]
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        for learner in grades.learners:
            cells = [learner, grades.info[learner].lms_id]
            for g in grades.row(learner):
                cells += [g.status, _num(grades.weights[g.id]) if g.status == PASSED else 0]
            cells += [_num(grades.points(learner, nb)) for nb in grades.notebooks]
            points = grades.final(learner)
            cells += [" ".join(grades.late(learner)), _num(grades.penalty(learner)), _num(points),
                      _num(grades.max_points), _percent(points, grades.max_points),
                      " | ".join(grades.notes(learner))]
            writer.writerow(cells)
        for file, why in grades.not_graded:  # every file of the submissions is in this file
            writer.writerow(["", ""] + [""] * (len(header) - 3) + [f"not graded: {file}: {why}"])


def _num(x: float) -> str:
    """``3`` for a whole number, ``2.7`` otherwise."""
    return f"{x:g}"


def _comment(grades: ClassGrades, learner: str) -> str:
    """A one-line feedback comment for an LMS: the score per notebook, and what to read."""
    parts = [f"{nb.number}: {_num(grades.points(learner, nb))}/{_num(grades.notebook_max(nb))}"
             if (learner, nb.number) in grades.by_key else f"{nb.number}: not returned"
             for nb in grades.notebooks]
    row = grades.row(learner)
    copied = sum(g.status == SOLUTION for g in row)
    if grades.whole_course:
        text = (f"Passed {grades.points(learner)} of {grades.max_points} exercises "
                f"({'; '.join(parts)}).")
    else:
        text = (f"Passed {sum(g.status == PASSED for g in row)} of {len(row)} exercises, "
                f"{_num(grades.points(learner))} of {_num(grades.max_points)} points "
                f"({'; '.join(parts)}). Exercises set: {grades.exercises_text()}.")
    if copied:
        text += f" {copied} exercise(s) contain the course's worked solution and score nothing."
    if grades.late(learner):
        text += f" Returned late: {', '.join(grades.late(learner))}"
        text += (f" ({_num(grades.penalty(learner))} points off)." if grades.penalty(learner) else ".")
    return text + " Your feedback file explains each exercise."


def _scaled(grades: ClassGrades, learner: str, maximum: float) -> float:
    """The learner's points after the late penalty, on a scale of ``maximum``; ValueError when
    outside ``[0, maximum]`` (an importer would skip or misread it)."""
    total = grades.max_points
    value = round(grades.final(learner) / total * maximum, 2) if total else 0.0
    if not 0 <= value <= maximum:
        raise ValueError(f"{learner}'s grade {value} is outside 0..{maximum}")
    return value


def write_canvas(grades: ClassGrades, path: Path, points_possible: float | None = None) -> int:
    """``canvas.csv`` in Canvas's gradebook import format, the points on ``points_possible``
    (the assignment's "Points" in Canvas; default: the exercises' points); returns how many rows
    lack a Canvas id (learners not named by a Canvas download, whom Canvas cannot match)."""
    possible = grades.max_points if points_possible is None else _whole(points_possible)
    if possible <= 0:
        raise ValueError(f"Canvas points possible must be above 0, not {possible}")
    missing = 0
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", grades.assignment])
        # as in Canvas's own export: the points the assignment is out of. Canvas reads only the
        # assignment columns of this row, so its Section cell can say what was set.
        writer.writerow(["    Points Possible", "", "", "",
                         f"exercises set: {grades.exercises_text()}", _num(possible)])
        for learner in grades.learners:
            info = grades.info[learner]
            missing += not info.canvas_id
            writer.writerow([learner, info.canvas_id, "", "", "",
                             _num(_scaled(grades, learner, possible))])
    return missing


#: The strings of Moodle's grading worksheet, by language, as the Moodle language packs have them
#: (en: moodle/moodle mod/assign/lang/en/assign.php, lang/en/moodle.php,
#: mod/assign/feedback/comments/lang/en/assignfeedback_comments.php; de, fr, es:
#: projectestac/moodle-langpacks <lang>/assign.php, moodle.php, assignfeedback_comments.php,
#: langconfig.php, the packs of Moodle 4.5). Keys: the string ids (``recordid``,
#: ``hiddenuser``, ``gradenoun`` ...), ``feedbackcomments`` (assignfeedback_comments's
#: ``pluginname``) and ``decsep`` (langconfig's decimal separator). The importer needs
#: recordid, hiddenuser, gradenoun, lastmodifiedgrade, decsep and, for the comments,
#: feedbackcomments to be exactly the Moodle's own.
MOODLE_STRINGS: dict[str, dict[str, str]] = {
    "en": {"recordid": "Identifier", "hiddenuser": "Participant ", "fullname": "Full name",
           "email": "Email address", "status": "Status", "gradenoun": "Grade",
           "maxgrade": "Maximum grade", "gradecanbechanged": "Grade can be changed",
           "lastmodifiedsubmission": "Last modified (submission)",
           "lastmodifiedgrade": "Last modified (grade)", "feedbackcomments": "Feedback comments",
           "submissionstatus_submitted": "Submitted for grading",
           "submissionstatus_new": "No submission", "yes": "Yes", "decsep": "."},
    "de": {"recordid": "ID", "hiddenuser": "Teilnehmer/in", "fullname": "Vollständiger Name",
           "email": "E-Mail-Adresse", "status": "Status", "gradenoun": "Bewertung",
           "maxgrade": "Bestwertung", "gradecanbechanged": "Bewertung kann geändert werden",
           "lastmodifiedsubmission": "Zuletzt geändert (Abgabe)",
           "lastmodifiedgrade": "Zuletzt geändert (Bewertung)",
           "feedbackcomments": "Feedback als Kommentar",
           "submissionstatus_submitted": "Zur Bewertung abgegeben",
           "submissionstatus_new": "Keine Abgabe", "yes": "Ja", "decsep": ","},
    "fr": {"recordid": "Identifiant", "hiddenuser": "Participant", "fullname": "Nom complet",
           "email": "Adresse de courriel", "status": "Statut", "gradenoun": "Note",
           "maxgrade": "Note maximale", "gradecanbechanged": "La note peut être modifiée",
           "lastmodifiedsubmission": "Dernière modification (travail remis)",
           "lastmodifiedgrade": "Dernière modification (note)",
           "feedbackcomments": "Feedback par commentaires",
           "submissionstatus_submitted": "Remis pour évaluation",
           "submissionstatus_new": "Non remis", "yes": "Oui", "decsep": ","},
    "es": {"recordid": "Identificador", "hiddenuser": "Participante", "fullname": "Nombre completo",
           "email": "Dirección de correo", "status": "Estado", "gradenoun": "Calificación",
           "maxgrade": "Calificación máxima",
           "gradecanbechanged": "La calificación puede ser cambiada",
           "lastmodifiedsubmission": "Última modificación (entrega)",
           "lastmodifiedgrade": "Última modificación (calificación)",
           "feedbackcomments": "Comentarios de retroalimentación",
           "submissionstatus_submitted": "Enviado para calificar",
           "submissionstatus_new": "No entregado", "yes": "Sí", "decsep": ","},
}
MOODLE_COLUMNS = ["recordid", "fullname", "email", "status", "gradenoun", "maxgrade",
                  "gradecanbechanged", "lastmodifiedsubmission", "lastmodifiedgrade",
                  "feedbackcomments"]


def moodle_strings(spec: str | Mapping[str, str] | None = "en") -> dict[str, str]:
    """The worksheet's strings: a language of :data:`MOODLE_STRINGS` (``"de"``), a JSON file
    of ``{string id: text}`` (ids missing from it are English), or such a mapping."""
    if spec is None or spec == "":
        spec = "en"
    if isinstance(spec, str):
        if spec in MOODLE_STRINGS:
            return dict(MOODLE_STRINGS[spec])
        path = Path(spec)
        if not path.is_file():
            raise ValueError(f"--moodle-headers {spec!r}: neither a language of "
                             f"{', '.join(MOODLE_STRINGS)} nor a JSON file")
        try:
            spec = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"--moodle-headers {path}: not a JSON object of strings ({exc})") from None
    unknown = set(spec) - set(MOODLE_STRINGS["en"])
    if unknown or not all(isinstance(v, str) for v in spec.values()):
        raise ValueError(f"Moodle strings: unknown keys {sorted(unknown)} (known: "
                         f"{', '.join(MOODLE_STRINGS['en'])}), or a value that is not text")
    return {**MOODLE_STRINGS["en"], **spec}


def write_moodle(grades: ClassGrades, path: Path, maximum: float = 100,
                 strings: str | Mapping[str, str] | None = "en") -> int:
    """``moodle.csv`` in the columns of Moodle's offline grading worksheet (upload it with
    "Upload grading worksheet"), the grade on the assignment's ``maximum`` grade (Moodle's
    "Maximum grade", 100 unless the teacher changed it), the headers in the language of
    ``strings`` (:func:`moodle_strings`); returns how many rows lack a participant number."""
    if not maximum > 0:
        raise ValueError(f"the Moodle maximum grade must be above 0, not {maximum}")
    text = moodle_strings(strings)
    point = text["decsep"]
    modified = grades.graded_at.isoformat(timespec="seconds")  # PHP's strtotime reads ISO 8601
    missing = 0
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow([text[key] for key in MOODLE_COLUMNS])
        for learner in grades.learners:
            info = grades.info[learner]
            missing += not info.moodle_id
            returned = any((learner, nb.number) in grades.by_key for nb in grades.notebooks)
            grade = f"{_scaled(grades, learner, maximum):.2f}".replace(".", point)
            writer.writerow([text["hiddenuser"] + info.moodle_id if info.moodle_id else "", learner, "",
                             text["submissionstatus_submitted" if returned else "submissionstatus_new"],
                             grade, f"{maximum:.2f}".replace(".", point), text["yes"],
                             "", modified, _comment(grades, learner)])
    return missing


def _moodle_folder_name(learner: str, participant: str) -> str:
    # Moodle splits each path part on "_" and wants the participant number second: no "_" or "/"
    # in the name (Moodle matches by the number; the name is for the teacher's eyes)
    name = re.sub(r"[_/\\]+", " ", learner).strip() or "learner"
    return f"{name}_{participant}_assignfeedback_file"


def write_moodle_feedback(grades: ClassGrades, path: Path) -> tuple[int, int]:
    """``moodle_feedback.zip``: every feedback file in the folder Moodle's own download names
    (``<Full name>_<participant>_assignfeedback_file/<learner>.md``), for "Upload multiple
    feedback files in a zip" (the assignment needs the "Feedback files" feedback type). Returns
    (files written, learners without a participant number, left out)."""
    written = missing = 0
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for learner in grades.learners:
            participant = grades.info[learner].moodle_id
            if not participant:
                missing += 1
                continue
            name = f"{_moodle_folder_name(learner, participant)}/{feedback_file_name(learner)}"
            zf.writestr(name, feedback_markdown(grades, learner))
            written += 1
    return written, missing


def _canvas_download_name(source: str | None) -> str | None:
    """The file name Canvas's download gave a submission, if it gave one (with a user id)."""
    if not source:
        return None
    name = PurePosixPath(source.replace("\\", "/")).name
    m = CANVAS.match(name)
    if not m or name.startswith(("anon_", "LATE_anon_")):
        return None
    # Canvas's own rule: the first two parts that are all digits are the user and attachment ids
    digits = [part for part in name.split("_") if re.fullmatch(r"[0-9]+", part)][:2]
    return name if digits == [m.group("id"), m.group("submission")] else None


def write_canvas_reupload(grades: ClassGrades, path: Path) -> tuple[int, list[str]]:
    """``canvas_reupload.zip``: per returned notebook with a Canvas download name, a feedback
    notebook under that same name (user id and attachment id in it), for the gradebook's
    "Re-upload submissions". Returns (files written, learners with no such name, left out)."""
    written, left_out = 0, []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for learner in grades.learners:
            names = [(nb, _canvas_download_name(grades.by_key[(learner, nb.number)].source))
                     for nb in grades.notebooks if (learner, nb.number) in grades.by_key]
            names = [(nb, n) for nb, n in names if n]
            if not names:
                left_out.append(learner)
            for nb, name in names:
                book = nbformat.v4.new_notebook()
                book.cells.append(nbformat.v4.new_markdown_cell(
                    feedback_markdown(grades, learner, numbers=[nb.number])))
                zf.writestr(name, nbformat.writes(book))
                written += 1
    return written, left_out


def feedback_file_name(learner: str) -> str:
    """A safe file name for ``learner``'s feedback (letters, digits, ``-``, ``_`` and ``.``)."""
    return (re.sub(r"[^\w.-]+", "_", learner).strip("._") or "learner") + ".md"


def feedback_markdown(grades: ClassGrades, learner: str, numbers: Iterable[str] | None = None) -> str:
    """The feedback file of one learner, in Markdown (``numbers``: only these notebooks'
    sections, after the totals of all)."""
    row = grades.row(learner)
    n_pass = sum(g.status == PASSED for g in row)
    weighted = "" if grades.whole_course else (
        f" ({_num(grades.points(learner))} of {_num(grades.max_points)} points; the exercises set: "
        f"{grades.exercises_text()})")
    lines = [f"# {grades.assignment}: feedback for {learner}", "",
             f"You passed **{n_pass} of {len(row)}** exercises{weighted}. Each exercise below was checked "
             "by running your notebook from the top in a fresh kernel and calling the same checker "
             "as in the notebook on your answer. ✓ passed, ✗ not yet (with the hint), · not "
             "attempted or not returned, ⊘ contains the course's worked solution (scores "
             "nothing), ⚠ could not run, ? missing.", ""]
    for nb in grades.notebooks:
        if numbers is not None and nb.number not in numbers:
            continue
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
        mean = f"{sum(scores) / len(scores):.1f} of {_num(grades.notebook_max(nb))}" if scores else "-"
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
             + (f"({grades.max_points} exercises, one point each)." if grades.whole_course else
                f"({len(grades.weights)} exercises, {_num(grades.max_points)} points).")
             + f" Exercises set: {grades.exercises_text()}.", ""]
    for ex_id, title, st, hints in _per_exercise(grades):
        counts = ", ".join(f"{st[s]} {s}" for s in STATUSES if st[s])
        lines += [f"## {ex_id} {title}", "", counts + ".", ""]
        if hints:
            lines += ["| learners | hint |", "|---:|---|"]
            lines += [f"| {count} | {' '.join(text.replace('|', '/').split())} |"
                      for text, count in hints.most_common()]
            lines.append("")
    return "\n".join(lines + _extra_sections(grades))


def write_reports(grades: ClassGrades, out: Path, *, moodle_max: float = 100,
                  moodle_headers: str | Mapping[str, str] | None = "en",
                  canvas_points: float | None = None) -> dict:
    """Write every file of a graded class into ``out``: grades.csv, feedback/, summary.md,
    canvas.csv, canvas_reupload.zip, moodle.csv, moodle_feedback.zip. Returns what the summary
    reports: ``feedback`` (paths), ``no_canvas``, ``no_moodle`` (rows without an id),
    ``reupload`` and ``moodle_zip`` (files written)."""
    out.mkdir(parents=True, exist_ok=True)
    write_csv(grades, out / "grades.csv")
    feedback = write_feedback(grades, out / "feedback")
    (out / "summary.md").write_text(summary_markdown(grades), encoding="utf-8")
    no_canvas = write_canvas(grades, out / "canvas.csv", canvas_points)
    no_moodle = write_moodle(grades, out / "moodle.csv", moodle_max, moodle_headers)
    reupload, _ = write_canvas_reupload(grades, out / "canvas_reupload.zip")
    moodle_zip, _ = write_moodle_feedback(grades, out / "moodle_feedback.zip")
    return {"feedback": feedback, "no_canvas": no_canvas, "no_moodle": no_moodle,
            "reupload": reupload, "moodle_zip": moodle_zip,
            "canvas_points": _num(grades.max_points if canvas_points is None else canvas_points)}


STATE_FILE = "grades.json"


def seed_digest(seed: str | None) -> str:
    """A digest of the teacher's seed: a regrade can tell it was the same without storing it."""
    return hashlib.sha256(f"attention-kit-grade-seed:{seed}".encode()).hexdigest()[:16]


def save_state(grades: ClassGrades, path: Path, seed: str | None = None) -> None:
    """Everything a regrade of a few learners needs (``grades.json`` in the grades folder)."""
    state = {"version": 1, "learners": grades.learners, "assignment": grades.assignment,
             "exercises": grades.weights, "late_penalty": grades.late_penalty,
             "graded_at": grades.graded_at.isoformat(), "seed": seed_digest(seed),
             "info": {name: asdict(info) for name, info in grades.info.items()},
             "grades": [asdict(g) for g in grades.by_key.values()],
             "extra_notes": grades.extra_notes, "flags": grades.flags,
             "not_graded": [list(x) for x in grades.not_graded]}
    path.write_text(json.dumps(state, ensure_ascii=False, indent=1), encoding="utf-8")


def load_state(path: Path) -> tuple[ClassGrades, dict]:
    """The class saved by :func:`save_state`, and the raw state (for its ``seed`` digest)."""
    state = json.loads(Path(path).read_text(encoding="utf-8"))
    if state.get("version") != 1:
        raise ValueError(f"{path}: not a grades state this grader can read")
    grades = [NotebookGrade(**{**g, "exercises": [ExerciseGrade(**e) for e in g["exercises"]]})
              for g in state["grades"]]
    result = ClassGrades(state["learners"], grades, info={k: Learner(**v) for k, v in state["info"].items()},
                         assignment=state["assignment"], late_penalty=state["late_penalty"],
                         not_graded=[tuple(x) for x in state["not_graded"]],
                         exercises=state["exercises"],
                         graded_at=datetime.fromisoformat(state["graded_at"]))
    for learner, notes in state.get("extra_notes", {}).items():
        result.extra_notes[learner] = list(notes)
    result.flags = {k: list(v) for k, v in state.get("flags", {}).items()}
    return result, state
