"""The grader's parts that need no kernel: checker results, the registry, the two submission
layouts, the CSV, feedback and summary, and the teaching guide's exercise table."""

from __future__ import annotations

import ast
import csv
import functools
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from attention_kit.check import (
    FAILED,
    NOT_ATTEMPTED,
    PASSED,
    Result,
    general,
    recording,
    registry,
    report,
)
from attention_kit.grading import (
    COULD_NOT_RUN,
    MISSING,
    NOT_SUBMITTED,
    ExerciseGrade,
    NotebookGrade,
)
from attention_kit.grading.in_kernel import request_cell, setup_cell
from attention_kit.grading.reports import (
    ClassGrades,
    feedback_file_name,
    feedback_markdown,
    summary_text,
    write_csv,
)
from attention_kit.grading.submissions import find_submissions

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_student  # noqa: E402

# --- checker results --------------------------------------------------------------------------

def test_recording_collects_what_is_printed(capsys):
    with recording() as outer:
        assert general.softmax_by_hand([0.665, 0.245, 0.090]) is True
        with recording() as inner:
            assert general.softmax_by_hand([0.090, 0.245, 0.665]) is False
        assert general.dot_scores(...) is False
    printed = capsys.readouterr().out.splitlines()
    assert [r.line for r in outer] == printed
    assert [r.status for r in outer] == [PASSED, FAILED, NOT_ATTEMPTED]
    assert inner == [outer[1]] and "smallest score" in inner[0].message
    report(True, "outside")  # nothing records once the blocks are closed
    assert len(outer) == 3


@functools.lru_cache(maxsize=None)
def _code_sources(file_name: str) -> list[str]:
    full = nbformat.read(ROOT / "notebooks" / file_name, as_version=4)
    return [c.source for c in full.cells if c.cell_type == "code"]


def _stub_answers(nb: registry.Notebook, ex_id: str, ex: registry.Exercise) -> list:
    """What a student copy leaves: ``...`` values, and functions whose body is ``return ...``
    where the exercise cell defines a function."""
    def stub(*args, **kwargs):
        return ...

    code = _code_sources(nb.file)
    cell = code[registry.answer_cells(code, nb)[ex_id][0]]
    return [stub if f"def {name}(" in cell else ... for name in ex.answers]


@pytest.mark.parametrize("nb, ex_id, ex", [(nb, i, e) for i, nb, e in registry.exercises()],
                         ids=[i for i, _, _ in registry.exercises()])
def test_every_registered_checker_marks_the_stub_not_attempted(nb, ex_id, ex, capsys):
    with recording() as results:
        ok = ex.checker(*_stub_answers(nb, ex_id, ex), **ex.kwargs)
    assert ok is False
    assert [r.status for r in results] == [NOT_ATTEMPTED], (ex_id, results)
    assert capsys.readouterr().out.startswith("✗")


def test_registry_ids_files_and_checkers():
    numbers = [nb.number for nb in registry.NOTEBOOKS]
    assert numbers == sorted(set(numbers))
    files = {p.name for p in make_student.course_notebooks()}
    for nb in registry.NOTEBOOKS:
        assert nb.file in files and nb.file.startswith(nb.number + "_")
        assert 3 <= len(nb.exercises) <= 6
        assert [i for i, _ in nb.numbered()] == [f"{nb.number}.{k}" for k in range(1, len(nb.exercises) + 1)]
    assert registry.notebook("03").title == "Multi-head attention"
    with pytest.raises(KeyError, match="known"):
        registry.notebook("99")


