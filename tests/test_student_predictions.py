"""A student edition built with ``--record-predictions`` gives no verdict on a prediction in class.

Its prediction checkers record the learner's answer and nothing more (tools/make_student.py,
``record_only_checkers``): the ways round it that a learner could try (``__wrapped__``, the
closure, ``graded_hints()``, pointing the settings at another file and reloading) are tried in a
subprocess that runs the student copy of the package, and none prints a ✓, a ✗ or an answer.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import editions  # noqa: E402

BYPASSES = textwrap.dedent('''
    import importlib, inspect, sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    import attention_kit
    from attention_kit import check
    assert attention_kit.__file__.startswith(sys.argv[1]), attention_kit.__file__
    from attention_kit.check import (backprop, general, heads, long_context, masks_positions,
                                     self_attention, tiny_lm)

    def attempts(fn):
        """Every callable a learner can reach from the checker ``fn``."""
        seen, todo = [], [fn]
        while todo:
            f = todo.pop()
            if f in seen or not callable(f):
                continue
            seen.append(f)
            todo.append(getattr(f, "__wrapped__", None))
            for cell in getattr(f, "__closure__", None) or ():
                todo.append(cell.cell_contents)
        return seen

    def predictions():
        modules = (backprop, general, heads, long_context, masks_positions, self_attention, tiny_lm)
        return [f for m in modules for f in vars(m).values() if getattr(f, "prediction", False)]

    def wrong(fn):
        sig = inspect.signature(inspect.unwrap(fn))
        return [[0, 1] for p in sig.parameters.values()
                if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]

    found = predictions()
    print("checkers:", len(found))
    for fn in found:
        for f in attempts(fn):
            f(*wrong(fn))
            with check.graded_hints():
                f(*wrong(fn))
    check.CLASS_SETTINGS = Path("no_such_settings.json")  # feedback mode, as far as settings go
    for m in (masks_positions, heads):
        importlib.reload(m)
    for fn in predictions():
        fn(*wrong(fn))
    masks_positions.future_unchanged([3, 4, 5])
''')


@pytest.fixture(scope="module")
def record_edition(tmp_path_factory):
    """A student edition built with ``--record-predictions``."""
    return editions.check(editions.student_edition(tmp_path_factory, record_predictions=True))


def test_no_way_round_recorded_predictions_in_the_student_edition(record_edition, tmp_path):
    out = record_edition
    run = subprocess.run([sys.executable, "-c", BYPASSES, str(out)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "checkers: 9"
    verdicts = [ln for ln in lines if ln.startswith(("✓", "✗"))]
    assert verdicts == [], verdicts
    recorded = [ln for ln in lines[1:] if ln.startswith("● recorded: [0, 1]")]
    assert len(recorded) == len(lines) - 2  # every other line: the wrong answer recorded, not judged
    assert lines[-1].startswith("● recorded: [3, 4, 5]") and "✓" not in run.stdout
    for answer in ("3, 4, 5", "{3, 4, 5}", "16, 17, 20, 21"):
        assert answer not in "\n".join(lines[:-1]), answer  # no answer given away
    source = (out / "attention_kit" / "check" / "masks_positions.py").read_text()
    assert "return record_only(answer)" in source and "_EDITED, _N_TOKENS" not in source


def test_the_full_package_still_judges_predictions():
    """The teacher's checkers (what make grade uses) keep their judging code."""
    from attention_kit.check import masks_positions, recording

    with recording() as results:
        assert masks_positions.future_unchanged([3, 4, 5]) is True
        assert masks_positions.future_unchanged([0, 1]) is False
    assert [r.status for r in results] == ["passed", "failed"]


# ------------------------------------------------ no prediction's answer in the shipped data

def _right_answers() -> dict:
    """``{exercise id: (checker, answers, kwargs)}``: every prediction exercise with its right
    answer, read from the teacher's tables."""
    from attention_kit.check import (
        backprop,
        general_cases,
        heads,
        long_context,
        registry,
        self_attention_cases,
        tiny_lm,
    )

    out = {}
    for nb in registry.NOTEBOOKS:
        for ex_id, ex in nb.numbered():
            if getattr(ex.checker, "prediction", False):
                out[ex_id] = (ex.checker, dict(ex.kwargs or {}))
    winners = general_cases.winner_table().open()
    v = self_attention_cases.variance_table().open()[(16, 1.0, 1.0, 0.0, 1.0)]
    mask = tiny_lm._mask_table().open()
    head = tiny_lm._head_table().open()["humpty dumpty had a"]
    answers = {
        "01.3": (winners["dot"], winners["cosine"]),
        "02.4": (v["want"], round(v["std"], 2)),
        "04.4": ([3, 4, 5],),
        "05.4": (backprop._rotate_table().open()["want"],),
        "06.2": (mask["last"], mask["earlier"]),
        "06.4": (head["tokens"][head["best"][1]],),
        "08.2": (heads._failing_table().open()["failing"],),
        "09.2": tuple(long_context._reach().open()),
        "09.4": (long_context._keeps().open(),),
    }
    assert sorted(out) == sorted(answers), "a prediction exercise without its answer in this test"
    return {ex_id: (out[ex_id][0], answers[ex_id], out[ex_id][1]) for ex_id in sorted(out)}


