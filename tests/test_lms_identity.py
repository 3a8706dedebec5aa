"""Every learner is who the LMS says (issue 45): keyed by the LMS's id, in every layout Canvas
and Moodle write, nobody merged or dropped, and a regrade that touches only whom it names.

A class of empty notebooks is graded through ``main`` (an empty file is "could not run" without
a kernel), then every file is read back with the importer-faithful readers of
``test_lms_formats`` (Canvas's gradebook_importer.rb and assignment.rb; Moodle's
importgradeslib.php and importziplib.php). The last test (slow) grades the issue's whole class
in kernels: every layout at once, late files with a penalty, Zoë's notebook copied renamed by two
classmates in other layouts (one group flag), and a regrade that repeats no setting."""

from __future__ import annotations

import csv
import json
import zipfile

import nbformat
import pytest
import trust_class
from test_lms_formats import canvas_import, canvas_reupload_target, moodle_import, moodle_zip_target
from test_similarity_groups import second_copy

from attention_kit.check import registry
from attention_kit.grading import FAILED, PASSED, ExerciseGrade, NotebookGrade
from attention_kit.grading.__main__ import main
from attention_kit.grading.reports import MOODLE_STRINGS, ClassGrades, write_canvas, write_moodle
from attention_kit.grading.submissions import Learner, find_submissions

NB2 = registry.notebook("02").file
NB4 = registry.notebook("04").file
# Moodle's downloads (mod/assign/classes/downloader.php from 4.1, locallib.php before):
# <full name, "_" made " ">_<participant>_assignsubmission_file[/ or _ before 4.1]
MOODLE = {"Dana Lee_4711_assignsubmission_file_/" + NB2: ("Dana Lee", "4711"),      # before 4.1
          "Ole Berg_4712_assignsubmission_file/" + NB2: ("Ole Berg", "4712"),        # 4.1 and later
          "Ole Berg_4713_assignsubmission_file/" + NB2: ("Ole Berg", "4713"),        # same name
          "Ida Holm_4714_assignsubmission_file_" + NB2: ("Ida Holm", "4714"),        # flat files
          "Participant_4715_assignsubmission_file/" + NB2: ("Participant", "4715"),  # blind marking
          "Participant_4716_assignsubmission_file/" + NB2: ("Participant", "4716")}
# Canvas (lib/content_zipper.rb get_filename): login_[LATE_]userid_attachmentid_file
CANVAS = {f"wangwei_1013_9001_{NB2}": ("wangwei", "1013"),
          f"wangwei_LATE_1044_9002_{NB2}": ("wangwei", "1044"),
          f"wangwei_1044_9003_{NB4}": ("wangwei", "1044"),
          f"smithjohn_1050_9004_{NB2}": ("smithjohn", "1050"),
          f"anon_Ab3xZ_9005_{NB2}": ("anon_Ab3xZ", ""),
          f"LATE_anon_Qx7Pz_9006_{NB2}": ("anon_Qx7Pz", "")}


def write_files(folder, files):
    for name in files:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("", encoding="utf-8")


def test_every_layout_gives_the_lms_id(tmp_path):
    write_files(tmp_path / "moodle", MOODLE)
    found = find_submissions(tmp_path / "moodle")
    assert {k: (v.name, v.moodle_id) for k, v in found.info.items()} == \
        {f"{n}_{i}": (n, i) for n, i in MOODLE.values()}
    assert len(found.submissions) == len(MOODLE) and not found.ignored
    write_files(tmp_path / "canvas", CANVAS)
    write_files(tmp_path / "canvas", ["alice/" + NB2])  # a plain folder: its name is the learner
    found = find_submissions(tmp_path / "canvas")
    assert set(found.info) == {"wangwei_1013", "wangwei_1044", "smithjohn_1050", "anon_Ab3xZ",
                               "anon_Qx7Pz", "alice"}
    assert found.info["wangwei_1044"].late and not found.info["wangwei_1013"].late
    assert [s.learner for s in found.submissions].count("wangwei_1044") == 2
    assert not found.ignored  # nobody's notebook is "a second notebook 02 for wangwei"


def grade_class(subs, out, *extra) -> int:
    return main([str(subs), "--out", str(out), "--workers", "1", "--exercises", "02,04", *extra])


