"""A student edition built with ``--record-predictions`` gives no verdict on a prediction in class.

Its prediction checkers record the learner's answer and nothing more (tools/make_student.py,
``record_only_checkers``): the ways round it that a learner could try (``__wrapped__``, the
closure, ``graded_hints()``, pointing the settings at another file and reloading) are tried in a
subprocess that runs the student copy of the package, and none prints a ✓, a ✗ or an answer.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_student  # noqa: E402

BYPASSES = textwrap.dedent('''
    import importlib, inspect, sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    import attention_kit
    from attention_kit import check
    assert attention_kit.__file__.startswith(sys.argv[1]), attention_kit.__file__
    from attention_kit.check import backprop, general, heads, long_context, masks_positions, tiny_lm

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
        modules = (backprop, general, heads, long_context, masks_positions, tiny_lm)
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


def test_no_way_round_recorded_predictions_in_the_student_edition(tmp_path):
    out = tmp_path / "s"
    assert make_student.main(["-o", str(out), "--record-predictions"]) == 0
    run = subprocess.run([sys.executable, "-c", BYPASSES, str(out)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "checkers: 8"
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