def _tables_read_by_predictions() -> dict[str, list[str]]:
    """``{exercise id: recorded keys}``: the tables each prediction checker of the teacher's
    edition reads while it judges its right answer (traced, not declared)."""
    import importlib
    import pkgutil

    import attention_kit.check as check

    modules = [importlib.import_module(f"attention_kit.check.{m.name}") for m in pkgutil.iter_modules(check.__path__)]
    read: list[str] = []
    saved = []
    for m in modules:
        for name, f in list(vars(m).items()):
            if callable(f) and hasattr(f, "recorded_key"):
                def traced(f=f):
                    read.append(f.recorded_key)
                    return f()
                saved.append((m, name, f))
                setattr(m, name, traced)
    try:
        out = {}
        for ex_id, (checker, answers, kwargs) in _right_answers().items():
            read.clear()
            with check.recording() as results:
                assert checker(*answers, **kwargs) is True, ex_id
            assert [r.status for r in results] == ["passed"], (ex_id, results)
            out[ex_id] = sorted(set(read))
    finally:
        for m, name, f in saved:
            setattr(m, name, f)
    return out


def _needles() -> dict:
    """What each prediction's answer looks like inside data (JSON for the student's process)."""
    a = {ex_id: answers for ex_id, (_, answers, _) in _right_answers().items()}
    return {
        "lists": {"04.4": [3, 4, 5], "05.4": list(a["05.4"][0]), "08.2": sorted(a["08.2"][0]),
                  "09.2": list(a["09.2"]), "09.4": sorted(a["09.4"][0])},
        "dicts": {"01.3": {"dot": a["01.3"][0], "cosine": a["01.3"][1]},
                  "06.2": {"last": bool(a["06.2"][0]), "earlier": bool(a["06.2"][1])},
                  "06.4": {"best": None}},
        "floats": {"02.4": float(np.sqrt(a["02.4"][0]))},
        "texts": {"04.4": "rows 3, 4 and 5", "09.4": "the sink"},
        **_fixed_needles(),
    }


def _fixed_needles() -> dict:
    """The answers of the exercises that ask for one fixed value (not a function, not a
    prediction): 01.1's weights, 02.3's row, 03.4's count and 05.2's letter (trial report, A1:
    ``check.softmax_table()["want"]`` printed 01.1's answer)."""
    from attention_kit.check import backprop, general_cases, multi_head_count, self_attention_cases

    def opened(table):  # sealed by the fix; a plain table before it
        return table.open() if hasattr(table, "open") else table

    weights = opened(general_cases.softmax_table())["want"]
    row = opened(self_attention_cases.output_row_table())[0]["want"]
    counts = opened(multi_head_count.parameter_counts())
    layer = (1024, 128, 128, False)  # the exercise's layer (registry: 03.4's kwargs)
    return {"vectors": {"01.1": [float(w) for w in weights], "02.3": [float(v) for v in row]},
            "ints": {"03.4": int(counts[layer]["want"])},
            "fixed_dicts": {"05.2": {"right": opened(backprop._bias_table())["why"]["right"]}}}


LOOK_INSIDE = textwrap.dedent('''
    import importlib, json, pickle, pkgutil, sys
    sys.path.insert(0, sys.argv[1])
    needles, withheld_expected = json.loads(sys.argv[2]), json.loads(sys.argv[3])
    import attention_kit.check as check
    from attention_kit.check import recorded
    assert check.__file__.startswith(sys.argv[1]), check.__file__
    found = []

    def walk(x, where):
        if isinstance(x, dict):
            for ex_id, d in (needles["dicts"] | needles["fixed_dicts"]).items():
                if all(k in x and (v is None or x[k] == v) for k, v in d.items()):
                    found.append((ex_id, where))
            for k, v in x.items():
                walk(k, where), walk(v, where)
        elif isinstance(x, (list, tuple)):
            for ex_id, vec in needles["vectors"].items():
                try:
                    if len(x) == len(vec) and all(abs(float(v) - w) < 1e-9 for v, w in zip(x, vec)):
                        found.append((ex_id, where))
                except (TypeError, ValueError, OverflowError):
                    pass
            for ex_id, lst in needles["lists"].items():
                try:
                    if [int(v) for v in x] == lst and all(float(v) == int(v) for v in x):
                        found.append((ex_id, where))
                except (TypeError, ValueError, OverflowError):
                    pass
            for v in x:
                walk(v, where)
        elif isinstance(x, float):
            for ex_id, f in needles["floats"].items():
                if abs(x - f) < 1e-9:
                    found.append((ex_id, where))
        elif isinstance(x, int) and not isinstance(x, bool):
            for ex_id, n in needles["ints"].items():
                if x == n:
                    found.append((ex_id, where))
        elif isinstance(x, str):
            for ex_id, t in needles["texts"].items():
                if t in x:
                    found.append((ex_id, where))
        elif hasattr(x, "tolist"):
            walk(x.tolist(), where)

    with open(recorded.STORE, "rb") as f:
        store = pickle.load(f)
    for key, value in store.items():
        walk(value, f"recorded.pkl[{key}]")
    raw = recorded.STORE.read_bytes()
    for ex_id, t in needles["texts"].items():
        if t.encode() in raw:
            found.append((ex_id, "recorded.pkl's bytes"))
    calls, refused = 0, []
    for info in pkgutil.iter_modules(check.__path__):
        m = importlib.import_module(f"attention_kit.check.{info.name}")
        for name, fn in vars(m).items():
            if callable(fn) and hasattr(fn, "recorded_key"):
                calls += 1
                try:
                    value = fn()
                except RuntimeError as exc:
                    assert "does not ship" in str(exc), exc
                    refused.append(fn.recorded_key)
                    continue
                walk(value, f"{info.name}.{name}()")
                walk(repr(value), f"repr({info.name}.{name}())")
    print(json.dumps({"found": found, "calls": calls, "refused": sorted(set(refused)),
                      "withheld": store.get("__withheld__"), "keys": sorted(store)}))
''')


