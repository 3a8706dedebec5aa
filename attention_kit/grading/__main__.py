"""``python -m attention_kit.grading SUBMISSIONS [--out grades]``: grade a whole class.

Runs the returned notebooks two at a time (``--workers``), shows a progress bar on stderr,
writes ``grades.csv``, ``feedback/<learner>.md`` and ``summary.md`` into ``--out``, and prints
the summary. A bad submission gets a clear row; it never stops the run. The exit status is 0
when the class was graded, 2 when there is nothing to grade.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from ..check import registry
from . import NotebookGrade
from .execute import Limits, grade_notebook, prepared
from .reports import ClassGrades, summary_markdown, summary_text, write_csv, write_feedback
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
    out = {}
    for path in folder.rglob("*"):
        if path.is_file() and ".ipynb_checkpoints" not in path.parts:
            st = path.stat()
            out[str(path.relative_to(folder))] = (st.st_size, st.st_mtime_ns)
    return out


def grade_class(submissions: Path, out: Path, *, limits: Limits | None = None, workers: int = 2,
                progress_stream=None) -> tuple[ClassGrades, str]:
    """Grade every notebook under ``submissions``; write the results into ``out``.

    Returns the grades and the summary text (also printed by :func:`main`).
    """
    submissions, out = Path(submissions), Path(out)
    limits = limits or Limits()
    course_files = {nb.number: nb.file for nb in registry.NOTEBOOKS}
    found = find_submissions(submissions, course_files)
    if not found.submissions:
        raise FileNotFoundError(f"no notebooks to grade in {submissions} (see the two layouts in "
                                "docs/teaching.md)")
    before = _snapshot(submissions)
    start = time.monotonic()
    bar = Progress(len(found.submissions), progress_stream)
    grades = []
    with prepared(limits) as (spec_dir, mpl_template), ThreadPoolExecutor(max(1, workers)) as pool:
        futures = {pool.submit(grade_notebook, s.learner, s.number, s.path, spec_dir=spec_dir,
                               limits=limits, mpl_template=mpl_template,
                               source=str(s.path.relative_to(submissions))): s
                   for s in found.submissions}
        for future in as_completed(futures):
            sub = futures[future]
            try:
                grades.append(future.result())
            except Exception as exc:  # a bug in the grader: say so in the row, grade the rest
                grades.append(NotebookGrade(sub.learner, sub.number, str(sub.path), [], [
                    f"the grader failed on {sub.path.name}: {type(exc).__name__}: {exc}"]))
            bar.step(f"{sub.learner} {sub.number}")
    elapsed = time.monotonic() - start
    after = _snapshot(submissions)
    changed = sorted({k for k in before.keys() | after.keys() if before.get(k) != after.get(k)})
    result = ClassGrades(found.learners, grades)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(result, out / "grades.csv")
    feedback = write_feedback(result, out / "feedback")
    (out / "summary.md").write_text(summary_markdown(result), encoding="utf-8")
    width = max(100, shutil.get_terminal_size((120, 24)).columns)
    lines = [f"Graded {len(found.learners)} learners, {len(found.submissions)} notebooks in "
             f"{elapsed:.0f} s ({workers} at a time).", "", summary_text(result, width)]
    if found.ignored:
        lines += ["", "Not graded:"] + [f"  {path}: {why}" for path, why in found.ignored]
    if changed:
        lines += ["", "WARNING: files in the submissions folder changed while grading (a notebook "
                      "wrote outside its working copy?):"] + [f"  {p}" for p in changed]
    lines += ["", f"Wrote {out / 'grades.csv'}, {len(feedback)} feedback files in "
                  f"{out / 'feedback'}, and {out / 'summary.md'}."]
    return result, "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attention_kit.grading",
                                     description="Grade a class's returned notebooks with the "
                                                 "course's exercise checkers.")
    parser.add_argument("submissions", type=Path,
                        help="folder of returned notebooks: SUBMISSIONS/<learner>/NN_topic.ipynb "
                             "or SUBMISSIONS/<learner>__NN_topic.ipynb")
    parser.add_argument("--out", type=Path, default=Path("grades"),
                        help="where grades.csv, feedback/ and summary.md go (default: grades)")
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
        _, summary = grade_class(args.submissions, args.out, limits=limits, workers=args.workers)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
