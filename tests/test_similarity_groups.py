"""Copies shared by groups of learners (attention_kit/grading/similarity.py): fast, no kernels.

A renamed copy of Zoë's notebook 02 (tests/trust_class.py) handed in by two classmates, or by one
while a third wrote the same code for some exercises, is flagged with every member named; the
honest styles of the trust class, and textbook forms many learners share, are not; nor is the
worked solution's own form, however many learners write it (the first attempt at group flags
flagged an honest learner who wrote it: the teacher's print was then of the full notebook's
exercise stub and solution together, which no learner's answer is).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import nbformat

from attention_kit.check import registry
from attention_kit.grading.class_grades import ClassGrades
from attention_kit.grading.reports import summary_text
from attention_kit.grading.similarity import (
    answer_prints,
    find_similar,
    note_similar,
    rare_limit,
    similar_groups,
    similar_pairs,
    teacher_prints,
)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(ROOT / "tools"))
import class_samples  # noqa: E402
import trust_class  # noqa: E402

EXERCISES = ("02.1", "02.2", "02.5", "02.6")


def _teacher(number: str = "02") -> list[str]:
    nb = nbformat.read(ROOT / "notebooks" / registry.notebook(number).file, as_version=4)
    return [c.source for c in nb.cells if c.cell_type == "code"]


def _honest(k: int) -> list[str]:
    return [trust_class.HONEST[e][k] for e in EXERCISES]


class _Rename(ast.NodeTransformer):
    NEW = {"S": "s", "Q": "q", "K": "k", "X": "xs", "W_q": "a", "W_k": "b", "W_v": "c",
           "G": "res", "T": "tmp", "P": "pp"}

    def visit_Name(self, node):
        node.id = self.NEW.get(node.id, node.id)
        return node

    def visit_arg(self, node):
        node.arg = self.NEW.get(node.arg, node.arg)
        return node


def second_copy() -> list[str]:
    """Zoë's notebook renamed again, by another hand than COPY's."""
    return ["# copied, honestly\n" + ast.unparse(_Rename().visit(ast.parse(src)))
            for src in trust_class.ZOE.values()]


def _class(n_honest: int = 5) -> dict[str, list[str]]:
    learners = {f"honest{k}": _honest(k % 5) for k in range(n_honest)}
    learners["zoë"] = list(trust_class.ZOE.values())
    return learners


def test_the_second_copy_is_renamed_but_the_same_shape():
    a, b = second_copy()[0], trust_class.ZOE["02.1"]
    assert a != b and "tmp" in a
    assert similar_groups({"x": [a, trust_class.ZOE["02.2"]], "y": [b, second_copy()[1]]}, "02") \
        == [(("x", "y"), ["02.1", "02.2"])]


def test_a_copy_shared_by_three_is_flagged_as_one_group():
    learners = _class() | {"copier": list(trust_class.COPY.values()), "other": second_copy()}
    assert rare_limit(len(learners)) == 3
    groups = similar_groups(learners, "02", _teacher())
    assert groups == [(("copier", "other", "zoë"), list(EXERCISES))]
    assert similar_pairs(learners, "02", _teacher()) == []  # no pair alone: the group is the flag


def test_a_renamed_copy_is_found_though_a_third_learner_wrote_some_of_the_same_code():
    """The issue's case: a third learner's 02.1, 02.2 and 02.5 are Zoë's forms, so only 02.6 is
    the copier's and Zoë's alone; the old rule (at most two users) saw one exercise and no pair."""
    third = [*list(trust_class.ZOE.values())[:3], trust_class.HONEST["02.6"][1]]
    learners = _class() | {"copier": list(trust_class.COPY.values()), "third": third}
    groups = similar_groups(learners, "02", _teacher())
    assert (("copier", "third", "zoë"), ["02.1", "02.2", "02.5"]) in groups
    assert (("copier", "zoë"), list(EXERCISES)) in groups
    assert len(groups) == 2


def test_every_member_is_named_and_nobody_loses_points():
    learners = _class() | {"copier": list(trust_class.COPY.values()), "other": second_copy()}
    found = find_similar({(ln, "02"): src for ln, src in learners.items()}, {"02": _teacher()})
    assert found == [("02", ("copier", "other", "zoë"), list(EXERCISES))]
    grades = ClassGrades(sorted(learners), [], notebooks=["02"])
    note_similar(grades, found)
    assert set(grades.flags) == {"copier", "other", "zoë"}
    note = grades.flags["other"][0]
    assert note.startswith("copier, other and zoë: notebook 02, exercises 02.1, 02.2, 02.5, 02.6")
    assert "only these 3 learners" in note and "read them side by side" in note
    assert grades.by_key == {}  # a note for the teacher, no grade touched
    text = " ".join(summary_text(grades, width=80).split())
    assert note in text  # wrapped in the summary, not clipped


def test_honest_styles_and_textbook_forms_are_not_flagged():
    # the trust class, each honest style written by one learner
    assert similar_groups(_class(), "02", _teacher()) == []
    # a class of 20: each honest style written by four learners, exercise after exercise (a form
    # a fifth of the class writes is the textbook's, not a copy)
    assert rare_limit(20) == 3
    assert similar_groups({f"h{k}": _honest(k % 5) for k in range(20)}, "02", _teacher()) == []
    # rare forms shared by different learners from one exercise to the next: no group twice
    mixed = {f"h{k}": [trust_class.HONEST[e][(k + j * (k // 3)) % 5] for j, e in enumerate(EXERCISES)]
             for k in range(9)}
    assert similar_groups(mixed, "02", _teacher()) == []


def test_a_group_as_large_as_half_the_class_is_not_rare():
    assert [rare_limit(n) for n in (2, 5, 6, 7, 14, 40, 60)] == [2, 2, 2, 3, 3, 4, 6]
    # three of six learners share Zoë's forms: half the class, not flagged as a group
    learners = _class(3) | {"copier": list(trust_class.COPY.values()), "other": second_copy()}
    assert len(learners) == 6 and similar_groups(learners, "02", _teacher()) == []


def _own(number: str) -> list[str]:
    """The worked solutions written as a learner's own answers (no silent check, a docstring)."""
    return [class_samples.own_answer(src) for src in class_samples.solution_sources(number).values()]


