"""docs/adding-an-exercise.md's worked example works end to end, as the page says.

The quick tests run the page's declaration, cells and solution here. The slow one does what the
page says on a copy of the repository: the declaration in a new module, the cells in the real
notebook 01, the page's tests, then its commands (the notebook re-executed, the guide's tables and
times, the student edition, the answer key, the Chinese catalogs), and checks what follows (the
registry finds 01.6, the grader's hidden cases and tests take it up, the guide is in step) and the
list of files the change touched."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import nbformat
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_student  # noqa: E402
from notebook_time import stated as stated_minutes  # noqa: E402

from attention_kit import check  # noqa: E402
from attention_kit.check import declare, registry  # noqa: E402
from attention_kit.grading import hidden  # noqa: E402

DOC = ROOT / "docs" / "adding-an-exercise.md"
NB01 = "notebooks/01_general_attention_model.ipynb"
IMPORT = re.compile(r"^from attention_kit\.check import (\w+) as (\w+).*\n", re.M)


def _blocks() -> dict[str, tuple[str, str]]:
    """``{name: (path or "", source)}`` of the page's example blocks."""
    text = DOC.read_text(encoding="utf-8")
    found = re.findall(r"<!-- example: (\w+) ?([\w/.]*) -->\s*```\w+\n(.*?)```", text, re.S)
    return {name: (path, source) for name, path, source in found}


@pytest.fixture
def example():
    """The page's declaration, run as a module would be (its grader part registered for the test only)."""
    blocks = _blocks()
    assert set(blocks) == {"module", "task", "exercise", "solution", "test"}
    parts, made = dict(declare._PARTS), dict(declare._MADE)
    module: dict = {"__name__": "example_entropy"}
    exec(compile(blocks["module"][1], "module", "exec"), module)  # noqa: S102
    yield blocks, module
    declare._PARTS.clear()
    declare._PARTS.update(parts)
    declare._MADE.clear()
    declare._MADE.update(made)


def _run(source: str, module: dict) -> tuple[dict, list]:
    """Run a cell of the page as notebook 01 would (``check`` is ``attention_kit.check.general``
    there), its import of the new module bound to the page's declaration run above."""
    for m in IMPORT.finditer(source):
        assert m.groups() == ("exercises_01_entropy", "ex6"), m.group(0)
    ns = {"np": np, "ak": __import__("attention_kit"), "check": SimpleNamespace(quietly=check.quietly),
          "ex6": SimpleNamespace(**{k: v for k, v in module.items() if not k.startswith("__")})}
    with check.recording() as results, warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # a learner's overflow
        exec(compile(IMPORT.sub("", source), "cell", "exec"), ns)  # noqa: S102
    return ns, results


def test_the_worked_example_runs_as_the_page_says(example, capsys):
    blocks, module = example
    text = DOC.read_text(encoding="utf-8")
    shown = re.search(r"What the learner sees.*?```text\n(.*?)```", text, re.S).group(1).splitlines()
    cell = blocks["exercise"][1]

    def answer(body: str) -> str:
        return cell.replace("return ...   # one number", body)

    ns, results = _run(cell, module)                 # the stub
    assert ns["ok"] is False and results[0].status == check.NOT_ATTEMPTED
    assert results[0].line == shown[0]

    _, results = _run(answer("a = np.exp(e * T - (e * T).max())\n    a = a / a.sum()\n"
                             "    return -(a * np.log(a)).sum()"), module)
    assert results[0].status == check.FAILED and "multiplied" in results[0].message
    assert results[0].line == shown[1]

    _, results = _run(answer("a = np.exp(e / T) / np.exp(e / T).sum()\n"
                             "    return -(a * np.log(a)).sum()"), module)      # no maximum subtracted
    assert results[0].status == check.FAILED and "take from every score" in results[0].message

    _, results = _run(answer("z = e / T - (e / T).max()\n    a = np.exp(z) / np.exp(z).sum()\n"
                             "    return -(a * np.log(a)).sum()"), module)      # 0 log 0
    assert results[0].status == check.FAILED and "exactly 0" in results[0].message

    _, results = _run(answer("z = e / T - (e / T).max()\n    a = np.exp(z) / np.exp(z).sum()\n"
                             "    a = a[a > 0]\n    return -(a * np.log2(a)).sum()"), module)
    assert results[0].status == check.FAILED and "bits" in results[0].message

    _, results = _run(answer("a = ak.softmax(e / T)\n    return -(a * np.log(a)).sum()"), module)
    assert results[0].status == check.FAILED and "attention_kit" in results[0].message  # plain numpy
    assert module["weight_entropy"].plain_numpy == ()

    _, results = _run(answer("return 'high'"), module)                # never raises on odd answers
    assert results[0].status == check.FAILED

    ns, results = _run(blocks["solution"][1], module)                 # asserts inside quietly()
    assert results[-1].passed and results[-1].line == shown[2]
    assert capsys.readouterr().out.count("✓") == 0, "the solution must print nothing"


