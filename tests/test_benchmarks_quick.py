"""Every benchmark of ``make bench`` still runs (issue 44): ``benchmarks/run.py --quick`` runs each
one's quick form (one short round at the smallest sizes, through the same code) and fails on an
error, a missing picture or a control that never redraws. Speed is never asserted: only that each
one ran and printed its figures. ``make bench-quick`` runs them (CI's ``.ci/run`` does, after
``make test``); ``make unit`` leaves out the tests marked ``bench``."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests" / "browser"))
import jlab  # noqa: E402
import run  # noqa: E402

pytestmark = pytest.mark.slow

# a line of each benchmark's figures: proof that it measured, whatever the numbers
FIGURES = {
    "attention-speed": r"ratio multi_head_attention / floor\(mha\): \d",
    "attention-at-scale": r"log-log slope of the peak memory",
    "train-speed": r"tiny LM \(notebook 06\).*\d+\.\d+ +\[",
    "grade-speed": r"\d+ exercises passed \(expected \d+\)",
    "grade-cost": r"45,000 notebooks x \d+\.\d+ s = [\d.]+ machine-hours",
    "widget-latency": r"naive: interact .* \d+\.\d",
    "every-control": r"all explorer presses +\d",
    "learner-order": r"all presses +\d",
    "latency-stages": r"interact baseline / v +\d",
    "hub-load": r"N=2: browser \d+ / \d+ \(\d+\), comm \d+ / \d+ \(\d+\) ms",
}
BROWSER = {"every-control", "learner-order", "latency-stages", "hub-load"}


def test_every_benchmark_has_a_quick_form_and_a_figures_line():
    assert set(run.QUICK) == set(run.BENCHMARKS) == set(FIGURES)


@pytest.mark.bench  # make bench-quick (.ci/run), not make unit: about 3 minutes
def test_every_quick_form_runs():
    names = [n for n in run.BENCHMARKS if n not in BROWSER or jlab.find_chromium()]
    out = ""
    for name in names:  # one at a time: a failure names its benchmark
        proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", name],
                              capture_output=True, text=True, timeout=600, cwd=ROOT)
        out += proc.stdout
        assert proc.returncode == 0, f"{name}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        assert re.search(FIGURES[name], proc.stdout), f"{name} printed no figures:\n{proc.stdout[-3000:]}"
        assert f"quick: {name} ok in" in proc.stdout
    print("\n".join(line for line in out.splitlines() if line.startswith("quick: ")))
