"""`make student` (tools/make_student.py): clean copies that still run up to the exercises."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import editions  # noqa: E402
import make_student  # noqa: E402

NOTEBOOKS = make_student.course_notebooks()


def _exercise_sources(nb) -> list[str]:
    """Source of the code cell before each worked solution: the learner's exercise cell."""
    out = []
    last_code = None
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if make_student.is_solution(cell):
            assert last_code is not None, "a solution cell comes before any code cell"
            out.append(last_code.source)
        else:
            last_code = cell
    return out


def test_studentize_on_a_small_notebook():
    nb = nbformat.v4.new_notebook()
    exercise = nbformat.v4.new_code_cell("answer = ...\ncheck(answer)", execution_count=3,
                                         outputs=[nbformat.v4.new_output("stream", text="✗ hint")])
    exercise.metadata["execution"] = {"iopub.status.busy": "2026-01-01T00:00:00Z"}
    note = nbformat.v4.new_markdown_cell("A worked solution follows (collapsed).")
    note.metadata["tags"] = ["solution"]
    hidden = nbformat.v4.new_code_cell("# Solution\nanswer = 1", execution_count=4)
    hidden.metadata["jupyter"] = {"source_hidden": True}
    tagged = nbformat.v4.new_code_cell("answer = 2")
    tagged.metadata["tags"] = ["Solution"]
    reveal = nbformat.v4.new_code_cell("assert trained() == [1, 2]")
    reveal.metadata["tags"] = ["answer-reveal"]
    expected = nbformat.v4.new_code_cell("1 / 0")
    expected.metadata["tags"] = ["raises-exception"]
    link = nbformat.v4.new_markdown_cell("# Title ([course overview](../README.md))")
    nb.cells = [link, exercise, note, hidden, tagged, reveal, expected]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    before = nbformat.writes(nb)

    student, removed = make_student.studentize(nb, "01_x.ipynb")

    assert nbformat.writes(nb) == before, "studentize must not modify its input"
    assert removed == 4
    assert [c.cell_type for c in student.cells] == ["markdown", "code", "code"]
    text = nbformat.writes(student)
    for gone in ("answer = 1", "answer = 2", "trained()", "worked solution"):
        assert gone not in text
    assert student.cells[0].source == "# Title ([course overview](README.md))"
    assert student.cells[1].outputs == [] and student.cells[1].execution_count is None
    assert "execution" not in student.cells[1].metadata
    assert student.cells[2].metadata["tags"] == ["raises-exception"]
    assert "widgets" not in student.metadata


@pytest.fixture(scope="module")
def student_dir(tmp_path_factory):
    if not NOTEBOOKS:
        pytest.skip("no notebooks/NN_*.ipynb yet")
    build = editions.student_edition(tmp_path_factory)
    assert build.returncode == 0, build.output
    assert build.modified == [], f"make student modified {build.modified}"
    return build.path


@pytest.mark.parametrize("src", NOTEBOOKS, ids=lambda p: p.stem)
def test_student_copy_has_no_outputs_and_no_solutions(src, student_dir):
    original = nbformat.read(src, as_version=4)
    student = nbformat.read(student_dir / src.name, as_version=4)
    n_solutions = sum(make_student.is_solution(c) and c.cell_type == "code" for c in original.cells)
    assert n_solutions >= 1, f"{src.name} has no solution cells (metadata jupyter.source_hidden)"
    for cell in original.cells:
        if cell.metadata.get("jupyter", {}).get("source_hidden"):
            assert "solution" in cell.metadata.get("tags", []), (
                f"{src.name}: a collapsed cell is not tagged solution (docs/development.md, cell tags)")
    for cell in student.cells:
        assert not make_student.is_dropped(cell)
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
            first = cell.source.lstrip().splitlines()[0].lower() if cell.source.strip() else ""
            assert not first.startswith("# solution"), (
                f"{src.name}: a cell starting '# Solution' is not marked as a solution "
                f"(add metadata jupyter.source_hidden): {cell.source[:80]!r}")
    kept = [c.source.replace("](../README.md", "](README.md") for c in original.cells
            if not make_student.is_dropped(c)]
    assert [c.source for c in student.cells] == kept


