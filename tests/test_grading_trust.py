"""Grades a teacher can defend (issue 33): honest work is never called a copy, copies between
learners are flagged, the verdict is computed outside the learner's kernel, and no file is lost.

The first tests need no kernel: five honest answers in different styles per function exercise of
notebooks 02, 04 and 06.1 (``trust_class.py``) pass their checkers and the hidden cases, are
never "the worked solution", and no two honest learners are flagged; a classmate's notebook with
the names changed is flagged. The last test grades a Canvas download of a small class with
``make grade``'s code: honest learners, a copier, a paster of the teacher's cells, a learner who
patches numpy's comparisons, one who reaches attention_kit through ``sys.modules``,
``importlib`` and ``__import__`` in plain-numpy exercises, one who hard-codes the in-class
checker's cases, Unicode and anonymous names, a late notebook and a stray file.
"""

from __future__ import annotations

import csv
import math
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

import attention_kit as ak
from attention_kit import check
from attention_kit.check import recording, registry
from attention_kit.grading import FAILED, PASSED, SOLUTION
from attention_kit.grading.hidden import case_rng, check_hidden
from attention_kit.grading.similarity import similar_pairs
from attention_kit.grading.solutions import copied_exercises

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import class_samples  # noqa: E402
import editions  # noqa: E402
import trust_class  # noqa: E402

pytestmark = pytest.mark.slow  # grades a class in kernels (minutes on 2 cores): make check leaves it out

_X_EX = np.array([[0.1, 0.5], [0.3, 0.4], [0.6, 0.3]])