@pytest.mark.parametrize("nb", registry.NOTEBOOKS, ids=lambda nb: nb.number)
def test_every_exercise_has_one_cell_in_the_student_copy_and_calls_its_checker(nb):
    """The registry and the notebook agree: one exercise cell (plus the worked solution) binds
    each answer, and that cell calls the registered checker."""
    full = nbformat.read(ROOT / "notebooks" / nb.file, as_version=4)
    code = [c for c in full.cells if c.cell_type == "code"]
    cells = registry.answer_cells([c.source for c in code], nb)
    for ex_id, ex in nb.numbered():
        hits = cells[ex_id]
        visible = [k for k in hits if not make_student.is_solution(code[k])]
        hidden = [k for k in hits if make_student.is_solution(code[k])]
        assert len(visible) == 1 and len(hidden) == 1, (ex_id, hits)
        source = code[visible[0]].source
        assert registry.call_settings(source, ex) is not None, (
            f"{ex_id}: the exercise cell does not call {ex.checker_name}")
        for name, value in ex.kwargs.items():  # arrays: the cell's `X_ex = np.array([...])`
            if isinstance(value, np.ndarray):
                assert _array_in_cells(code[: visible[0] + 1], source, name, value), (ex_id, name)
        assert not registry.settings_differ(source, ex), (
            f"{ex_id}: the notebook calls {ex.checker_name} with "
            f"{registry.call_settings(source, ex)}, the registry has {dict(ex.kwargs)}: "
            "update the exercise's declaration (attention_kit/check/exercises_*.py)")
    assert list(cells) == [i for i, _ in nb.numbered()]


def _array_in_cells(cells, call_source: str, kwarg: str, value: np.ndarray) -> bool:
    """True when the variable the exercise passes as ``kwarg`` was last set, in ``cells``, to
    ``np.array(<literal>)`` equal to ``value`` (or is not a literal array, e.g. ``np.eye(2)``,
    in which case the class test, which grades the worked solutions, covers it)."""
    call = next(n for n in ast.walk(ast.parse(call_source)) if isinstance(n, ast.Call)
                and any(k.arg == kwarg for k in n.keywords))
    var = next(k.value for k in call.keywords if k.arg == kwarg)
    if not isinstance(var, ast.Name):
        return True
    last = None
    for cell in cells:
        for node in ast.walk(ast.parse(cell.source)):
            if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == var.id
                                                     for t in node.targets)):
                last = node.value
    if not (isinstance(last, ast.Call) and getattr(last.func, "attr", "") == "array"):
        return True
    return np.array_equal(np.array(ast.literal_eval(last.args[0])), value)


def test_answer_cells_follow_syntax_errors_and_ignore_local_names():
    nb = registry.notebook("01")
    sources = ["def helper():\n    my_weights = 1\n    return my_weights",  # a local name
               "my_weights = [0.6, 0.3\n",  # does not parse
               "dot_winner, cosine_winner = 'k2', 'k1'",
               "def my_context(a, V)\n    return a @ V"]  # does not parse
    cells = registry.answer_cells(sources, nb)
    assert cells["01.1"] == [1] and cells["01.3"] == [2] and cells["01.4"] == [3]
    assert cells["01.2"] == [] and cells["01.5"] == []


def test_teaching_guide_shows_the_registry():
    text = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
    assert registry.markdown_table() in text, (
        "docs/teaching.md must contain the registry's table: run python tools/guide_tables.py --write")


def test_grading_cells_use_no_name_a_learner_could_redefine():
    for src in (setup_cell("abc123"), request_cell("abc123", {"op": "describe", "names": ["x"]})):
        compile(src, "<grading>", "exec")
        for name in ("print", "len", "list", "globals", "check", "json", "open", "exec", "getattr"):
            assert f"{name}(" not in src.replace("_getframe(", ""), name


# --- submissions ------------------------------------------------------------------------------