def test_the_declaration_states_the_exercise_and_its_grader_part(example, monkeypatch):
    blocks, module = example
    (ex,) = module["EXERCISES"]
    assert (ex.id, ex.answers, ex.plain) == ("01.6", ("my_entropy",), ())
    assert ex.position == len(registry.notebook("01").exercises) + 1   # after the ones there
    part = declare.grading("01.6")
    assert part.task and part.catches and len(part.hidden) == 1
    monkeypatch.setitem(hidden.HIDDEN, "01.6", part.hidden)
    solution = _run(blocks["solution"][1], module)[0]["my_entropy"]
    other, wrong = {}, {}
    exec(part.other_right[0], {"np": np}, other)  # noqa: S102
    exec(part.wrong[0], {"np": np}, wrong)  # noqa: S102
    with check.quietly():
        assert module["weight_entropy"](other["f"])
    for learner in ("ada", "bob"):
        assert hidden.check_hidden("01.6", [solution], hidden.case_rng(2024, learner, "01.6")) is None
        assert hidden.check_hidden("01.6", [other["f"]], hidden.case_rng(2024, learner, "01.6")) is None
        assert hidden.check_hidden("01.6", [wrong["f"]], hidden.case_rng(2024, learner, "01.6")) is not None


def test_the_example_holds_data_in_the_student_edition(example):
    """The page's module, as make student writes it: the code that computes the entropy (the
    recorded table's, the reference, the grader's part) is gone, and the checker still judges from
    the recorded numbers."""
    import pickle

    from attention_kit.check import recorded

    blocks, module = example
    stripped = make_student.strip_references(blocks["module"][1], "example")
    for gone in ("def _entropy(", "np.log(a)", "cases = [", "_entropy_cases", "_grading", "other_right",
                 "np.log2"):
        assert gone not in stripped, gone
    table = recorded.recorded_functions()["example_entropy._entropy_table"]()
    student: dict = {"__name__": "example_entropy"}
    saved = recorded._store
    recorded._store = {"example_entropy._entropy_table": table}
    try:
        exec(compile(stripped, "checker", "exec"), student)  # noqa: S102
        cell = blocks["exercise"][1].replace(
            "return ...   # one number",
            "a = np.exp(e * T - (e * T).max())\n    a = a / a.sum()\n    return -(a * np.log(a)).sum()")
        _, results = _run(cell, student)
        assert "multiplied" in results[0].message
        _, results = _run(blocks["solution"][1], student)
        assert results[-1].passed
    finally:
        recorded._store = saved
    assert pickle.loads(pickle.dumps(table))  # data only: it goes into recorded.pkl


# ---------------------------------------------------------------- the page, done on a copy


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          capture_output=True, text=True, check=True).stdout


def _copy_of_the_repository(dest: Path) -> Path:
    """The repository's files as committed and edited here (no venv, no caches), as one commit."""
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           capture_output=True, text=True, check=True).stdout.split("\0")
    for name in filter(None, files):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    _git(dest, "init", "-q")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "before the exercise")
    return dest


def _in(repo: Path, *cmd: str, ok: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(repo), MPLBACKEND="Agg")
    env.pop("PYTEST_ADDOPTS", None)
    run = subprocess.run([sys.executable, *cmd], cwd=repo, env=env, capture_output=True, text=True, timeout=900)
    if ok:
        assert run.returncode == 0, f"{cmd}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    return run


