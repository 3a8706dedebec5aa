"""Everything a graded class leaves in its grades folder, written in one place for a run over
the whole class, a regrade and a merge of shards (``shards.py``): the reports (``reports.py``),
``not_graded.csv``, the state ``grades.json`` with what a later merge or regrade compares (the
answers' prints, the limits, the grader's own digest), and the lines the printed summary says
about the files for Canvas and Moodle."""

from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import asdict
from pathlib import Path
from typing import Mapping

from ..check import registry
from ..i18n import _
from .class_grades import ClassGrades
from .reports import STATE_FILE, save_state, write_reports
from .solutions import NOTEBOOK_DIR

__all__ = ["write_class", "lms_lines", "grader_digest", "state_extra", "files_text"]

PACKAGE = Path(__file__).resolve().parents[1]


def grader_digest() -> str:
    """A digest of what decides a grade besides the settings: the package's Python sources (the
    checkers, the grader, the library the notebooks call) and the code cells of the full
    notebooks (the worked solutions a copy is compared with). Shards graded with two versions
    of the course do not merge."""
    h = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" not in path.parts:
            h.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    for nb in registry.NOTEBOOKS:
        path = NOTEBOOK_DIR / nb.file
        if path.is_file():
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
            code = ["".join(c.get("source", "")) for c in cells if c.get("cell_type") == "code"]
            h.update(nb.file.encode() + b"\0" + json.dumps(code).encode() + b"\0")
    return h.hexdigest()[:16]


def state_extra(prints: Mapping[tuple[str, str], Mapping[str, str]],
                teacher: Mapping[str, list[str]], limits) -> dict:
    """The keys of ``grades.json`` beside the grades: the digests of every graded notebook's
    answers (``similarity.class_prints``) and of the teacher's, the limits the notebooks ran
    under, and :func:`grader_digest`."""
    return {"prints": [[learner, number, dict(p)] for (learner, number), p in sorted(prints.items())],
            "teacher_prints": {k: list(v) for k, v in sorted(teacher.items())},
            "limits": asdict(limits) if not isinstance(limits, Mapping) else dict(limits),
            "grader": grader_digest()}


def write_class(result: ClassGrades, out: Path, settings: Mapping, *, seed: str | None = None,
                digest: str | None = None, extra: Mapping | None = None,
                regraded: list[str] | None = None) -> dict:
    """Write every file of ``result`` into ``out``: the reports and the LMS files on the
    ``settings``' scales (``write_reports``: returns what it returns), ``grades.json`` (with
    the seed's digest, ``digest`` when only that is known, and ``extra``) and
    ``not_graded.csv``."""
    written = write_reports(result, out, moodle_max=settings["moodle_max"],
                            moodle_headers=settings["moodle_headers"],
                            canvas_points=settings["canvas_points"], regraded=regraded)
    save_state(result, out / STATE_FILE, seed, settings, digest=digest, extra=extra)
    with open(out / "not_graded.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["file", "why it was not graded"])
        writer.writerows(result.not_graded)
    return written


def files_text(n: int) -> str:
    return (_("{n} file") if n == 1 else _("{n} files")).format(n=n)


def lms_lines(result: ClassGrades, written: dict, out: Path, moodle_max: float) -> list[str]:
    """What the summary says about the files written: how many learners each LMS file can
    match, the scales, the feedback to upload, and the anonymous Canvas learners' points."""
    n, n_anon = len(result.learners), len(written["anonymous"])
    no_canvas, no_moodle = written["no_canvas"], written["no_moodle"]
    lms = []
    if no_canvas + n_anon < n or n_anon:  # the anonymous ones are not in canvas.csv: not counted
        lms.append((_("canvas.csv ({k} of {n} learners with a Canvas id; {anonymous} anonymous, not in it: "
                      "SpeedGrader, below)") if n_anon else
                    _("canvas.csv ({k} of {n} learners with a Canvas id)")).format(
            k=n - n_anon - no_canvas, n=n, anonymous=n_anon))
    if no_moodle < n:
        lms.append(_("moodle.csv ({k} of {n} learners with a Moodle participant number)").format(k=n - no_moodle, n=n))
    files = dict(grades=out / "grades.csv", feedback=len(written["feedback"]), folder=out / "feedback",
                 summary=out / "summary.md")
    lines = [(_("Wrote {grades}, {feedback} feedback files in {folder}, {summary}, and the LMS imports "
                "canvas.csv and moodle.csv: {lms}.").format(lms="; ".join(lms), **files) if lms else
              _("Wrote {grades}, {feedback} feedback files in {folder}, {summary}, and the LMS imports "
                "canvas.csv and moodle.csv (no Canvas or Moodle ids in these submissions' names: match "
                "the learners by name).").format(**files))]
    upload = (_("canvas_reupload.zip ({n} files)").format(n=written["reupload"])
              if written["reupload_regraded"] is None else
              _("canvas_reupload_regraded.zip ({files}: only the regraded learners'; Canvas adds a comment "
                "for every file re-uploaded, so do not upload canvas_reupload.zip, the whole class's, "
                "again)").format(files=files_text(written["reupload_regraded"])))
    lines.append(_("LMS scales: canvas.csv on {points} points possible (set the Canvas assignment's Points "
                   "to {points}), moodle.csv on a maximum grade of {maximum} (set the same in the "
                   "assignment). Feedback to upload in bulk: {canvas}, moodle_feedback.zip ({moodle} files; "
                   "Moodle 3.1 and later).").format(points=written["canvas_points"], maximum=f"{moodle_max:g}",
                                                    canvas=upload, moodle=written["moodle_zip"]))
    if written["anonymous"]:
        lines.append(_("Canvas anonymous grading: canvas.csv cannot name these learners (Canvas's import "
                       "matches a user id); enter their points in SpeedGrader, opened at "
                       "...speed_grader?assignment_id=<assignment>&anonymous_id=<id>: {points}. Their "
                       "feedback is in canvas_reupload.zip under the download's anon_<id>_<attachment>_ "
                       "names, which Canvas's re-upload matches by anonymous id.").format(
            points=", ".join(f"{a} {p:g}" for a, p in written["anonymous"])))
    return lines