def _touch(path: Path, text: str = "{}") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_both_layouts_duplicates_and_ignored_files(tmp_path):
    _touch(tmp_path / "alice" / "01_general_attention_model.ipynb")
    _touch(tmp_path / "alice" / "02_self_attention (1).ipynb")
    _touch(tmp_path / "alice" / "02_self_attention.ipynb")
    _touch(tmp_path / "alice" / "notes.txt")
    _touch(tmp_path / "alice" / ".ipynb_checkpoints" / "01_general_attention_model-checkpoint.ipynb")
    _touch(tmp_path / "bob__03_multi_head_attention.ipynb")
    _touch(tmp_path / "bob__untitled.ipynb")
    _touch(tmp_path / "README.txt")
    (tmp_path / "empty").mkdir()
    found = find_submissions(tmp_path, {nb.number: nb.file for nb in registry.NOTEBOOKS})
    got = [(s.learner, s.number, s.path.name) for s in found.submissions]
    assert got == [("alice", "01", "01_general_attention_model.ipynb"),
                   ("alice", "02", "02_self_attention.ipynb"),
                   ("bob", "03", "bob__03_multi_head_attention.ipynb")]
    assert found.learners == ["alice", "bob", "empty"]
    ignored = dict(found.ignored)
    assert "second notebook 02" in ignored[str(Path("alice") / "02_self_attention (1).ipynb")]
    assert "not a notebook" in ignored[str(Path("alice") / "notes.txt")]
    assert "notebook number" in ignored["bob__untitled.ipynb"]
    assert "<learner>__NN_topic.ipynb" in ignored["README.txt"]
    assert "empty folder" in ignored["empty"]
    with pytest.raises(FileNotFoundError):
        find_submissions(tmp_path / "nowhere")


# --- reports ----------------------------------------------------------------------------------

def _grades() -> ClassGrades:
    nb1, nb2 = registry.notebook("01"), registry.notebook("02")
    statuses = [PASSED, FAILED, NOT_ATTEMPTED, COULD_NOT_RUN, MISSING]
    statuses += [NOT_ATTEMPTED] * (len(nb1.exercises) - len(statuses))   # 01's exercises: the registry's
    alice = NotebookGrade("alice", "01", "alice/01.ipynb", [
        ExerciseGrade(i, ex.title, st, f"message {i}") for (i, ex), st in zip(nb1.numbered(), statuses, strict=True)],
        notes=["errors while running the notebook: code cell 3 raised ZeroDivisionError"])
    bob = NotebookGrade("bob", "02", "bob__02.ipynb", [
        ExerciseGrade(i, ex.title, FAILED, "wrong values for S =\n[[1 2]\n [3 4]]")
        for i, ex in nb2.numbered()])
    stray = NotebookGrade("bob", "99", "bob__99_x.ipynb", [], ["notebook 99 is not part of this course"])
    return ClassGrades(["bob", "alice"], [alice, bob, stray])


def test_csv_has_a_row_per_learner_verdicts_points_and_scores(tmp_path):
    write_csv(_grades(), tmp_path / "grades.csv")
    rows = list(csv.reader(open(tmp_path / "grades.csv", encoding="utf-8")))
    ids = [i for i, _, _ in registry.exercises()]
    n_nb = len(registry.NOTEBOOKS)
    assert rows[0][:2] == ["learner", "id"]
    assert rows[0][-4:] == ["points", "max points", "percent", "notes"]
    assert [h.split()[0] for h in rows[0][2:2 + 2 * len(ids):2]] == ids
    assert rows[0][3:3 + 2 * len(ids):2] == [f"{i} points" for i in ids]
    assert rows[0][2 + 2 * len(ids)] == f"01 score (of {len(registry.notebook('01').exercises)})"
    alice, bob = rows[1], rows[2]
    assert alice[0] == "alice" and bob[0] == "bob"
    end = 2 + 2 * len(registry.notebook("01").exercises)   # after 01's columns
    assert alice[2:12:2] == [PASSED, FAILED, NOT_ATTEMPTED, COULD_NOT_RUN, MISSING]
    assert alice[3:end:2] == ["1"] + ["0"] * (len(registry.notebook("01").exercises) - 1)
    assert set(alice[end:2 + 2 * len(ids):2]) == {NOT_SUBMITTED}
    scores = alice[2 + 2 * len(ids):2 + 2 * len(ids) + n_nb]
    assert scores == ["1"] + ["0"] * (n_nb - 1)
    assert alice[-4:-1] == ["1", str(len(ids)), f"{100 / len(ids):.1f}"] and "ZeroDivisionError" in alice[-1]
    assert bob[-4] == "0" and "not part of this course" in bob[-1]


