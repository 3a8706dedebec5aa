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
  out of the name part for this reason). Anonymous grading's ``[LATE_]anon_<id>_<attachment>_``
  names are kept too: Canvas drops ``LATE`` and, ``anon`` first, finds the submission by its
  anonymous id (``app/models/abstract_assignment.rb``, the same method). The file is a notebook
  because Canvas shows it under the name of the learner's attachment.
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
  (``<Full name>_<participant>_assignfeedback_file_/<learner>.md``), for "Upload multiple
  feedback files in a zip" (mod/assign/feedback/file/importziplib.php,
  ``is_valid_filename_for_import``: a path part split on ``_`` into at least four pieces whose
  second is the participant number and third and fourth name the plugin; before Moodle 4.1
  five pieces, hence the trailing ``_`` Moodle's own downloads had then).
"""

from __future__ import annotations

import csv
import hashlib
import json
import textwrap
import unicodedata
from collections import Counter
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Mapping

from ..i18n import N_, _
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
from .class_grades import (  # noqa: F401
    DEFAULT_ASSIGNMENT,
    ClassGrades,
    default_assignment,
    lms_comment,
    number_text,
    percent_text,
)
from .feedback import feedback_file_name, feedback_markdown, write_feedback  # noqa: F401
from .lms import (  # noqa: F401  (the LMS writers, where they were before)
    MOODLE_COLUMNS,
    MOODLE_STRINGS,
    canvas_anonymous,
    moodle_strings,
    write_canvas,
    write_canvas_reupload,
    write_moodle,
    write_moodle_feedback,
)
from .submissions import Learner

__all__ = ["ClassGrades", "write_csv", "feedback_markdown", "write_feedback", "summary_text",
           "summary_markdown", "feedback_file_name", "write_canvas", "write_moodle",
           "write_canvas_reupload", "write_moodle_feedback", "moodle_strings", "write_reports",
           "save_state", "load_state", "MOODLE_STRINGS", "MOODLE_COLUMNS", "DEFAULT_ASSIGNMENT",
           "default_assignment"]


#: The statuses as the summary words them (grades.csv keeps the statuses themselves, in English).
STATUS_WORDS = {PASSED: N_("passed"), FAILED: N_("failed"), NOT_ATTEMPTED: N_("not attempted"),
                SOLUTION: N_("contains the worked solution"), COULD_NOT_RUN: N_("could not run"),
                MISSING: N_("missing"), NOT_SUBMITTED: N_("not submitted")}


def write_csv(grades: ClassGrades, path: Path) -> None:
    """``grades.csv``: learner, id, per exercise its verdict and points, per notebook its score,
    points, max points, percent, notes."""
    header = ["learner", "id"]
    for ex_id, ex in grades.exercises():
        w = grades.weights[ex_id]
        header += [f"{ex_id} {ex.title}", f"{ex_id} points" + ("" if w == 1 else f" (of {number_text(w)})")]
    header += [f"{nb.number} score (of {number_text(grades.notebook_max(nb))})"
               + ("" if grades.whole_course else f": {grades.exercises_text(nb)}")
               for nb in grades.notebooks]
    header += ["late", "late penalty", "points", "max points", "percent", "notes"]
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        for learner in grades.learners:
            cells = [learner, grades.info[learner].lms_id]
            for g in grades.row(learner):
                cells += [g.status, number_text(grades.weights[g.id]) if g.status == PASSED else 0]
            cells += [number_text(grades.points(learner, nb)) for nb in grades.notebooks]
            points = grades.final(learner)
            cells += [" ".join(grades.late(learner)), number_text(grades.penalty(learner)), number_text(points),
                      number_text(grades.max_points), percent_text(points, grades.max_points),
                      " | ".join(grades.notes(learner))]
            writer.writerow(cells)
        for file, why in grades.not_graded:  # every file of the submissions is in this file
            writer.writerow(["", ""] + [""] * (len(header) - 3)
                            + [_("not graded: {file}: {why}").format(file=file, why=why)])


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


def _pad(text: str, width: int, align: str = "<") -> str:
    """``text`` padded to ``width`` columns of a terminal, where a Chinese character takes two."""
    room = max(0, width - sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text))
    left = {"<": 0, ">": room, "^": room // 2}[align]
    return " " * left + text + " " * (room - left)


def summary_text(grades: ClassGrades, width: int = 120) -> str:
    """The one-screen summary: per exercise, how many passed and the most frequent hint."""
    n = len(grades.learners)
    heads = [(_("exercise"), 32, "<"), (_("passed"), 7, "^"), (_("failed"), 6, ">"),
             (_("not tried"), 9, ">"), (_("copied"), 6, ">"), (_("other"), 5, ">")]
    lines = [" ".join(_pad(text, w, how) for text, w, how in heads) + "  " + _("most frequent hint (learners)")]
    for ex_id, title, st, hints in _per_exercise(grades):
        other = n - st[PASSED] - st[FAILED] - st[NOT_ATTEMPTED] - st[SOLUTION]
        hint = ""
        if hints:
            text, count = hints.most_common(1)[0]
            hint = f"({count}) {text}"
        head = (f"{_clip(ex_id + ' ' + title, 32):<32} {st[PASSED]:>3}/{n:<3} {st[FAILED]:>6} "
                f"{st[NOT_ATTEMPTED]:>9} {st[SOLUTION]:>6} {other:>5}  ")
        lines.append(head + _clip(hint, max(20, width - len(head))))
    lines += [_("copied = contains the course's worked solution, which scores nothing"),
              _("other = could not run, missing or not submitted; see notes in grades.csv")]
    lines += ["", " ".join([_pad(_("notebook"), 38), _pad(_("returned"), 8, ">"), _pad(_("mean score"), 11, ">")])]
    for nb in grades.notebooks:
        scores = [grades.points(ln, nb) for ln in grades.learners if (ln, nb.number) in grades.by_key]
        mean = (_("{mean:.1f} of {max_points}").format(mean=sum(scores) / len(scores),
                                                       max_points=number_text(grades.notebook_max(nb)))
                if scores else "-")
        lines.append(f"{_clip(nb.number + ' ' + nb.title, 38):<38} {len(scores):>4}/{n:<4} {mean:>10}")
    late = [f"{ln} ({', '.join(grades.late(ln))})" for ln in grades.learners if grades.late(ln)]
    if late:
        lines += ["", _("Returned late: {learners}").format(learners=", ".join(late))]
    pairs = sorted({note for notes in grades.flags.values() for note in notes})
    if pairs:
        lines += ["", _("Answers to read side by side (more alike than the worked solution explains; "
                        "no points taken):")]
        for p in pairs:  # wrapped, not clipped: a group's note names every member
            lines += textwrap.wrap(" ".join(p.split()), width, initial_indent="  ", subsequent_indent="    ")
    return "\n".join(lines)


def _extra_sections(grades: ClassGrades) -> list[str]:
    """Late notebooks, similar answers to read, and files not graded: Markdown lines."""
    lines: list[str] = []
    warning = grades.late_warning()
    if warning:
        lines += ["## " + _("Warning: late work"), "",
                  _("{text}.").format(text=warning[0].upper() + warning[1:]), ""]
    late = [(ln, grades.late(ln)) for ln in grades.learners if grades.late(ln)]
    if late:
        rule = (_("{penalty} % of a late notebook's points taken off").format(penalty=number_text(grades.late_penalty))
                if grades.late_penalty else _("no penalty set (--late-penalty)"))
        lines += ["## " + _("Returned late"), "", _("{n} learner(s); {rule}.").format(n=len(late), rule=rule), ""]
        lines += [f"- {ln}: {', '.join(nbs)}" + (_(" ({off} points off)").format(off=number_text(grades.penalty(ln)))
                                                 if grades.penalty(ln) else "") for ln, nbs in late]
        lines.append("")
    told = [(ln, nb, note) for (ln, nb), g in sorted(grades.by_key.items()) for note in g.teacher_notes]
    if told:
        lines += ["## " + _("For the teacher: notebooks the grader could not check"), ""]
        lines += ["- " + _("{learner}, notebook {number}: {note}").format(learner=ln, number=nb, note=note)
                  for ln, nb, note in told] + [""]
    flagged = [(ln, notes) for ln, notes in grades.flags.items() if notes]
    if flagged:
        lines += ["## " + _("For the teacher to read: answers more alike than the worked solution explains"),
                  "", _("Nobody lost points for this: read the answers side by side and decide."), ""]
        seen = set()
        for _learner, notes in flagged:
            for note in notes:
                if note not in seen:
                    seen.add(note)
                    lines.append(f"- {note}")
        lines.append("")
    if grades.not_graded:
        lines += ["## " + _("Files not graded"), ""] + [f"- `{f}`: {why}" for f, why in grades.not_graded] + [""]
    return lines


def summary_markdown(grades: ClassGrades) -> str:
    """The summary with every hint and its count, per exercise (``summary.md``)."""
    n = len(grades.learners)
    lines = ["# " + _("Class summary: {assignment}").format(assignment=grades.assignment), "",
             _("{n} learners; notebooks set: {notebooks} ").format(
                 n=n, notebooks=", ".join(nb.number for nb in grades.notebooks))
             + (_("({n} exercises, one point each).").format(n=grades.max_points) if grades.whole_course else
                _("({n} exercises, {points} points).").format(n=len(grades.weights),
                                                              points=number_text(grades.max_points)))
             + _(" Exercises set: {exercises}.").format(exercises=grades.exercises_text()), ""]
    for ex_id, title, st, hints in _per_exercise(grades):
        counts = ", ".join(f"{st[s]} {_(STATUS_WORDS[s])}" for s in STATUSES if st[s])
        lines += [f"## {ex_id} {title}", "", _("{counts}.").format(counts=counts), ""]
        if hints:
            lines += ["| " + _("learners") + " | " + _("hint") + " |", "|---:|---|"]
            lines += [f"| {count} | {' '.join(text.replace('|', '/').split())} |"
                      for text, count in hints.most_common()]
            lines.append("")
    return "\n".join(lines + _extra_sections(grades))


def write_reports(grades: ClassGrades, out: Path, *, moodle_max: float = 100,
                  moodle_headers: str | Mapping[str, str] | None = "en",
                  canvas_points: float | None = None, regraded: list[str] | None = None) -> dict:
    """Write every file of a graded class into ``out``: grades.csv, feedback/, summary.md,
    canvas.csv, canvas_reupload.zip, moodle.csv, moodle_feedback.zip. Returns what the summary
    reports: ``feedback`` (paths), ``no_canvas``, ``no_moodle`` (rows without an id),
    ``reupload`` and ``moodle_zip`` (files written). ``regraded``: a regrade's learners, whose
    feedback alone goes into ``canvas_reupload_regraded.zip`` too (``reupload_regraded``: its
    files; None when no regrade, and an old one is removed)."""
    out.mkdir(parents=True, exist_ok=True)
    possible = grades.max_points if canvas_points is None else canvas_points
    grades.scales = {"Canvas": possible, "Moodle": moodle_max}
    write_csv(grades, out / "grades.csv")
    feedback = write_feedback(grades, out / "feedback")
    (out / "summary.md").write_text(summary_markdown(grades), encoding="utf-8")
    no_canvas = write_canvas(grades, out / "canvas.csv", canvas_points)
    no_moodle = write_moodle(grades, out / "moodle.csv", moodle_max, moodle_headers)
    reupload, _ = write_canvas_reupload(grades, out / "canvas_reupload.zip")
    only = out / REGRADED_REUPLOAD  # a regrade's: only its learners (Canvas comments every file)
    only.unlink(missing_ok=True)
    reupload_regraded = None if regraded is None else write_canvas_reupload(grades, only, regraded)[0]
    moodle_zip, _ = write_moodle_feedback(grades, out / "moodle_feedback.zip")
    return {"feedback": feedback, "no_canvas": no_canvas, "no_moodle": no_moodle,
            "reupload": reupload, "reupload_regraded": reupload_regraded, "moodle_zip": moodle_zip, "canvas_points": number_text(possible),
            "anonymous": canvas_anonymous(grades, canvas_points)}


STATE_FILE = "grades.json"
REGRADED_REUPLOAD = "canvas_reupload_regraded.zip"


def seed_digest(seed: str | None) -> str:
    """A digest of the teacher's seed: a regrade can tell it was the same without storing it."""
    return hashlib.sha256(f"attention-kit-grade-seed:{seed}".encode()).hexdigest()[:16]


