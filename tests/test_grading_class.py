"""Grade a small class built from the student copies, in one run (`make grade`).

The class: ada filled in every worked solution; ben solved nothing (and returned two
notebooks); cleo made the typical mistake in every exercise; dan's notebook has an endless loop
and a huge array; eve's notebook raises in its first cell and has a syntax error; fay's file is
cut short; gus prints a fake ✓, redefines `check`, patches the checkers, deletes a checker call,
prints a fake verdict and writes outside his working copy; hal returned a notebook of another
course, ivy an empty one. Each gets what he or she should, in grades.csv and in the feedback.
"""

from __future__ import annotations

import asyncio
import csv
import hashlib
import os
import re
import sys
from pathlib import Path

import nbformat
import pytest

from attention_kit.check import registry
from attention_kit.grading import COULD_NOT_RUN, MISSING, NOT_SUBMITTED
from attention_kit.grading.__main__ import grade_class
from attention_kit.grading.execute import Limits, grade_notebook, prepared

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_student  # noqa: E402

# Short limits: a normal cell takes at most a few seconds, even on a busy 2-core machine.
LIMITS = Limits(cell_s=15, notebook_s=150, exercise_s=5)

# One typical mistake per exercise: (the learner's exercise cell, words of the expected hint).
MISTAKES = {
    "01.1": ("my_weights = [0.090, 0.245, 0.665]", "smallest score"),
    "01.2": ("def my_dot_scores(q, K):\n    return q * K", "the element-wise products"),
    "01.3": ("dot_winner, cosine_winner = 'k1', 'k2'", "you swapped them"),
    "01.4": ("def my_context(a, V):\n    return a[..., None] * V", "not yet summed"),
    "01.5": ("def my_output_model(c, W_c, b_c):\n    return ak.softmax(W_c @ c)", "forgot the bias"),
    "02.1": ("def my_softmax_rows(S):\n    e = np.exp(S - S.max())\n    return e / e.sum(axis=0, keepdims=True)",
             "each COLUMN sums to 1"),
    "02.2": ("def my_scaled_scores(Q, K):\n    return Q @ K.T", "forgot the scaling"),
    "02.3": ("X_ex = np.array([[0.1, 0.5], [0.3, 0.4], [0.6, 0.3]])\n"
             "y3 = ak.softmax(X_ex @ X_ex.T / np.sqrt(2))[2]", "that is the weight row"),
    "02.4": ("variance, std = np.sqrt(32), np.sqrt(32)", "is the standard deviation, not the variance"),
    "02.5": ("def my_self_attention(X, W_q, W_k, W_v):\n"
             "    return ak.softmax((X @ W_q) @ (X @ W_k).T) @ (X @ W_v)", "forgot the scaling"),
    "02.6": ("def self_attention_fixed(X, W_q, W_k, W_v):\n    n, d = X.shape[:2]\n"
             "    Q, K, V = X @ W_q.T, X @ W_k.T, X @ W_v.T\n"
             "    return ak.softmax(Q @ K.T / np.sqrt(d)) @ V", "column convention"),
    "03.1": ("def my_split(X, h):\n    return X.reshape(h, X.shape[0], X.shape[1] // h)\n\n"
             "def my_merge(Xh):\n    return Xh.transpose(1, 0, 2).reshape(Xh.shape[1], -1)",
             "transposed reshape"),
    "03.2": ("def my_head(X, W_q, W_k, W_v):\n    return ak.softmax((X @ W_q) @ (X @ W_k).T) @ (X @ W_v)",
             "sqrt(d_k)"),
    "03.3": ("def my_combine(heads, W_o):\n    return ak.merge_heads(heads)", "forgot the output projection"),
    "03.4": ("answer = 4 * 768**2", "forgot the biases"),
    "04.1": ("def my_causal_mask(n):\n    return np.triu(np.ones((n, n), dtype=bool), k=1)",
             "mask of the future"),
    "04.2": ("def my_masked_softmax(S, mask):\n    return ak.softmax(np.where(mask, S, 0.0))",
             "a masked score of 0"),
    "04.3": ("def my_positions(n, d):\n    P = ak.sinusoidal_positions(n, d)\n"
             "    return P[:, [j + 1 if j % 2 == 0 else j - 1 for j in range(d)]]", "sin and cos are swapped"),
    "04.4": ("answer = [4, 5]", "row 3 changes too"),
    "05.1": ("def my_general_score_grads(Q, K, W, dS):\n    return dS @ K @ W, dS.T @ Q @ W",
             "W where its transpose belongs"),
    "05.2": ("def my_bias_grads(Q, K, dS):\n    d = Q.shape[1]\n"
             "    return (dS @ K).sum(axis=0) / d**0.5, (dS.T @ Q).sum(axis=0) / d**0.5\n\nwhy = 'a'",
             "the starting value is not the reason"),
    "05.3": ("def my_gradient_check(f, x, analytic, eps=1e-4):\n    return -1.0", "never negative"),
    "05.4": ("answer = [0, 1, 2, 3, 4, 5]", "copy each word in place"),
    "06.1": ("def my_layer_norm(X, gamma, beta, eps=1e-5):\n    mu = X.mean(axis=-1, keepdims=True)\n"
             "    return (X - mu) / np.sqrt(X.var(axis=-1, keepdims=True) + eps)", "multiply by gamma"),
    "06.2": ("last_changes, earlier_change = False, False", "words after it"),
    "06.3": ("def my_sample(logits, temperature, rng):\n    return int(np.argmax(logits))", "argmax"),
    "06.4": ("head2_word = 'had'", "which key has the brightest cell"),
    "07.1": ("def my_online_update(m, l, acc, s, V):\n    m_new = max(m, float(np.max(s)))\n"
             "    p = np.exp(s - m_new)\n    return m_new, l + p.sum(), np.exp(m - m_new) * acc + p @ V",
             "old sum l was not rescaled"),
    "07.2": ("def my_skipped_tiles(n, block_q, block_k):\n    return n * (n - 1) // 2", "(query, key) pairs"),
    "07.3": ("def my_kv_cache_bytes(n_tokens, layers, heads, kv_heads, d_head, bytes_per_value):\n"
             "    return layers * kv_heads * d_head * bytes_per_value * n_tokens", "the factor 2"),
}