def test_only_the_notebooks_set_count():
    grades = ClassGrades(["alice"], _grades().by_key.values(), notebooks=["01", "02"])
    n = len(registry.notebook("01").exercises) + len(registry.notebook("02").exercises)
    assert grades.max_points == n and grades.points("alice") == 1
    assert grades.assignment == "Attention course, notebooks 01, 02"
    text = feedback_markdown(grades, "alice")
    assert f"You passed **1 of {n}** exercises" in text and "## 03" not in text
    assert "02 · Self-attention: not returned" in text


def test_feedback_lists_each_exercise_with_its_verdict_and_hint():
    grades = _grades()
    text = feedback_markdown(grades, "alice")
    n = sum(len(nb.exercises) for nb in registry.NOTEBOOKS)
    assert f"You passed **1 of {n}** exercises" in text
    assert "- ✓ **Exercise 1, softmax by hand**: passed — message 01.1" in text
    assert "- ✗ **Exercise 2, dot scores**: not yet — message 01.2" in text
    assert "- · **Exercise 3, dot and cosine winners**: not attempted\n" in text
    assert "## 02 · Self-attention: not returned" in text
    bob = feedback_markdown(grades, "bob")
    assert "  ```text\n  [[1 2]\n   [3 4]]\n  ```" in bob  # a printed matrix keeps its lines
    assert "not part of this course" in bob
    assert feedback_file_name("../Ann Lee") == "Ann_Lee.md"


def test_feedback_files_never_overwrite_each_other(tmp_path):
    from attention_kit.grading.reports import write_feedback

    paths = write_feedback(ClassGrades(["Ann Lee", "Ann_Lee", "Ann/Lee"], []), tmp_path)
    assert sorted(p.name for p in paths) == ["Ann_Lee-2.md", "Ann_Lee-3.md", "Ann_Lee.md"]
    assert "feedback for Ann Lee\n" in (tmp_path / "Ann_Lee.md").read_text()  # first in order


def test_summary_counts_and_most_frequent_hint():
    text = summary_text(_grades())
    line = next(ln for ln in text.splitlines() if ln.startswith("02.1"))
    assert "0/2" in line and "(1) wrong values for S = [[1 2] [3 4]]" in line
    assert all(len(ln) <= 120 for ln in text.splitlines())


def test_result_line():
    assert Result(PASSED, "fine").line == "✓ fine" and Result(NOT_ATTEMPTED, "x").line == "✗ x"


def test_make_student_warns_about_an_exercise_the_grader_cannot_find():
    nb_entry = registry.notebook("04")
    full = nbformat.read(ROOT / "notebooks" / nb_entry.file, as_version=4)
    student, _ = make_student.studentize(full, nb_entry.file)
    assert make_student.ungradable_exercises(student, nb_entry.file) == []
    for cell in student.cells:
        if "def my_positions(" in cell.source:
            cell.source = "def positions_mine(n, d):\n    return ..."
    assert make_student.ungradable_exercises(student, nb_entry.file) == ["04.3"]
    solved = make_student.with_solutions(*make_student.studentize(full, nb_entry.file)[:1], full,
                                         nb_entry.file)
    assert sum("# Solution" in c.source for c in solved.cells) == len(nb_entry.exercises)


