"""The student edition's checkers hold data, not formulas (issue 46).

``tools/make_student.py`` records what every checker compares with (``@recorded`` functions in
``attention_kit/check``) into ``check/recorded.pkl`` and leaves out the code that computes right
answers (``@reference`` helpers, the bodies of recorded functions). Here:

* the student edition's checkers give the same verdicts and hints as the teacher's: the checker
  tests (``tests/test_check_*.py``) run against the student edition's package;
* no function the student edition's ``check`` package defines answers an exercise on the inputs
  the grader tries (its hidden cases): every one is called on them, and none returns the answer.
"""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import editions  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def student_pkg(tmp_path_factory) -> Path:
    """A folder holding the student edition's ``attention_kit`` (as ``make student`` writes it:
    the run's one build, tests/editions.py)."""
    edition = editions.check(editions.student_edition(tmp_path_factory))
    out = tmp_path_factory.mktemp("student-pkg")
    shutil.move(edition / "attention_kit", out / "attention_kit")
    return out


def _env(folder: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(folder), str(ROOT / "tests")])
    env["MPLBACKEND"] = "Agg"
    return env


def test_the_student_edition_is_what_runs(student_pkg):
    out = subprocess.run([sys.executable, "-c", "import attention_kit.check.recorded as r; "
                          "print(r.__file__); print(len(r.load_store()))"],
                         env=_env(student_pkg), capture_output=True, text=True, cwd=student_pkg, check=True)
    where, n = out.stdout.split()
    assert Path(where).is_relative_to(student_pkg) and int(n) > 0


def test_no_recorded_function_or_reference_helper_keeps_its_code(student_pkg):
    import ast

    for module in sorted((student_pkg / "attention_kit" / "check").glob("*.py")):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                names = {getattr(d, "id", getattr(d, "attr", None)) for d in node.decorator_list}
                assert not {"reference", "grades"} & names, f"{module.name}: {node.name} is still there"
                if "recorded" in names:
                    assert len(node.body) == 1 and isinstance(node.body[0], ast.Return), (
                        f"{module.name}: {node.name} keeps its body")


# What `check.x??` must not show (the learner trial): a comment of dot_variance gave 02.4's standard
# deviation, and general_cases.py's module-level comments on WINNER_K (kept in the student edition,
# unlike its recorded tables) described the keys' lengths and angles, the work of 01.3.
KEPT_SOURCE_LEAKS = {
    "self_attention.py": ("5.66", "5.657", "sqrt(32)"),
    "general_cases.py": ("nearly parallel", "45 degrees", "orthogonal", "k2: short", "k3: long", "is long",
                         "is short"),
}


@pytest.mark.parametrize("module, leaks", sorted(KEPT_SOURCE_LEAKS.items()))
def test_the_kept_check_source_states_no_answer(student_pkg, module, leaks):
    text = (student_pkg / "attention_kit" / "check" / module).read_text(encoding="utf-8")
    for leak in leaks:
        assert leak not in text, (module, leak)


@pytest.mark.slow
def test_the_student_editions_checkers_pass_the_checker_tests(student_pkg):
    """Same verdicts and hints, from data: the checker tests, run against the student edition."""
    tests = sorted(str(p) for p in (ROOT / "tests").glob("test_check_*.py"))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:nbval", "-p", "no:cacheprovider",
                          "-p", "no:xdist", "-m", "not slow and not bench", "--rootdir", str(student_pkg),
                          *tests], env=_env(student_pkg), capture_output=True, text=True, cwd=student_pkg)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


_CALL_ALL = textwrap.dedent('''
    import contextlib, importlib, inspect, io, pickle, pkgutil, signal, sys
    import numpy as np
    import attention_kit.check as check
    cases = pickle.load(open(sys.argv[1], "rb"))
    funcs = {}
    for info in pkgutil.iter_modules(check.__path__):
        mod = importlib.import_module(f"attention_kit.check.{info.name}")
        for name, obj in vars(mod).items():
            if inspect.isfunction(obj) and obj.__module__.startswith("attention_kit.check"):
                funcs[f"{obj.__module__}.{obj.__qualname__}"] = inspect.unwrap(obj)
            elif inspect.isclass(obj) and obj.__module__.startswith("attention_kit.check"):
                for mname, m in vars(obj).items():
                    if inspect.isfunction(m):
                        funcs[f"{obj.__module__}.{obj.__qualname__}.{mname}"] = m
    def alarm(*_):
        raise TimeoutError
    signal.signal(signal.SIGALRM, alarm)
    found = []
    for ex_id, args, expected in cases:
        for name, fn in sorted(funcs.items()):
            for call in (args, args[::-1]):
                try:
                    signal.alarm(2)
                    with contextlib.redirect_stdout(io.StringIO()):
                        got = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in call])
                except BaseException:
                    continue
                finally:
                    signal.alarm(0)
                try:
                    found.append((ex_id, name, pickle.dumps(got)))
                except Exception:
                    pass
    pickle.dump((sorted(funcs), found), open(sys.argv[2], "wb"))
''')


