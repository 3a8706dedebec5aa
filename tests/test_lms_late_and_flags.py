"""What a lecturer's grading trial found (issue 45, the second round): a late penalty that no file
of a Moodle or plain-folder class can apply (a warning, and ``--late`` to name the late learners),
a copy flag that survived the regrade that replaced its code, and three messages (a regrade without
its SEED, a Canvas file with no notebook number, the not-graded paths of a zipped download)."""

from __future__ import annotations

import csv
import json
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from test_lms_identity import NB2, NB4, grade_class, small_notebook, write_files

from attention_kit.grading.__main__ import main
from attention_kit.grading.submissions import find_submissions

sys.path.insert(0, str(Path(__file__).parent))
import trust_class  # noqa: E402
from test_similarity_groups import second_copy  # noqa: E402

MOODLE = ["Dana Lee_4712_assignsubmission_file/" + NB2, "Ole Berg_4713_assignsubmission_file/" + NB2,
          "Ida Holm_4714_assignsubmission_file/" + NB4]





def _rows(out) -> dict[str, dict]:
    return {r["learner"]: r for r in csv.DictReader(open(out / "grades.csv", encoding="utf-8")) if r["learner"]}


def test_a_late_penalty_no_moodle_file_can_apply_is_a_warning(tmp_path, capsys):
    subs, out = tmp_path / "moodle", tmp_path / "grades"
    write_files(subs, MOODLE)
    assert grade_class(subs, out, "--late-penalty", "10") == 0
    printed = capsys.readouterr().out
    assert "WARNING: a late penalty of 10 % is set, but 3 learner(s) come from a Moodle download" in printed
    assert "--late 4712,alice" in printed
    md = (out / "summary.md").read_text("utf-8")
    assert "## Warning: late work" in md and "none of them is marked late or penalised" in md
    assert all(r["late"] == "" for r in _rows(out).values())


def test_late_names_the_late_learners_of_a_moodle_class(tmp_path, capsys):
    subs, out = tmp_path / "moodle", tmp_path / "grades"
    write_files(subs, MOODLE)
    assert grade_class(subs, out, "--late-penalty", "10", "--late", "4712, Ida Holm") == 0
    printed = capsys.readouterr().out
    assert "WARNING: a late penalty" not in printed
    rows = _rows(out)
    assert rows["Dana Lee_4712"]["late"] == "02" and rows["Ida Holm_4714"]["late"] == "04"
    assert rows["Ole Berg_4713"]["late"] == ""
    md = (out / "summary.md").read_text("utf-8")
    assert "## Returned late" in md and "Warning: late work" not in md
    # a regrade that does not repeat --late keeps the mark the teacher gave
    again = tmp_path / "again"
    write_files(again, ["Dana Lee_4712_assignsubmission_file/" + NB2])
    assert main([str(again), "--out", str(out), "--workers", "1", "--learners", "4712"]) == 0
    assert _rows(out)["Dana Lee_4712"]["late"] == "02"
    # a name nobody has stops the run
    capsys.readouterr()
    assert grade_class(subs, tmp_path / "other", "--late", "4799") == 2
    assert "4799" in capsys.readouterr().err


def test_canvas_lateness_needs_no_warning(tmp_path, capsys):
    subs, out = tmp_path / "canvas", tmp_path / "grades"
    write_files(subs, [f"wangwei_LATE_1044_9002_{NB2}", f"smithjohn_1050_9004_{NB2}"])
    assert grade_class(subs, out, "--late-penalty", "10") == 0
    assert "WARNING: a late penalty" not in capsys.readouterr().out
    assert _rows(out)["wangwei_1044"]["late"] == "02"


def test_a_regrade_without_its_seed_says_the_seed_is_missing(tmp_path, capsys):
    subs, out = tmp_path / "moodle", tmp_path / "grades"
    write_files(subs, MOODLE)
    assert grade_class(subs, out, "--seed", "s3cret") == 0
    capsys.readouterr()
    assert main([str(subs), "--out", str(out), "--learners", "4712"]) == 2
    err = capsys.readouterr().err
    assert "was graded with a SEED and this regrade gives none: pass the same seed" in err
    assert "SEED=<seed>" in err and "another SEED" not in err
    assert main([str(subs), "--out", str(out), "--learners", "4712", "--seed", "other"]) == 2
    assert "graded with another SEED: pass the same one" in capsys.readouterr().err
    plain = tmp_path / "plain"
    assert grade_class(subs, plain) == 0
    capsys.readouterr()
    assert main([str(subs), "--out", str(plain), "--learners", "4712", "--seed", "s3cret"]) == 2
    assert "graded without a SEED (the default) and this regrade gives one" in capsys.readouterr().err


