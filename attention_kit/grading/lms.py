"""The files Canvas and Moodle import: ``canvas.csv``, ``moodle.csv`` (Moodle's offline grading
worksheet), ``moodle_feedback.zip`` and ``canvas_reupload.zip`` (each LMS's bulk feedback upload).
Which importer each follows is said at each writer."""

from __future__ import annotations

import csv
import hashlib
import json
import re
import zipfile
from pathlib import Path, PurePosixPath
from typing import Mapping

import nbformat

from ..i18n import _
from .class_grades import ClassGrades, lms_comment, number_text, whole_points
from .feedback import feedback_file_name, feedback_markdown
from .submissions import CANVAS, CANVAS_ANONYMOUS

__all__ = ["write_canvas", "canvas_anonymous", "write_moodle", "write_canvas_reupload", "write_moodle_feedback",
           "moodle_strings", "MOODLE_STRINGS", "MOODLE_COLUMNS"]


def _scaled(grades: ClassGrades, learner: str, maximum: float) -> float:
    """The learner's points after the late penalty, on a scale of ``maximum``; ValueError when
    outside ``[0, maximum]`` (an importer would skip or misread it)."""
    total = grades.max_points
    value = round(grades.final(learner) / total * maximum, 2) if total else 0.0
    if not 0 <= value <= maximum:
        raise ValueError(_("{learner}'s grade {value} is outside 0..{maximum}").format(
            learner=learner, value=value, maximum=maximum))
    return value


def write_canvas(grades: ClassGrades, path: Path, points_possible: float | None = None) -> int:
    """``canvas.csv`` in Canvas's gradebook import format, the points on ``points_possible``
    (the assignment's "Points" in Canvas; default: the exercises' points, weighted); returns how
    many rows lack a Canvas id (learners not named by a Canvas download, whom Canvas matches by
    name only). Learners of Canvas's anonymous grading have no user id Canvas's importer could
    match: they are left out of the file (:func:`canvas_anonymous` lists them for SpeedGrader)."""
    possible = grades.max_points if points_possible is None else whole_points(points_possible)
    if possible <= 0:
        raise ValueError(_("Canvas points possible must be above 0, not {possible}").format(possible=possible))
    missing = 0
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", grades.assignment])
        # as in Canvas's own export: the points the assignment is out of. Canvas reads only the
        # assignment columns of this row, so its Section cell can say what was set.
        writer.writerow(["    Points Possible", "", "", "",
                         f"exercises set: {grades.exercises_text()}", number_text(possible)])
        for learner in grades.learners:
            info = grades.info[learner]
            if info.anonymous_id:
                continue
            missing += not info.canvas_id
            writer.writerow([info.name, info.canvas_id, "", "", "",
                             number_text(_scaled(grades, learner, possible))])
    return missing


def canvas_anonymous(grades: ClassGrades, points_possible: float | None = None) -> list[tuple[str, float]]:
    """``(anonymous id, points on the Canvas scale)`` of every learner of Canvas's anonymous
    grading: Canvas's gradebook import matches a row by user id, SIS id or name, none of which
    an anonymous learner has, so these grades are entered in SpeedGrader, which opens a learner
    by anonymous id (``.../gradebook/speed_grader?assignment_id=<id>&anonymous_id=<id>``)."""
    possible = grades.max_points if points_possible is None else whole_points(points_possible)
    return [(grades.info[ln].anonymous_id, _scaled(grades, ln, possible))
            for ln in grades.learners if grades.info[ln].anonymous_id]


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
            raise ValueError(_("--moodle-headers {spec}: neither a language of {languages} nor a JSON file").format(
                spec=repr(spec), languages=", ".join(MOODLE_STRINGS)))
        try:
            spec = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(_("--moodle-headers {path}: not a JSON object of strings ({error})").format(
                path=path, error=exc)) from None
    unknown = set(spec) - set(MOODLE_STRINGS["en"])
    if unknown or not all(isinstance(v, str) for v in spec.values()):
        raise ValueError(_("Moodle strings: unknown keys {unknown} (known: {known}), or a value that is not "
                           "text").format(unknown=sorted(unknown), known=", ".join(MOODLE_STRINGS["en"])))
    return {**MOODLE_STRINGS["en"], **spec}


