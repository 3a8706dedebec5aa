"""``python -m attention_kit.grading SUBMISSIONS [--out grades] [--notebooks 02,04]``: grade a class.

Grades the notebooks that were set (``--notebooks``; by default those found in the
submissions), runs them two at a time (``--workers``), shows a progress bar on stderr, writes
``grades.csv``, ``feedback/<learner>.md``, ``summary.md``, ``canvas.csv``, ``moodle.csv`` and
``not_graded.csv`` into ``--out``, and prints the summary. A bad submission gets a clear row; it
never stops the run. The exit status is 0 when the class was graded, 2 when there is nothing to
grade.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

import nbformat

from ..check import registry
from . import NotebookGrade
from .execute import Limits, grade_notebook, prepared
from .reports import (
    ClassGrades,
    summary_markdown,
    summary_text,
    write_canvas,
    write_csv,
    write_feedback,
    write_moodle,
)
from .similarity import flag_similar
from .solutions import NOTEBOOK_DIR
from .submissions import find_submissions

__all__ = ["main", "grade_class"]


class Progress:
    """A plain-text progress bar on stderr (one line per notebook when stderr is not a terminal)."""

    def __init__(self, total: int, stream=None):
        self.total, self.done, self.start = total, 0, time.monotonic()
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def step(self, label: str) -> None:
        self.done += 1
        width = 30
        filled = round(width * self.done / max(self.total, 1))
        text = (f"grading [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                f"{time.monotonic() - self.start:5.0f} s  {label}")
        if self.tty:
            self.stream.write("\r" + text[:118].ljust(118))
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    if folder.is_file():
        st = folder.stat()
        return {folder.name: (st.st_size, st.st_mtime_ns)}
    out = {}
    for path in folder.rglob("*"):
        if path.is_file() and ".ipynb_checkpoints" not in path.parts:
            st = path.stat()
            out[str(path.relative_to(folder))] = (st.st_size, st.st_mtime_ns)
    return out


def _code_sources(path: Path) -> list[str]:
    """The code cells' sources of a returned notebook ([] when it cannot be read)."""
    try:
        nb = nbformat.read(path, as_version=4)
        return [c.source for c in nb.cells if c.cell_type == "code"]
    except Exception:  # not a notebook: its row already says so
        return []


def _teacher_sources(numbers: list[str]) -> dict[str, list[str]]:
    out = {}
    for number in numbers:
        path = NOTEBOOK_DIR / registry.notebook(number).file
        if path.is_file():
            out[number] = _code_sources(path)
    return out


def parse_notebooks(text: str | None) -> list[str] | None:
    """``"2,04"`` -> ``["02", "04"]``; None or empty: None (take them from the submissions).
    ValueError for a notebook the course does not have."""
    if not text or not text.strip():
        return None
    known = [nb.number for nb in registry.NOTEBOOKS]
    out = []
    for part in text.replace(" ", ",").split(","):
        if not part:
            continue
        number = f"{int(part):02d}" if part.isdigit() else part
        if number not in known:
            raise ValueError(f"notebook {part!r} is not part of this course (it has {', '.join(known)})")
        out.append(number)
    return sorted(set(out))