def test_a_class_with_same_names_through_every_file(tmp_path, capsys):
    subs, out = tmp_path / "returned", tmp_path / "grades"
    write_files(subs, [*MOODLE, *CANVAS, "stray.txt"])
    assert grade_class(subs, out, "--late-penalty", "10") == 0
    summary = capsys.readouterr().out
    rows = list(csv.DictReader(open(out / "grades.csv", encoding="utf-8")))
    learners = [r["learner"] for r in rows if r["learner"]]
    assert len(learners) == len(set(learners)) == 6 + 5
    # nothing merged, nothing dropped: every returned file is graded or listed with a reason
    not_graded = {r["file"] for r in csv.DictReader(open(out / "not_graded.csv", encoding="utf-8"))}
    graded = {g["source"] for g in json.loads((out / "grades.json").read_text("utf-8"))["grades"]}
    assert graded | not_graded == {*MOODLE, *CANVAS, "stray.txt"} and not graded & not_graded
    # Canvas: every Canvas learner with a user id matched, once; the anonymous ones in the summary
    _, possible, scores = canvas_import(out / "canvas.csv")
    assert set(scores) == {1013, 1044, 1050} and all(0 <= s <= possible for s in scores.values())
    assert "anonymous_id=<id>: anon" not in summary and "Ab3xZ 0, Qx7Pz 0" in summary
    with zipfile.ZipFile(out / "canvas_reupload.zip") as zf:
        targets = [canvas_reupload_target(n) for n in zf.namelist()]
    # every returned notebook's feedback matched by Canvas, the anonymous ones by anonymous id
    assert len(targets) == 6 and set(targets) == {(1013, 9001), (1044, 9002), (1044, 9003), (1050, 9004),
                                                  ("anon Ab3xZ", 9005), ("anon Qx7Pz", 9006)}
    # Moodle: every participant matched by the worksheet and by the zip, before and after 4.1
    participants = {int(i) for _, i in MOODLE.values()}
    got = moodle_import(out / "moodle.csv", MOODLE_STRINGS["en"], 100, participants)
    assert set(got) == participants
    with zipfile.ZipFile(out / "moodle_feedback.zip") as zf:
        for old in (False, True):
            assert {moodle_zip_target(n, participants, old)[0] for n in zf.namelist()} == participants
    # a feedback file per learner, the two Ole Bergs and the two wangweis each their own
    assert len(list((out / "feedback").glob("*.md"))) == 11
    text = (out / "feedback" / "wangwei_1044.md").read_text("utf-8")
    assert "feedback for wangwei (1044)" in text and "Returned late: notebook 02" in text
    points = len(registry.notebook("02").exercises) + len(registry.notebook("04").exercises)  # --exercises 02,04
    assert "late penalty is 10 %" in text and f"Your grade: 0 of {points} points" in text


def test_same_names_keep_their_own_grades(tmp_path):
    nb2 = registry.notebook("02")
    info = {"wangwei_1013": Learner("wangwei", canvas_id="1013"),
            "wangwei_1044": Learner("wangwei", canvas_id="1044"),
            "Participant_4715": Learner("Participant", moodle_id="4715"),
            "Participant_4716": Learner("Participant", moodle_id="4716")}
    grades = [NotebookGrade(key, "02", "", [ExerciseGrade(i, ex.title, PASSED if k < n else FAILED, "")
                                            for k, (i, ex) in enumerate(nb2.numbered())])
              for key, n in zip(info, (6, 3, 2, 5), strict=True)]
    grades_ = ClassGrades(list(info), grades, info=info, notebooks=["02"])
    write_canvas(grades_, tmp_path / "c.csv")
    assert canvas_import(tmp_path / "c.csv")[2] == {1013: 6.0, 1044: 3.0}
    students = [r["Student"] for r in csv.DictReader(open(tmp_path / "c.csv", encoding="utf-8"))]
    assert students.count("wangwei") == 2  # the name as Canvas has it, the id tells them apart
    write_moodle(grades_, tmp_path / "m.csv", maximum=60)
    got = moodle_import(tmp_path / "m.csv", MOODLE_STRINGS["en"], 60, {4715, 4716})
    assert {k: v[0] for k, v in got.items()} == {4715: 20.0, 4716: 50.0}