def test_student_edition_has_no_solution_no_answer_and_no_solution_text(student_dir):
    """The whole folder: no worked solution, no cell tagged answer-reveal, no line of either, and
    no sentence about solutions ("a worked solution follows", "compare with the full notebook")."""
    assert make_student.find_leaks(student_dir) == []
    everything = "\n".join(p.read_text(encoding="utf-8") for p in student_dir.glob("*.ipynb"))
    assert "1, 2, 3, 4, 5, 0" not in everything          # 05, exercise 4's answer
    assert "leaves the last prediction unchanged" not in everything   # 06's summary, exercise 2
    assert "`c = a @ V`" not in everything                      # 01's summary, exercise 4's line
    assert "What was wrong with section 6's code" not in everything   # 02, exercise 6's three faults
    assert "W_feat" not in everything                           # 02, exercise 6's fix, demonstrated


def test_find_leaks_finds_what_it_looks_for(student_dir, tmp_path):
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(student_dir, bad)
    path = bad / "05_how_attention_learns.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("answer = [1, 2, 3, 4, 5, 0]"))
    nb.cells.append(nbformat.v4.new_markdown_cell("A worked solution follows each one."))
    hidden = nbformat.v4.new_code_cell("x = 1")
    hidden.metadata["jupyter"] = {"source_hidden": True}
    nb.cells.append(hidden)
    nbformat.write(nb, path)
    (bad / "README.md").write_text("When you are done, compare with the full notebook.")
    problems = "\n".join(make_student.find_leaks(bad))
    assert "answer = [1, 2, 3, 4, 5, 0]" in problems
    assert "'worked solution'" in problems and "'full notebook'" in problems
    assert "is a solution or tagged answer-reveal" in problems


def test_answer_cells_are_tagged():
    """The cells issue 26 found giving answers away are tagged, so the student copy drops them."""
    def tagged(name, tag):
        nb = nbformat.read(make_student.ROOT / "notebooks" / name, as_version=4)
        return "\n".join(c.source for c in nb.cells if tag in c.metadata.get("tags", []))

    assert "learned.tolist() == [1, 2, 3, 4, 5, 0]" in tagged("05_how_attention_learns.ipynb",
                                                              "answer-reveal")
    assert "leaves the last prediction unchanged" in tagged("06_tiny_language_model.ipynb",
                                                            "answer-reveal")
    # the learner trial: right after exercise 6 (its solution dropped), the list of the faults and the fix
    assert "What was wrong with section 6's code" in tagged("02_self_attention.ipynb", "answer-reveal")
    assert "W_feat = rng.random((2, 2))" in tagged("02_self_attention.ipynb", "answer-reveal")


@pytest.mark.parametrize("src", NOTEBOOKS, ids=lambda p: p.stem)
def test_explorer_checks_come_after_exploring(src, student_dir):
    """A cell that checks the "try this" list sits under a collapsed "Check what you found"
    heading, after the list, in the full notebook and in the student copy."""
    for nb in (nbformat.read(src, as_version=4), nbformat.read(student_dir / src.name, as_version=4)):
        checks = [i for i, c in enumerate(nb.cells) if "explorer-check" in c.metadata.get("tags", [])]
        assert checks, f"{src.name}: no cell tagged explorer-check"
        for i in checks:
            headings = [j for j in range(i) if nb.cells[j].cell_type == "markdown"
                        and re.match(r"#{1,3} ", nb.cells[j].source)]
            top = nb.cells[headings[-1]]
            assert top.source.startswith("### Check what you found"), (
                f"{src.name}: cell {i} checks the explorer but is under {top.source[:60]!r}")
            assert top.metadata.get("jp-MarkdownHeadingCollapsed") is True
            assert any("Try this" in nb.cells[j].source for j in range(headings[-1])), (
                f"{src.name}: the check comes before the try-this list")


