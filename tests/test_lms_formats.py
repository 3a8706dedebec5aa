"""The files for Canvas and Moodle, read back the way each LMS's importer reads them.

Each reader below follows the LMS's public source (no kernels: a small class is built directly):

* Moodle's grading worksheet: moodle/moodle mod/assign/feedback/offline/importgradeslib.php
  (``init``: columns found by the exact strings ``get_string('gradenoun')``,
  ``get_string('recordid', 'assign')``, ``get_string('lastmodifiedgrade', 'assign')`` and the
  feedback plugins' field names; ``next``: the participant number is what follows
  ``get_string('hiddenuser', 'assign')``) and locallib.php (``process_import_grades``: the grade
  through ``unformat_float``, skipped when below 0 or above the assignment's maximum grade).
* Moodle's feedback zip: mod/assign/feedback/file/importziplib.php
  (``is_valid_filename_for_import``).
* Canvas's gradebook import: instructure/canvas-lms lib/gradebook_importer.rb
  (``row_has_student_headers?``, ``update_column_count``, ``header?``,
  ``check_for_non_student_row``, ``process_pp``, ``process_student``).
* Canvas's "Re-upload submissions": app/models/abstract_assignment.rb (formerly assignment.rb)
  ``infer_comment_context_from_filename``: the base name split on ``_`` with every ``LATE``
  part dropped; when the first part is ``anon``, the next two are the anonymous id and the
  attachment id (the submission found by its anonymous id); otherwise the first two parts
  that are all digits are the user id and the attachment id of the learner's submission.
"""

from __future__ import annotations

import csv
import json
import re
import zipfile
from datetime import datetime, timezone

import nbformat
import pytest

from attention_kit.check import registry
from attention_kit.grading import FAILED, PASSED, ExerciseGrade, NotebookGrade
from attention_kit.grading.reports import (
    MOODLE_STRINGS,
    ClassGrades,
    load_state,
    save_state,
    write_canvas,
    write_canvas_reupload,
    write_moodle,
    write_moodle_feedback,
    write_reports,
)
from attention_kit.grading.submissions import Learner, find_submissions

WHEN = datetime(2026, 3, 5, 10, 0, tzinfo=timezone.utc)
# the class below is graded on notebooks 02 and 04: their exercises, from the registry (an exercise
# added to either changes the points, and the tests follow)
N02, N04 = len(registry.notebook("02").exercises), len(registry.notebook("04").exercises)
POINTS = N02 + N04
# Canvas download names (lib/content_zipper.rb get_filename): name, LATE, user id, attachment id
CANVAS_FILES = {("smithjohn", "02"): "smithjohn_123456_7890123_02_self_attention.ipynb",
                ("smithjohn", "04"): "smithjohn_LATE_123456_7890124_04_masks_and_positions.ipynb",
                ("müllerjürgen", "02"): "müllerjürgen_1007_555_02_self_attention.ipynb"}


def _grades(**kw) -> ClassGrades:
    """Four learners: two from Canvas (one late), one from Moodle, one anonymous on Canvas."""
    nb2, nb4 = registry.notebook("02"), registry.notebook("04")

    def notebook(learner, nb, n_pass, source):
        return NotebookGrade(learner, nb.number, source, [
            ExerciseGrade(i, ex.title, PASSED if k < n_pass else FAILED, "" if k < n_pass else "hint")
            for k, (i, ex) in enumerate(nb.numbered())])

    grades = [notebook("smithjohn", nb2, len(nb2.exercises), CANVAS_FILES[("smithjohn", "02")]),
              notebook("smithjohn", nb4, 2, CANVAS_FILES[("smithjohn", "04")]),
              notebook("müllerjürgen", nb2, 3, "download.zip/" + CANVAS_FILES[("müllerjürgen", "02")]),
              notebook("Dana_Lee", nb2, 4, "Dana_Lee_4711_assignsubmission_file_/02_self_attention.ipynb"),
              notebook("anon_Ab3xZ", nb2, 1, "anon_Ab3xZ_70017_02_self_attention.ipynb")]
    grades[1].late = True
    info = {"smithjohn": Learner("smithjohn", canvas_id="123456", late=True),
            "müllerjürgen": Learner("müllerjürgen", canvas_id="1007"),
            "Dana_Lee": Learner("Dana_Lee", moodle_id="4711"),
            "anon_Ab3xZ": Learner("anon_Ab3xZ", anonymous_id="Ab3xZ")}
    kw.setdefault("notebooks", ["02", "04"])
    return ClassGrades(list(info), grades, info=info, assignment="Week 2 (4242)", graded_at=WHEN,
                       late_penalty=50, **kw)