def test_a_canvas_file_without_a_notebook_number_says_so(tmp_path):
    subs = tmp_path / "canvas"
    write_files(subs, [f"wangwei_1013_7890111_{NB2}", "wangwei_1013_7890113_scratch.ipynb",
                  "anon_Ab3xZ_7890141_draft.ipynb", "grades.xlsx"])
    ignored = dict(find_submissions(subs).ignored)
    why = ignored["wangwei_1013_7890113_scratch.ipynb"]
    assert why.startswith("a Canvas download of wangwei (Canvas user id 1013)")
    assert "'scratch.ipynb' does not start with a notebook number such as 02_" in why
    assert "not recognised" not in why
    assert ignored["anon_Ab3xZ_7890141_draft.ipynb"].startswith("a Canvas download of anonymous learner Ab3xZ")
    assert "not recognised" in ignored["grades.xlsx"]


def test_the_not_graded_paths_of_a_zipped_download_are_all_relative_to_it(tmp_path):
    archive = tmp_path / "canvas.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for name in (f"smithjohn_123456_7890101_{NB2}", "smithjohn_123456_7890103_notes.txt",
                     "wangwei_1013_7890113_scratch.ipynb", "loose/readme.md"):
            zf.writestr(name, "")
    unpack = tmp_path / "unpacked"
    unpack.mkdir()
    ignored = dict(find_submissions(archive, unpack_to=unpack).ignored)
    assert set(ignored) == {"smithjohn_123456_7890103_notes.txt", "wangwei_1013_7890113_scratch.ipynb",
                            "loose/readme.md"}, ignored


@pytest.mark.slow  # four notebooks in kernels
def test_a_regrade_recomputes_the_copy_flags_of_whom_it_regrades(tmp_path, capsys):
    """Dana Lee_4712 hands in Zoë's notebook renamed, like Ole Berg_4713: both are flagged. Her
    regrade with a notebook of her own removes the flag from both (Ole's row changes only in its
    notes); Ida Holm's row stays byte for byte."""
    subs, out = tmp_path / "moodle", tmp_path / "grades"
    honest = [s[0] for e, s in trust_class.HONEST.items() if e.startswith("02")]
    files = {"Dana Lee_4712_assignsubmission_file/" + NB2: second_copy(),
             "Ole Berg_4713_assignsubmission_file/" + NB2: list(trust_class.COPY.values()),
             "Ida Holm_4714_assignsubmission_file/" + NB2: [s[1] for e, s in trust_class.HONEST.items()
                                                           if e.startswith("02")]}
    for name, answers in files.items():
        (subs / name).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(small_notebook(answers), subs / name)
    assert grade_class(subs, out) == 0
    rows = _rows(out)
    assert "read them side by side" in rows["Dana Lee_4712"]["notes"]
    assert "read them side by side" in rows["Ole Berg_4713"]["notes"]
    assert "are the same up to names" in (out / "summary.md").read_text("utf-8")
    before = (out / "grades.csv").read_text("utf-8").splitlines()
    again = tmp_path / "again"
    (again / "Dana Lee_4712_assignsubmission_file").mkdir(parents=True)
    nbformat.write(small_notebook(honest), again / "Dana Lee_4712_assignsubmission_file" / NB2)
    capsys.readouterr()
    assert main([str(again), "--out", str(out), "--workers", "1", "--learners", "4712"]) == 0
    assert "a flag about a regraded learner is recomputed" in capsys.readouterr().out
    rows = _rows(out)
    assert not any("side by side" in r["notes"] for r in rows.values()), rows
    md = (out / "summary.md").read_text("utf-8")
    assert "are the same up to names" not in md and "For the teacher to read" not in md
    state = json.loads((out / "grades.json").read_text("utf-8"))
    assert state["flags"] == {} or not any(state["flags"].values())
    after = (out / "grades.csv").read_text("utf-8").splitlines()
    ida = [ln for ln in before if ln.startswith("Ida Holm")]
    assert ida and ida[0] in after  # the learner whose flags did not change: byte for byte


@pytest.mark.slow  # one notebook in a kernel
def test_a_notebook_that_breaks_the_graders_loading_is_a_note_for_the_teacher(tmp_path):
    """An IPython input transformer turns every later cell (the grader's own too) into ``pass``:
    the teacher reads in grades.csv and summary.md that the notebook interfered with the grader;
    the learner's feedback says the notebook could not be checked, and holds no teacher's note."""
    subs, out = tmp_path / "returned", tmp_path / "grades"
    nb = small_notebook([s[0] for e, s in trust_class.HONEST.items() if e.startswith("02")])
    nb.cells.insert(1, nbformat.v4.new_code_cell(
        "get_ipython().input_transformers_cleanup.append(lambda lines: ['pass\\n'])"))
    subs.mkdir()
    nbformat.write(nb, subs / f"ada__{NB2}")
    assert main([str(subs), "--out", str(out), "--workers", "1", "--exercises", "02"]) == 0
    notes = _rows(out)["ada"]["notes"]
    assert "02: for the teacher: the notebook interfered with the grader" in notes
    md = (out / "summary.md").read_text("utf-8")
    assert "## For the teacher: notebooks the grader could not check" in md
    assert "- ada, notebook 02: the notebook interfered with the grader" in md
    feedback = "\n".join(p.read_text("utf-8") for p in (out / "feedback").iterdir())
    assert "the grader could not check this notebook" in feedback.lower() and "teacher has been told" in feedback
    assert "interfered" not in feedback and "for the teacher" not in feedback