def test_student_edition_is_self_contained(student_dir, tmp_path):
    """README, make lab, Binder's environment.yml, the package, and a zip of it all."""
    import zipfile

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    for name in ("README.md", "Makefile", "environment.yml", "pyproject.toml", ".gitignore",
                 "attention_kit/__init__.py", "attention_kit/check/registry.py"):
        assert (student_dir / name).is_file(), name
    assert re.search(r"^lab: ", (student_dir / "Makefile").read_text(), re.M)
    assert "--ServerApp.root_dir=." in (student_dir / "Makefile").read_text()
    project = tomllib.loads((student_dir / "pyproject.toml").read_text())["project"]
    root = tomllib.loads((make_student.ROOT / "pyproject.toml").read_text())["project"]
    assert project["dependencies"] == root["dependencies"] and "optional-dependencies" not in project
    assert "  - -e ." in (student_dir / "environment.yml").read_text()
    # the lock: make lab and Binder install the versions the course is tested with
    assert (student_dir / "requirements/lab.txt").read_bytes() == (
        make_student.ROOT / "requirements/lab.txt").read_bytes()
    assert "  - -r requirements/lab.txt" in (student_dir / "environment.yml").read_text()
    assert "-r $(LOCK)" in (student_dir / "Makefile").read_text()
    readme = (student_dir / "README.md").read_text()
    assert "make lab" in readme and "{notebooks}" not in readme
    for src in NOTEBOOKS:
        assert f"]({src.name})" in readme

    archive = make_student.write_zip(student_dir)
    try:
        names = zipfile.ZipFile(archive).namelist()
    finally:
        archive.unlink()
    assert f"{make_student.ZIP_ROOT}/README.md" in names
    assert f"{make_student.ZIP_ROOT}/requirements/lab.txt" in names
    assert f"{make_student.ZIP_ROOT}/{NOTEBOOKS[0].name}" in names
    assert not any(".venv" in n or "__pycache__" in n for n in names)


@pytest.mark.slow  # runs every student copy in a kernel: make check leaves it to make test
@pytest.mark.parametrize("src", NOTEBOOKS, ids=lambda p: p.stem)
def test_student_copy_runs_and_exercises_print_hints(src, student_dir):
    """Run the student copy top to bottom: nothing raises (except cells tagged
    raises-exception), and every unfinished exercise prints a ✗ hint instead of failing."""
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    from attention_kit.grading.sockets import socket_options

    path = student_dir / src.name
    nb = nbformat.read(path, as_version=4)
    km = KernelManager(kernel_name="python3", **socket_options())  # no TCP port to lose
    client = NotebookClient(nb, km=km, timeout=120, kernel_name="python3", allow_errors=False,
                            resources={"metadata": {"path": str(student_dir)}})
    client.execute()  # raises CellExecutionError on the first unexpected error

    exercises = set(_exercise_sources(nbformat.read(src, as_version=4)))
    seen = 0
    for cell in nb.cells:
        if cell.cell_type != "code" or cell.source not in exercises:
            continue
        seen += 1
        text = "".join(o.get("text", "") + str(o.get("data", {}).get("text/plain", ""))
                       for o in cell.outputs)
        assert "✗" in text, (f"{src.name}: the unfinished exercise printed no ✗ hint:\n"
                             f"{cell.source[:200]}\n--- output ---\n{text[:300]}")
    assert seen == len(exercises)


# Notebooks whose solutions still store their output (issue 17 covered 01-04); remove an entry once
# its solutions run their checker inside check.quietly() and the notebook is re-executed.
SOLUTION_OUTPUT_PENDING: set[str] = set()


@pytest.mark.parametrize("src", NOTEBOOKS, ids=lambda p: p.stem)
def test_worked_solutions_store_no_output(src):
    """A collapsed solution hides its source, not its output: a stored output (a printed answer, a
    ✓ line that repeats it) would give the answer away before the learner tries. Solutions run
    their checker inside ``check.quietly()``, so the re-executed notebook stores nothing for them."""
    if src.name in SOLUTION_OUTPUT_PENDING:
        pytest.skip(f"{src.name}: its solutions still print (pending, see SOLUTION_OUTPUT_PENDING)")
    nb = nbformat.read(src, as_version=4)
    shown = [c.source.splitlines()[0] for c in nb.cells
             if make_student.is_solution(c) and c.cell_type == "code" and c.outputs]
    assert not shown, f"{src.name}: solution cells with stored outputs: {shown}"