# --- Moodle -------------------------------------------------------------------------------

def unformat_float(text: str, decsep: str) -> float:
    """moodlelib.php unformat_float: spaces out, the site's decimal separator to '.'."""
    text = text.strip().replace(" ", "").replace(decsep, ".")
    return float(text)


def moodle_import(path, strings: dict[str, str], maximum: float, participants: set[int]):
    """{participant: (grade, modified, comments)} as importgradeslib.php and locallib.php read it;
    raises when Moodle would reject the file (a column missing: ``invalidgradeimport``)."""
    rows = list(csv.reader(open(path, encoding="utf-8")))
    columns = rows[0]
    index = {key: columns.index(strings[key]) if strings[key] in columns else -1
             for key in ("gradenoun", "recordid", "lastmodifiedgrade", "feedbackcomments")}
    if min(index["gradenoun"], index["recordid"], index["lastmodifiedgrade"]) < 0:
        raise ValueError("invalidgradeimport")
    out = {}
    for record in rows[1:]:
        idstr = record[index["recordid"]]
        unique = idstr[len(strings["hiddenuser"]):]
        if not unique.isdigit() or int(unique) not in participants:
            continue
        grade = unformat_float(record[index["gradenoun"]], strings["decsep"])
        assert 0 <= grade <= maximum, "out of range: Moodle skips it"
        modified = datetime.fromisoformat(record[index["lastmodifiedgrade"]])  # strtotime reads ISO 8601
        out[int(unique)] = (grade, modified, record[index["feedbackcomments"]])
    return out


@pytest.mark.parametrize("language", sorted(MOODLE_STRINGS))
def test_moodle_worksheet_imports_on_the_maximum_grade(tmp_path, language):
    grades = _grades()
    missing = write_moodle(grades, tmp_path / "moodle.csv", maximum=100, strings=language)
    assert missing == 3  # only Dana came from Moodle
    strings = MOODLE_STRINGS[language]
    got = moodle_import(tmp_path / "moodle.csv", strings, 100, {4711})
    # Dana passed 4 of the exercises of 02 and 04 (04 not returned), on a maximum of 100
    want = round(100 * 4 / POINTS, 2)
    assert set(got) == {4711} and got[4711][0] == want
    assert got[4711][1] == WHEN and f"02: 4/{N02}" in got[4711][2]
    raw = (tmp_path / "moodle.csv").read_text(encoding="utf-8")
    shown = f"{want:.2f}"
    assert (shown.replace(".", ",") if strings["decsep"] == "," else shown) in raw
    assert strings["maxgrade"] in raw.splitlines()[0]


def test_moodle_grade_on_another_maximum_and_wrong_maxima(tmp_path):
    write_moodle(_grades(), tmp_path / "m.csv", maximum=20)
    assert moodle_import(tmp_path / "m.csv", MOODLE_STRINGS["en"], 20, {4711})[4711][0] == round(20 * 4 / POINTS, 2)
    rows = list(csv.DictReader(open(tmp_path / "m.csv", encoding="utf-8")))
    assert list(rows[0])[:6] == ["Identifier", "Full name", "Email address", "Status", "Grade",
                                 "Maximum grade"]
    assert sorted(r["Identifier"] for r in rows) == ["", "", "", "Participant 4711"]
    with pytest.raises(ValueError):
        write_moodle(_grades(), tmp_path / "m.csv", maximum=0)
    # an English worksheet on a German Moodle: its importer finds no grade column
    with pytest.raises(ValueError, match="invalidgradeimport"):
        moodle_import(tmp_path / "m.csv", MOODLE_STRINGS["de"], 20, {4711})


