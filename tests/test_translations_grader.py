"""The grader in a Chinese class speaks Chinese to the teacher, not only in its headings.

A small class is graded through ``main`` under ``ATTENTION_KIT_LANG=zh``: Moodle files with a
late penalty none of them can carry (the late-work warning), an empty notebook (why it could not
run), the teacher's full notebook handed in (the worked-solution verdicts and note), files that
are not graded for every reason the folder gives, then a regrade and a bad setting. Nothing
needs a kernel (an empty file and a full notebook are graded without one). The teacher's copy
flags and "could not check" notes are added to a class of ``ClassGrades`` as the grader adds them.
Every sentence the teacher or the learner reads (the printed summary, ``summary.md``, the notes
column of ``grades.csv``, ``not_graded.csv``'s reasons, the feedback files, the error of a bad
setting) is Chinese: what stays English is what the registry names (the notebooks' and
exercises' titles), file names, options and code.
"""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

from test_lms_identity import NB2, NB4, write_files

from attention_kit.check import registry
from attention_kit.grading import FAILED, PASSED, ExerciseGrade, NotebookGrade
from attention_kit.grading.__main__ import main
from attention_kit.grading.execute import INTERFERED
from attention_kit.grading.reports import ClassGrades, summary_markdown
from attention_kit.grading.similarity import note_similar
from attention_kit.grading.submissions import Learner
from attention_kit.i18n import _

ROOT = Path(__file__).resolve().parents[1]
CJK = re.compile(r"[\u4e00-\u9fff]")
#: Three English words in a row (a sentence, or most of one), not inside a file name or code.
ENGLISH = re.compile(r"(?<![\w./_-])[A-Za-z]{3,}(?: [A-Za-z]{2,}){2,}")
#: What stays English in a Chinese class: the registry's titles, and the name of a section of
#: docs/teaching.md (English) that a message points to.
KEPT = sorted({nb.title for nb in registry.NOTEBOOKS}
              | {ex.title for nb in registry.NOTEBOOKS for _id, ex in nb.numbered()}
              | {"Late work in Moodle"}, key=len, reverse=True)


def english_sentences(text: str) -> list[str]:
    for kept in KEPT:
        text = text.replace(kept, "")
    return ENGLISH.findall(text)


def test_a_chinese_class_is_graded_in_chinese(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ATTENTION_KIT_LANG", "zh")
    subs, out = tmp_path / "returned", tmp_path / "grades"
    write_files(subs, ["Dana Lee_4712_assignsubmission_file/" + NB2,   # empty: could not run
                       "Ole Berg_4713_assignsubmission_file/" + NB2,
                       "Ole Berg_4713_assignsubmission_file/" + NB4,   # notebook 04 was not set
                       "wangwei_1013_9001_homework.ipynb",             # a Canvas file, no number
                       "alice__notes.txt", "stray.txt", ".DS_Store"])
    (subs / "empty").mkdir()  # a learner who returned nothing
    (subs / "Dana Lee_4712_assignsubmission_file" / "02_self_attention (1).ipynb").write_text("")
    full = subs / "Ida Holm_4714_assignsubmission_file" / NB2  # the teacher's notebook, handed in
    full.parent.mkdir(parents=True)
    shutil.copyfile(ROOT / "notebooks" / NB2, full)
    assert main([str(subs), "--out", str(out), "--workers", "1", "--exercises", "02",
                 "--late-penalty", "10", "--assignment", "第 2 周"]) == 0
    printed = capsys.readouterr().out
    summary = (out / "summary.md").read_text("utf-8")
    rows = list(csv.DictReader(open(out / "grades.csv", encoding="utf-8")))
    notes = [r["notes"] for r in rows]
    not_graded = [r["why it was not graded"]
                  for r in csv.DictReader(open(out / "not_graded.csv", encoding="utf-8"))]
    feedback = {p.name: p.read_text("utf-8") for p in (out / "feedback").iterdir()}
    assert len(not_graded) >= 6 and all(notes[:3]), (not_graded, notes)
    assert "## 警告：迟交" in summary and "LATE=4712,alice" in printed
    assert "含有课程对这道练习的参考解答" in feedback["Ida_Holm_4714.md"]
    for name, text in {"printed": printed, "summary.md": summary, "grades.csv notes": "\n".join(notes),
                       "not_graded.csv": "\n".join(not_graded), **feedback}.items():
        assert CJK.search(text), name
        assert not english_sentences(text), (name, english_sentences(text), text)

    # a regrade of one learner says what it did in Chinese
    again = tmp_path / "again"
    write_files(again, ["Ole Berg_4713_assignsubmission_file/" + NB2])
    assert main([str(again), "--out", str(out), "--workers", "1", "--learners", "4713"]) == 0
    printed = capsys.readouterr().out
    assert "已把 Ole Berg_4713 重新评分" in printed and not english_sentences(printed), printed

    # a setting that is wrong, and a regrade whose settings differ: the error is Chinese
    for argv in (["--exercises", "02.99"], ["--shard", "5/4"], ["--notebooks", "02", "--exercises", "02"],
                 ["--learners", "4713", "--late-penalty", "20"], ["--learners", "nobody"]):
        assert main([str(again), "--out", str(out), "--workers", "1", *argv]) == 2
        err = capsys.readouterr().err
        assert err.startswith("错误：") and not english_sentences(err), (argv, err)
    assert main(["merge", str(subs), "--out", str(tmp_path / "merged")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("错误：") and not english_sentences(err), err


def test_the_teachers_notes_on_a_class_are_chinese(monkeypatch):
    """Copy flags, a notebook the grader could not check, and why exercises could not run."""
    monkeypatch.setenv("ATTENTION_KIT_LANG", "zh")
    nb2 = registry.notebook("02")
    ids = [i for i, _ex in nb2.numbered()]
    grades = [NotebookGrade(who, "02", f"{who}__{NB2}",
                            [ExerciseGrade(i, ex.title, PASSED if who != "cy" else FAILED, "")
                             for i, ex in nb2.numbered()]) for who in ("ada", "bo", "cy")]
    grades[2].teacher_notes.append(_(INTERFERED))
    info = {who: Learner(who) for who in ("ada", "bo", "cy")}
    grades_ = ClassGrades(list(info), grades, info=info, notebooks=["02"], assignment="第 2 周")
    note_similar(grades_, [("02", ("ada", "bo"), ids[:2]), ("02", ("ada", "bo", "cy"), ids[:3])])
    summary = summary_markdown(grades_)
    assert "## 请教师查看：评分程序无法检查的笔记本" in summary and "并排阅读" in summary
    notes = "\n".join(n for who in info for n in grades_.notes(who))
    assert "请教师注意" in notes
    for name, text in {"summary.md": summary, "notes": notes}.items():
        assert not english_sentences(text), (name, english_sentences(text), text)