def test_a_sentence_pointing_at_a_solution_is_rejected(tmp_path):
    """The student edition has no solutions: a sentence that sends a learner to one is a leak
    (issue 35: notebook 08's exercise 2 said so), while other uses of the word are not."""
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_markdown_cell(
        "Set `my_most_harmful_head`, then check your prediction against the measurement in the solution."))
    nbformat.write(nb, tmp_path / "08_what_heads_learn.ipynb")
    problems = make_student.find_leaks(tmp_path, originals=[])
    assert problems == ["08_what_heads_learn.ipynb: says 'in the solution'"]
    for text in ("Compare with the solution cell.", "See the worked-out solutions below.",
                 "The solution shows 0.5.", "as in their solutions"):
        assert make_student.FORBIDDEN.search(text), text
    for text in ("x = 2 is a solution of the equation.", "Solutions of a linear system",
                 "a closed-form solution exists"):
        assert not make_student.FORBIDDEN.search(text), text


def test_an_exercise_answered_above_itself_is_found(tmp_path):
    """The builder fails when a kept cell above an exercise computes its worked solution's
    expression (variables renamed) or prints its literal answer (issue 46)."""
    sys.path.insert(0, str(ROOT / "tools"))
    from answers_above import answers_above

    nb = nbformat.v4.new_notebook()
    demo = nbformat.v4.new_code_cell("scores = Qd @ Kd.T / np.sqrt(Kd.shape[1])\nprint(scores)")
    rows = nbformat.v4.new_code_cell("print('rows that change:', [3, 4, 5])")
    rows.outputs = [nbformat.v4.new_output("stream", text="rows that change: [3 4 5]\n")]
    ex2 = nbformat.v4.new_code_cell("def my_scaled_scores(Q, K):\n    return ...")
    sol2 = nbformat.v4.new_code_cell("def my_scaled_scores(Q, K):\n    return Q @ K.T / np.sqrt(K.shape[1])")
    sol2.metadata["tags"] = ["solution"]
    nb.cells = [demo, rows, ex2, sol2]
    found = answers_above(nb, "02_self_attention.ipynb", is_dropped=make_student.is_dropped)
    assert len(found) == 1 and "02.2" in found[0] and "Qd @ Kd.T" in found[0]
    nb.cells = [ex2, demo, sol2]  # the demonstration after the exercise: fine
    assert answers_above(nb, "02_self_attention.ipynb", is_dropped=make_student.is_dropped) == []
    ex4 = nbformat.v4.new_code_cell("answer = ...\ncheck.future_unchanged(answer)")
    sol4 = nbformat.v4.new_code_cell("answer = [3, 4, 5]")
    sol4.metadata["tags"] = ["solution"]
    nb.cells = [rows, ex4, sol4]
    found = answers_above(nb, "04_masks_and_positions.ipynb", is_dropped=make_student.is_dropped)
    assert len(found) == 1 and "prints its answer '[3 4 5]'" in found[0]


def test_a_pointer_at_files_the_edition_lacks_is_rejected(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_markdown_cell("The models were trained by `python tools/train_heads.py`."))
    nbformat.write(nb, tmp_path / "08_what_heads_learn.ipynb")
    (tmp_path / "attention_kit" / "check").mkdir(parents=True)
    (tmp_path / "attention_kit" / "check" / "x.py").write_text('def f():\n    """See tests/test_x.py."""\n')
    problems = make_student.find_leaks(tmp_path, originals=[])
    assert any("points at 'tools/train_heads.py'" in p for p in problems)
    assert any("x.py: says 'tests/test_x.py'" in p for p in problems)
    for fine in ("the tests pass", "see attention_kit/tools.py", "the tools/ folder", "my/tests/x.py"):
        assert not make_student.MISSING_PATHS.search(fine), fine


def test_a_shipped_module_pointing_at_files_the_edition_lacks_is_rejected(tmp_path):
    """Not only check/: every module of the package ships, and help() shows its docstrings (issue 46:
    long/, heads/ and decoder/ named tools/train_*.py)."""
    (tmp_path / "attention_kit" / "long").mkdir(parents=True)
    (tmp_path / "attention_kit" / "long" / "y.py").write_text('"""Trained by ``tools/train_y.py``."""\n')
    problems = make_student.find_leaks(tmp_path, originals=[])
    assert any("y.py: says 'tools/train_y.py'" in p for p in problems), problems


