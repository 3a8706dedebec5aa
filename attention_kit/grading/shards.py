"""A class graded in shards, on several machines, then merged into the files of one run.

``python -m attention_kit.grading SUBMISSIONS --shard 2/8 --out grades-2`` grades only the
learners of shard 2 of 8. The split depends on each learner alone (:func:`shard_of`: a digest of
the learner's LMS id, Canvas user, Moodle participant or Canvas anonymous id, or of the learner's
key when the files give no id, modulo N), never on the order of the files or on the other
shards, so every learner is in exactly one shard and stays there when the class is graded again.
Every shard reads the whole submissions folder: its ``grades.json`` keeps the class's learners
and files not graded, the settings, the limits, a digest of the grader (``output.py``), and the
digests of every graded notebook's answers (``similarity.class_prints``). A shard looks for no
similar answers: a copy and its source may be in two shards.

``python -m attention_kit.grading merge grades-1 ... grades-8 --out grades`` (:func:`merge_shards`)
checks that the shards are one class's, all of them, each once, graded alike, and writes the
files one run over the whole class writes, byte for byte: the class-wide results (similar
answers, the summary's counts, the order of every file) are made again over the whole class.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from ..i18n import N_, _
from .class_grades import ClassGrades
from .output import grader_digest, lms_lines, write_class
from .reports import STATE_FILE, load_state, summary_text
from .similarity import note_similar, similar_in_prints
from .submissions import Learner

__all__ = ["Shard", "parse_shard", "shard_of", "split_key", "shard_learners", "merge_shards", "merge_main",
           "SHARD_FORM"]

SHARD_FORM = N_("give it as i/N: N the number of shards, i this shard's number from 1 to N "
                "(--shard 1/4 ... --shard 4/4)")


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (from 1) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str | None) -> Shard | None:
    """``"2/8"`` -> ``Shard(2, 8)``; None or empty: None (the whole class). ValueError naming
    the problem and the right form for anything else."""
    if text is None or not str(text).strip():
        return None
    i, slash, n = str(text).strip().partition("/")
    if not slash or not i.strip().isdigit() or not n.strip().isdigit():
        raise ValueError(_("--shard {text} is not a shard: {form}").format(text=repr(text), form=_(SHARD_FORM)))
    i, n = int(i), int(n)
    if n < 1:
        raise ValueError(_("--shard {text}: the number of shards N must be 1 or more; {form}").format(
            text=text, form=_(SHARD_FORM)))
    if not 1 <= i <= n:
        raise ValueError(_("--shard {text}: there is no shard {i} of {n}, the shards are 1/{n} to {n}/{n}; "
                           "{form}").format(text=text, i=i, n=n, form=_(SHARD_FORM)))
    return Shard(i, n)


def split_key(learner: Learner) -> str:
    """What decides a learner's shard: the LMS id (``canvas:123456``, ``moodle:4711``,
    ``anon:Ab3xZ``), or the key the grader knows them by when the files give no id."""
    if learner.anonymous_id:
        return f"anon:{learner.anonymous_id}"
    if learner.canvas_id:
        return f"canvas:{learner.canvas_id}"
    if learner.moodle_id:
        return f"moodle:{learner.moodle_id}"
    return f"key:{learner.key}"


def shard_of(learner: Learner, count: int) -> int:
    """The shard (1 to ``count``) of ``learner``: the digest of :func:`split_key` modulo
    ``count``; the same learner gets the same shard of ``count`` in every run."""
    digest = hashlib.sha256(split_key(learner).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def shard_learners(info: Mapping[str, Learner], shard: Shard) -> list[str]:
    """The keys of ``info`` (key -> learner) in ``shard``."""
    return [key for key, learner in info.items() if shard_of(learner, shard.count) == shard.index]


# --- the merge --------------------------------------------------------------------------------

#: What every shard must share (a key of ``grades.json``, ``settings.`` one of its settings),
#: with the option that sets it: the merge names each that differs, and the shards.
SAME = {"seed": N_("the seed (--seed, SEED=)"),
        "settings.exercises": N_("the exercises set (--exercises, EXERCISES=; --notebooks, NOTEBOOKS=)"),
        "exercises": N_("the exercises graded and their weights"),
        "settings.late_penalty": N_("the late penalty (--late-penalty, LATE_PENALTY=)"),
        "settings.assignment": N_("the assignment's name (--assignment, ASSIGNMENT=)"),
        "settings.moodle_max": N_("Moodle's maximum grade (--moodle-max, MOODLE_MAX=)"),
        "settings.moodle_headers": N_("Moodle's headers (--moodle-headers, MOODLE_HEADERS=)"),
        "settings.canvas_points": N_("Canvas's points possible (--canvas-points, CANVAS_POINTS=)"),
        "limits": N_("the limits (--cell-timeout, --notebook-timeout, --exercise-timeout, --memory-mb)"),
        "grader": N_("the grader (the course's version: its package and full notebooks)"),
        "teacher_prints": N_("the full notebooks' worked solutions")}
#: What every shard read of the whole class: the same when they were given the same submissions.
CLASS = {"shard.class_learners": N_("the class's learners"), "not_graded": N_("the files not graded")}


def _value(state: Mapping, key: str):
    head, _dot, rest = key.partition(".")
    value = state.get(head)
    return value.get(rest) if rest and isinstance(value, Mapping) else value


@dataclass
class _Read:
    folder: Path
    grades: ClassGrades
    state: dict
    shard: Shard


def _read(folder: Path) -> _Read:
    folder = Path(folder)
    if not (folder / STATE_FILE).is_file():
        raise FileNotFoundError(_("{folder} is not a grades folder (no {file} in it): give the folders the "
                                  "shards were graded into (--out of each --shard run)").format(
            folder=folder, file=STATE_FILE))
    grades, state = load_state(folder / STATE_FILE)
    meta = state.get("shard")
    if not meta:
        raise ValueError(_("{folder} holds a class graded in one run, not a shard (--shard i/N): "
                           "only shards merge").format(folder=folder))
    for key in ("prints", "teacher_prints", "limits", "grader"):
        state.setdefault(key, None)
    return _Read(folder, grades, state, Shard(meta["index"], meta["count"]))


def _same(read: list[_Read], what: Mapping[str, str], problem: str) -> None:
    """ValueError naming each thing in ``what`` on which the shards differ, and which shards."""
    diffs = []
    for key, label in what.items():
        groups: dict[str, list[str]] = {}
        for r in read:
            groups.setdefault(repr(_value(r.state, key)), []).append(f"{r.folder} ({r.shard})")
        if len(groups) > 1:
            diffs.append(f"{_(label)}: " + " / ".join(", ".join(g) for g in groups.values()))
    if diffs:
        raise ValueError(problem + ":\n  " + "\n  ".join(diffs))


def _check(read: list[_Read], out: Path) -> None:
    """ValueError (or FileNotFoundError) unless ``read`` is every shard of one class, once."""
    if not read:
        raise FileNotFoundError(_("no shards to merge: give every shard's grades folder"))
    for r in read:
        if r.folder.resolve() == Path(out).resolve():
            raise ValueError(_("--out {out} is one of the shards: merge into a folder of its own").format(out=out))
    counts = sorted({r.shard.count for r in read})
    if len(counts) > 1:
        raise ValueError(_("the shards are of different splits: {shards}; grade every shard with the same N").format(
            shards=", ".join(_("{folder} is shard {shard}").format(folder=r.folder, shard=r.shard) for r in read)))
    n = counts[0]
    seen: dict[int, list[Path]] = {}
    for r in read:
        seen.setdefault(r.shard.index, []).append(r.folder)
    twice = {i: f for i, f in seen.items() if len(f) > 1}
    if twice:
        raise ValueError(_("{problems}: give each shard once").format(problems="; ".join(
            _("shard {shard} is given twice: {folders}").format(
                shard=f"{i}/{n}", folders=_(" and ").join(map(str, f))) for i, f in sorted(twice.items()))))
    missing = [i for i in range(1, n + 1) if i not in seen]
    if missing:
        raise ValueError((_("shard {missing} of the {n} is missing (given: {given}): grade each with --shard "
                            "i/N into a folder of its own, then merge all of them") if len(missing) == 1 else
                          _("shards {missing} of the {n} are missing (given: {given}): grade each with "
                            "--shard i/N into a folder of its own, then merge all of them")).format(
            missing=", ".join(f"{i}/{n}" for i in missing), n=n,
            given=", ".join(str(r.shard) for r in sorted(read, key=lambda r: r.shard.index))))
    _same(read, SAME, _("the shards were graded with different settings, "
                        "so their grades do not add up to one class's; grade them again alike"))
    _same(read, CLASS, _("the shards were graded from different submissions; grade every shard from the same folder"))
    owner: dict[str, _Read] = {}
    for r in read:
        for learner in r.grades.learners:
            if learner in owner:
                raise ValueError(_("learner {learner} is in two shards: {first} ({first_shard}) and {second} "
                                   "({second_shard}); a learner is graded in one shard only").format(
                    learner=learner, first=owner[learner].folder, first_shard=owner[learner].shard,
                    second=r.folder, second_shard=r.shard))
            owner[learner] = r
            home = shard_of(r.grades.info[learner], n)
            if home != r.shard.index:
                raise ValueError(_("learner {learner} of {folder} belongs to shard {home}, not {shard}: that "
                                   "folder was not graded with --shard {shard}").format(
                    learner=learner, folder=r.folder, home=f"{home}/{n}", shard=r.shard))
    lost = sorted(set(read[0].state["shard"]["class_learners"]) - set(owner))
    if lost:
        raise ValueError(_("{n} learner(s) of the class are in no shard ({learners}): grade their shard "
                           "again").format(n=len(lost), learners=", ".join(lost[:5]) + (" ..." if len(lost) > 5 else "")))


def merge_shards(folders: Iterable[Path], out: Path) -> tuple[ClassGrades, str]:
    """Merge the grades folders of every shard of a class into ``out``: the same files, byte for
    byte, as one run over the whole class with the same settings writes. ValueError (or
    FileNotFoundError) naming the problem, before anything is written, when the shards are not
    every shard of one class, each once, graded alike. Returns the class and the summary."""
    read = sorted((_read(Path(f)) for f in folders), key=lambda r: r.shard.index)
    _check(read, out)
    first = read[0]
    learners = [ln for r in read for ln in r.grades.learners]
    info = {ln: r.grades.info[ln] for r in read for ln in r.grades.learners}
    graded_at = max(r.grades.graded_at for r in read)  # the end of the whole grading
    result = ClassGrades(learners, [g for r in read for g in r.grades.by_key.values()], info=info,
                         assignment=first.grades.assignment, late_penalty=first.grades.late_penalty,
                         not_graded=first.grades.not_graded, exercises=first.grades.weights,
                         graded_at=graded_at)
    for r in read:
        for ln in r.grades.learners:
            if r.grades.extra_notes.get(ln):
                result.extra_notes[ln] = list(r.grades.extra_notes[ln])
            if r.grades.modified_at(ln) != graded_at:  # each learner's grade keeps its own time
                result.modified[ln] = r.grades.modified_at(ln)
    prints = {(ln, nb): p for r in read for ln, nb, p in (r.state["prints"] or [])}
    teacher = first.state["teacher_prints"] or {}
    found = similar_in_prints(prints, teacher)
    note_similar(result, found)  # across the whole class, as one run finds them
    extra = {k: first.state[k] for k in ("prints", "teacher_prints", "limits", "grader")}
    extra["prints"] = [[ln, nb, p] for (ln, nb), p in sorted(prints.items())]
    settings = first.state["settings"]
    written = write_class(result, Path(out), settings, digest=first.state["seed"], extra=extra)
    n_nb = len(result.by_key)
    graded = (_("{n} notebook graded") if n_nb == 1 else _("{n} notebooks graded")).format(n=n_nb)
    groups = (_("{n} group") if len(found) == 1 else _("{n} groups")).format(n=len(found))
    lines = [_("Merged {n} shards ({folders}): {learners} learners, {graded}. Notebooks set: {notebooks} "
               "({points} points); the assignment is \"{assignment}\" in canvas.csv. Exercises set: "
               "{exercises}. Similar answers were looked for across the whole class ({groups}).").format(
        n=len(read), folders=", ".join(str(r.folder) for r in read), learners=len(result.learners),
        graded=graded, notebooks=", ".join(nb.number for nb in result.notebooks), points=result.max_points,
        assignment=result.assignment, exercises=result.exercises_text(), groups=groups),
             "", summary_text(result)]
    if result.not_graded:
        lines += ["", _("Not graded (also in not_graded.csv):")] + [f"  {path}: {why}"
                                                                    for path, why in result.not_graded]
    lines += [""] + lms_lines(result, written, Path(out), settings["moodle_max"])
    if first.state["grader"] != grader_digest():
        lines += ["", _("WARNING: this merge ran with another version of the course than the shards "
                        "were graded with: the files are written by this version's reports; merge "
                        "with the shards' image for the files one run of theirs writes.")]
    return result, "\n".join(lines)


def merge_main(argv: list[str]) -> int:
    """``python -m attention_kit.grading merge SHARD_FOLDER... --out grades``."""
    parser = argparse.ArgumentParser(prog="python -m attention_kit.grading merge",
                                     description=_("Merge the grades folders of every shard of a class "
                                                 "(graded with --shard i/N) into the files one run "
                                                 "over the whole class writes."))
    parser.add_argument("shards", type=Path, nargs="+",
                        help=_("the grades folder of each shard (the --out of each --shard run)"))
    parser.add_argument("--out", type=Path, default=Path("grades"),
                        help=_("where the merged grades go (default: grades)"))
    args = parser.parse_args(argv)
    try:
        _result, summary = merge_shards(args.shards, args.out)
    except (FileNotFoundError, ValueError) as exc:
        print(_("error: {error}").format(error=exc), file=sys.stderr)
        return 2
    print(summary)
    return 0
