"""A regrade from a plain folder (``mail/Dana Lee/02_...``, a resubmission sent by mail) matched
to the graded class: the learner keeps the LMS ids the class has for them, in canvas.csv and
moodle.csv, and every other row stays byte for byte; a name that matches nobody or several
learners stops the regrade with a message (``--add-learners`` adds a genuinely new one). The
re-upload of a regrade carries only the regraded learners (Canvas adds a comment per file)."""

from __future__ import annotations

import csv
import json
import zipfile

from test_lms_formats import canvas_import, moodle_import
from test_lms_identity import CANVAS, MOODLE, NB2, NB4, grade_class, write_files

from attention_kit.grading.__main__ import main
from attention_kit.grading.reports import MOODLE_STRINGS


def _regrade(folder, out, learners, *extra) -> int:
    return main([str(folder), "--out", str(out), "--workers", "1", "--learners", learners, *extra])


def _sources(out) -> dict:
    return {(g["learner"], g["number"]): g["source"]
            for g in json.loads((out / "grades.json").read_text("utf-8"))["grades"]}


def _zip(path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def test_canvas_regrade_from_a_plain_folder_keeps_the_id(tmp_path, capsys):
    subs, out, mail = tmp_path / "returned", tmp_path / "grades", tmp_path / "mail"
    write_files(subs, CANVAS)
    assert grade_class(subs, out) == 0
    before = {n: (out / n).read_text("utf-8") for n in ("canvas.csv", "moodle.csv", "grades.csv")}
    reupload = _zip(out / "canvas_reupload.zip")
    write_files(mail, [f"smithjohn_1050/{NB4}"])
    capsys.readouterr()
    assert _regrade(mail, out, "smithjohn_1050") == 0
    summary = capsys.readouterr().out
    assert "Regraded smithjohn_1050 into the" in summary
    assert _sources(out)[("smithjohn_1050", "04")] == f"smithjohn_1050/{NB4}"
    rows = list(csv.DictReader(open(out / "canvas.csv", encoding="utf-8")))
    assert [r["ID"] for r in rows if r["Student"] == "smithjohn"] == ["1050"]
    assert all(r["ID"] for r in rows[1:])
    assert set(canvas_import(out / "canvas.csv")[2]) == {1013, 1044, 1050}
    for name, text in before.items():  # every other row byte for byte, no new row
        old = [ln for ln in text.splitlines() if "smithjohn" not in ln]
        new = (out / name).read_text("utf-8").splitlines()
        assert set(old) <= set(new) and len(new) == len(text.splitlines()), name
    # the whole class's re-upload: the others' files byte for byte, all of them there
    after = _zip(out / "canvas_reupload.zip")
    assert after == reupload or {n: b for n, b in after.items() if "smithjohn" not in n} == \
        {n: b for n, b in reupload.items() if "smithjohn" not in n}
    # the regrade's own re-upload: only the regraded learner's files with a Canvas name (their 02
    # of the download, whose feedback has the new total; the mailed 04 has none), and the summary
    # says which zip to upload
    assert set(_zip(out / "canvas_reupload_regraded.zip")) == {f"smithjohn_1050_9004_{NB2}"}
    assert "canvas_reupload_regraded.zip (1 file: only the regraded" in summary


def test_canvas_regrade_reupload_carries_only_the_regraded(tmp_path, capsys):
    subs, out, again = tmp_path / "returned", tmp_path / "grades", tmp_path / "again"
    write_files(subs, CANVAS)
    assert grade_class(subs, out) == 0
    reupload = _zip(out / "canvas_reupload.zip")
    assert grade_class(subs, tmp_path / "twice") == 0  # the same class graded twice: the same files
    assert _zip(tmp_path / "twice" / "canvas_reupload.zip") == reupload
    assert not (out / "canvas_reupload_regraded.zip").exists()
    write_files(again, [f"smithjohn_1050_9100_{NB4}"])
    assert _regrade(again, out, "1050") == 0
    after = _zip(out / "canvas_reupload.zip")
    assert {n: b for n, b in after.items() if "1050" not in n} == \
        {n: b for n, b in reupload.items() if "1050" not in n}
    assert set(_zip(out / "canvas_reupload_regraded.zip")) == {f"smithjohn_1050_9004_{NB2}",
                                                               f"smithjohn_1050_9100_{NB4}"}
    assert "canvas_reupload_regraded.zip (2 files" in capsys.readouterr().out
    assert grade_class(subs, out, "--new-settings") == 0  # a whole class again: no regrade zip left
    assert not (out / "canvas_reupload_regraded.zip").exists()


def test_moodle_regrade_from_a_plain_folder_keeps_the_participant(tmp_path, capsys):
    subs, out, mail = tmp_path / "returned", tmp_path / "grades", tmp_path / "mail"
    write_files(subs, MOODLE)
    assert grade_class(subs, out) == 0
    before = (out / "moodle.csv").read_text("utf-8")
    write_files(mail, [f"Dana Lee/{NB2}"])
    capsys.readouterr()
    assert _regrade(mail, out, "Dana Lee") == 0  # the guide's own example
    assert "Regraded Dana Lee_4711 into the 6 learners" in capsys.readouterr().out
    assert _sources(out)[("Dana Lee_4711", "02")] == f"Dana Lee/{NB2}"
    text = (out / "moodle.csv").read_text("utf-8")
    rows = list(csv.DictReader(open(out / "moodle.csv", encoding="utf-8")))
    assert len(rows) == 6 and all(r["Identifier"] for r in rows)
    assert [r["Identifier"] for r in rows if r["Full name"] == "Dana Lee"] == ["Participant 4711"]
    participants = {int(i) for _, i in MOODLE.values()}
    assert set(moodle_import(out / "moodle.csv", MOODLE_STRINGS["en"], 100, participants)) == participants
    old = [ln for ln in before.splitlines() if "Dana Lee" not in ln]
    assert set(old) <= set(text.splitlines())
    state = json.loads((out / "grades.json").read_text("utf-8"))
    assert state["info"]["Dana Lee_4711"]["moodle_id"] == "4711" and "Dana Lee" not in state["learners"]


def test_a_regrade_name_that_matches_nobody_or_several_stops(tmp_path, capsys):
    subs, out, mail = tmp_path / "returned", tmp_path / "grades", tmp_path / "mail"
    write_files(subs, MOODLE)
    assert grade_class(subs, out) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    write_files(mail, [f"Eva Moe/{NB2}", f"Ole Berg/{NB2}"])
    capsys.readouterr()
    assert _regrade(mail, out, "Eva Moe") == 2
    err = capsys.readouterr().err
    assert "'Eva Moe' matches no learner of the graded class" in err and "--add-learners" in err
    assert _regrade(mail, out, "Ole Berg") == 2
    assert "'Ole Berg' names 2 learners of the graded class (Ole Berg_4712, Ole Berg_4713)" in \
        capsys.readouterr().err
    # by id, the file of a plain folder "Ole Berg" could be either of them: say so
    assert _regrade(mail, out, "4712") == 2
    assert "could be any of Ole Berg_4712, Ole Berg_4713" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before  # nothing written
    # a genuinely new learner, on request
    assert _regrade(mail, out, "Eva Moe", "--add-learners") == 0
    assert "(new: Eva Moe)" in capsys.readouterr().out
    assert "Eva Moe" in json.loads((out / "grades.json").read_text("utf-8"))["learners"]


def test_each_learner_is_told_their_own_lms_and_why_a_notebook_could_not_run(tmp_path, capsys):
    subs, out = tmp_path / "returned", tmp_path / "grades"
    write_files(subs, [*CANVAS, *MOODLE])
    assert grade_class(subs, out, "--canvas-points", "20") == 0
    summary = capsys.readouterr().out
    # the anonymous learners are not in canvas.csv: not counted among those with a Canvas id
    assert "canvas.csv (3 of 11 learners with a Canvas id; 2 anonymous, not in it" in summary
    canvas = (out / "feedback" / "smithjohn_1050.md").read_text("utf-8")
    moodle = (out / "feedback" / "Dana_Lee_4711.md").read_text("utf-8")
    assert "of 20 in Canvas" in canvas and "in Moodle" not in canvas
    assert "of 100 in Moodle" in moodle and "in Canvas" not in moodle
    assert "in Moodle" not in (out / "feedback" / "anon_Ab3xZ.md").read_text("utf-8")
    # an empty file could not run: grades.csv's notes say why, as the feedback does
    rows = {r["learner"]: r for r in csv.DictReader(open(out / "grades.csv", encoding="utf-8"))}
    why = rows["smithjohn_1050"]["notes"]
    assert "could not run" in rows["smithjohn_1050"]["02.1 softmax row by row"]
    assert why and any(part in canvas for part in why.split(": ")[1:] if len(part) > 10)


def test_grades_csv_notes_say_why_a_notebook_could_not_run(tmp_path):
    from attention_kit.check import registry
    from attention_kit.grading import COULD_NOT_RUN, ExerciseGrade, NotebookGrade
    from attention_kit.grading.reports import ClassGrades, write_csv

    why = "the Python kernel stopped while running the notebook (out of memory)"
    nb = registry.notebook("04")
    grade = NotebookGrade("amy", "04", "amy/04.ipynb",
                          [ExerciseGrade(i, ex.title, COULD_NOT_RUN, why) for i, ex in nb.numbered()])
    grades = ClassGrades(["amy"], [grade], notebooks=["04"])
    write_csv(grades, tmp_path / "g.csv")
    row = next(csv.DictReader(open(tmp_path / "g.csv", encoding="utf-8")))
    assert row["notes"] == f"04: could not run: {why}"
    grade.exercises[0] = ExerciseGrade("04.1", "", COULD_NOT_RUN, "")
    rest = ", ".join(i for i, _ in nb.numbered()[1:])  # 04.2, 04.3, ... as the registry numbers them
    assert grades.notes("amy") == [f"{rest}: could not run: {why}"]
    grade.notes.append(f"amy/04.ipynb: {why}")  # a note that says it already: not said twice
    assert grades.notes("amy") == [f"04: amy/04.ipynb: {why}"]
