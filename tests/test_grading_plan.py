"""Grading that follows the plan: a subset of exercises with weights, and regrading a few
learners into an existing grades folder (no kernels: ClassGrades built directly, or files the
grader rejects before a kernel starts)."""

from __future__ import annotations

import csv
import json

import pytest

from attention_kit.check import registry
from attention_kit.grading import COULD_NOT_RUN, FAILED, PASSED, ExerciseGrade, NotebookGrade
from attention_kit.grading.__main__ import main, parse_exercises
from attention_kit.grading.reports import (
    ClassGrades,
    feedback_markdown,
    summary_markdown,
    write_canvas,
    write_csv,
)

pytestmark = pytest.mark.slow  # grades notebooks in kernels: make check leaves it out


def test_exercises_ranges_notebooks_and_weights():
    got = parse_exercises("02.1-02.5, 2.6:0.5,04")
    assert list(got) == ["02.1", "02.2", "02.3", "02.4", "02.5", "02.6", "04.1", "04.2", "04.3", "04.4"]
    assert got["02.6"] == 0.5 and got["02.1"] == 1 and got["04.4"] == 1
    assert parse_exercises("") is None and parse_exercises("05.1:2")["05.1"] == 2
    for bad, why in (("02.9", "not part"), ("12", "not part"), ("02.5-02.1", "backwards"),
                     ("02.1:x", "number"), ("02.1:-1", "negative"), ("a.b", "not an exercise")):
        with pytest.raises(ValueError, match=why):
            parse_exercises(bad)


def _class(exercises):
    nb2 = registry.notebook("02")
    ada = NotebookGrade("ada", "02", "ada__02.ipynb", [
        ExerciseGrade(i, ex.title, PASSED if i != "02.5" else FAILED, "hint") for i, ex in nb2.numbered()])
    return ClassGrades(["ada", "ben"], [ada], exercises=exercises)


def test_only_the_exercises_set_count_with_their_weights(tmp_path):
    grades = _class(parse_exercises("02.1-02.5,02.6:0.5"))
    assert [nb.number for nb in grades.notebooks] == ["02"]
    assert grades.max_points == 5.5 and grades.points("ada") == 4.5  # 02.5 failed, 02.6 half a point
    assert grades.exercises_text() == "02.1-02.5, 02.6 ×0.5" and not grades.whole_course
    write_csv(grades, tmp_path / "grades.csv")
    rows = list(csv.DictReader(open(tmp_path / "grades.csv", encoding="utf-8")))
    ada = rows[0]
    assert ada["02.6 points (of 0.5)"] == "0.5" and ada["points"] == "4.5" and ada["max points"] == "5.5"
    assert ada["02 score (of 5.5): 02.1-02.5, 02.6 ×0.5"] == "4.5"
    assert "Exercises set: 02.1-02.5, 02.6 ×0.5." in summary_markdown(grades)
    assert "4.5 of 5.5 points" in feedback_markdown(grades, "ada")
    write_canvas(grades, tmp_path / "canvas.csv", points_possible=11)
    canvas = list(csv.reader(open(tmp_path / "canvas.csv", encoding="utf-8")))
    assert canvas[1][4:] == ["exercises set: 02.1-02.5, 02.6 ×0.5", "11"] and canvas[2][-1] == "9"

    subset = _class(parse_exercises("02.1,02.3"))  # 02.2 not set: its verdict is not counted
    assert subset.max_points == 2 and subset.points("ada") == 2 and len(subset.row("ben")) == 2
    assert subset.exercises_text() == "02.1, 02.3"


def test_default_is_every_exercise_one_point_each():
    grades = _class(None)  # no notebooks given: the whole course
    assert grades.whole_course and grades.max_points == len(list(registry.exercises()))
    assert isinstance(grades.max_points, int) and grades.points("ada") == 5


def _touch(path, text=""):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_regrade_a_few_learners_into_the_class(tmp_path, capsys):
    subs, out = tmp_path / "returned", tmp_path / "grades"
    for name in ("amy", "zoe"):  # empty files: graded "could not run" without a kernel
        _touch(subs / f"{name}__04_masks_and_positions.ipynb")
    assert main([str(subs), "--out", str(out), "--workers", "1", "--exercises", "04.1-04.3:2"]) == 0
    first = {r["learner"]: r for r in csv.DictReader(open(out / "grades.csv", encoding="utf-8"))}
    assert set(first) == {"amy", "zoe"} and first["amy"]["max points"] == "6"
    assert "04.4 masks and positions" not in first["amy"]
    assert "Exercises set: 04.1-04.3 ×2." in capsys.readouterr().out

    again = tmp_path / "resubmitted"
    _touch(again / "amy__04_masks_and_positions.ipynb", "not json")
    _touch(again / "bob__04_masks_and_positions.ipynb")
    before = (out / "feedback" / "zoe.md").read_text(encoding="utf-8")
    assert main([str(again), "--out", str(out), "--workers", "1", "--learners", "amy,bob"]) == 2
    assert "'bob' matches no learner of the graded class" in capsys.readouterr().err
    assert main([str(again), "--out", str(out), "--workers", "1", "--learners", "amy,bob",
                 "--add-learners"]) == 0  # bob was not graded before: added on request
    printed = capsys.readouterr().out
    assert "Regraded amy, bob (new: bob) into the 2 learners" in printed and "Exercises set: 04.1-04.3 ×2." in printed
    rows = {r["learner"]: r for r in csv.DictReader(open(out / "grades.csv", encoding="utf-8"))}
    assert set(rows) == {"amy", "bob", "zoe"}
    assert rows["amy"]["04.1 causal mask"] == COULD_NOT_RUN and "empty" not in rows["amy"]["notes"]
    assert "empty" in rows["zoe"]["notes"]  # zoe's row is kept as it was
    assert (out / "feedback" / "zoe.md").read_text(encoding="utf-8") == before
    assert json.loads((out / "grades.json").read_text(encoding="utf-8"))["learners"] == ["amy", "bob", "zoe"]

    # a regrade keeps the plan: other exercises, another seed or an unknown learner are refused
    assert main([str(again), "--out", str(out), "--learners", "amy", "--exercises", "04"]) == 2
    err = capsys.readouterr().err
    assert "exercises (--exercises/EXERCISES=): 04.1:2,04.2:2,04.3:2 when the class was graded, " \
           "04.1:1,04.2:1,04.3:1" in err and "--new-settings" in err
    assert main([str(again), "--out", str(out), "--learners", "amy", "--seed", "7"]) == 2
    assert "graded without a SEED (the default) and this regrade gives one" in capsys.readouterr().err
    assert main([str(again), "--out", str(out), "--learners", "cleo"]) == 2
    assert "'cleo' matches no learner of the graded class" in capsys.readouterr().err
    assert main([str(again), "--out", str(out), "--learners", "zoe"]) == 2  # graded, no file now
    assert "no submissions of zoe" in capsys.readouterr().err
    assert main([str(again), "--out", str(tmp_path / "new"), "--learners", "amy"]) == 2
    assert "grades.json" in capsys.readouterr().err