@pytest.mark.slow
def test_the_page_done_on_a_copy_of_the_repository(tmp_path):
    repo = _copy_of_the_repository(tmp_path / "repo")
    blocks = _blocks()
    # 1 and 4: the declaration and its tests, where the page puts them
    for name in ("module", "test"):
        path, source = blocks[name]
        assert path, f"the page's {name} block names no file"
        (repo / path).write_text(source, encoding="utf-8")
    # 2 and 3: the cells, in the real notebook 01, after exercise 5 (its worked solution)
    nb = nbformat.read(repo / NB01, as_version=4)
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    after = code[max(registry.answer_cells([nb.cells[i].source for i in code], registry.notebook("01"))["01.5"])] + 1
    solution = nbformat.v4.new_code_cell(blocks["solution"][1])
    solution.metadata["jupyter"] = {"source_hidden": True}
    solution.metadata["tags"] = ["solution"]
    nb.cells[after:after] = [nbformat.v4.new_markdown_cell(blocks["task"][1].strip()),
                             nbformat.v4.new_code_cell(blocks["exercise"][1].strip()), solution]
    nbformat.write(nb, repo / NB01)

    # the commands, in the page's order
    _in(repo, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--inplace",
        "--ExecutePreprocessor.store_widget_state=False", "--ExecutePreprocessor.record_timing=False",
        "--ExecutePreprocessor.timeout=300", NB01)
    _in(repo, "tools/tidy_notebooks.py", NB01)
    _in(repo, "tools/guide_tables.py", "--write")
    student = _in(repo, "tools/make_student.py", "-o", str(tmp_path / "student"), NB01)
    assert "no cell defines the answer" not in student.stderr, student.stderr
    _in(repo, "tools/make_answers.py", "-o", str(tmp_path / "key.md"))
    _in(repo, "tools/translate.py", "package-update")
    _in(repo, "tools/translate.py", "update")

    # what follows: the notebook ran the cells, the registry, the guide, the key, the student edition
    ran = nbformat.read(repo / NB01, as_version=4).cells[after:after + 3]
    outputs = "".join(o.get("text", "") for o in ran[1].outputs)
    assert outputs.startswith("✗ no answer yet") and not ran[2].outputs
    listed = _in(repo, "-m", "attention_kit.check.registry").stdout
    assert "| 01.6 | entropy of the weights | `my_entropy` | `exercises_01_entropy.weight_entropy` | " \
           "not allowed |" in listed
    guide = (repo / "docs" / "teaching.md").read_text(encoding="utf-8")
    assert listed.strip() in guide and "| 6 | `my_entropy(e, T)`" in guide
    assert "in step" in _in(repo, "tools/guide_tables.py").stdout
    key = (tmp_path / "key.md").read_text(encoding="utf-8")
    assert "entropy of the weights" in key and "a = a[a > 0]" in key
    kept = (tmp_path / "student" / "attention_kit" / "check" / "exercises_01_entropy.py").read_text(encoding="utf-8")
    assert "weight_entropy" in kept and "_entropy_cases" not in kept and "_grading" not in kept
    assert "a = a[a > 0]" not in (tmp_path / "student" / "01_general_attention_model.ipynb").read_text(encoding="utf-8")
    from babel.messages.pofile import read_po

    with open(repo / "attention_kit/locale/zh/LC_MESSAGES/attention_kit.po", "rb") as f:
        catalog = read_po(f)
    new = catalog.get("the entropy of softmax(e / T): small for a small T (peaked weights), up to log(n_k) "
                      "for a large T (flat ones)")
    assert new is not None and not new.string   # there for the translator, not translated yet

    # step 4 without a translator: English for now; the header's and README's times carried over
    deferred = _in(repo, "tools/translate.py", "defer").stdout
    assert "package " in deferred and "01_general_attention_model " in deferred, deferred
    _in(repo, "tools/translate.py", "build", "01_general_attention_model", "README")  # make notebooks-zh's build
    check = _in(repo, "tools/translate.py", "check", ok=False).stdout
    problems = check.split("published in zh:")[0].strip().splitlines()
    new_code = {c.id for c in ran[1:]}
    assert len(problems) == 2 and all(  # what make notebooks-zh's run then does: execute its two new cells
        p.endswith("not executed (make notebooks-zh)") and p.split()[1].rstrip(":") in new_code for p in problems), check
    assert "English for now, waiting for a translator" in check
    zh = nbformat.read(repo / "notebooks" / "zh" / Path(NB01).name, as_version=4)
    header = next(c.source for c in zh.cells if "分钟" in c.source)
    low, high = stated_minutes(repo / NB01)
    assert f"{low}–{high} 分钟" in header and header.startswith('<div lang="zh-CN">')  # still Chinese
    assert f"| {low}–{high} 分钟 |" in (repo / "README.zh-CN.md").read_text(encoding="utf-8")
    task = next(c.source for c in zh.cells if "Exercise 6: the entropy" in c.source)
    assert task.startswith('<div lang="en">') and "还没有译成中文" in task

    # the tests: the page's own, and those that take the new exercise up from its declaration
    tests = _in(repo, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:nbval", "-m", "not slow",
                "tests/test_check_entropy.py", "tests/test_guide_tables.py", "tests/test_grading_parts.py",
                "tests/test_grading_hidden.py", "tests/test_notebook_time.py", "tests/test_package_layout.py",
                "tests/test_student_data.py", ok=False)
    assert tests.returncode == 0, tests.stdout[-4000:]
    assert re.search(r"(\d+) passed", tests.stdout) and "01.6" in _in(
        repo, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist", "-p", "no:nbval",
        "tests/test_grading_hidden.py").stdout

    # the files the change touched: the page's list, no other
    touched = sorted(line[3:] for line in _git(repo, "status", "--porcelain", "-uall").splitlines())
    assert touched == sorted([
        "attention_kit/check/exercises_01_entropy.py",          # its declaration (written)
        "tests/test_check_entropy.py",                           # its tests (written)
        NB01,                                                    # its cells (written), executed
        "docs/teaching.md", "README.md",                         # tables and times (guide_tables.py)
        "attention_kit/locale/zh/LC_MESSAGES/attention_kit.po",  # its hints, for the translator
        "translations/zh/01_general_attention_model.po",         # its task, for the translator; the time
        "translations/zh/README.po",                             # README's time
        "notebooks/zh/01_general_attention_model.ipynb", "README.zh-CN.md",  # built from the catalogs
    ]), touched
