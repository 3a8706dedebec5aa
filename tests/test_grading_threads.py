"""The grader never builds syntax trees in two threads at once (issue 44).

CPython 3.10/3.11 share the AST constructor's recursion depth between threads
(python/cpython#106905): a tree built while another thread builds one can fail with
``SystemError: AST constructor recursion depth mismatch``, and an honest learner got "could not
run". The grader now grades each notebook in a worker process and builds every tree on that
process's main thread (``attention_kit/grading/workers.py``).

``test_stress`` grades a class of honest learners in five styles, round after round, while other
threads of the grading process (as pytest's assertion rewriting or a Jupyter kernel's would)
parse a large module in a loop and make cyclic garbage whose finalizers run Python code, which is
what lets the collector switch threads in the middle of a parse. No "could not run" may appear,
and ``AK_PARSE_TRACE`` records the process and thread of every ``parse_cell`` meanwhile: every
one must be on its process's main thread, and no two may overlap in one process.

The full stress run of the issue (20 rounds of 10 learners, 4 at a time) is this file as a script:
``.venv/bin/python tests/test_grading_threads.py --rounds 20``; the test runs one round.
"""

from __future__ import annotations

import argparse
import ast
import collections
import gc
import inspect
import os
import sys
import tempfile
import threading
import time
import typing
from pathlib import Path

import nbformat
import pytest

from attention_kit.check import registry
from attention_kit.grading import COULD_NOT_RUN

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import class_samples  # noqa: E402
import trust_class  # noqa: E402

pytestmark = pytest.mark.slow  # grades notebooks in kernels


def honest_class(folder: Path, student: Path, learners: int, tag: str = "") -> None:
    """``learners`` honest learners' notebook 02 in ``folder`` (learner k writes style k % 5 of
    each exercise), cut to the imports, the exercises and the cells that define what they
    use: a learner may delete the rest."""
    fresh = nbformat.read(student / registry.notebook("02").file, as_version=4)
    styles = {e: s for e, s in {**trust_class.HONEST, **trust_class.VALUES}.items() if e.startswith("02")}
    entry = registry.notebook("02")
    for k in range(learners):
        nb = class_samples.with_own_answers(fresh, "02")
        for ex_id, options in styles.items():
            class_samples.exercise_cell(nb, "02", ex_id).source = options[k % len(options)]
        code = [c for c in nb.cells if c.cell_type == "code"]
        keep = {id(code[0])} | {id(code[i]) for ex_id, _ in entry.numbered()
                                for i in registry.answer_cells([c.source for c in code], entry)[ex_id]}
        used = {n.id for c in code if id(c) in keep for n in ast.walk(ast.parse(c.source))
                if isinstance(n, ast.Name)}
        keep |= {id(c) for c in code if registry.bound_names(c.source) & used}  # the helpers they call
        nb.cells = [c for c in nb.cells if c.cell_type != "code" or id(c) in keep]
        path = folder / f"learner{tag}{k:02d}" / entry.file
        path.parent.mkdir(parents=True)
        nbformat.write(nb, path)


class _Cycle:
    """Cyclic garbage whose finalizer runs Python code (the collector runs it in whichever thread
    allocated when it started, in the middle of that thread's parse)."""

    def __init__(self):
        self.me = self

    def __del__(self):
        sum(range(20))


class Noise:
    """Threads that parse a large module in a loop and make cyclic garbage, until stopped."""

    SOURCE = inspect.getsource(typing)

    def __init__(self, threads: int = 4):
        self.stop = threading.Event()
        self.parses = self.errors = 0
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(threads)]

    def _run(self) -> None:
        while not self.stop.is_set():
            for _ in range(200):
                _Cycle()
            try:
                ast.parse(self.SOURCE)
                self.parses += 1
            except SystemError:  # the noise's own trees may break too: not what is tested
                self.errors += 1

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join()
        # the garbage left is collected here, inside the test, not when the pytest-xdist worker
        # exits: execnet sends a worker still busy 5 s after its shutdown a SIGINT, which landed
        # in this finalizer ("Exception ignored in: _Cycle.__del__ ... KeyboardInterrupt")
        start = time.monotonic()
        gc.collect()
        self.collect_s = time.monotonic() - start