def test_replies_are_read_only_from_nonce_lines():
    from attention_kit.grading.remote import KernelGone, Link

    class FakeRun:
        def __init__(self, text):
            self.text = text

        async def execute_request(self, source, timeout):
            return [{"output_type": "stream", "name": "stdout", "text": self.text},
                    {"output_type": "execute_result", "data": {"text/plain": "f00d {}"}}]

    import asyncio
    import threading

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        text = '{"ready": true}\nf00d not json\nf00d {"answers": {"x": {"kind": "missing"}}}\n'
        assert Link(FakeRun(text), loop, "f00d").request({"op": "describe"}, 5) == \
            {"answers": {"x": {"kind": "missing"}}}
        with pytest.raises(KernelGone):
            Link(FakeRun('{"ready": true}\n'), loop, "f00d").request({"op": "describe"}, 5)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)


def test_the_time_limit_counts_the_learners_code_not_the_graders_round_trips(monkeypatch):
    """A busy machine makes each round trip slow; only the time the kernel measured around the
    learner's function counts against the exercise's limit (the CI of stop 39: an honest
    learner's answer "did not finish" under load). The grader's clock is a stand-in that each
    round trip moves by exactly 0.05 s (a real sleep took longer on a busy machine: issue 44)."""
    from attention_kit.grading import remote, wire
    from attention_kit.grading.remote import Link, OutOfTime, RemoteFunction

    class Clock:
        now = 1000.0

        def monotonic(self):
            return self.now

    _time = Clock()
    monkeypatch.setattr(remote, "time", _time)

    class SlowLink(Link):  # every round trip takes 0.05 s of the grader's time
        def __init__(self, elapsed):  # no kernel: the replies are made here
            self.elapsed, self.sent = elapsed, []
            self.budget(10.0)

        def request(self, request, timeout):
            _time.now += 0.05
            self.sent.append(timeout)
            return {"result": wire.encode(1.0), "elapsed": self.elapsed, "args_after": wire.encode([])}

    link = SlowLink(elapsed=0.01)
    link.budget(0.5)
    fn = RemoteFunction(link, "f")
    for _ in range(20):  # 1 s of round trips, 0.2 s of the learner's code: within 0.5 s
        assert fn() == 1.0
    assert link.remaining() == pytest.approx(0.3, abs=1e-9)
    assert link.sent[0] == 0.5 and link.sent[-1] == pytest.approx(0.31, abs=1e-9)
    def calls_until_out_of_time(link: SlowLink, budget: float, wall: float | None = None, tries: int = 5) -> int:
        link.budget(budget)
        if wall is not None:
            link.wall = _time.monotonic() + wall
        fn = RemoteFunction(link, "f")
        with pytest.raises(OutOfTime):
            for _ in range(tries):
                fn()
        return len(link.sent)

    # the learner's code is what is slow: out of time on the 4th call
    assert calls_until_out_of_time(SlowLink(elapsed=0.2), 0.5) == 3
    # a kernel that does not say: the round trip counts
    assert calls_until_out_of_time(SlowLink(elapsed=None), 0.12) == 3
    # a kernel that claims no time at all still meets the clock
    assert 3 <= calls_until_out_of_time(SlowLink(elapsed=0.0), 0.5, wall=0.2, tries=50) <= 5


@pytest.mark.slow
def test_command_line_on_files_that_need_no_kernel(tmp_path, capsys):
    from attention_kit.grading.__main__ import Progress, main

    subs = tmp_path / "returned"
    _touch(subs / "zoe__04_masks_and_positions.ipynb", "")  # an empty file
    _touch(subs / "zoe__99_unknown_topic.ipynb", "{}")  # not a notebook of this course
    assert main([str(subs), "--out", str(tmp_path / "out"), "--workers", "1"]) == 0
    printed = capsys.readouterr()
    assert "Graded 1 learners, 2 notebooks" in printed.out and "grading [" in printed.err
    row = next(csv.DictReader(open(tmp_path / "out" / "grades.csv", encoding="utf-8")))
    assert row["04.1 causal mask"] == COULD_NOT_RUN and "the file is empty" in row["notes"]
    assert "notebook 99 is not part of this course" in row["notes"]
    assert main([str(tmp_path / "nowhere")]) == 2
    assert "does not exist" in capsys.readouterr().err

    import io
    stream = io.StringIO()
    bar = Progress(2, stream)
    bar.step("a 01")
    bar.step("b 02")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2 and "1/2" in lines[0] and "[" + "#" * 30 + "]" in lines[1]