def test_the_worked_solutions_form_is_never_rare():
    """The trust class's graded run: müllerjürgen writes style 0 (02.1, 02.2, 04.1 and 04.2 are
    the solution's natural form) and routerr, the paster and the hard-coder keep the solution's
    form where they did not cheat: three or more learners, two exercises, no copy."""
    for number in ("02", "04"):
        theirs = teacher_prints(_teacher(number), number)
        assert set(answer_prints(_own(number), number).values()) <= theirs
        exs = [e for e in trust_class.HONEST if e.startswith(number)]
        learners = {f"honest{k}": [trust_class.HONEST[e][k] for e in exs] for k in range(5)}
        learners |= {f"own{j}": _own(number) for j in range(3)}
        assert rare_limit(len(learners)) == 3
        assert similar_groups(learners, number, _teacher(number)) == [], number
        # and Zoë's notebook copied by two, in the same class, is one group of three
    learners = {f"honest{k}": _honest(k) for k in range(5)} | {f"own{j}": _own("02") for j in range(3)}
    learners |= {"zoë": list(trust_class.ZOE.values()), "copier": list(trust_class.COPY.values()),
                 "other": second_copy()}
    assert similar_groups(learners, "02", _teacher()) == [(("copier", "other", "zoë"), list(EXERCISES))]


def test_a_group_of_three_is_one_flag_in_the_summary_files_and_every_members_notes(tmp_path):
    from attention_kit.grading.reports import summary_markdown, write_csv

    learners = _class() | {"copier": list(trust_class.COPY.values()), "other": second_copy()}
    found = find_similar({(ln, "02"): src for ln, src in learners.items()}, {"02": _teacher()})
    grades = ClassGrades(sorted(learners), [], notebooks=["02"])
    note_similar(grades, found)
    md = summary_markdown(grades)
    assert md.count("copier, other and zoë: notebook 02") == 1  # one flag, not three pairs
    assert " and zoë: notebook 02" not in md.replace("copier, other and zoë", "")
    write_csv(grades, tmp_path / "grades.csv")
    import csv
    rows = {r["learner"]: r["notes"] for r in csv.DictReader(open(tmp_path / "grades.csv", encoding="utf-8"))}
    assert all("copier, other and zoë" in rows[m] for m in ("copier", "other", "zoë"))
    assert not any("side by side" in rows[h] for h in rows if h.startswith("honest"))