def test_regrade_keeps_the_settings_and_the_other_rows(tmp_path, capsys):
    subs, out = tmp_path / "returned", tmp_path / "grades"
    write_files(subs, CANVAS)
    assert grade_class(subs, out, "--late-penalty", "10", "--moodle-max", "20", "--canvas-points", "12") == 0
    state = json.loads((out / "grades.json").read_text("utf-8"))
    state["graded_at"] = "2026-01-05T09:00:00+00:00"  # a grade made earlier than this regrade
    (out / "grades.json").write_text(json.dumps(state), encoding="utf-8")
    before = {name: (out / name).read_text("utf-8") for name in ("grades.csv", "canvas.csv")}
    again = tmp_path / "again"
    write_files(again, [f"smithjohn_1050_9100_{NB4}"])
    capsys.readouterr()
    # a setting that differs stops the regrade, naming it
    assert main([str(again), "--out", str(out), "--workers", "1", "--learners", "1050",
                 "--late-penalty", "0"]) == 2
    err = capsys.readouterr().err
    assert "late penalty (--late-penalty): 10 when the class was graded, 0 now" in err
    # by id, without repeating the settings: they are the folder's
    assert main([str(again), "--out", str(out), "--workers", "1", "--learners", "1050"]) == 0
    assert "12 points possible" in capsys.readouterr().out
    settings = json.loads((out / "grades.json").read_text("utf-8"))["settings"]
    assert settings["late_penalty"] == 10 and settings["moodle_max"] == 20 and settings["canvas_points"] == 12
    for name, text in before.items():
        old = {ln for ln in text.splitlines() if "smithjohn" not in ln and "not graded" not in ln}
        new = set((out / name).read_text("utf-8").splitlines())
        assert old <= new, name  # every other learner's row byte for byte
    rows = {r["Full name"]: r for r in csv.DictReader(open(out / "moodle.csv", encoding="utf-8"))}
    assert rows["wangwei"]["Last modified (grade)"] == "2026-01-05T09:00:00+00:00"
    assert rows["smithjohn"]["Last modified (grade)"] != "2026-01-05T09:00:00+00:00"


def test_regrade_names_and_new_settings(tmp_path, capsys):
    subs, out = tmp_path / "returned", tmp_path / "grades"
    write_files(subs, CANVAS)
    assert grade_class(subs, out) == 0
    again = tmp_path / "again"
    write_files(again, [f"wangwei_1013_9200_{NB4}", f"wangwei_1044_9201_{NB4}", f"smithjohn_1050_9202_{NB4}"])
    capsys.readouterr()
    assert main([str(again), "--out", str(out), "--learners", "wangwei"]) == 2
    assert "'wangwei' names 2 learners of the graded class (wangwei_1013, wangwei_1044)" in capsys.readouterr().err
    assert main([str(again), "--out", str(out), "--workers", "1", "--learners", "smithjohn,wangwei_1013",
                 "--late-penalty", "25", "--new-settings"]) == 0
    assert "Regraded smithjohn_1050, wangwei_1013" in capsys.readouterr().out
    state = json.loads((out / "grades.json").read_text("utf-8"))
    assert state["settings"]["late_penalty"] == 25 and state["late_penalty"] == 25
    assert state["modified"] == {}  # new settings: every learner's grade is new


@pytest.mark.parametrize("name", ["Full Name_4711_assignsubmission_file", "Full Name_4711_assignsubmission_file_"])
def test_moodle_folder_forms_both_read(tmp_path, name):
    write_files(tmp_path, [f"{name}/{NB2}"])
    found = find_submissions(tmp_path)
    assert list(found.info) == ["Full Name_4711"] and found.info["Full Name_4711"].moodle_id == "4711"


# --- the issue's class, graded in kernels: every case at once, a group copy among them ---------