def _same(got, expected) -> bool:
    try:
        if isinstance(expected, (tuple, list)) and not isinstance(expected, np.ndarray):
            return (isinstance(got, (tuple, list)) and len(got) == len(expected)
                    and all(_same(g, e) for g, e in zip(got, expected, strict=True)))
        g, e = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
        return g.shape == e.shape and g.size > 1 and bool(np.allclose(g, e, atol=1e-6, equal_nan=False))
    except (TypeError, ValueError):
        return False


@pytest.mark.slow
def test_no_function_of_the_student_editions_check_answers_a_hidden_case(student_pkg, tmp_path):
    from attention_kit.grading.hidden import HIDDEN, case_rng

    cases = []
    for ex_id, specs in HIDDEN.items():
        for spec in specs:
            for args in spec.cases(case_rng("scan", "nobody", ex_id))[:2]:
                cases.append((ex_id, args, spec.reference(*[a.copy() if isinstance(a, np.ndarray) else a
                                                            for a in args])))
    inp, outp = tmp_path / "cases.pkl", tmp_path / "found.pkl"
    inp.write_bytes(pickle.dumps([(i, a, None) for i, a, _ in cases]))
    subprocess.run([sys.executable, "-c", _CALL_ALL, str(inp), str(outp)], env=_env(student_pkg),
                   cwd=tmp_path, check=True, timeout=600)
    names, found = pickle.loads(outp.read_bytes())
    assert len(names) > 40  # the checkers and their helpers were found and called
    expected = {}
    for ex_id, _args, want in cases:
        expected.setdefault(ex_id, []).append(want)
    answers = sorted({(ex_id, name) for ex_id, name, blob in found
                      if any(_same(pickle.loads(blob), want) for want in expected[ex_id])})
    assert not answers, f"these functions of the student edition's check answer an exercise: {answers}"


def _strings(x):
    if isinstance(x, str):
        yield x
    elif isinstance(x, dict):
        for v in x.values():
            yield from _strings(v)
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _strings(v)


def test_no_prediction_hint_can_be_read_in_the_student_editions_source(student_pkg):
    """A prediction's in-class hints may name its answer (04.4's "every query i >= 3 sees token 3"),
    so they live in the recorded tables its checker reads: ``check.future_unchanged??`` (the student
    edition's source: code, comments, strings) shows none of them."""
    import ast
    import importlib
    import inspect
    import pkgutil

    import attention_kit.check as check
    from attention_kit.check.recorded import Sealed

    seen = 0
    for info in pkgutil.iter_modules(check.__path__):
        mod = importlib.import_module(f"attention_kit.check.{info.name}")
        checkers = [f for f in vars(mod).values() if getattr(f, "prediction", False) is True
                    and getattr(f, "__module__", None) == mod.__name__]
        if not checkers:
            continue
        src = (student_pkg / "attention_kit" / "check" / f"{info.name}.py").read_text(encoding="utf-8")
        literals = [n.value for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        comments = [line.split("#", 1)[1] for line in src.splitlines() if "#" in line]
        for checker in checkers:
            names = inspect.unwrap(checker).__code__.co_names
            tables = [getattr(mod, n) for n in names if hasattr(getattr(mod, n, None), "recorded_key")]
            assert tables, f"{info.name}.{checker.__name__} reads no recorded table"
            for table in tables:
                value = table()  # a prediction's table is sealed (check/recorded.py): its checker opens it
                for text in _strings(value.open() if isinstance(value, Sealed) else value):
                    piece = text.split("{")[0]   # the part before a placeholder the checker fills in
                    if len(piece) >= 20:
                        seen += 1
                        assert not any(piece in s for s in literals + comments), (
                            f"{info.name}.{checker.__name__}: {text!r} can be read in the student edition's source")
    assert seen >= 8   # the prediction tables' hints were found and looked for
    masks = (student_pkg / "attention_kit" / "check" / "masks_positions.py").read_text(encoding="utf-8")
    for answer in ("i >= 3", "4 and 5", "3, 4 and 5", "rows 3", "range(edited"):
        assert answer not in masks, answer
