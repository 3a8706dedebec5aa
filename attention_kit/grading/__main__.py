"""``python -m attention_kit.grading SUBMISSIONS [--out grades] [--notebooks 02,04]``: grade a class.

Grades the notebooks that were set (``--notebooks``; by default those found in the
submissions), or only the exercises set, with weights (``--exercises 02.1-02.5,02.6:0.5,04``),
runs them two at a time (``--workers``), each in a process of its own (``workers.py``), shows a progress bar on stderr, writes ``grades.csv``,
``feedback/<learner>.md``, ``summary.md``, ``canvas.csv``, ``canvas_reupload.zip``,
``moodle.csv``, ``moodle_feedback.zip``, ``not_graded.csv`` and ``grades.json`` (the state a
regrade needs) into ``--out``, and prints the summary. ``--learners alice,bob`` regrades only
these learners into an existing grades folder, each matched to its class (``settings.py``,
``match_regrade``: they keep their LMS ids; a name matching nobody or several stops it, unless
``--add-learners`` for a new one): their notebooks returned this time replace their old
verdicts, every other row stays, and ``canvas_reupload_regraded.zip`` holds their feedback only.
``--shard i/N`` grades only the learners of shard i of N (``shards.py``), and
``python -m attention_kit.grading merge grades-1 ... grades-N --out grades`` merges the shards'
folders into the files of one run. A bad submission gets a clear row; it never stops the run.
The exit status is 0 when the class was graded, 2 when there is nothing to grade or an option is
wrong (or the shards do not merge).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import nbformat

from ..check import registry
from ..i18n import _
from . import NotebookGrade
from .class_grades import carries_late, grading_time
from .execute import Limits, grade_notebook, prepared
from .output import lms_lines, state_extra, write_class
from .reports import STATE_FILE, ClassGrades, load_state, seed_digest, summary_text
from .settings import (  # noqa: F401  (where they were before)
    DEFAULT_SEED,
    DEFAULTS,
    match_regrade,
    parse_exercises,
    parse_learners,
    parse_notebooks,
    resolve_learners,
    result_info,
    seed_mismatch,
    settle,
)
from .shards import Shard, merge_main, parse_shard, shard_learners
from .similarity import class_prints, note_similar, similar_in_prints
from .solutions import NOTEBOOK_DIR
from .submissions import find_submissions
from .workers import grade_in_processes, in_process

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
        text = _("grading [{bar}] {done}/{total} {seconds:5.0f} s  {label}").format(
            bar="#" * filled + "." * (width - filled), done=self.done, total=self.total,
            seconds=time.monotonic() - self.start, label=label)
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


def grade_class(submissions: Path, out: Path, *, limits: Limits | None = None, workers: int = 2,
                progress_stream=None, notebooks: list[str] | None = None,
                assignment: str | None = None, seed: str | None = "0",
                late_penalty: float | None = None, exercises: dict[str, float] | None = None,
                learners: list[str] | None = None, moodle_max: float | None = None,
                moodle_headers: str | None = None, canvas_points: float | None = None,
                new_settings: bool = False, add_learners: bool = False,
                shard: Shard | None = None, seed_given: bool = True,
                late: list[str] | None = None) -> tuple[ClassGrades, str]:
    """Grade every notebook under ``submissions`` (a folder or a zip); write the results into ``out``.

    ``notebooks``: the numbers of the notebooks that were set (``["02", "04"]``); the others'
    submissions are listed as not graded. None: the notebooks of the course that were returned.
    ``exercises``: ``{exercise id: weight}`` (:func:`parse_exercises`), the exercises set; their
    notebooks are the notebooks set. ``learners``: regrade only these (their ids, or names only
    one learner has) into the grades already in ``out`` (its ``grades.json``), matched to its
    class (a file in a plain folder takes the class learner's identity and ids; a name that
    matches nobody there stops the regrade unless ``add_learners``), keeping everything else, the settings included (:func:`settle`: a setting given that differs is an error unless
    ``new_settings``, which applies the new ones to the whole class). ``assignment``: its name in the
    Canvas and Moodle files. ``seed``: the teacher's seed of the hidden cases (keep it secret;
    None tries none). ``late_penalty``: percent of a late notebook's points taken off (default 0).
    ``moodle_max``, ``moodle_headers``, ``canvas_points``: the Moodle assignment's maximum
    grade (default 100), the language of its worksheet (default en), the Canvas assignment's
    points possible (default: the exercises' points). Returns the grades and the summary text
    (also printed by :func:`main`). ``shard``: grade only the learners of this shard of the
    class (``shards.py``; its grades folder is merged with the others' by ``merge``).
    ``seed_given``: False when the teacher gave no seed (``seed`` is then :data:`DEFAULT_SEED`):
    a regrade of a class graded with a seed says the seed is missing. ``late``: learners whose
    notebooks of this run are late (ids or names, as ``learners``): a Moodle download or a plain
    folder carries no late mark (Canvas's ``LATE_`` does).
    """
    submissions, out = Path(submissions), Path(out)
    limits = limits or Limits()
    grading_time()  # a SOURCE_DATE_EPOCH that is not a time stops the run before it grades
    if shard is not None and learners is not None:
        raise ValueError(_("give --shard or --learners, not both: regrade learners into the merged "
                           "grades folder, or grade their shard again"))
    course_files = {nb.number: nb.file for nb in registry.NOTEBOOKS}
    previous = old_settings = None
    if exercises is None and notebooks is not None:
        exercises = {e: 1.0 for nb in notebooks for e, _ in registry.notebook(nb).numbered()}
    if learners is not None:
        state_path = out / STATE_FILE
        if not state_path.is_file():
            raise FileNotFoundError(_("{path} not found: regrading a few learners needs the grades "
                                      "folder of a whole class graded with this grader").format(path=state_path))
        previous, state = load_state(state_path)
        if state.get("shard"):
            raise ValueError(_("{out} holds shard {index}/{count} of a class: merge the shards first, "
                               "then regrade into the merged folder (or grade the shard again)").format(
                out=out, index=state["shard"]["index"], count=state["shard"]["count"]))
        old_settings = {"exercises": previous.weights, "late_penalty": previous.late_penalty,
                        "assignment": previous.assignment, **state.get("settings", {})}
        old_settings["exercises"] = previous.weights
        if state["seed"] != seed_digest(seed):
            raise ValueError(seed_mismatch(out, state["seed"], seed, seed_given))
    settings = settle({"exercises": exercises, "late_penalty": late_penalty, "moodle_max": moodle_max,
                       "canvas_points": canvas_points, "moodle_headers": moodle_headers,
                       "assignment": assignment}, old_settings, new_settings)
    if previous is not None and settings["exercises"] != previous.weights and \
            {e.split(".")[0] for e in settings["exercises"]} != {nb.number for nb in previous.notebooks}:
        raise ValueError(_("the class in {out} was graded on notebooks {notebooks}: regrade the whole "
                           "class (without LEARNERS=) to set other notebooks").format(
            out=out, notebooks=", ".join(nb.number for nb in previous.notebooks)))
    exercises, late_penalty, assignment = settings["exercises"], settings["late_penalty"], settings["assignment"]
    moodle_max, moodle_headers, canvas_points = (settings["moodle_max"], settings["moodle_headers"],
                                                 settings["canvas_points"])
    if exercises is not None:
        notebooks = sorted({e.split(".")[0] for e in exercises})
    with tempfile.TemporaryDirectory(prefix="ak-grade-unzip-") as unpacked:
        found = find_submissions(submissions, course_files, unpack_to=Path(unpacked))
        known = set(course_files)
        if learners is not None:  # matched to the graded class: its learners keep their ids
            known_keys, added_keys = match_regrade(learners, previous.info, found, add_learners)
            learners = known_keys + added_keys
        if notebooks is None:
            notebooks = sorted({s.number for s in found.submissions} & known) or sorted(known)
        graded = [s for s in found.submissions if s.number in notebooks or s.number not in known]
        for s in found.submissions:
            if s not in graded:
                found.ignored.append((s.source, _("notebook {number} was not set (notebooks graded: "
                                                  "{notebooks})").format(number=s.number,
                                                                         notebooks=", ".join(notebooks))))
        if not graded:
            raise FileNotFoundError(_("no notebooks to grade in {submissions} (see the layouts in "
                                      "docs/teaching.md)").format(submissions=submissions))
        if late is not None:  # named late by the teacher (the LMS's files may carry no late mark)
            late_keys = set(resolve_learners(late, {k: found.info[k] for k in {s.learner for s in graded}}))
            graded = [replace(s, late=True) if s.learner in late_keys else s for s in graded]
        class_learners = list(found.learners)
        if shard is not None:  # this shard's learners only; the class's files not graded all stay
            mine = set(shard_learners(found.info, shard))
            graded = [s for s in graded if s.learner in mine]
            found.learners = [ln for ln in found.learners if ln in mine]
        before = _snapshot(submissions)
        out_before = _snapshot(out) if out.is_dir() else {}
        start = time.monotonic()
        bar = Progress(len(graded), progress_stream)
        grades = []
        with prepared(limits) as (spec_dir, mpl_template):  # each notebook in a process (workers.py)
            jobs = [(s, grade_notebook, (s.learner, s.number, s.path),
                     dict(spec_dir=spec_dir, limits=limits, mpl_template=mpl_template,
                          source=s.source, seed=seed)) for s in graded]
            for sub, grade, exc in grade_in_processes(jobs, workers):
                if exc is None:
                    grades.append(grade)
                    grades[-1].late = sub.late
                else:  # a bug in the grader: say so in the row, grade the rest
                    grades.append(NotebookGrade(sub.learner, sub.number, sub.source, [], [
                        _("the grader failed on {file}: {error}").format(
                            file=sub.path.name, error=f"{type(exc).__name__}: {exc}")]))
                bar.step(f"{sub.learner} {sub.number}")
        elapsed = time.monotonic() - start
        after = _snapshot(submissions)
        out_after = _snapshot(out) if out.is_dir() else {}  # before the grader writes there
        sources = {(s.learner, s.number): _code_sources(s.path) for s in graded}
    changed = sorted({k for k in before.keys() | after.keys() if before.get(k) != after.get(k)})
    out_changed = sorted({k for k in out_before.keys() | out_after.keys()
                          if out_before.get(k) != out_after.get(k)})
    regraded = ""
    if previous is not None:  # keep every row, and the notebooks these learners did not return now
        new_keys = {(g.learner, g.number) for g in grades}
        if late is None:  # a late mark the teacher gave (--late) stays on a file without one
            for g in grades:
                old = previous.by_key.get((g.learner, g.number))
                if old is not None and old.late and not carries_late(result_info(previous, found, g.learner)):
                    g.late = True
        kept = [g for key, g in previous.by_key.items() if key not in new_keys]
        info = {**previous.info, **{k: found.info[k] for k in added_keys}}  # the stored ids stay
        ignored = previous.not_graded + found.ignored
        extra = {k: v for k, v in previous.extra_notes.items() if k not in learners}
        result = ClassGrades(set(previous.learners) | set(learners), kept + grades,
                             notebooks=notebooks, info=info, assignment=assignment,
                             late_penalty=late_penalty, not_graded=ignored, exercises=exercises)
        if settings == {k: old_settings.get(k, DEFAULTS[k]) for k in settings}:
            # the others' grades are as they were, and so is the time Moodle sees on them
            result.modified = {ln: previous.modified_at(ln) for ln in previous.learners
                               if ln not in learners}
        for name, notes in extra.items():
            result.extra_notes.setdefault(name, []).extend(notes)
        found.ignored = ignored
        added = _(" (new: {learners})").format(learners=", ".join(added_keys)) if added_keys else ""
        regraded = _(" Regraded {learners}{added} into the {n} learners graded {when} UTC (similar "
                     "answers looked for again across the whole class: a flag about a regraded "
                     "learner is recomputed).").format(learners=", ".join(learners), added=added,
                                                        n=len(previous.learners),
                                                        when=f"{previous.graded_at:%Y-%m-%d %H:%M}")
    else:
        result = ClassGrades(found.learners, grades, notebooks=notebooks, info=found.info,
                             assignment=assignment, late_penalty=late_penalty,
                             not_graded=found.ignored, exercises=exercises)
    prints, teacher = in_process(class_prints, sources, _teacher_sources(notebooks))  # workers.py
    if previous is not None:  # the notebooks kept keep their prints
        prints = {**{(ln, nb): p for ln, nb, p in state.get("prints") or []
                     if (ln, nb) in result.by_key}, **prints}
    if shard is None:  # a shard's copies may have their source in another shard: the merge looks
        # a regrade looks across the whole class again (the kept notebooks' prints and the new
        # ones): a flag whose code was replaced goes, a new one comes, the others are as they were
        note_similar(result, similar_in_prints(prints, teacher))
    extra = state_extra(prints, teacher, limits)
    if shard is not None:
        extra["shard"] = {"index": shard.index, "count": shard.count, "class_learners": class_learners}
    written = write_class(result, out, settings, seed=seed, extra=extra,
                          regraded=learners if previous is not None else None)
    width = max(100, shutil.get_terminal_size((120, 24)).columns)
    n_nb = len(result.notebooks)
    part = "" if shard is None else _(
        " of shard {shard} ({n} in the class; similar answers are looked for when the shards are "
        "merged: python -m attention_kit.grading merge)").format(shard=shard, n=len(class_learners))
    set_text = (_("Notebooks set: {notebooks} ({points} points)") if n_nb > 1 else
                _("Notebook set: {notebooks} ({points} points)")).format(
        notebooks=", ".join(nb.number for nb in result.notebooks), points=result.max_points)
    lines = [_("Graded {n} learners{part}, {notebooks} notebooks in {seconds:.0f} s ({workers} at a "
               "time). {set}; the assignment is \"{assignment}\" in canvas.csv. Exercises set: "
               "{exercises}.{regraded}").format(
        n=len(found.learners), part=part, notebooks=len(graded), seconds=elapsed, workers=workers,
        set=set_text, assignment=result.assignment, exercises=result.exercises_text(), regraded=regraded),
             "", summary_text(result, width)]
    if result.late_warning():
        lines += ["", _("WARNING: {warning}").format(warning=result.late_warning())]
    if found.ignored:
        lines += ["", _("Not graded (also in not_graded.csv):")] + [f"  {path}: {why}" for path, why in found.ignored]
    if changed:
        lines += ["", _("WARNING: files in the submissions folder changed while grading (a notebook "
                        "wrote outside its working copy?):")] + [f"  {p}" for p in changed]
    if out_changed:
        lines += ["", _("WARNING: files in {out} changed while the notebooks ran, before the grader "
                        "wrote its own (a notebook wrote there?):").format(out=out)] + [f"  {p}" for p in out_changed]
    lines += [""] + lms_lines(result, written, out, moodle_max)
    return result, "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["merge"]:  # a submissions folder named merge: give it as ./merge
        return merge_main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m attention_kit.grading",
                                     description=_("Grade a class's returned notebooks with the "
                                                 "course's exercise checkers."),
                                     epilog=_("A class graded in shards (--shard i/N): merge the shards' "
                                            "folders with python -m attention_kit.grading merge "
                                            "grades-1 ... grades-N --out grades (merge --help)."))
    parser.add_argument("submissions", type=Path,
                        help=_("folder (or zip) of returned notebooks: SUBMISSIONS/<learner>/NN_topic.ipynb, "
                             "SUBMISSIONS/<learner>__NN_topic.ipynb, or a Canvas or Moodle download"))
    parser.add_argument("--out", type=Path, default=Path("grades"),
                        help=_("where grades.csv, feedback/ and summary.md go (default: grades)"))
    parser.add_argument("--notebooks", default="",
                        help=_("the notebooks that were set, e.g. 02,04 (default: those returned)"))
    parser.add_argument("--assignment", default=None,
                        help=_("the assignment's name in canvas.csv and the feedback (as in the LMS)"))
    parser.add_argument("--seed", default=None,
                        help=_("the teacher's seed of the hidden cases the grader tries beyond the "
                               "notebook's (keep it to yourself; the same seed regrades the same; "
                               "default {default})").format(default=repr(DEFAULT_SEED)))
    parser.add_argument("--exercises", default="",
                        help=_("the exercises set, with optional weights: 02.1-02.5,02.6:0.5,04 "
                             "(a notebook number means all its exercises; default: every exercise "
                             "of the notebooks set, one point each)"))
    parser.add_argument("--learners", default="",
                        help=_("regrade only these learners (comma-separated: grades.csv's learner, "
                             "the LMS id, or a name only one learner has) into the existing grades "
                             "in --out, with the settings they were graded with"))
    parser.add_argument("--moodle-max", type=float, default=None,
                        help=_("the Moodle assignment's maximum grade: moodle.csv's grades are on "
                             "it (default 100, Moodle's default)"))
    parser.add_argument("--moodle-headers", default=None,
                        help=_("the language of the Moodle worksheet's headers: en, de, fr, es, or "
                             "a JSON file of Moodle's strings (docs/teaching.md)"))
    parser.add_argument("--canvas-points", type=float, default=None,
                        help=_("the Canvas assignment's points possible: canvas.csv's points are on "
                             "it (default: the exercises' points)"))
    parser.add_argument("--late-penalty", type=float, default=None,
                        help=_("percent of a late notebook's points taken off (default 0: late "
                             "submissions are only marked)"))
    parser.add_argument("--late", default="",
                        help=_("learners whose notebooks are late (comma-separated ids or names, as "
                             "--learners): Moodle downloads and plain folders carry no late mark; "
                             "Canvas's LATE_ is read from the file names"))
    parser.add_argument("--add-learners", action="store_true",
                        help=_("with --learners: a learner who matches nobody in the graded class is "
                             "added as a new learner (without it, such a name stops the regrade)"))
    parser.add_argument("--new-settings", action="store_true",
                        help=_("with --learners: apply the settings given now (exercises, late "
                             "penalty, LMS scales) to the whole class instead of stopping when "
                             "they differ from the grades folder's"))
    parser.add_argument("--shard", default=None, metavar="i/N",
                        help=_("grade only the learners of shard i of N (split by LMS id; 1/4 ... 4/4), "
                             "then merge the shards' --out folders: python -m attention_kit.grading "
                             "merge grades-1 ... grades-N --out grades"))
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1),
                        help=_("notebooks run at the same time (default: 2)"))
    d = Limits()
    parser.add_argument("--cell-timeout", type=float, default=d.cell_s,
                        help=_("seconds per cell before it is interrupted (default {default:g})").format(default=d.cell_s))
    parser.add_argument("--notebook-timeout", type=float, default=d.notebook_s,
                        help=_("seconds per notebook before its kernel is killed (default {default:g})").format(
                            default=d.notebook_s))
    parser.add_argument("--exercise-timeout", type=float, default=d.exercise_s,
                        help=_("seconds for the checker of one exercise (default {default:g})").format(
                            default=d.exercise_s))
    parser.add_argument("--memory-mb", type=int, default=d.memory_mb,
                        help=_("address-space limit of each kernel in MB (default {default})").format(
                            default=d.memory_mb))
    args = parser.parse_args(argv)
    limits = Limits(cell_s=args.cell_timeout, notebook_s=args.notebook_timeout,
                    exercise_s=args.exercise_timeout, memory_mb=args.memory_mb)
    try:
        shard = parse_shard(args.shard)
        notebooks = parse_notebooks(args.notebooks)
        exercises = parse_exercises(args.exercises)
        if exercises is not None and notebooks is not None:
            raise ValueError(_("give --exercises or --notebooks, not both"))
        _result, summary = grade_class(args.submissions, args.out, limits=limits, workers=args.workers,
                                 notebooks=notebooks, assignment=args.assignment,
                                 seed=DEFAULT_SEED if args.seed is None else args.seed,
                                 seed_given=args.seed is not None,
                                 late_penalty=args.late_penalty, exercises=exercises,
                                 learners=parse_learners(args.learners), moodle_max=args.moodle_max,
                                 moodle_headers=args.moodle_headers, canvas_points=args.canvas_points,
                                 new_settings=args.new_settings, add_learners=args.add_learners,
                                 shard=shard, late=parse_learners(args.late))
    except (FileNotFoundError, ValueError) as exc:
        print(_("error: {error}").format(error=exc), file=sys.stderr)
        return 2
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