def _softmax_given(S):
    e = np.exp(S - S.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _namespace() -> dict:
    return {"np": np, "ak": ak, "math": math, "check": check, "softmax_given": _softmax_given,
            "X_ex": _X_EX.copy(), "I2": np.eye(2)}


def _exercise(ex_id: str) -> registry.Exercise:
    number, k = ex_id.split(".")
    return registry.notebook(number).exercises[int(k) - 1]


def _verdict(ex_id: str, source: str) -> tuple[str, str]:
    ns = _namespace()
    exec(compile(source, f"<{ex_id}>", "exec"), ns)
    ex = _exercise(ex_id)
    answers = [ns[a] for a in ex.answers]
    with recording() as results, check.quietly():
        ex.checker(*answers, **ex.kwargs)
    if results[-1].status == PASSED:
        wrong = check_hidden(ex_id, answers, case_rng("teacher", "learner", ex_id))
        if wrong:
            return FAILED, wrong
    return results[-1].status, results[-1].message


HONEST_CASES = [(ex_id, k) for ex_id, styles in trust_class.HONEST.items() for k in range(len(styles))]


@pytest.mark.parametrize("ex_id,k", HONEST_CASES)
def test_every_honest_style_passes_its_checker_and_the_hidden_cases(ex_id, k):
    status, message = _verdict(ex_id, trust_class.HONEST[ex_id][k])
    assert status == PASSED, f"{ex_id} style {k}: {message}"


@pytest.mark.parametrize("ex_id", list(trust_class.VALUES))
def test_honest_values_pass(ex_id):
    for source in trust_class.VALUES[ex_id]:
        assert _verdict(ex_id, source)[0] == PASSED, source


def _cells(sources) -> list[dict]:
    return [{"source": s, "metadata": {}} for s in sources]


@pytest.mark.parametrize("number", ["02", "04", "06"])
def test_no_honest_answer_is_called_the_worked_solution(number):
    for k in range(5):
        sources = [styles[k] for ex_id, styles in trust_class.HONEST.items() if ex_id.startswith(number)]
        assert copied_exercises(_cells(sources), number) == {}, (number, k)


def _teacher(number: str) -> list[str]:
    nb = nbformat.read(ROOT / "notebooks" / registry.notebook(number).file, as_version=4)
    return [c.source for c in nb.cells if c.cell_type == "code"]


def _class_02(with_copy: bool) -> dict[str, list[str]]:
    learners = {f"honest{k}": [trust_class.HONEST[e][k] for e in ("02.1", "02.2", "02.5", "02.6")]
                for k in range(5)}
    learners["zoë"] = list(trust_class.ZOE.values())
    if with_copy:
        learners["copier"] = list(trust_class.COPY.values())
    return learners


def test_honest_learners_are_never_flagged_as_similar():
    for number in ("02", "04", "06"):
        learners = {f"honest{k}": [styles[k] for ex_id, styles in trust_class.HONEST.items()
                                   if ex_id.startswith(number)] for k in range(5)}
        assert similar_pairs(learners, number, _teacher(number)) == []
    assert similar_pairs(_class_02(with_copy=False), "02", _teacher("02")) == []


def test_a_renamed_copy_of_a_classmates_notebook_is_flagged():
    pairs = similar_pairs(_class_02(with_copy=True), "02", _teacher("02"))
    assert [(a, b) for a, b, _ in pairs] == [("copier", "zoë")]
    assert pairs[0][2] == ["02.1", "02.2", "02.5", "02.6"]


def test_the_teachers_cells_pasted_without_comments_score_nothing():
    sols = class_samples.solution_sources("04")
    stripped = ["\n".join(ln.split("#")[0].rstrip() for ln in src.splitlines()) for src in sols.values()]
    assert sorted(copied_exercises(_cells(stripped), "04")) == ["04.1", "04.2", "04.3", "04.4"]
    # the same code with the silent checks left out and the names changed: canonical, not evidence
    honest_like = [class_samples.own_answer(src) for src in sols.values()]
    assert copied_exercises(_cells(honest_like), "04") == {}


def test_a_table_of_the_in_class_cases_fails_the_hidden_cases():
    from attention_kit.check.self_attention_cases import softmax_rows_table  # its in-class cases

    table = {tuple(np.round(c["S"], 6).ravel()): ak.softmax(c["S"]) for c in softmax_rows_table()}

    def my_softmax_rows(S):
        return table[tuple(np.round(S, 6).ravel())]

    with recording() as results, check.quietly():
        check.self_attention.softmax_rows(my_softmax_rows)
    assert results[-1].status == PASSED  # the in-class checker cannot tell
    assert "other inputs" in check_hidden("02.1", [my_softmax_rows], case_rng("teacher", "x", "02.1"))


def test_hidden_cases_differ_between_learners_and_repeat_for_one():
    a = case_rng("s", "ada", "02.1").random(3)
    assert np.array_equal(a, case_rng("s", "ada", "02.1").random(3))
    assert not np.array_equal(a, case_rng("s", "ben", "02.1").random(3))
    assert not np.array_equal(a, case_rng("t", "ada", "02.1").random(3))


# --- a whole class, graded as make grade grades it ------------------------------------------------

PATCH_NUMPY = ("np.allclose = lambda *a, **k: True\nnp.isclose = lambda *a, **k: True\n"
               "np.array_equal = lambda *a, **k: True\nnp.testing.assert_allclose = lambda *a, **k: None\n")


def _notebook(fresh, number: str, answers: dict[str, str], first: str = "", last: str = ""):
    nb = class_samples.with_own_answers(fresh, number)
    for ex_id, source in answers.items():
        class_samples.exercise_cell(nb, number, ex_id).source = source
    code = [c for c in nb.cells if c.cell_type == "code"]
    if first:
        code[0].source += "\n" + first
    if last:
        code[-1].source += "\n" + last
    return nb


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from attention_kit.grading.__main__ import grade_class
    from attention_kit.grading.execute import Limits

    student = editions.check(editions.student_edition(tmp_path_factory))
    fresh = {n: nbformat.read(student / registry.notebook(n).file, as_version=4) for n in ("02", "04")}
    subs = tmp_path_factory.mktemp("canvas")
    files = {}

    def put(name: str, nb) -> None:
        nbformat.write(nb, subs / name)
        files[name] = nb

    honest = {n: {e: s for e, s in {**trust_class.HONEST, **trust_class.VALUES}.items() if e.startswith(n)}
              for n in ("02", "04")}
    for k, login in enumerate(["müllerjürgen", "nguyễnan", "ørsted"]):
        for n in ("02", "04"):
            answers = {e: styles[(2 * k) % len(styles)] for e, styles in honest[n].items()}
            late = "LATE_" if (login == "ørsted" and n == "04") else ""
            put(f"{login}_{late}{1001 + k}_{70000 + 10 * k + int(n)}_{registry.notebook(n).file}",
                _notebook(fresh[n], n, answers))
    put(f"anon_Ab3xZ_70101_{registry.notebook('02').file}",
        _notebook(fresh["02"], "02", {e: s[1 % len(s)] for e, s in honest["02"].items()}))
    put(f"LATE_anon_Qx7Pz_70102_{registry.notebook('04').file}",
        _notebook(fresh["04"], "04", {e: s[3 % len(s)] for e, s in honest["04"].items()}))
    put(f"zoëlind_1010_70110_{registry.notebook('02').file}", _notebook(fresh["02"], "02", trust_class.ZOE))
    put(f"copierc_1011_70111_{registry.notebook('02').file}", _notebook(fresh["02"], "02", trust_class.COPY))
    sols = class_samples.solution_sources("04")
    stripped = {e: "\n".join(ln.split("#")[0].rstrip() for ln in src.splitlines()) for e, src in sols.items()}
    put(f"pasterp_1012_70112_{registry.notebook('04').file}", _notebook(fresh["04"], "04", stripped))
    wrong = {"02.1": "def my_softmax_rows(S):\n    return np.full(S.shape, 1 / S.shape[1])",
             "02.2": "def my_scaled_scores(Q, K):\n    return np.zeros((Q.shape[0], K.shape[0]))",
             "02.3": "y3 = np.zeros(2)"}
    put(f"patcherq_1013_70113_{registry.notebook('02').file}",
        _notebook(fresh["02"], "02", wrong, last=PATCH_NUMPY))
    put(f"routerr_1014_70114_{registry.notebook('02').file}", _notebook(fresh["02"], "02", {
        "02.6": "import sys\ndef self_attention_fixed(X, W_q, W_k, W_v):\n"
                "    return sys.modules['attention_kit'].self_attention(X, W_q, W_k, W_v)[0]"}))
    put(f"routerr_1014_70115_{registry.notebook('04').file}", _notebook(fresh["04"], "04", {
        "04.2": "import importlib\ndef my_masked_softmax(S, mask):\n"
                "    return importlib.import_module('attention_kit').softmax(S, mask=mask)",
        "04.3": "def my_positions(pos, d):\n"
                "    return __import__('attention_kit').sinusoidal_positions(int(max(pos)) + 1, d)[pos]"}))
    from attention_kit.check.self_attention_cases import softmax_rows_table  # its in-class cases
    table = "{" + ", ".join(f"{tuple(np.round(S, 6).ravel().tolist())!r}: np.array({ak.softmax(S).tolist()!r})"
                            for S in (c["S"] for c in softmax_rows_table())) + "}"
    put(f"hardcoderh_1015_70116_{registry.notebook('02').file}", _notebook(fresh["02"], "02", {
        "02.1": f"TABLE = {table}\ndef my_softmax_rows(S):\n    return TABLE[tuple(np.round(S, 6).ravel().tolist())]"}))
    (subs / "notes.txt").write_text("the class's notes")
    out = tmp_path_factory.mktemp("grades")
    result, summary = grade_class(subs, out, limits=Limits(cell_s=30, notebook_s=200, exercise_s=10),
                                  workers=2, seed="a teacher's secret", late_penalty=10)
    with open(out / "grades.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return {"result": result, "summary": summary, "rows": rows, "out": out, "files": files,
            "md": (out / "summary.md").read_text(encoding="utf-8")}


def _row(graded, learner: str) -> dict[str, str]:
    return next(r for r in graded["rows"] if r["learner"] == learner)


def _status(graded, learner: str, ex_id: str):
    return next(g for g in graded["result"].row(learner) if g.id == ex_id)


def test_every_honest_learner_gets_full_marks_and_no_flag(graded):
    for learner in ("müllerjürgen_1001", "nguyễnan_1002", "ørsted_1003", "anon_Ab3xZ", "anon_Qx7Pz"):
        row = [g for g in graded["result"].row(learner)
               if (learner, g.id[:2]) in graded["result"].by_key]
        assert row and all(g.status == PASSED for g in row), \
            (learner, [(g.id, g.status, g.message) for g in row if g.status != PASSED])
        assert not graded["result"].flags.get(learner), learner


def test_a_copy_of_a_classmate_is_flagged_for_both(graded):
    for learner in ("zoëlind_1010", "copierc_1011"):
        notes = graded["result"].flags.get(learner, [])
        assert notes and "copierc_1011 and zoëlind_1010" in notes[0] and "02.1, 02.2, 02.5, 02.6" in notes[0]
        assert "read them side by side" in _row(graded, learner)["notes"]
    assert "copierc_1011 and zoëlind_1010" in graded["md"] and "copierc_1011 and zoëlind_1010" in graded["summary"]


def test_pasted_teacher_cells_score_nothing(graded):
    for ex_id in ("04.1", "04.2", "04.3", "04.4"):
        g = _status(graded, "pasterp_1012", ex_id)
        assert g.status == SOLUTION and "silent check" in g.message, (ex_id, g.message)


def test_patched_numpy_in_the_kernel_cannot_pass_wrong_answers(graded):
    for ex_id in ("02.1", "02.2", "02.3"):
        assert _status(graded, "patcherq_1013", ex_id).status == FAILED, ex_id
    notes = _row(graded, "patcherq_1013")["notes"]  # and the teacher is told what the notebook did
    assert "replaced np.allclose, np.array_equal, np.isclose, np.testing.assert_allclose" in notes, notes
    assert "the grade is not affected" in notes
    for learner in ("müllerjürgen_1001", "nguyễnan_1002", "zoëlind_1010"):  # an honest notebook replaces nothing
        assert "replaced" not in _row(graded, learner)["notes"], learner


def test_the_package_reached_another_way_fails_a_plain_numpy_exercise(graded):
    for ex_id, used in (("02.6", "ak.self_attention"), ("04.2", "ak.softmax"), ("04.3", "ak.sinusoidal_positions")):
        g = _status(graded, "routerr_1014", ex_id)
        assert g.status == FAILED and used in g.message, (ex_id, g.message)


def test_hard_coded_checker_cases_fail_in_grading(graded):
    g = _status(graded, "hardcoderh_1015", "02.1")
    assert g.status == FAILED and "other inputs" in g.message


def test_names_late_marks_and_every_file_accounted_for(graded):
    rows = {r["learner"]: r for r in graded["rows"] if r["learner"]}
    assert {"müllerjürgen_1001", "nguyễnan_1002", "ørsted_1003", "anon_Ab3xZ", "anon_Qx7Pz", "zoëlind_1010"} <= set(rows)
    assert rows["müllerjürgen_1001"]["id"] == "1001" and rows["anon_Ab3xZ"]["id"] == "Ab3xZ"
    assert rows["ørsted_1003"]["late"] == "04" and rows["anon_Qx7Pz"]["late"] == "04"
    answered = [e for e in {**trust_class.HONEST, **trust_class.VALUES} if e.startswith("04")]
    assert float(rows["ørsted_1003"]["late penalty"]) == pytest.approx(0.1 * len(answered))  # 10 % of his points
    assert rows["müllerjürgen_1001"]["late"] == "" and "Returned late" in graded["md"]
    graded_sources = {g.source for g in graded["result"].by_key.values()}
    listed = {r["notes"] for r in graded["rows"] if not r["learner"]}
    for name in [*graded["files"], "notes.txt"]:
        assert name in graded_sources or any(name in n for n in listed), name
    assert any("notes.txt" in n for n in listed) and "notes.txt" in graded["md"]


def test_predictions_recorded_in_class_are_judged_only_by_the_grader(tmp_path, monkeypatch, capsys):
    from attention_kit.check import graded_hints, heads

    settings = tmp_path / "class_settings.json"
    settings.write_text('{"predictions": "record"}')
    monkeypatch.setattr(check, "CLASS_SETTINGS", settings)
    assert heads.failing_queries([14]) is True  # recorded, not judged: nothing to try answers against
    out = capsys.readouterr().out
    assert out.startswith("● recorded: [14]") and "✓" not in out and "✗" not in out
    with recording() as results, graded_hints(), check.quietly():  # as make grade calls it
        heads.failing_queries([14])
    assert results[-1].status == FAILED
    settings.write_text('{"predictions": "feedback"}')
    assert heads.failing_queries([14]) is False


def test_the_student_edition_ships_no_grader_and_records_predictions_when_asked(tmp_path_factory):
    package = editions.check(editions.student_edition(tmp_path_factory, record_predictions=True)) / "attention_kit"
    assert not (package / "grading").exists()  # no hidden cases, no references
    assert '"record"' in (package / "check" / "class_settings.json").read_text()
    assert "16, 17, 20, 21" not in (package / "check" / "heads.py").read_text()
    assert "dS @ K @ W.T" not in (package / "check" / "backprop.py").read_text()


def test_notebook_09s_function_exercises_have_hidden_cases():
    from attention_kit.check.exercises_09 import alibi_weights_ref, rope_matrix_ref

    rng = case_rng("t", "learner", "09.1")
    assert check_hidden("09.1", [rope_matrix_ref], rng) is None
    assert check_hidden("09.1", [lambda d, delta: rope_matrix_ref(d, delta).T], rng)  # the transpose
    table = {(4, 3): rope_matrix_ref(4, 3), (2, 1): rope_matrix_ref(2, 1)}  # the in-class cases only
    assert check_hidden("09.1", [lambda d, delta: table.get((d, delta), np.eye(d))], rng)
    rng = case_rng("t", "learner", "09.3")
    assert check_hidden("09.3", [alibi_weights_ref], rng) is None
    no_slope = lambda m, i: alibi_weights_ref(np.ones_like(m), i)  # noqa: E731
    assert check_hidden("09.3", [no_slope], rng)


def test_identical_short_value_answers_of_two_honest_learners_are_not_flagged():
    """Two honest learners who both write `variance = 16 * 2; std = variance ** 0.5` and the same
    few lines for 02.3: value answers are left out of the similarity check."""
    same = [trust_class.VALUES["02.3"][0], trust_class.VALUES["02.4"][1]]
    learners = {"a": same + [trust_class.HONEST["02.1"][0]], "b": same + [trust_class.HONEST["02.1"][2]],
                "c": [trust_class.VALUES["02.3"][1], trust_class.VALUES["02.4"][0], trust_class.HONEST["02.1"][3]]}
    assert similar_pairs(learners, "02", _teacher("02")) == []


def test_no_prediction_answer_is_written_in_the_shipped_checkers():
    """The checkers of 08.2, 09.2 and 09.4 measure their answers (the student edition ships them)."""
    heads_src = (ROOT / "attention_kit" / "check" / "heads.py").read_text()
    long_src = (ROOT / "attention_kit" / "check" / "long_context.py").read_text()
    assert "{16, 17, 20, 21}" not in heads_src
    assert "(14, 17)" not in long_src and "[0, 6, 7, 8, 9]" not in long_src
