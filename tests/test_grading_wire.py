"""The grader sees the answer the learner's checker saw (trial report, G1 and G2).

Every container an exercise accepts in class (a list, a tuple, a set, a range, a numpy array)
crosses :mod:`attention_kit.grading.wire` as itself, and text crosses as text, so that a checker
run by ``make grade`` gives the verdict and the message it gives in class. The last test grades
returned notebooks in a kernel: a set answer to 04.4, 08.2 and 09.4 (✓ in class, "failed" at
grading before), an array of text in 02.3 (✓ in class and "shape ()" at grading before)."""

from __future__ import annotations

import nbformat
import numpy as np
import pytest

from attention_kit.check import graded_hints, quietly, recording, registry
from attention_kit.grading import wire


@pytest.mark.parametrize("value", [
    {3, 4, 5}, frozenset({16, 17}), set(), {np.int64(2), 7}, {(1, 2), "a"}, range(3, 6), range(9, -1, -2),
    range(0), np.array(["0.3478", "0.3943"]), np.array([b"1", b"2"]), [{1}, (range(2), {2: {3}})],
])
def test_containers_cross_as_themselves(value):
    back = wire.decode(wire.encode(value))
    assert type(back) is type(value)
    if isinstance(value, np.ndarray):
        assert back.dtype == value.dtype and back.shape == value.shape and (back == value).all()
    else:
        assert back == value


@pytest.mark.parametrize("data", [{"range": [1, 2]}, {"range": [1, 5, 0]}, {"range": [1.5, 2, 1]},
                                  {"set": [{"list": [1]}]}])
def test_malformed_sets_and_ranges_are_refused(data):
    with pytest.raises(wire.WireError):
        wire.decode(data)


# (exercise id, notebook, the learner's answer cell): right answers in a container the notebooks
# accept, and a wrong one in text
RETURNED = [
    ("04.4", "04", "answer = {5, 4, 3}"),
    ("04.4", "04", "answer = range(3, 6)"),
    ("08.2", "08", "my_failing_queries = {16, 17, 20, 21}"),
    ("09.4", "09", "answer = frozenset({0, 6, 7, 8, 9})"),
    ("02.3", "02", "y3 = np.array(['0.3478', '0.3943'])"),
    ("02.3", "02", "y3 = (np.zeros(2), np.zeros(3))"),
]


def _in_class(ex_id: str, source: str) -> tuple[str, str]:
    """The verdict of the teacher's checker on the value ``source`` defines (with the graded hints,
    as the grader runs it)."""
    ex = next(ex for i, _nb, ex in registry.exercises() if i == ex_id)
    namespace: dict = {"np": np}
    exec(source, namespace)
    with recording() as results, graded_hints(), quietly():
        ex.checker(*[namespace[n] for n in ex.answers], **ex.kwargs)
    return results[-1].status, results[-1].message


@pytest.mark.slow  # four notebooks in kernels (about a minute on 2 cores)
def test_a_returned_answer_gets_its_in_class_verdict(tmp_path):
    from attention_kit.grading.execute import Limits, grade_notebook, prepared

    limits = Limits(cell_s=60, notebook_s=240, exercise_s=20)
    by_notebook: dict[str, list[str]] = {}
    for _ex_id, number, source in RETURNED:
        by_notebook.setdefault(number, []).append(source)
    got = {}
    with prepared(limits) as (spec_dir, mpl):
        for number, sources in by_notebook.items():
            for k, source in enumerate(sources):  # one notebook per answer: a later cell would replace it
                nb = nbformat.v4.new_notebook()
                nb.cells = [nbformat.v4.new_code_cell("import numpy as np\nimport attention_kit as ak\n"
                                                      "from attention_kit import check"),
                            nbformat.v4.new_code_cell(source)]
                path = tmp_path / f"{number}-{k}" / registry.notebook(number).file
                path.parent.mkdir()
                nbformat.write(nb, path)
                grade = grade_notebook("learner", number, path, spec_dir=spec_dir, limits=limits,
                                       mpl_template=mpl, source=str(path), seed=None)
                got[source] = {g.id: (g.status, g.message) for g in grade.exercises}
    for ex_id, _number, source in RETURNED:
        want = _in_class(ex_id, source)
        assert got[source][ex_id] == want, (source, got[source][ex_id], want)
        assert "Opaque" not in got[source][ex_id][1] and "from your kernel" not in got[source][ex_id][1]
    assert _in_class("04.4", RETURNED[0][2])[0] == "passed" and _in_class("02.3", RETURNED[4][2])[0] == "failed"