def test_settings_of_an_old_exercise_cell_are_noticed():
    variance = registry.notebook("02").exercises[3]
    assert registry.call_settings("ok = check.dot_variance(v, s)", variance) == {}
    assert registry.settings_differ("ok = check.dot_variance(v, s, d_k=16)", variance)
    assert not registry.settings_differ("variance, std = 64, 8", variance)  # no call: no verdict
    row = registry.notebook("02").exercises[2]
    call = "check.output_row(y3, X=X, W_q=I2, W_k=I2, W_v=I2, i=2)"
    assert registry.call_settings(call, row) == {"X": ..., "W_q": ..., "W_k": ..., "W_v": ..., "i": 2}
    assert not registry.settings_differ(call, row)
    assert registry.settings_differ(call.replace("i=2", "i=1"), row)


# --- LMS downloads, zips ----------------------------------------------------------------------

def test_canvas_moodle_nested_and_zipped_submissions(tmp_path):
    import zipfile

    subs, unpack = tmp_path / "subs", tmp_path / "unpack"
    unpack.mkdir()
    _touch(subs / "smithjohn_123456_7890123_02_self_attention.ipynb")
    _touch(subs / "smithjohn_LATE_123456_7890124_04_masks_and_positions-1.ipynb")
    _touch(subs / "Dana Lee_4711_assignsubmission_file_" / "week 2" / "deep" / "02_self_attention.ipynb")
    _touch(subs / "Ole Berg_4712_assignsubmission_file_03_multi_head_attention.ipynb")
    (subs / "__MACOSX").mkdir()
    with zipfile.ZipFile(subs / "Dana Lee_4711_assignsubmission_file_" / "work.zip", "w") as zf:
        zf.writestr("04_masks_and_positions.ipynb", "{}")
        zf.writestr("../evil/05_how_attention_learns.ipynb", "{}")  # never unpacked outside
        zf.writestr("notes.txt", "x")
    with zipfile.ZipFile(subs / "more.zip", "w") as zf:
        zf.writestr("zed/01_general_attention_model.ipynb", "{}")
    _touch(subs / "grades.xlsx")
    found = find_submissions(subs, {nb.number: nb.file for nb in registry.NOTEBOOKS}, unpack_to=unpack)
    got = [(s.learner, s.number, s.source) for s in found.submissions]
    assert got == [
        ("Dana Lee_4711", "02", "Dana Lee_4711_assignsubmission_file_/week 2/deep/02_self_attention.ipynb"),
        ("Dana Lee_4711", "04", "Dana Lee_4711_assignsubmission_file_/work.zip/04_masks_and_positions.ipynb"),
        ("Ole Berg_4712", "03", "Ole Berg_4712_assignsubmission_file_03_multi_head_attention.ipynb"),
        ("smithjohn_123456", "02", "smithjohn_123456_7890123_02_self_attention.ipynb"),
        ("smithjohn_123456", "04", "smithjohn_LATE_123456_7890124_04_masks_and_positions-1.ipynb"),
        ("zed", "01", "more.zip/zed/01_general_attention_model.ipynb")]
    assert found.info["smithjohn_123456"].canvas_id == "123456" and found.info["smithjohn_123456"].late
    assert found.info["Dana Lee_4711"].moodle_id == "4711" and found.info["Ole Berg_4712"].lms_id == "4712"
    ignored = dict(found.ignored)
    assert "not recognised" in ignored["grades.xlsx"]
    assert "not a notebook" in ignored["Dana Lee_4711_assignsubmission_file_/work.zip/notes.txt"]
    assert not (tmp_path / "evil").exists() and not any("evil" in s.source for s in found.submissions)
    # without a folder to unpack into, a zip is listed, not lost
    assert "zip" in dict(find_submissions(subs).ignored)["more.zip"]


