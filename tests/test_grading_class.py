"""Grade a small class built from the student copies, in one run (`make grade`).

The class: ada solved everything in her own cells; ben solved nothing (and returned two
notebooks); cleo made the typical mistake in every exercise; dan's notebook has an endless loop
and a huge array; eve's notebook raises in its first cell and has a syntax error; fay's file is
cut short; gus prints a fake ✓, redefines `check`, patches the checkers, deletes a checker call,
prints a fake verdict and writes outside his working copy; hal returned a notebook of another
course, ivy an empty one; kim returned the full (teacher's) notebook 02. Each gets what he or
she should, in grades.csv and in the feedback.

A second class, set only notebooks 02 and 04, comes as an LMS download: Canvas file names and
Moodle folders (one nested, one zipped); it calls attention_kit in plain-numpy exercises, pastes
a worked solution into its own notebook, and its grades go to the Canvas and Moodle import files.
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
from attention_kit.grading import COULD_NOT_RUN, MISSING, NOT_SUBMITTED, SOLUTION
from attention_kit.grading.__main__ import grade_class
from attention_kit.grading.execute import Limits, grade_notebook, prepared

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import class_samples  # noqa: E402
import editions  # noqa: E402

pytestmark = pytest.mark.slow  # grades a whole made-up class in kernels (minutes on 2 cores): make check leaves it out

# Short limits: a normal cell takes at most a few seconds, even on a busy 2-core machine.
LIMITS = Limits(cell_s=40, notebook_s=240, exercise_s=10)

# One typical mistake per exercise: (the learner's exercise cell, words of the expected hint).
MISTAKES = {
    "01.1": ("my_weights = [0.090, 0.245, 0.665]", "smallest score"),
    "01.2": ("def my_dot_scores(q, K):\n    return q * K", "the element-wise products"),
    "01.3": ("dot_winner, cosine_winner = 'k2', 'k3'", "the cosine divides the length out"),
    "01.4": ("def my_context(a, V):\n    return a[..., None] * V", "not yet summed"),
    "01.5": ("def my_output_model(C, W_c, b_c):\n    return ak.softmax(C @ W_c.T)", "forgot the bias"),
    "02.1": ("def my_softmax_rows(S):\n    e = np.exp(S - S.max())\n    return e / e.sum(axis=0, keepdims=True)",
             "each COLUMN sums to 1"),
    "02.2": ("def my_scaled_scores(Q, K):\n    return Q @ K.T", "forgot the scaling"),
    "02.3": ("X_ex = np.array([[0.1, 0.5], [0.3, 0.4], [0.6, 0.3]])\n"
             "y3 = ak.softmax(X_ex @ X_ex.T / np.sqrt(2))[2]", "that is the weight row"),
    "02.4": ("variance, std = np.sqrt(32), np.sqrt(32)", "you gave the standard deviation where the variance"),
    "02.5": ("def my_self_attention(X, W_q, W_k, W_v):\n"
             "    return ak.softmax((X @ W_q) @ np.swapaxes(X @ W_k, -1, -2)) @ (X @ W_v)", "forgot the scaling"),
    "02.6": ("def self_attention_fixed(X, W_q, W_k, W_v):\n    n, d = X.shape[:2]\n"
             "    Q, K, V = X @ W_q.T, X @ W_k.T, X @ W_v.T\n    S = Q @ K.T / np.sqrt(d)\n"
             "    E = np.exp(S - S.max(axis=1, keepdims=True))\n"
             "    return E / E.sum(axis=1, keepdims=True) @ V", "column convention"),
    "03.1": ("def my_split(X, h):\n    b, n, hd = X.shape\n    return X.reshape(b, h, n, hd // h)\n\n"
             "def my_merge(Xh):\n    return Xh.transpose(0, 2, 1, 3).reshape(Xh.shape[0], Xh.shape[2], -1)",
             "reshape without the transpose"),
    "03.2": ("def my_head(X, W_q, W_k, W_v):\n    S = (X @ W_q) @ (X @ W_k).T\n"
             "    E = np.exp(S - S.max(axis=1, keepdims=True))\n"
             "    return E / E.sum(axis=1, keepdims=True) @ (X @ W_v)", "unscaled"),
    "03.3": ("def my_combine(heads, W_o):\n    return np.concatenate(list(heads.transpose(1, 0, 2, 3)), axis=-1)",
             "forgot the output projection"),
    "03.4": ("answer = 4 * 1024**2", "4 d_model^2 holds only"),
    "04.1": ("def my_causal_mask(n):\n    return np.triu(np.ones((n, n), dtype=bool), k=1)",
             "mask of the future"),
    "04.2": ("def my_masked_softmax(S, mask):\n    Sm = np.where(mask, S, 0.0)\n"
             "    E = np.exp(Sm - Sm.max(axis=1, keepdims=True))\n"
             "    return E / E.sum(axis=1, keepdims=True)", "a blocked score of 0"),
    "04.3": ("def my_positions(p, d):\n    n, pos = len(p), np.asarray(p)[:, None]\n"
             "    w = 10000.0 ** (-np.arange(0, d, 2) / d)\n    P = np.zeros((n, d))\n"
             "    P[:, 0::2], P[:, 1::2] = np.cos(pos * w), np.sin(pos * w)\n    return P",
             "sin and cos are swapped"),
    "04.4": ("answer = [4, 5]", "a row can change only if the edited token is among its keys"),
    "05.1": ("def my_general_score_grads(Q, K, W, dS):\n    return dS @ K @ W, dS.T @ Q @ W",
             "dQ takes W the wrong way round"),
    "05.2": ("def my_bias_grads(Q, K, dS):\n    d = Q.shape[1]\n"
             "    return (dS @ K).sum(axis=0) / d**0.5, (dS.T @ Q).sum(axis=0) / d**0.5\n\nwhy = 'a'",
             "the starting value is not the reason"),
    "05.3": ("def my_gradient_check(f, x, analytic, eps=1e-4):\n    return -1.0", "never negative"),
    "05.4": ("answer = [0, 1, 2, 3, 4, 5]", "copy each word in place"),
    "06.1": ("def my_layer_norm(X, gamma, beta, eps=1e-5):\n    mu = X.mean(axis=-1, keepdims=True)\n"
             "    return (X - mu) / np.sqrt(X.var(axis=-1, keepdims=True) + eps)", "gamma and shift beta are missing"),
    "06.2": ("last_changes, earlier_change = False, False", "which keys does removing the mask add"),
    "06.3": ("def my_sample(logits, temperature, rng):\n    return int(np.argmax(logits))", "argmax"),
    "06.4": ("head2_word = 'had'", "which key has the brightest cell"),
    "07.1": ("def my_online_update(m, l, o, s, V):\n    m_new = max(m, float(np.max(s)))\n"
             "    p = np.exp(s - m_new)\n    l_new = l + p.sum()\n"
             "    return m_new, l_new, (np.exp(m - m_new) * l * o + p @ V) / l_new",
             "old sum l was not rescaled"),
    "07.2": ("def my_skipped_tiles(n, block_q, block_k):\n    return n * (n - 1) // 2", "(query, key) pairs"),
    "07.3": ("def my_kv_cache_bytes(n_tokens, layers, heads, kv_heads, d_head, bytes_per_value):\n"
             "    return layers * kv_heads * d_head * bytes_per_value * n_tokens", "half the right size"),
    "08.1": ("def my_prefix_matching(w, ids):\n    m = np.zeros(w.shape, dtype=bool)\n"
             "    m[:, 1:] = ids[:, None] == ids[None, :-1]\n    m &= np.tri(len(ids), k=-1, dtype=bool)\n"
             "    return float((w * m).sum(axis=1).mean())", "averaged over every query"),
    "08.2": ("my_failing_queries = [16, 17]", "a second earlier copy helps only if"),
    "08.3": ("def my_sink_window_mask(n, window, sinks):\n    q = np.arange(n)[:, None]\n"
             "    k = np.arange(n)[None, :]\n    return (k <= q) & (q - k < window)", "the sinks are missing"),
    "09.1": ("def my_rope_matrix(d, delta):\n    return np.eye(d)", "nothing turned"),
    "09.2": ("earliest_cached, earliest_fresh = 17, 17", "reaches further than the fresh window"),
    "09.3": ("def my_alibi_weights(slopes, i):\n"
             "    return -np.asarray(slopes)[:, None] * (i - np.arange(i + 1.0))\n\nmy_ratio = np.array([1.0, 1.0])",
             "these are the biases"),
    "09.4": ("answer = [6, 7, 8, 9]", "sink is missing"),
}


def _code(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


_exercise_cell = class_samples.exercise_cell


def _solutions(number: str) -> dict[str, str]:
    """A learner's own answer to each exercise of notebook ``number`` (the worked solution's
    code, not its cell)."""
    return {ex_id: class_samples.own_answer(src)
            for ex_id, src in class_samples.solution_sources(number).items()}


def _write(nb, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def _digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Build the class from `make student` copies, grade it in one run, return what it wrote."""
    student = editions.check(editions.student_edition(tmp_path_factory))
    subs = tmp_path_factory.mktemp("submissions")
    out = tmp_path_factory.mktemp("grades")
    fresh = {nb.number: nbformat.read(student / nb.file, as_version=4) for nb in registry.NOTEBOOKS}

    def copy(number):
        return nbformat.from_dict(fresh[number])

    for nb_entry in registry.NOTEBOOKS:  # ada: every exercise solved in her cells; folder layout
        _write(class_samples.with_own_answers(fresh[nb_entry.number], nb_entry.number),
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
    # kim: the full notebook 02 as it is (graded without running it)
    (subs / f"kim__{registry.notebook('02').file}").write_bytes(
        (ROOT / "notebooks" / registry.notebook("02").file).read_bytes())

    before = _digests(subs)
    home_escape = Path.home() / escape
    with pytest.MonkeyPatch.context() as mp:  # the summary fits the terminal: fix its width
        mp.setenv("COLUMNS", "120")  # (a narrow one clips the hints these tests read)
        result, summary = grade_class(subs, out, limits=LIMITS, workers=2)
    after = _digests(subs)
    leaked = [p for p in (home_escape, subs.parent / escape) if p.exists()]
    for p in leaked:
        p.unlink()
    rows = {r["learner"]: r for r in csv.DictReader(open(out / "grades.csv", encoding="utf-8")) if r["learner"]}
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
    assert sorted(rows) == ["ada", "ben", "cleo", "dan", "eve", "fay", "gus", "hal", "ivy", "kim"]
    header = list(next(iter(rows.values())))
    points = [f"{i} points" for i, _, _ in registry.exercises()]
    scores = [f"{nb.number} score (of {len(nb.exercises)})" for nb in registry.NOTEBOOKS]
    assert header == ["learner", "id", *[c for pair in zip(_cols(), points, strict=True) for c in pair], *scores,
                      "late", "late penalty", "points", "max points", "percent", "notes"]
    assert all(r["max points"] == str(len(_cols())) for r in rows.values())
    cleo = rows["cleo"]
    assert {cleo[p] for p in points} == {"0"} and cleo["points"] == "0" and cleo["percent"] == "0.0"


def test_all_solved(graded):
    ada = graded["rows"]["ada"]
    bad = [(g.id, g.status, g.message) for g in graded["result"].row("ada") if g.status != "passed"]
    assert not bad, (bad, ada["notes"])
    assert ada["points"] == str(len(_cols())) and ada["percent"] == "100.0" and ada["notes"] == ""
    n02 = len(registry.notebook("02").exercises)
    assert ada[f"02 score (of {n02})"] == str(n02) and ada["02.1 points"] == "1"
    assert f"You passed **{len(_cols())} of {len(_cols())}** exercises" in _feedback(graded, "ada")


def test_nothing_solved(graded):
    ben = graded["rows"]["ben"]
    for number in ("01", "03"):
        assert {ben[c] for c in _cols(number)} == {"not attempted"}
    for number in ("02", "04"):
        assert {ben[c] for c in _cols(number)} == {NOT_SUBMITTED}
    assert ben["points"] == "0"
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
    assert gus["points"] == "1"
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
    assert "Graded 10 learners, 27 notebooks" in summary
    assert "README.txt" in summary  # listed as not graded
    line = next(ln for ln in summary.splitlines() if ln.startswith("01.1"))
    assert "2/10" in line and "(1) you gave the largest weight to the smallest" in line
    assert "02 Self-attention" in summary and "copied" in summary.splitlines()[2]
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
    assert "did not finish within 6 s" in grade.exercises[0].message  # the notebook limit killed it


def test_a_returned_worked_solution_scores_nothing(graded):
    kim = graded["rows"]["kim"]
    assert {kim[c] for c in _cols("02")} == {SOLUTION}  # the full notebook
    assert kim[f"02 score (of {len(registry.notebook('02').exercises)})"] == "0" and "the full (teacher's) notebook, or all its solution cells" in kim["notes"]
    assert {kim[c] for c in _cols("01")} == {NOT_SUBMITTED} and kim["points"] == "0"
    text = _feedback(graded, "kim")
    assert text.count("contains the course's worked solution of this exercise") == 1  # said once
    line = next(ln for ln in graded["summary"].splitlines() if ln.startswith("02.1"))
    assert re.search(r" 1/10 +1 +1 +1 +6 ", line), line  # ada passed, cleo failed, eve stub, kim copied
    assert "contains the worked solution" in (graded["out"] / "summary.md").read_text(encoding="utf-8")


# --- a class set notebooks 02 and 04, downloaded from an LMS ----------------------------------

PLAIN_CALLS = {  # plain-numpy exercises answered with attention_kit, under other names
    "04.1": "def my_causal_mask(n):\n    return ak.causal_mask(n)",
    "04.2": "from attention_kit import softmax as f\n\ndef my_masked_softmax(S, mask):\n"
            "    return f(S, mask=mask)",
    "04.3": "import attention_kit.mechanism.positions\n\ndef my_positions(n, d):\n"
            "    return attention_kit.mechanism.positions.sinusoidal_positions(n, d)",
}


@pytest.fixture(scope="module")
def lms(tmp_path_factory):
    """Canvas and Moodle downloads of a class set notebooks 02 and 04, graded with their exports."""
    import zipfile

    student = editions.check(editions.student_edition(tmp_path_factory))
    subs = tmp_path_factory.mktemp("lms")
    out = tmp_path_factory.mktemp("lms-grades")
    f02, f04 = registry.notebook("02").file, registry.notebook("04").file
    nb04 = nbformat.read(student / f04, as_version=4)
    for ex_id, ex in registry.notebook("04").numbered()[:3]:  # smithjohn (Canvas): the library
        _exercise_cell(nb04, "04", ex_id).source = (
            PLAIN_CALLS[ex_id] + f"\n\nok = check.{ex.checker.__name__}({ex.answers[0]})")
    _write(nb04, subs / f"smithjohn_123456_7890123_{f04}")
    nb02 = nbformat.read(student / f02, as_version=4)  # and 02.3's worked solution pasted in
    _exercise_cell(nb02, "02", "02.3").source += "\n\n" + class_samples.solution_sources("02")["02.3"]
    _write(nb02, subs / f"smithjohn_LATE_123456_7890124_{f02}")
    (subs / "smithjohn_123456_7890125_05_how_attention_learns.ipynb").write_bytes(  # not set
        (student / registry.notebook("05").file).read_bytes())
    # Dana Lee (Moodle folder): notebook 04 solved, in a folder inside hers; notebook 02 is the
    # full teacher's notebook, zipped
    folder = subs / "Dana Lee_4711_assignsubmission_file_"
    _write(class_samples.with_own_answers(nbformat.read(student / f04, as_version=4), "04"),
           folder / "week 4" / f04)
    with zipfile.ZipFile(folder / "notebooks.zip", "w") as zf:
        zf.write(ROOT / "notebooks" / f02, f"work/{f02}")
    (subs / "Dana Lee_4711_assignsubmission_onlinetext_onlinetext.html").write_text("<p>done</p>")
    (subs / "grades-export.xlsx").write_text("not a notebook")
    result, summary = grade_class(subs, out, limits=LIMITS, workers=2, notebooks=["02", "04"],
                                  assignment="Week 2 (4242)")
    read = lambda name: list(csv.DictReader(open(out / name, encoding="utf-8")))  # noqa: E731
    return {"result": result, "summary": summary, "out": out, "grades": read("grades.csv"),
            "canvas": read("canvas.csv"), "moodle": read("moodle.csv"),
            "not_graded": read("not_graded.csv")}


def test_lms_learners_are_named_as_the_lms_names_them(lms):
    rows = {r["learner"]: r for r in lms["grades"] if r["learner"]}
    assert sorted(rows) == ["Dana Lee_4711", "smithjohn_123456"]
    assert rows["smithjohn_123456"]["id"] == "123456" and rows["Dana Lee_4711"]["id"] == "4711"


def test_only_the_notebooks_set_are_graded_and_counted(lms):
    rows = {r["learner"]: r for r in lms["grades"] if r["learner"]}
    header = list(lms["grades"][0])
    n02, n04 = (len(registry.notebook(n).exercises) for n in ("02", "04"))   # the counts: the registry's
    assert [h for h in header if h.endswith(")") and "score" in h] == [f"02 score (of {n02})", f"04 score (of {n04})"]
    assert not any(h.startswith(("01.", "03.", "05.")) for h in header)
    dana = rows["Dana Lee_4711"]   # every exercise of 04 solved, 02's pasted
    assert dana[f"04 score (of {n04})"] == str(n04) and dana[f"02 score (of {n02})"] == "0"
    assert {dana[c] for c in _cols("02")} == {SOLUTION}
    assert dana["points"] == str(n04) and dana["max points"] == str(n02 + n04)
    assert dana["percent"] == f"{100 * n04 / (n02 + n04):.1f}"
    assert "notebook 05 was not set" in lms["summary"]
    assert f'Notebooks set: 02, 04 ({n02 + n04} points); the assignment is "Week 2 (4242)"' in lms["summary"]
    text = (lms["out"] / "feedback" / "Dana_Lee_4711.md").read_text(encoding="utf-8")
    assert f"You passed **{n04} of {n02 + n04}** exercises" in text and "## 05" not in text


def test_library_calls_in_plain_numpy_exercises_are_rejected(lms):
    rows = {r["learner"]: r for r in lms["grades"] if r["learner"]}
    john = rows["smithjohn_123456"]
    assert [john[c] for c in _cols("04")][:3] == ["failed"] * 3
    assert john["02.3 one output row by hand"] == SOLUTION  # pasted: scores nothing
    assert {john[c] for c in _cols("02")} - {SOLUTION} == {"not attempted"}
    assert "exercise(s) 02.3: the worked solution's silent check" in john["notes"]
    for ex_id, used in (("04.1", "ak.causal_mask"), ("04.2", "ak.softmax"),
                        ("04.3", "attention_kit.mechanism.positions.sinusoidal_positions")):
        g = next(g for g in lms["result"].row("smithjohn_123456") if g.id == ex_id)
        assert "plain numpy, without attention_kit" in g.message and f"`{used}`" in g.message, g


def test_lms_exports(lms):
    canvas, moodle = lms["canvas"], lms["moodle"]
    assert list(canvas[0]) == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Week 2 (4242)"]
    n02, n04 = (len(registry.notebook(n).exercises) for n in ("02", "04"))   # the counts: the registry's
    assert canvas[0]["Student"].strip() == "Points Possible" and canvas[0]["Week 2 (4242)"] == str(n02 + n04)
    john = next(r for r in canvas if r["Student"] == "smithjohn")
    assert john["ID"] == "123456" and john["Week 2 (4242)"] == "0"
    assert list(moodle[0])[:6] == ["Identifier", "Full name", "Email address", "Status", "Grade",
                                   "Maximum grade"]
    assert list(moodle[0])[-1] == "Feedback comments"
    dana = next(r for r in moodle if r["Full name"] == "Dana Lee")
    # 04's points of 02's and 04's on Moodle's default maximum grade of 100 (tests/test_lms_formats.py reads it back)
    assert dana["Identifier"] == "Participant 4711" and dana["Grade"] == f"{100 * n04 / (n02 + n04):.2f}"
    assert dana["Maximum grade"] == "100.00" and f"02: 0/{n02}" in dana["Feedback comments"]
    assert (lms["out"] / "moodle_feedback.zip").is_file() and (lms["out"] / "canvas_reupload.zip").is_file()
    not_graded = {r["file"]: r["why it was not graded"] for r in lms["not_graded"]}
    assert "not recognised" in not_graded["grades-export.xlsx"]
    assert any("not a notebook" in why for path, why in not_graded.items() if "onlinetext" in path)


def _doc_example() -> str:
    text = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
    return text[text.index("<!-- example:begin"):text.index("<!-- example:end")]


def test_the_guides_example_quotes_what_the_checkers_say_today(graded):
    """docs/teaching.md shows a graded example; its hints (cleo's typical mistakes in the summary,
    gus's feedback) must be the checkers' words today, not an older version's."""
    example = _doc_example()
    norm = lambda s: " ".join(s.split())  # noqa: E731
    quoted = re.findall(r"^(\d\d\.\d) .*?\(\d+\) (.+?)…?$", example, flags=re.M)
    assert len(quoted) >= 8, "the example's summary table was not found"
    for ex_id, hint in quoted:
        said = norm(_grade(graded, "cleo", ex_id).message)
        assert said.startswith(norm(hint)), (ex_id, hint, said)
    titles = {f"Exercise {k + 1}, {ex.title}": ex_id for k, (ex_id, ex) in enumerate(registry.notebook("04").numbered())}
    feedback = example[example.index("feedback for gus"):example.index("feedback for kim")]
    lines = re.findall(r"^- ✗ \*\*(.+?)\*\*: not yet — (.+)$", feedback, flags=re.M)
    assert lines, "gus's feedback was not found in the example"
    for title, hint in lines:
        said = norm(_grade(graded, "gus", titles[title]).message)
        assert said == norm(hint), (title, hint, said)