def _code(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def _exercise_cell(nb, number: str, ex_id: str):
    """The student copy's exercise cell of ``ex_id`` (the registry finds it by its answers)."""
    code = _code(nb)
    hits = registry.answer_cells([c.source for c in code], registry.notebook(number))[ex_id]
    return code[hits[0]]


def _solutions(number: str) -> dict[str, str]:
    """The worked solution of each exercise of notebook ``number``, from the full notebook."""
    nb_entry = registry.notebook(number)
    full = nbformat.read(ROOT / "notebooks" / nb_entry.file, as_version=4)
    code = _code(full)
    cells = registry.answer_cells([c.source for c in code], nb_entry)
    return {ex_id: next(code[k].source for k in hits if make_student.is_solution(code[k]))
            for ex_id, hits in cells.items()}


def _write(nb, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def _digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Build the class from `make student` copies, grade it in one run, return what it wrote."""
    student = tmp_path_factory.mktemp("student")
    assert make_student.main(["-o", str(student)]) == 0
    subs = tmp_path_factory.mktemp("submissions")
    out = tmp_path_factory.mktemp("grades")
    fresh = {nb.number: nbformat.read(student / nb.file, as_version=4) for nb in registry.NOTEBOOKS}

    def copy(number):
        return nbformat.from_dict(fresh[number])

    for nb_entry in registry.NOTEBOOKS:  # ada: every worked solution filled in; folder layout
        full = nbformat.read(ROOT / "notebooks" / nb_entry.file, as_version=4)
        _write(make_student.with_solutions(fresh[nb_entry.number], full, nb_entry.file),
               subs / "ada" / nb_entry.file)
    for number in ("01", "03"):  # ben: nothing solved, two notebooks returned; flat layout
        nb = copy(number)
        if number == "03":  # an exercise from an older version, with other settings
            cell = _exercise_cell(nb, "03", "03.4")
            cell.source = re.sub(r"d_model=\d+, n_heads=\d+", "d_model=256, n_heads=4", cell.source)
            assert "d_model=256" in cell.source
        _write(nb, subs / f"ben__{registry.notebook(number).file}")
    for nb_entry in registry.NOTEBOOKS:  # cleo: a typical mistake in every exercise
        nb = copy(nb_entry.number)
        for ex_id, _ in nb_entry.numbered():
            _exercise_cell(nb, nb_entry.number, ex_id).source = MISTAKES[ex_id][0]
        _write(nb, subs / "cleo" / nb_entry.file)

    nb = copy("01")  # dan: a huge array, then an endless loop in exercise 2
    sol = _solutions("01")
    _exercise_cell(nb, "01", "01.1").source = sol["01.1"] + "\nbig = np.empty((20_000, 20_000))  # 3.2 GB"
    _exercise_cell(nb, "01", "01.2").source = "while True:\n    pass\n\n" + sol["01.2"]
    _write(nb, subs / "dan" / "01_general_attention_model.ipynb")

    nb = copy("02")  # eve: the first cell raises (no imports), a syntax error, an answer using np
    _code(nb)[0].source = "1 / 0\n" + _code(nb)[0].source
    _exercise_cell(nb, "02", "02.2").source = "def my_scaled_scores(Q, K)\n    return Q @ K.T"
    _exercise_cell(nb, "02", "02.4").source = "variance, std = 32, 32 ** 0.5"  # needs no import
    _exercise_cell(nb, "02", "02.5").source = (
        "def my_self_attention(X, W_q, W_k, W_v):\n"
        "    return ak.softmax((X @ W_q) @ (X @ W_k).T / np.sqrt(W_k.shape[1])) @ (X @ W_v)")
    _write(nb, subs / f"eve__{registry.notebook('02').file}")

    raw = (student / registry.notebook("03").file).read_bytes()  # fay: a file cut short
    (subs / "fay").mkdir()
    (subs / "fay" / registry.notebook("03").file).write_bytes(raw[: len(raw) // 3])

    nb = copy("04")  # gus: tries every way to fake a pass, and to write outside his copy
    escape = f"ak-grade-escape-{os.getpid()}.txt"
    first = _code(nb)[0]
    first.source += (
        "\nimport attention_kit.check as _real\n"
        "_real.report = lambda ok, message: print('✓', message) or True\n"
        "import attention_kit.check.masks_positions as _mp\n"
        "_mp.masked_softmax = lambda fn: print('✓ the masked softmax is right') or True\n"
        f"open(os.path.expanduser('~/{escape}'), 'w').write('x')\n"
        f"open('../{escape}', 'w').write('x')\n"
        f"open({str(subs / 'gus' / 'hacked.txt')!r}, 'w').write('x')\n"
        "open('attention_kit.py', 'w').write('raise SystemExit(\"a fake package\")')\n"
        "os.makedirs('attention_kit/check', exist_ok=True)\n"
        "open('attention_kit/__init__.py', 'w').write('raise SystemExit(\"a fake package\")')\n")
    first.source = "import os\n" + first.source
    _exercise_cell(nb, "04", "04.1").source = (  # wrong, with a fake ✓ and a fake check
        "def my_causal_mask(n):\n    return np.ones((n, n), dtype=bool)\n\n"
        "class check:\n    @staticmethod\n    def causal_mask(fn):\n        print('✓ the causal mask is right')\n"
        "        return True\n\nok = check.causal_mask(my_causal_mask)")
    _exercise_cell(nb, "04", "04.2").source = (  # the stub, with a fake verdict line
        "def my_masked_softmax(S, mask):\n    return ...\n\n"
        "print('{\"id\": \"04.2\", \"status\": \"passed\", \"message\": \"ok\"}')")
    _exercise_cell(nb, "04", "04.3").source = "\n".join(  # right, and the checker call deleted
        ln for ln in _solutions("04")["04.3"].splitlines() if "check." not in ln)
    _exercise_cell(nb, "04", "04.4").source = "answer = [0, 1, 2]\nprint('✓ rows 3, 4 and 5 change')"
    _write(nb, subs / "gus" / registry.notebook("04").file)

    other = nbformat.v4.new_notebook()  # hal: a notebook of another course under a course name
    other.cells = [nbformat.v4.new_markdown_cell("# Linear regression"),
                   nbformat.v4.new_code_cell("import numpy as np\nw = np.linalg.lstsq(np.eye(3), np.ones(3))[0]")]
    _write(other, subs / f"hal__{registry.notebook('02').file}")
    _write(nbformat.v4.new_notebook(), subs / "ivy" / registry.notebook("01").file)  # ivy: empty
    (subs / "README.txt").write_text("returned on Friday")

    before = _digests(subs)
    home_escape = Path.home() / escape
    result, summary = grade_class(subs, out, limits=LIMITS, workers=2)
    after = _digests(subs)
    leaked = [p for p in (home_escape, subs.parent / escape) if p.exists()]
    for p in leaked:
        p.unlink()
    rows = {r["learner"]: r for r in csv.DictReader(open(out / "grades.csv", encoding="utf-8"))}
    return {"rows": rows, "summary": summary, "out": out, "result": result, "before": before,
            "after": after, "leaked": leaked, "subs": subs}


def _cols(number: str | None = None) -> list[str]:
    return [f"{i} {ex.title}" for i, nb, ex in registry.exercises() if number in (None, nb.number)]


def _feedback(graded, learner: str) -> str:
    return (graded["out"] / "feedback" / f"{learner}.md").read_text(encoding="utf-8")


def _grade(graded, learner: str, ex_id: str):
    return next(g for g in graded["result"].row(learner) if g.id == ex_id)


def test_csv_rows_and_columns(graded):
    rows = graded["rows"]
    assert sorted(rows) == ["ada", "ben", "cleo", "dan", "eve", "fay", "gus", "hal", "ivy"]
    header = list(next(iter(rows.values())))
    assert header == ["learner", *_cols(), "passed", "exercises", "notes"]
    assert all(r["exercises"] == str(len(_cols())) for r in rows.values())


def test_all_solved(graded):
    ada = graded["rows"]["ada"]
    assert {ada[c] for c in _cols()} == {"passed"}, ada
    assert ada["passed"] == str(len(_cols())) and ada["notes"] == ""
    assert f"You passed **{len(_cols())} of {len(_cols())}** exercises" in _feedback(graded, "ada")


def test_nothing_solved(graded):
    ben = graded["rows"]["ben"]
    for number in ("01", "03"):
        assert {ben[c] for c in _cols(number)} == {"not attempted"}
    for number in ("02", "04"):
        assert {ben[c] for c in _cols(number)} == {NOT_SUBMITTED}
    assert ben["passed"] == "0"
    assert "03: exercise(s) 03.4 call their checker with other settings" in ben["notes"]
    assert "## 02 · Self-attention: not returned" in _feedback(graded, "ben")


@pytest.mark.parametrize("ex_id", list(MISTAKES))
def test_typical_mistake_gets_its_hint(graded, ex_id):
    g = _grade(graded, "cleo", ex_id)
    words = MISTAKES[ex_id][1]
    assert g.status == "failed" and words in g.message, (ex_id, g)
    line = next(ln for ln in _feedback(graded, "cleo").splitlines()
                if ln.startswith(f"- ✗ **Exercise {ex_id.split('.')[1]}, {g.title}**"))
    assert words in line


def test_endless_loop_and_huge_array(graded):
    dan = graded["rows"]["dan"]
    c01 = _cols("01")
    assert [dan[c] for c in c01] == ["passed", COULD_NOT_RUN, "not attempted", "not attempted",
                                     "not attempted"]
    assert f"did not finish within {LIMITS.cell_s:g} s" in _grade(graded, "dan", "01.2").message
    assert "MemoryError" in dan["notes"]
    assert "endless loop" in _feedback(graded, "dan")


def test_notebook_that_raises(graded):
    eve = graded["rows"]["eve"]
    assert "code cell 1" in eve["notes"] and "ZeroDivisionError" in eve["notes"]
    syntax = _grade(graded, "eve", "02.2")
    assert syntax.status == COULD_NOT_RUN and "SyntaxError" in syntax.message
    assert _grade(graded, "eve", "02.4").status == "passed"
    uses_np = _grade(graded, "eve", "02.5")  # np was never imported: the checker reports it
    assert uses_np.status == "failed" and "NameError" in uses_np.message
    assert _grade(graded, "eve", "02.1").status == "not attempted"


def test_corrupted_file(graded):
    fay = graded["rows"]["fay"]
    assert {fay[c] for c in _cols("03")} == {COULD_NOT_RUN}
    assert "not valid notebook JSON" in fay["notes"]
    text = _feedback(graded, "fay")
    assert text.count("not valid notebook JSON") == 1  # said once, not once per exercise


def test_fake_checkmarks_gain_nothing(graded):
    gus = graded["rows"]["gus"]
    assert [gus[c] for c in _cols("04")] == ["failed", "not attempted", "passed", "failed"]
    assert gus["passed"] == "1"
    assert "the pattern is not" in _grade(graded, "gus", "04.1").message  # the real checker's hint


def test_writes_outside_the_working_copy(graded):
    assert graded["leaked"] == [], "a notebook wrote into HOME or next to its working copy"
    assert set(graded["after"]) - set(graded["before"]) == {str(Path("gus") / "hacked.txt")}
    assert {k: v for k, v in graded["after"].items() if k in graded["before"]} == graded["before"]
    assert "WARNING: files in the submissions folder changed" in graded["summary"]
    assert str(Path("gus") / "hacked.txt") in graded["summary"]


def test_other_course_and_empty_notebook(graded):
    hal, ivy = graded["rows"]["hal"], graded["rows"]["ivy"]
    assert {hal[c] for c in _cols("02")} == {MISSING} and "another course" in hal["notes"]
    assert {ivy[c] for c in _cols("01")} == {MISSING} and "no cells" in ivy["notes"]


def test_summary(graded):
    summary = graded["summary"]
    assert "Graded 9 learners, 22 notebooks" in summary
    assert "README.txt" in summary  # listed as not graded
    line = next(ln for ln in summary.splitlines() if ln.startswith("01.1"))
    assert "2/9" in line and "(1) you gave the largest weight to the smallest score" in line
    assert (graded["out"] / "summary.md").is_file()


def test_a_notebook_that_ignores_interrupts_is_stopped(tmp_path):
    """An endless loop that swallows the interrupt: the notebook limit kills its kernel."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("my_weights = [0.665, 0.245, 0.090]"),
                nbformat.v4.new_code_cell("import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                                          "while True:\n    time.sleep(0.1)")]
    path = tmp_path / "01_general_attention_model.ipynb"
    nbformat.write(nb, path)
    limits = Limits(cell_s=2, notebook_s=6, exercise_s=2)
    with prepared(limits) as (spec_dir, template):
        def grade_it():
            return grade_notebook("zed", "01", path, spec_dir=spec_dir, limits=limits,
                                  mpl_template=template, source=path.name)

        async def inside_a_loop():  # as inside Jupyter: this thread already runs an event loop
            return grade_it()

        try:
            asyncio.get_running_loop()
            grade = grade_it()  # a loop is running here already (another test left it)
        except RuntimeError:
            grade = asyncio.run(inside_a_loop())
    assert {g.status for g in grade.exercises} == {COULD_NOT_RUN}
    assert "did not finish within 6 s" in grade.exercises[0].message
    assert grade.seconds < 40
