"""How long `make grade` takes: a class of 30 learners x every notebook of the course on this
machine, and one notebook graded against a plain `jupyter nbconvert --execute` of it.

    python benchmarks/grade_speed.py                  # 30 learners, 2 workers, 3 repeats
    python benchmarks/grade_speed.py --learners 0     # only the single-notebook comparison
    python benchmarks/grade_speed.py --notebooks 01,02,03,04   # the class of issue 16

The class is built from the student copies (`make student`): every other learner solved every
exercise in its own cells (the worked solution's code as their own answer, `tools/class_samples.py`,
not the solution cell, which the grader would flag as a copy), the others returned the copies
untouched. Times are wall-clock seconds
(medians where repeated), each including the start of a kernel. The grader runs notebooks with
matplotlib's Agg backend (no figure is rendered to PNG, since no one looks at it), so the table
also times nbconvert with MPLBACKEND=Agg: that column separates the cost of the figures from
the grader's own work (its limits, the grading cell). The load average is printed before and
after: on a shared machine other work slows every column, so compare them within one run.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import class_samples  # noqa: E402
import make_student  # noqa: E402

from attention_kit.check import registry  # noqa: E402
from attention_kit.grading import PASSED  # noqa: E402
from attention_kit.grading.__main__ import grade_class  # noqa: E402
from attention_kit.grading.execute import Limits, grade_notebook, prepared  # noqa: E402


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def build_class(folder: Path, n_learners: int, notebooks) -> dict[str, Path]:
    """``folder/learnerNN/NN_topic.ipynb`` for ``n_learners``; returns the solved copy of each
    notebook (for the single-notebook comparison)."""
    student = folder / "student"
    with contextlib.redirect_stdout(io.StringIO()):
        make_student.main(["-o", str(student)])
    solved = {}
    for nb in notebooks:
        fresh = nbformat.read(student / nb.file, as_version=4)
        solved[nb.number] = folder / "solved" / nb.file
        solved[nb.number].parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(class_samples.with_own_answers(fresh, nb.number), solved[nb.number])
        for k in range(n_learners):
            dst = folder / "class" / f"learner{k:02d}" / nb.file
            dst.parent.mkdir(parents=True, exist_ok=True)
            src = solved[nb.number] if k % 2 == 0 else student / nb.file
            dst.write_bytes(src.read_bytes())
    return solved


def nbconvert_seconds(path: Path, workdir: Path, *, agg: bool = False) -> float:
    """One `jupyter nbconvert --execute` of ``path``; ``agg``: with MPLBACKEND=Agg, as the grader
    runs notebooks (figures are drawn but not rendered to PNG for the output)."""
    env = {**os.environ, "MPLBACKEND": "Agg"} if agg else None
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                    "--output-dir", str(workdir), "--ExecutePreprocessor.timeout=300",
                    "--ExecutePreprocessor.store_widget_state=False", str(path)],
                   check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=30, help="0: only the single notebooks")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--notebooks", default="",
                        help="comma-separated notebook numbers, e.g. 01,02,03,04 (default: all)")
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)
    limits = Limits()
    print(f"grade_speed: {os.cpu_count()} cores, load average (1/5/15 min) {_load()} at the start")
    with tempfile.TemporaryDirectory(prefix="grade-bench-") as tmp:
        tmp = Path(tmp)
        wanted = set(args.notebooks.split(",")) if args.notebooks else None
        notebooks = [nb for nb in registry.NOTEBOOKS if wanted is None or nb.number in wanted]
        solved = build_class(tmp, args.learners, notebooks)

        print(f"\none notebook, solved, run alone (median of {args.repeats}, seconds):")
        print(f"{'notebook':<34} {'nbconvert':>9} {'nbconvert+Agg':>13} {'graded':>7} "
              f"{'graded/nbconvert':>16}", flush=True)
        with prepared(limits) as (spec_dir, template):
            for nb in notebooks:
                plain, agg, graded = [], [], []
                for _ in range(args.repeats):  # interleaved, so that load drifts hit all three
                    plain.append(nbconvert_seconds(solved[nb.number], tmp / "out"))
                    agg.append(nbconvert_seconds(solved[nb.number], tmp / "out", agg=True))
                    g = grade_notebook("bench", nb.number, solved[nb.number], spec_dir=spec_dir,
                                       limits=limits, mpl_template=template)
                    assert all(e.status == PASSED for e in g.exercises), g
                    graded.append(g.seconds)
                p, a, q = (statistics.median(x) for x in (plain, agg, graded))
                print(f"{nb.file:<34} {p:>9.1f} {a:>13.1f} {q:>7.1f} {q / p:>16.2f}", flush=True)
        print(f"load average {_load()} after the single runs")
        if args.learners == 0:
            return 0

        n_nb = args.learners * len(notebooks)
        print(f"\nthe class: {args.learners} learners x {len(notebooks)} notebooks = "
              f"{n_nb} notebooks, {args.workers} at a time; load average {_load()} before")
        start = time.perf_counter()
        result, _ = grade_class(tmp / "class", tmp / "grades", limits=limits, workers=args.workers,
                                progress_stream=open(os.devnull, "w"))
        wall = time.perf_counter() - start
        per = [g.seconds for g in result.by_key.values()]
        passed = sum(g.status == PASSED for learner in result.learners for g in result.row(learner))
        print(f"  wall time {wall:.0f} s ({wall / 60:.1f} min), {wall / n_nb:.2f} s per notebook; "
              f"each notebook took a median {statistics.median(per):.1f} s "
              f"(max {max(per):.1f} s) in its worker")
        graded_nbs = [g for g in result.by_key.values() if g.requests]
        checks = [g.check_seconds for g in graded_nbs]
        reqs = [g.requests for g in graded_nbs]
        if checks:
            print(f"  checking (in the grader's process, calls crossing to the kernel): median "
                  f"{statistics.median(checks):.2f} s per notebook, {statistics.median(reqs):.0f} requests, "
                  f"{1000 * sum(checks) / max(sum(reqs), 1):.1f} ms per request")
        expected = (args.learners + 1) // 2 * sum(len(nb.exercises) for nb in notebooks)
        print(f"  {passed} exercises passed (expected {expected}); load average {_load()} after")
    return 0 if passed == expected else 1  # a grader that fails a solved exercise is broken


if __name__ == "__main__":
    sys.exit(main())