def _look_inside(edition: Path, tables: list[str], tmp_path: Path) -> dict:
    run = subprocess.run([sys.executable, "-c", LOOK_INSIDE, str(edition), json.dumps(_needles()),
                          json.dumps(tables)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.splitlines()[-1])


def test_the_teacher_edition_finds_the_answers_the_student_edition_must_not_hold():
    """The search below is not blind: in the teacher's edition every needle is found in the
    tables the prediction checkers read (so finding none in the student edition means something)."""
    from attention_kit.check import recorded

    tables = _tables_read_by_predictions()
    assert all(tables.values()), tables  # each reads at least one table
    every = sorted({k for keys in tables.values() for k in keys})
    marked = recorded.recorded_functions()
    assert [k for k in every if not marked[k].answers] == [], "a prediction's table not marked answers=True"
    opened = {k: marked[k]().open() for k in every}
    needles = _needles()
    text = repr(opened)
    for ex_id, t in needles["texts"].items():
        assert t in text, ex_id
    for ex_id, lst in needles["lists"].items():
        assert any(str(lst)[1:-1] in repr(v) or str(tuple(lst))[1:-1] in repr(v) for v in opened.values()), ex_id


def test_the_fixed_answers_are_found_in_their_teacher_tables():
    """The needles of the fixed answers are not blind either: each is in its table, opened."""
    from attention_kit.check import backprop, general_cases, multi_head_count, self_attention_cases

    tables = [general_cases.softmax_table, self_attention_cases.output_row_table,
              multi_head_count.parameter_counts, backprop._bias_table]
    assert all(t.sealed and not t.answers for t in tables)  # sealed, and kept by PREDICTIONS=record
    text = repr([t().open() for t in tables])
    needles = _fixed_needles()
    for vec in needles["vectors"].values():
        assert all(repr(f)[:8] in text for f in vec), vec
    assert str(needles["ints"]["03.4"]) in text and "'right': 'b'" in text


def test_a_recorded_edition_ships_no_prediction_answer(record_edition, tmp_path):
    """HIGH in issue 45: ``make student PREDICTIONS=record`` shipped every prediction's table in
    recorded.pkl (``masks_positions._rows_table()['want']`` printed [3, 4, 5])."""
    tables = sorted({k for keys in _tables_read_by_predictions().values() for k in keys})
    seen = _look_inside(record_edition, tables, tmp_path)
    assert seen["found"] == [], seen["found"]
    assert not set(tables) & set(seen["keys"]), "a prediction's table in recorded.pkl"
    assert seen["withheld"] == tables and seen["refused"] == tables
    assert seen["calls"] > 40  # every table function of the student edition was called


def test_a_default_edition_holds_the_answers_sealed(tmp_path, tmp_path_factory):
    """Without PREDICTIONS=record the checker needs its answers: neither recorded.pkl nor a table
    function called without arguments shows them in plain form, and the checker still judges."""
    out = editions.check(editions.student_edition(tmp_path_factory))
    tables = sorted({k for keys in _tables_read_by_predictions().values() for k in keys})
    seen = _look_inside(out, tables, tmp_path)
    assert seen["found"] == [], seen["found"]
    assert seen["withheld"] is None and set(tables) <= set(seen["keys"]) and seen["refused"] == []
    judge = textwrap.dedent('''
        import sys
        sys.path.insert(0, sys.argv[1])
        from attention_kit.check import masks_positions as mp
        print(mp._rows_table())
        mp.future_unchanged([3, 4, 5]); mp.future_unchanged([4, 5])
    ''')
    run = subprocess.run([sys.executable, "-c", judge, str(out)], cwd=tmp_path, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    first, ok, hint = run.stdout.splitlines()[:3]
    assert first.startswith("<sealed table masks_positions._rows_table") and "3, 4" not in first
    assert ok.startswith("✓") and hint.startswith("✗") and "the edited token is a query too" in hint