def write_moodle(grades: ClassGrades, path: Path, maximum: float = 100,
                 strings: str | Mapping[str, str] | None = "en") -> int:
    """``moodle.csv`` in the columns of Moodle's offline grading worksheet (upload it with
    "Upload grading worksheet"), the grade on the assignment's ``maximum`` grade (Moodle's
    "Maximum grade", 100 unless the teacher changed it), the headers in the language of
    ``strings`` (:func:`moodle_strings`); returns how many rows lack a participant number."""
    if not maximum > 0:
        raise ValueError(_("the Moodle maximum grade must be above 0, not {maximum}").format(maximum=maximum))
    text = moodle_strings(strings)
    point = text["decsep"]
    missing = 0
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow([text[key] for key in MOODLE_COLUMNS])
        for learner in grades.learners:
            info = grades.info[learner]
            missing += not info.moodle_id
            returned = any((learner, nb.number) in grades.by_key for nb in grades.notebooks)
            grade = f"{_scaled(grades, learner, maximum):.2f}".replace(".", point)
            # PHP's strtotime reads ISO 8601; a learner not regraded keeps the time of their grade
            modified = grades.modified_at(learner).isoformat(timespec="seconds")
            writer.writerow([text["hiddenuser"] + info.moodle_id if info.moodle_id else "", info.name, "",
                             text["submissionstatus_submitted" if returned else "submissionstatus_new"],
                             grade, f"{maximum:.2f}".replace(".", point), text["yes"],
                             "", modified, lms_comment(grades, learner)])
    return missing


def _moodle_folder_name(learner: str, participant: str) -> str:
    # Moodle splits each path part on "_" and wants the participant number second: no "_" or "/"
    # in the name (Moodle matches by the number; the name is for the teacher's eyes). The
    # trailing "_" is the form before 4.1 (the path part must split into five pieces there);
    # 4.1 and later accept four or five (importziplib.php, is_valid_filename_for_import)
    name = re.sub(r"[_/\\]+", " ", learner).strip() or "learner"
    return f"{name}_{participant}_assignfeedback_file_"


def write_moodle_feedback(grades: ClassGrades, path: Path) -> tuple[int, int]:
    """``moodle_feedback.zip``: every feedback file in the folder Moodle's own download names
    (``<Full name>_<participant>_assignfeedback_file_/<learner>.md``), for "Upload multiple
    feedback files in a zip" (the assignment needs the "Feedback files" feedback type). Returns
    (files written, learners without a participant number, left out)."""
    written = missing = 0
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for learner in grades.learners:
            participant = grades.info[learner].moodle_id
            if not participant:
                missing += 1
                continue
            folder = _moodle_folder_name(grades.info[learner].name, participant)
            name = f"{folder}/{feedback_file_name(learner)}"
            _write_entry(zf, name, feedback_markdown(grades, learner))
            written += 1
    return written, missing


def _canvas_download_name(source: str | None) -> str | None:
    """The file name Canvas's download gave a submission, if Canvas's re-upload can match it:
    a user id and an attachment id in it, or an anonymous id and an attachment id."""
    if not source:
        return None
    name = PurePosixPath(source.replace("\\", "/")).name
    # Canvas's own rule (infer_comment_context_from_filename): the name split on "_", every
    # "LATE" part dropped; "anon" first: the anonymous id and the attachment id follow it;
    # otherwise the first two parts that are all digits are the user and attachment ids
    parts = [p for p in name.split("_") if p != "LATE"]
    m = CANVAS_ANONYMOUS.match(name)
    if m:
        return name if parts[:3] == ["anon", m.group("anon"), m.group("submission")] else None
    m = CANVAS.match(name)
    if not m or parts[0] == "anon":
        return None
    digits = [part for part in parts if re.fullmatch(r"[0-9]+", part)][:2]
    return name if digits == [m.group("id"), m.group("submission")] else None


def _write_entry(zf: zipfile.ZipFile, name: str, text: str) -> None:
    """One file of a zip, with a fixed time: the same feedback gives the same bytes."""
    zf.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), text,
                compress_type=zipfile.ZIP_DEFLATED)


def write_canvas_reupload(grades: ClassGrades, path: Path,
                          learners: list[str] | None = None) -> tuple[int, list[str]]:
    """``canvas_reupload.zip``: per returned notebook with a Canvas download name, a feedback
    notebook under that same name (user id and attachment id in it; for anonymous grading the
    anonymous id and attachment id, which Canvas matches to the submission without naming the
    learner), for the gradebook's "Re-upload submissions". ``learners``: only theirs (a
    regrade's: Canvas's re-upload adds a comment per file, the ones it has too). The same
    feedback gives the same bytes (the cell's id is made from the learner and notebook).
    Returns (files written, learners with no such name, left out)."""
    written, left_out = 0, []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for learner in (grades.learners if learners is None else learners):
            names = [(nb, _canvas_download_name(grades.by_key[(learner, nb.number)].source))
                     for nb in grades.notebooks if (learner, nb.number) in grades.by_key]
            names = [(nb, n) for nb, n in names if n]
            if not names:
                left_out.append(learner)
            for nb, name in names:
                book = nbformat.v4.new_notebook()
                cell_id = hashlib.sha256(f"{learner}\0{nb.number}\0feedback".encode()).hexdigest()[:8]
                book.cells.append(nbformat.v4.new_markdown_cell(
                    feedback_markdown(grades, learner, numbers=[nb.number]), id=cell_id))
                _write_entry(zf, name, nbformat.writes(book))
                written += 1
    return written, left_out