def test_the_package_points_at_nothing_a_student_edition_lacks():
    """What the builder would reject, found in the package itself (grading/ does not ship)."""
    found = []
    for path in sorted((ROOT / "attention_kit").rglob("*.py")):
        if "grading" in path.relative_to(ROOT).parts:
            continue
        text = path.read_text(encoding="utf-8")
        for pattern in (make_student.FORBIDDEN, make_student.MISSING_PATHS):
            found += [f"{path.relative_to(ROOT)}: {m.group(0)!r}" for m in pattern.finditer(text)]
    assert not found, found


# What a learner must not be sent to: a teacher's guide, the grader, the worked solutions (trial
# report, P1). Written out here, not taken from make_student, so that the builder is tested.
TEACHER_THINGS = re.compile(r"docs/\w|attention_kit\.grading|make grade|teacher's answer|tagged\s+`*solution"
                            r"|benchmarks/\w|(?<!repository's )teaching guide|teacher's (?:key|class grader)"
                            r"|browser tests|make test\b", re.I)   # (and trial 3's: the course repository's other parts)


def test_the_shipped_package_names_no_teacher_guide_grader_or_solution(student_dir):
    """``check.registry??`` named docs/teaching.md, docs/adding-an-exercise.md, ``python -m
    attention_kit.grading`` and "the teacher's answer, tagged ``solution``"; plain.py and
    __init__.py named attention_kit.grading and make grade."""
    found = []
    for path in sorted((student_dir / "attention_kit").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(student_dir)}: {m.group(0)!r}" for m in TEACHER_THINGS.finditer(text)]
    assert not found, found


def test_a_shipped_module_naming_teacher_things_is_rejected_or_rewritten(tmp_path):
    import teacher_only  # (tools/ is on sys.path)

    (tmp_path / "attention_kit" / "check").mkdir(parents=True)
    for k, text in enumerate(['"""See ``docs/teaching.md``."""', '"""Run ``python -m attention_kit.grading``."""',
                              '"""Cells: the exercise, and the teacher\'s answer."""',
                              '"""The answer, tagged ``solution``."""', '"""Then make grade."""']):
        (tmp_path / "attention_kit" / "check" / f"m{k}.py").write_text(text + "\n")
    problems = "\n".join(make_student.find_leaks(tmp_path, originals=[]))
    for k, words in enumerate(["docs/teaching.md", "attention_kit.grading", "teacher's answer",
                               "tagged ``solution", "make grade"]):
        assert any(f"m{k}.py: says " in ln and words in ln for ln in problems.splitlines()), (words, problems)
    assert teacher_only.strip_teacher_commands("# the hint ``make grade`` gives; make grade judges") == \
        "# the hint the grader gives; the grader judges"
    for fine in ("the grader judges it", "see the docstring", "attention_kit.check.registry", "tagged explorer-check"):
        assert not teacher_only.TEACHER_ONLY.search(fine), fine


@pytest.mark.parametrize("text", [
    "``benchmarks/attention_speed.py`` measures them", "(benchmarks/LATENCY.md has the runs)",
    "the teaching guide lists the mistakes", "the teacher's key", "the teacher's class grader",
    "``make test`` (whose browser tests use it)", "Here, in the teacher's edition, they are computed",
    "the teacher's guide to adding an exercise"])
def test_pointers_at_the_course_repository_only_are_rejected(tmp_path, text):
    """Trial 3: docstrings sent a learner to benchmarks/, the teaching guide, the teacher's key,
    ``make test`` and its browser tests, none of which the student edition ships."""
    (tmp_path / "attention_kit").mkdir()
    (tmp_path / "attention_kit" / "m.py").write_text(f'"""{text}."""\n')
    assert any("m.py: says " in ln for ln in make_student.find_leaks(tmp_path, originals=[])), text


def test_the_package_names_nothing_of_the_course_repository_only():
    """The same patterns on the package as written (the builder strips only ``make grade``)."""
    import teacher_only

    found = []
    for path in sorted((ROOT / "attention_kit").rglob("*.py")):
        if "grading" in path.relative_to(ROOT).parts:
            continue
        text = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(ROOT)}: {m.group(0)!r}" for m in teacher_only.TEACHER_ONLY.finditer(text)]
    assert not found, found