def small_notebook(answers: list[str]):
    """A notebook holding only the imports and these answer cells (what the grader reads)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import numpy as np\nimport attention_kit as ak\n"
                                          "from attention_kit import check")]
    nb.cells += [nbformat.v4.new_code_cell(src) for src in answers]
    return nb


@pytest.mark.slow  # five notebooks in kernels (about a minute on 2 cores)
def test_the_issues_class_every_case_through_every_file(tmp_path, capsys):
    """Same names on Canvas (wangwei x2) and Moodle (Ole Berg x2), blind marking (Participant
    x2), Moodle before and after 4.1, anonymous Canvas learners, late files (Canvas LATE_) with a
    10 % penalty, Zoë's notebook 02 handed in renamed by two classmates in other layouts (one late,
    one blind-marked), two honest learners in other styles; then a regrade of one learner by id
    that repeats no setting."""
    subs, out = tmp_path / "returned", tmp_path / "grades"
    real = {"Ole Berg_4712_assignsubmission_file/" + NB2: list(trust_class.ZOE.values()),
            "Participant_4715_assignsubmission_file/" + NB2: list(trust_class.COPY.values()),
            f"wangwei_LATE_1044_9002_{NB2}": second_copy(),
            "Dana Lee_4711_assignsubmission_file_/" + NB2: [s[0] for e, s in trust_class.HONEST.items() if e.startswith("02")],
            f"smithjohn_1050_9004_{NB2}": [s[1] for e, s in trust_class.HONEST.items() if e.startswith("02")]}
    write_files(subs, [f for f in [*MOODLE, *CANVAS] if f not in real] + ["stray.txt"])
    for name, answers in real.items():
        (subs / name).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(small_notebook(answers), subs / name)
    assert main([str(subs), "--out", str(out), "--workers", "2", "--exercises", "02,04", "--seed", "s3cret",
                 "--late-penalty", "10"]) == 0
    rows = {r["learner"]: r for r in csv.DictReader(open(out / "grades.csv", encoding="utf-8")) if r["learner"]}
    assert len(rows) == 11  # nothing merged
    not_graded = {r["file"] for r in csv.DictReader(open(out / "not_graded.csv", encoding="utf-8"))}
    graded = {g["source"] for g in json.loads((out / "grades.json").read_text("utf-8"))["grades"]}
    assert graded | not_graded == {*MOODLE, *CANVAS, "stray.txt"} and not graded & not_graded  # nothing dropped
    # the copies scored (Zoë's forms pass), the late one less its penalty
    assert float(rows["Ole Berg_4712"]["points"]) == 4 and float(rows["Participant_4715"]["points"]) == 4
    assert rows["wangwei_1044"]["late"] == "02" and float(rows["wangwei_1044"]["late penalty"]) == pytest.approx(0.4)
    # one group flag, every member named, in the summary and each member's notes; no honest flag
    group = "Ole Berg_4712, Participant_4715 and wangwei_1044: notebook 02, exercises 02.1, 02.2, 02.5, 02.6"
    md = (out / "summary.md").read_text("utf-8")
    assert md.count(group) == 1 and md.count("read them side by side") == 1
    for learner in ("Ole Berg_4712", "Participant_4715", "wangwei_1044"):
        assert group in rows[learner]["notes"]
    assert not any("side by side" in rows[ln]["notes"] for ln in rows if ln not in
                   ("Ole Berg_4712", "Participant_4715", "wangwei_1044"))
    # every importer matches every learner it can, every value on its scale
    _, possible, scores = canvas_import(out / "canvas.csv")
    assert set(scores) == {1013, 1044, 1050} and all(0 <= s <= possible for s in scores.values())
    assert scores[1044] == pytest.approx(3.6)  # 4 of 10, 10 % of the late notebook's 4 points off
    participants = {int(i) for _, i in MOODLE.values()}
    got = moodle_import(out / "moodle.csv", MOODLE_STRINGS["en"], 100, participants)
    assert set(got) == participants and got[4712][0] == 40.0 and got[4715][0] == 40.0
    with zipfile.ZipFile(out / "canvas_reupload.zip") as zf:
        targets = [canvas_reupload_target(n) for n in zf.namelist()]
    assert len(targets) == 6 and {t[0] for t in targets} == {1013, 1044, 1050, "anon Ab3xZ", "anon Qx7Pz"}
    with zipfile.ZipFile(out / "moodle_feedback.zip") as zf:
        for old in (False, True):
            assert {moodle_zip_target(n, participants, old)[0] for n in zf.namelist()} == participants
    # a regrade of one learner by id, no setting repeated but the seed: the others' rows unchanged
    before = {name: (out / name).read_text("utf-8") for name in ("grades.csv", "canvas.csv", "moodle.csv")}
    again = tmp_path / "again"
    write_files(again, [f"smithjohn_1050_9100_{NB4}"])
    capsys.readouterr()
    assert main([str(again), "--out", str(out), "--workers", "1", "--learners", "1050", "--seed", "s3cret"]) == 0
    state = json.loads((out / "grades.json").read_text("utf-8"))
    assert state["settings"]["late_penalty"] == 10
    for name, text in before.items():
        old = {ln for ln in text.splitlines() if "smithjohn" not in ln and "not graded" not in ln}
        assert old <= set((out / name).read_text("utf-8").splitlines()), name
    assert (out / "summary.md").read_text("utf-8").count(group) == 1  # the group's flag is kept