# --- plain numpy, graded hints, worked solutions ---------------------------------------------

def test_plain_numpy_exercises_reject_attention_kit_under_any_name(capsys):
    import attention_kit as ak
    from attention_kit import causal_mask as cm
    from attention_kit.check import masks_positions
    from attention_kit.check.plain import library_use

    def helper(n):
        return cm(n)

    def through_helper(n):
        return helper(n)

    def imports_inside(n):
        import attention_kit.mechanism.masks as m
        return m.causal_mask(n)

    def own(n):
        return np.tril(np.ones((n, n), dtype=bool))

    assert library_use(lambda n: ak.causal_mask(n)) == "ak.causal_mask"
    assert library_use(through_helper) == "ak.causal_mask"
    assert library_use(imports_inside) == "import attention_kit.mechanism.masks"
    assert library_use(functools.partial(ak.softmax)) == "ak.softmax"
    assert library_use(ak.causal_mask) == "ak.causal_mask"
    assert library_use(own) is None and library_use(np.tril) is None
    assert library_use(lambda S: ak.softmax(S), allow=("softmax",)) is None
    assert library_use(lambda X: ak.self_attention(X, X, X, X), allow=("softmax",)) == "ak.self_attention"
    with recording() as results:
        assert masks_positions.causal_mask(through_helper) is False
        assert masks_positions.causal_mask(own) is True
    assert results[0].status == FAILED and "plain numpy, without attention_kit" in results[0].message
    capsys.readouterr()
    plain = [ex_id for ex_id, _, ex in registry.exercises() if ex.plain is not None]
    assert {"04.1", "04.2", "04.3", "07.3", "02.5", "09.1", "09.3"} <= set(plain)  # (no typed count: the
    # registry is the list, and an exercise added with plain=... joins it)
    assert registry.notebook("02").exercises[4].plain == ("softmax",)


# Wrong predictions and what the graded hint must not say (it would give the answer away).
PREDICTIONS = [
    ("masks_positions", "future_unchanged", [[3], [4, 5], [0, 1, 2, 3, 4, 5], [0, 1], [2, 3, 4, 5], []],
     ["4 and 5", "i >= 3", "row 3", "rows 3"]),
    ("backprop", "rotate_pattern", [[0, 1, 2, 3, 4, 5], [5, 0, 1, 2, 3, 4], [5, 4, 3, 2, 1, 0],
                                    [1, 2, 3, 4, 5, 5], [2, 2, 2, 2, 2, 2]],
     ["key i + 1", "looks at", "= 0", "wraps to 0", "i + 1"]),
    ("tiny_lm", "mask_at_inference", [(True, True), (False, False), (True, False)],
     ["cannot change", "its prediction changes", "so with one block"]),
    ("long_context", "cache_keeps", [[6, 7, 8, 9], [0, 7, 8, 9], [0, 5, 6, 7, 8], [1, 2]],
     ["0, 6", "6 to 9", "position 0", "last four"]),
]


@pytest.mark.parametrize("module, name, wrong, giveaways", PREDICTIONS)
def test_graded_hints_of_predictions_do_not_state_the_answer(module, name, wrong, giveaways, capsys):
    import importlib

    from attention_kit.check import graded_hints

    checker = getattr(importlib.import_module(f"attention_kit.check.{module}"), name)
    for answer in wrong:
        args = answer if isinstance(answer, tuple) else (answer,)
        with recording() as in_class:
            checker(*args)
        with recording() as graded, graded_hints():
            checker(*args)
        assert graded[0].status == in_class[0].status == FAILED, (answer, graded)
        assert not [g for g in giveaways if g in graded[0].message], (answer, graded[0].message)
    capsys.readouterr()