def test_moodle_headers_from_a_file(tmp_path):
    own = {"recordid": "Kennung", "hiddenuser": "TN ", "gradenoun": "Note", "decsep": ","}
    (tmp_path / "strings.json").write_text(json.dumps(own), encoding="utf-8")
    write_moodle(_grades(), tmp_path / "m.csv", maximum=10, strings=str(tmp_path / "strings.json"))
    strings = {**MOODLE_STRINGS["en"], **own}
    assert moodle_import(tmp_path / "m.csv", strings, 10, {4711})[4711][0] == round(10 * 4 / POINTS, 2)
    (tmp_path / "bad.json").write_text(json.dumps({"grade": "x"}), encoding="utf-8")
    with pytest.raises(ValueError, match="unknown keys"):
        write_moodle(_grades(), tmp_path / "m.csv", strings=str(tmp_path / "bad.json"))
    with pytest.raises(ValueError, match="neither a language"):
        write_moodle(_grades(), tmp_path / "m.csv", strings="xx")


def moodle_zip_target(path: str, participants: set[int], before_4_1: bool = False):
    """importziplib.php is_valid_filename_for_import: (participant, plugin, file name) or None.
    From 4.1 a path part must split into at least four pieces (its comment: the 4.1 download's
    ``fullname_userid_plugintype_pluginname``, and the earlier ``..._pluginname_``); before 4.1
    into five."""
    if path.endswith("/") or path.rsplit("/", 1)[-1].startswith((".", "~")):
        return None
    parts = path.split("/")
    while parts:
        part = parts.pop(0)
        info = part.split("_", 4)  # PHP explode('_', $pathpart, 5)
        if len(info) < (5 if before_4_1 else 4) or not info[1].isdigit() or int(info[1]) not in participants:
            continue
        plugin = f"{info[2]}_{info[3]}"
        if plugin not in ("assignfeedback_file", "assignsubmission_file"):
            continue
        rest = info[4] if len(info) == 5 else ""
        return int(info[1]), plugin, "/".join([rest] + parts)
    return None


def test_moodle_feedback_zip_names_the_participant(tmp_path):
    written, missing = write_moodle_feedback(_grades(), tmp_path / "f.zip")
    assert (written, missing) == (1, 3)
    with zipfile.ZipFile(tmp_path / "f.zip") as zf:
        names = zf.namelist()
        assert names == ["Dana Lee_4711_assignfeedback_file_/Dana_Lee.md"]
        assert "feedback for Dana_Lee (4711)" in zf.read(names[0]).decode()
    for old in (False, True):  # the folder form every Moodle from 3.1 on accepts
        assert moodle_zip_target(names[0], {4711}, old) == (4711, "assignfeedback_file", "/Dana_Lee.md")
    assert moodle_zip_target("Dana Lee_4711_assignfeedback_file/Dana_Lee.md", {4711}, True) is None
    # the underscore in the name would have put the name's second half where the number goes
    assert moodle_zip_target("Dana_Lee_4711_assignfeedback_file/x.md", {4711}) is None


# --- Canvas -------------------------------------------------------------------------------

def canvas_import(path):
    """(assignment, points possible, {user id: score}) as gradebook_importer.rb reads canvas.csv."""
    rows = list(csv.reader(open(path, encoding="utf-8")))
    header = rows[0]
    assert len(header) > 3 and "Student" in header[0] and "ID" in header[1]  # row_has_student_headers?
    student_columns = 3
    if re.search(r"SIS\s+User\s+ID", header[2]) and re.search(r"SIS\s+Login\s+ID", header[3]):
        student_columns += 2
    assert "Section" in header[student_columns - 1]  # header?: the last student column
    assignments = header[student_columns:]
    assert len(assignments) == 1  # any other column would be a new assignment
    possible, scores = None, {}
    for row in rows[1:]:
        if "Points Possible" in row[0]:
            possible = float(row[student_columns])
            continue
        if row[1]:  # process_student: the Canvas user id; without one Canvas matches the name
            scores[int(row[1])] = float(row[student_columns])
    return assignments[0], possible, scores