#: What a notebook's grade holds that differs from run to run (how long it took): not kept.
_TIMINGS = ("seconds", "check_seconds", "requests")


def save_state(grades: ClassGrades, path: Path, seed: str | None = None,
               settings: Mapping | None = None, *, digest: str | None = None,
               extra: Mapping | None = None) -> None:
    """Everything a regrade of a few learners needs (``grades.json`` in the grades folder):
    the grades, and the ``settings`` they were made with (a regrade reuses them). ``digest``:
    the seed's digest when the seed itself is not known (a merge of shards); ``extra``: more
    keys (the answers' prints, the limits, a shard's place in its class). Written in a fixed
    order, without the grading times: the same grades give the same bytes."""
    state = {"version": 1, "learners": grades.learners, "assignment": grades.assignment,
             "settings": dict(settings or {}),
             "modified": {k: v.isoformat() for k, v in sorted(grades.modified.items())},
             "exercises": grades.weights, "late_penalty": grades.late_penalty,
             "graded_at": grades.graded_at.isoformat(), "seed": digest or seed_digest(seed),
             "info": {name: asdict(info) for name, info in sorted(grades.info.items())},
             "grades": [{k: v for k, v in asdict(g).items() if k not in _TIMINGS}
                        for _, g in sorted(grades.by_key.items())],
             "extra_notes": dict(sorted(grades.extra_notes.items())),
             "flags": dict(sorted(grades.flags.items())),
             "not_graded": [list(x) for x in grades.not_graded], **dict(extra or {})}
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
    result.modified = {k: datetime.fromisoformat(v) for k, v in state.get("modified", {}).items()}
    return result, state