def _parses_off_main_or_overlapping(trace: Path) -> list[str]:
    """Every parse of the trace not on its process's main thread, or overlapping another
    thread's parse in the same process."""
    rows = [line.split() for line in trace.read_text().splitlines()] if trace.exists() else []
    problems = [f"process {r[0]}: a syntax tree built off the main thread (thread {r[1]})"
                for r in rows if r[2] != "1"]
    by_pid = collections.defaultdict(list)
    for pid, thread, _, start, end in rows:
        by_pid[pid].append((float(start), float(end), thread))
    for pid, spans in by_pid.items():
        spans.sort()
        problems += [f"process {pid}: threads {t0} and {t1} built trees at once"
                     for (_, e0, t0), (s1, _, t1) in zip(spans, spans[1:], strict=False)
                     if t0 != t1 and s1 < e0]
    return problems


def stress(rounds: int, learners: int, workers: int, work: Path, out=print, tmp_path_factory=None) -> dict:
    """Grade ``rounds`` classes of ``learners`` honest learners, ``workers`` at a time, beside
    the noise threads, recording every parse_cell; return the counts."""
    import editions
    import make_student

    from attention_kit.grading.__main__ import grade_class
    from attention_kit.grading.execute import Limits

    trace = work / "parses.txt"
    os.environ["AK_PARSE_TRACE"] = str(trace)  # the workers read it when they start
    registry._TRACE = str(trace)  # this process read it at import
    student = work / "student"
    if tmp_path_factory is None:  # as a script
        assert make_student.main(["-o", str(student)]) == 0
    else:
        editions.check(editions.student_edition(tmp_path_factory, into=student))
    counts = collections.Counter()
    for r in range(rounds):  # the classes are written first, without the noise
        (work / f"round{r}").mkdir()
        honest_class(work / f"round{r}", student, learners)
    try:
        with Noise() as noise:
            for r in range(rounds):
                subs = work / f"round{r}"
                start = time.monotonic()
                result, _ = grade_class(subs, work / f"grades{r}", workers=workers,
                                        limits=Limits(cell_s=60, notebook_s=240, exercise_s=20))
                verdicts = [(key[0], g) for key, nb in result.by_key.items() for g in nb.exercises]
                bad = [(who, g.id, g.message) for who, g in verdicts if g.status == COULD_NOT_RUN]
                passed = sum(g.status == "passed" for _, g in verdicts)
                counts.update({"notebooks": len(result.by_key), "exercises": len(verdicts),
                               "passed": passed, "could not run": len(bad)})
                out(f"round {r + 1}/{rounds}: {len(result.by_key)} notebooks in "
                    f"{time.monotonic() - start:.0f} s, {passed} of {len(verdicts)} exercises "
                    f"passed, {len(bad)} could not run" + (f": {bad[0]}" if bad else ""))
        counts.update({"noise parses": noise.parses, "noise errors": noise.errors,
                       "final collection s": round(noise.collect_s, 2)})
    finally:
        del os.environ["AK_PARSE_TRACE"]
        registry._TRACE = None
    lines = trace.read_text().splitlines() if trace.exists() else []
    problems = _parses_off_main_or_overlapping(trace)
    counts.update({"parses": len(lines), "processes": len({ln.split()[0] for ln in lines}),
                   "parses off a main thread or overlapping": len(problems)})
    if problems:
        out("\n".join(problems[:5]))
    return dict(counts)


def test_stress(tmp_path, tmp_path_factory):
    """One round of 10 honest learners, 4 at a time, beside the noise (STRESS_ROUNDS=n: more)."""
    rounds = int(os.environ.get("STRESS_ROUNDS", 1))
    counts = stress(rounds, 10, 4, tmp_path, tmp_path_factory=tmp_path_factory)
    assert counts["notebooks"] == 10 * rounds
    assert counts["could not run"] == 0 and counts["passed"] == counts["exercises"], counts
    assert counts["noise parses"] > 0, counts  # the noise ran beside the grader
    assert counts["processes"] >= 3, counts  # the notebooks were graded in worker processes
    assert counts["parses off a main thread or overlapping"] == 0, counts


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--learners", type=int, default=10)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ak-stress-") as tmp:
        counts = stress(args.rounds, args.learners, args.workers, Path(tmp))
    print(counts)
    sys.exit(1 if counts["could not run"] or counts["parses off a main thread or overlapping"] else 0)