def test_canvas_csv_on_the_assignments_points(tmp_path):
    grades = _grades()
    # Dana (Moodle) has no Canvas id; the anonymous learner has no row (SpeedGrader, see the summary)
    assert write_canvas(grades, tmp_path / "c.csv") == 1
    name, possible, scores = canvas_import(tmp_path / "c.csv")
    # smithjohn: all of 02, 2 of 04 returned late, half of 04's points off: N02 + 1 of POINTS
    assert name == "Week 2 (4242)" and possible == POINTS and scores == {123456: N02 + 1.0, 1007: 3.0}
    write_canvas(grades, tmp_path / "c.csv", points_possible=50)
    _, possible, scores = canvas_import(tmp_path / "c.csv")
    assert possible == 50 and scores == {123456: round(50 * (N02 + 1) / POINTS, 2), 1007: round(50 * 3 / POINTS, 2)}
    assert all(0 <= s <= possible for s in scores.values())
    assert f"exercises set: 02.1-02.{N02}, 04.1-04.{N04}" in (tmp_path / "c.csv").read_text(encoding="utf-8")


def canvas_reupload_target(name: str):
    """abstract_assignment.rb infer_comment_context_from_filename: (user id, attachment id), or
    ("anon <anonymous id>", attachment id), or None (the file is ignored)."""
    base = name.rsplit("/", 1)[-1]
    parts = [p for p in base.split("_") if p != "LATE"]  # split_filename - ["LATE"]
    if parts[0] == "anon":
        anon, attachment = (parts[1:3] + ["", ""])[:2]
        return (f"anon {anon}", int(attachment)) if anon and attachment.isdigit() else None
    digits = [p for p in parts if re.fullmatch(r"\d+", p)][:2]
    return tuple(int(d) for d in digits) if len(digits) == 2 else None


def test_canvas_reupload_files_carry_user_and_attachment(tmp_path):
    written, left_out = write_canvas_reupload(_grades(), tmp_path / "r.zip")
    assert written == 4 and left_out == ["Dana_Lee"]
    with zipfile.ZipFile(tmp_path / "r.zip") as zf:
        names = sorted(zf.namelist())
        assert names == sorted([*CANVAS_FILES.values(), "anon_Ab3xZ_70017_02_self_attention.ipynb"])
        targets = {canvas_reupload_target(n) for n in names}
        # the anonymous learner's feedback goes to the submission of anonymous id Ab3xZ
        assert targets == {(123456, 7890123), (123456, 7890124), (1007, 555), ("anon Ab3xZ", 70017)}
        book = nbformat.reads(zf.read(CANVAS_FILES[("smithjohn", "04")]).decode(), as_version=4)
        nbformat.validate(book)
        text = book.cells[0].source
        assert "## 04" in text and "## 02" not in text and "feedback for smithjohn" in text


def test_download_names_read_back_as_the_learners_graded(tmp_path):
    """The grader reads the same names the re-upload writes: user id and attachment id agree."""
    for name in CANVAS_FILES.values():
        (tmp_path / name).write_text("{}", encoding="utf-8")
    found = find_submissions(tmp_path)
    ids = {"smithjohn": "123456", "müllerjürgen": "1007"}
    assert {(s.learner, s.number) for s in found.submissions} == {(f"{n}_{ids[n]}", nb) for n, nb in CANVAS_FILES}
    assert found.info["müllerjürgen_1007"].canvas_id == "1007"
    assert found.info["müllerjürgen_1007"].name == "müllerjürgen"


# --- all files, subsets, regrades ------------------------------------------------------

def test_write_reports_and_state_round_trip(tmp_path):
    grades = _grades(exercises=None)
    written = write_reports(grades, tmp_path, moodle_max=100, moodle_headers="de", canvas_points=20)
    assert written["reupload"] == 4 and written["moodle_zip"] == 1 and written["canvas_points"] == "20"
    for name in ("grades.csv", "summary.md", "canvas.csv", "moodle.csv", "canvas_reupload.zip",
                 "moodle_feedback.zip"):
        assert (tmp_path / name).is_file(), name
    save_state(grades, tmp_path / "grades.json", seed="s3cret")
    again, state = load_state(tmp_path / "grades.json")
    assert "s3cret" not in (tmp_path / "grades.json").read_text(encoding="utf-8")
    assert again.learners == grades.learners and again.weights == grades.weights
    assert again.graded_at == WHEN and again.late("smithjohn") == ["04"]
    assert [again.final(n) for n in again.learners] == [grades.final(n) for n in grades.learners]
