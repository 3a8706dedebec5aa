"""docs/adding-an-exercise.md's worked example works end to end: its checker, exercise cell,
worked solution and registry line, run as the page says."""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_student  # noqa: E402

from attention_kit import check  # noqa: E402
from attention_kit.check import registry  # noqa: E402

DOC = ROOT / "docs" / "adding-an-exercise.md"


def _blocks() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    found = re.findall(r"<!-- example: (\w+) -->\s*```\w+\n(.*?)```", text, re.S)
    return dict(found)


def _example():
    blocks = _blocks()
    assert set(blocks) == {"checker", "task", "exercise", "solution", "registry"}
    module: dict = {}
    exec(compile(blocks["checker"], "checker", "exec"), module)  # noqa: S102
    checker = module["temperature_softmax"]
    # as the notebooks bind it: `from attention_kit.check import general as check`
    fake = SimpleNamespace(temperature_softmax=checker, quietly=check.quietly)
    return blocks, checker, fake


def _run(source: str, fake) -> tuple[dict, list]:
    ns = {"np": __import__("numpy"), "check": fake, "ak": __import__("attention_kit")}
    with check.recording() as results, warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # a learner's overflow
        exec(compile(source, "cell", "exec"), ns)  # noqa: S102
    return ns, results


def test_the_worked_example_runs_as_the_page_says(capsys):
    blocks, checker, fake = _example()
    text = DOC.read_text(encoding="utf-8")
    shown = re.search(r"What the learner sees.*?```text\n(.*?)```", text, re.S).group(1).splitlines()

    ns, results = _run(blocks["exercise"], fake)                 # the stub
    assert ns["ok"] is False and results[0].status == check.NOT_ATTEMPTED
    assert results[0].line == shown[0]

    _, results = _run(blocks["exercise"].replace("return ...", "return np.exp(e * T) / np.exp(e * T).sum()"), fake)
    assert results[0].status == check.FAILED and "multiplied" in results[0].message
    assert results[0].line == shown[1]

    _, results = _run(blocks["exercise"].replace("return ...", "return np.exp(e / T) / np.exp(e / T).sum()"), fake)
    assert results[0].status == check.FAILED and "not finite" in results[0].message   # no max subtracted

    _, results = _run(blocks["exercise"].replace("return ...", "return ak.softmax(e / T)"), fake)
    assert results[0].status == check.FAILED and "attention_kit" in results[0].message  # plain numpy
    assert checker.plain_numpy == ()

    ns, results = _run(blocks["solution"], fake)                 # asserts inside quietly()
    assert results[-1].passed and results[-1].line == shown[2]
    assert capsys.readouterr().out.count("✓") == 0, "the solution must print nothing"


def test_the_registry_line_finds_the_exercise_and_the_student_copy_drops_the_solution():
    blocks, checker, fake = _example()
    ex = eval(blocks["registry"].strip().rstrip(","),  # noqa: S307
              {"Exercise": registry.Exercise, "general": SimpleNamespace(temperature_softmax=checker)})
    nb01 = registry.notebook("01")
    extended = registry.Notebook(nb01.number, nb01.file, nb01.title, nb01.exercises + (ex,))
    new_id = f"01.{len(nb01.exercises) + 1}"
    assert extended.numbered()[-1][0] == new_id and ex.answers == ("my_soft_weights",)
    assert ex.plain == ()                                 # the registry reads the plain-numpy mark

    nb = nbformat.v4.new_notebook()
    solution = nbformat.v4.new_code_cell(blocks["solution"])
    solution.metadata["jupyter"] = {"source_hidden": True}
    solution.metadata["tags"] = ["solution"]
    nb.cells = [nbformat.v4.new_markdown_cell(blocks["task"]),
                nbformat.v4.new_code_cell(blocks["exercise"]), solution]
    hits = registry.answer_cells([c.source for c in nb.cells if c.cell_type == "code"], extended)
    assert hits[new_id] == [0, 1]
    student, removed = make_student.studentize(nb, nb01.file)
    assert removed == 1 and all("z - z.max()" not in c.source for c in student.cells)
    assert make_student.ungradable_exercises(student, nb01.file) == [
        ex_id for ex_id, _ in nb01.numbered()]   # the real 01's exercises are not in this tiny copy


def test_the_example_checker_holds_data_in_the_student_edition():
    """The page's checker, as make student writes it: the recorded table's code is gone and the
    checker still judges from the recorded numbers."""
    import pickle

    blocks, checker, fake = _example()
    stripped = make_student.strip_references(blocks["checker"], "example")
    assert "softmax(e / T)" not in stripped.split("def temperature_softmax")[0]
    assert "softmax(e * T)" not in stripped and "cases = [" not in stripped
    from attention_kit.check import recorded

    table = recorded.recorded_functions()["?._temperature_table"]()
    module: dict = {}
    exec(compile(stripped, "checker", "exec"), module)  # noqa: S102
    store = {"?._temperature_table": table}
    saved = recorded._store
    recorded._store = store
    try:
        student = SimpleNamespace(temperature_softmax=module["temperature_softmax"], quietly=check.quietly)
        _, results = _run(blocks["exercise"].replace("return ...", "return np.exp(e * T) / np.exp(e * T).sum()"), student)
        assert "multiplied" in results[0].message
        ns, results = _run(blocks["solution"], student)
        assert results[-1].passed
    finally:
        recorded._store = saved
    assert pickle.loads(pickle.dumps(table))  # data only: it goes into recorded.pkl