def test_graded_hints_of_the_variance_name_no_number(capsys):
    from attention_kit.check import graded_hints, self_attention

    kwargs = {"d_k": 16, "mean_q": 1.0, "var_q": 1.0, "mean_k": 0.0, "var_k": 1.0}
    for variance, std in ((np.sqrt(32), np.sqrt(32)), (16 * 16 * 2, 32), (7, 3)):
        with recording() as results, graded_hints():
            self_attention.dot_variance(variance, std, **kwargs)
        message = results[0].message
        assert results[0].status == FAILED and not any(x in message for x in ("32", "5.657", "= 2")), message
    capsys.readouterr()


@pytest.mark.slow
def test_worked_solutions_are_found_and_own_answers_are_not():
    import class_samples

    from attention_kit.grading.solutions import copied_exercises

    for nb in registry.NOTEBOOKS:
        full = nbformat.read(ROOT / "notebooks" / nb.file, as_version=4)
        student, _ = make_student.studentize(full, nb.file)
        ids = [i for i, _ in nb.numbered()]
        code = lambda n: [c for c in n.cells if c.cell_type == "code"]  # noqa: E731
        assert list(copied_exercises(code(full), nb.number)) == ids
        assert copied_exercises(code(student), nb.number) == {}
        assert copied_exercises(code(class_samples.with_own_answers(student, nb.number)), nb.number) == {}
    # the solution cell pasted, reformatted, comments dropped, metadata lost: its silent check shows it
    src = class_samples.solution_sources("04")["04.2"]
    squeezed = "\n".join(ln.split("#")[0].rstrip() for ln in src.splitlines()).replace(", ", ",")
    assert list(copied_exercises([{"source": squeezed, "metadata": {}}], "04")) == ["04.2"]
    # the same code without the silent check, as an honest learner could write it: not a copy
    honest = class_samples.own_answer(src).replace('"""My answer."""', "")
    assert copied_exercises([{"source": honest, "metadata": {}}], "04") == {}


def test_a_slow_plain_numpy_answer_runs_out_of_time_and_is_not_said_to_use_the_package():
    """The time limit's own signal handler lives in the package: it must not count as the answer's
    call into attention_kit (a lecturer's trial found 'your answer uses ak.on_alarm')."""
    import time as _time

    import attention_kit as ak
    from attention_kit.grading import in_kernel, wire

    def slow(n):
        _time.sleep(2)
        return np.tril(np.ones((n, n), dtype=bool))

    def uses(n):
        return ak.causal_mask(n)

    for fn, timeout in ((slow, 0.2), (uses, 5.0)):
        reply = in_kernel._call({"f": fn}, {"name": "f", "args": wire.encode([3]), "kwargs": wire.encode({}),
                                            "timeout": timeout, "allow": []})
        if fn is slow:
            assert reply.get("timeout") and "used" not in reply, reply
        else:
            assert reply.get("used") == "ak.causal_mask", reply


def test_the_numpy_functions_a_notebook_replaced_are_named():
    """What the side door reports to the teacher (never used for a verdict)."""
    import subprocess
    import sys

    from attention_kit.grading.in_kernel import replaced_library_functions

    assert replaced_library_functions() == []  # this process: numpy as installed
    code = (  # a fresh interpreter, so this test's numpy stays untouched
        "import functools, math, numpy as np, numpy.random\n"
        "import attention_kit\n"
        "from attention_kit.grading.in_kernel import replaced_library_functions as r\n"
        "assert r() == [], r()\n"
        "np.allclose = lambda *a, **k: True\n"
        "np.isclose = functools.partial(np.isclose, atol=1)\n"
        "np.array_equal = all\n"
        "math.sqrt = lambda x: 1.0\n"
        "class Yes:\n    def __call__(self, *a): return True\n"
        "np.testing.assert_allclose = Yes()\n"
        "print(r())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == str(["math.sqrt", "np.allclose", "np.array_equal", "np.isclose",
                               "np.testing.assert_allclose"])