def grade_class(submissions: Path, out: Path, *, limits: Limits | None = None, workers: int = 2,
                progress_stream=None, notebooks: list[str] | None = None,
                assignment: str | None = None, seed: str | None = "0",
                late_penalty: float = 0.0) -> tuple[ClassGrades, str]:
    """Grade every notebook under ``submissions`` (a folder or a zip); write the results into ``out``.

    ``notebooks``: the numbers of the notebooks that were set (``["02", "04"]``); the others'
    submissions are listed as not graded. None: the notebooks of the course that were returned.
    ``assignment``: its name in the Canvas and Moodle files. ``seed``: the teacher's seed of the
    hidden cases (keep it secret; None tries none). ``late_penalty``: percent of a late notebook's
    points taken off. Returns the grades and the summary text (also printed by :func:`main`).
    """
    submissions, out = Path(submissions), Path(out)
    limits = limits or Limits()
    course_files = {nb.number: nb.file for nb in registry.NOTEBOOKS}
    with tempfile.TemporaryDirectory(prefix="ak-grade-unzip-") as unpacked:
        found = find_submissions(submissions, course_files, unpack_to=Path(unpacked))
        known = set(course_files)
        if notebooks is None:
            notebooks = sorted({s.number for s in found.submissions} & known) or sorted(known)
        graded = [s for s in found.submissions if s.number in notebooks or s.number not in known]
        for s in found.submissions:
            if s not in graded:
                found.ignored.append((s.source, f"notebook {s.number} was not set (notebooks "
                                                f"graded: {', '.join(notebooks)})"))
        if not graded:
            raise FileNotFoundError(f"no notebooks to grade in {submissions} (see the layouts in "
                                    "docs/teaching.md)")
        before = _snapshot(submissions)
        start = time.monotonic()
        bar = Progress(len(graded), progress_stream)
        grades = []
        with prepared(limits) as (spec_dir, mpl_template), ThreadPoolExecutor(max(1, workers)) as pool:
            futures = {pool.submit(grade_notebook, s.learner, s.number, s.path, spec_dir=spec_dir,
                                   limits=limits, mpl_template=mpl_template, source=s.source,
                                   seed=seed): s
                       for s in graded}
            for future in as_completed(futures):
                sub = futures[future]
                try:
                    grades.append(future.result())
                    grades[-1].late = sub.late
                except Exception as exc:  # a bug in the grader: say so in the row, grade the rest
                    grades.append(NotebookGrade(sub.learner, sub.number, sub.source, [], [
                        f"the grader failed on {sub.path.name}: {type(exc).__name__}: {exc}"]))
                bar.step(f"{sub.learner} {sub.number}")
        elapsed = time.monotonic() - start
        after = _snapshot(submissions)
        sources = {(s.learner, s.number): _code_sources(s.path) for s in graded}
    changed = sorted({k for k in before.keys() | after.keys() if before.get(k) != after.get(k)})
    result = ClassGrades(found.learners, grades, notebooks=notebooks, info=found.info,
                         assignment=assignment, late_penalty=late_penalty, not_graded=found.ignored)
    flag_similar(result, sources, _teacher_sources(notebooks))
    out.mkdir(parents=True, exist_ok=True)
    write_csv(result, out / "grades.csv")
    feedback = write_feedback(result, out / "feedback")
    (out / "summary.md").write_text(summary_markdown(result), encoding="utf-8")
    no_canvas = write_canvas(result, out / "canvas.csv")
    no_moodle = write_moodle(result, out / "moodle.csv")
    with open(out / "not_graded.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["file", "why it was not graded"])
        writer.writerows(found.ignored)
    width = max(100, shutil.get_terminal_size((120, 24)).columns)
    n_nb = len(result.notebooks)
    lines = [f"Graded {len(found.learners)} learners, {len(graded)} notebooks in "
             f"{elapsed:.0f} s ({workers} at a time). Notebook{'s' if n_nb > 1 else ''} set: "
             f"{', '.join(nb.number for nb in result.notebooks)} ({result.max_points} points); "
             f"the assignment is \"{result.assignment}\" in canvas.csv.", "", summary_text(result, width)]
    if found.ignored:
        lines += ["", "Not graded (also in not_graded.csv):"] + [f"  {path}: {why}" for path, why in found.ignored]
    if changed:
        lines += ["", "WARNING: files in the submissions folder changed while grading (a notebook "
                      "wrote outside its working copy?):"] + [f"  {p}" for p in changed]
    n = len(result.learners)
    lms = []
    if no_canvas < n:
        lms.append(f"canvas.csv ({n - no_canvas} of {n} learners with a Canvas id)")
    if no_moodle < n:
        lms.append(f"moodle.csv ({n - no_moodle} of {n} learners with a Moodle participant number)")
    lines += ["", f"Wrote {out / 'grades.csv'}, {len(feedback)} feedback files in "
                  f"{out / 'feedback'}, {out / 'summary.md'}, and the LMS imports canvas.csv and "
                  "moodle.csv" + (f": {'; '.join(lms)}." if lms else
                                  " (no Canvas or Moodle ids in these submissions' names: match "
                                  "the learners by name).")]
    return result, "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attention_kit.grading",
                                     description="Grade a class's returned notebooks with the "
                                                 "course's exercise checkers.")
    parser.add_argument("submissions", type=Path,
                        help="folder (or zip) of returned notebooks: SUBMISSIONS/<learner>/NN_topic.ipynb, "
                             "SUBMISSIONS/<learner>__NN_topic.ipynb, or a Canvas or Moodle download")
    parser.add_argument("--out", type=Path, default=Path("grades"),
                        help="where grades.csv, feedback/ and summary.md go (default: grades)")
    parser.add_argument("--notebooks", default="",
                        help="the notebooks that were set, e.g. 02,04 (default: those returned)")
    parser.add_argument("--assignment", default=None,
                        help="the assignment's name in canvas.csv and the feedback (as in the LMS)")
    parser.add_argument("--seed", default="0",
                        help="the teacher's seed of the hidden cases the grader tries beyond the "
                             "notebook's (keep it to yourself; the same seed regrades the same)")
    parser.add_argument("--late-penalty", type=float, default=0.0,
                        help="percent of a late notebook's points taken off (default 0: late "
                             "submissions are only marked)")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1),
                        help="notebooks run at the same time (default: 2)")
    d = Limits()
    parser.add_argument("--cell-timeout", type=float, default=d.cell_s,
                        help=f"seconds per cell before it is interrupted (default {d.cell_s:g})")
    parser.add_argument("--notebook-timeout", type=float, default=d.notebook_s,
                        help=f"seconds per notebook before its kernel is killed (default {d.notebook_s:g})")
    parser.add_argument("--exercise-timeout", type=float, default=d.exercise_s,
                        help=f"seconds for the checker of one exercise (default {d.exercise_s:g})")
    parser.add_argument("--memory-mb", type=int, default=d.memory_mb,
                        help=f"address-space limit of each kernel in MB (default {d.memory_mb})")
    args = parser.parse_args(argv)
    limits = Limits(cell_s=args.cell_timeout, notebook_s=args.notebook_timeout,
                    exercise_s=args.exercise_timeout, memory_mb=args.memory_mb)
    try:
        notebooks = parse_notebooks(args.notebooks)
        _, summary = grade_class(args.submissions, args.out, limits=limits, workers=args.workers,
                                 notebooks=notebooks, assignment=args.assignment, seed=args.seed,
                                 late_penalty=args.late_penalty)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
