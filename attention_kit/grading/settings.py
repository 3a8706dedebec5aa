"""The options of a grading run: the notebooks and exercises set (:func:`parse_exercises`), the
learners of a regrade (:func:`resolve_learners`: by id, or by a name only one learner has), and
the settings a grades folder remembers (:func:`settle`: a regrade reuses them, and stops when
given one that differs, unless told to apply new settings to the whole class)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Mapping

from ..check import registry
from ..i18n import N_, _
from .reports import seed_digest
from .submissions import Learner

__all__ = ["parse_notebooks", "parse_exercises", "parse_learners", "resolve_learners", "match_regrade", "settle",
           "DEFAULTS"]


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
            raise ValueError(_("notebook {notebook} is not part of this course (it has {known})").format(
                notebook=repr(part), known=", ".join(known)))
        out.append(number)
    return sorted(set(out))


def parse_exercises(text: str | None) -> dict[str, float] | None:
    """``"02.1-02.5,02.6:0.5,04"`` -> ``{"02.1": 1.0, ..., "02.6": 0.5, "04.1": 1.0, ...}``, in the
    course's order: an exercise, a range of exercises (``02.1-02.5``, in the course's order), or
    a notebook (all its exercises), each with an optional ``:weight`` (points per exercise,
    default 1). None or empty: None (every exercise of the notebooks set). ValueError for an
    exercise or notebook the course does not have."""
    if not text or not text.strip():
        return None
    order = [ex_id for ex_id, _ex, _nb in registry.exercises()]
    known_nb = [nb.number for nb in registry.NOTEBOOKS]

    def canon(part: str) -> str:
        nb, dot, ex = part.strip().partition(".")
        if not nb.isdigit() or (dot and not ex.isdigit()):
            raise ValueError(_("{part} is not an exercise (02.3) or a notebook (02)").format(part=repr(part)))
        return f"{int(nb):02d}" + (f".{int(ex)}" if dot else "")

    weights: dict[str, float] = {}
    for item in text.replace(" ", "").split(","):
        if not item:
            continue
        what, _colon, weight = item.partition(":")
        try:
            w = float(weight) if weight else 1.0
        except ValueError:
            raise ValueError(_("{item}: the weight after ':' must be a number").format(item=repr(item))) from None
        if w < 0:
            raise ValueError(_("{item}: a weight cannot be negative").format(item=repr(item)))
        first, dash, last = what.partition("-")
        first = canon(first)
        if "." not in first:  # a whole notebook
            if first not in known_nb or dash:
                raise ValueError(_("notebook {notebook} is not part of this course (it has {known}), or a "
                                   "range of notebooks").format(notebook=repr(what), known=", ".join(known_nb)))
            ids = [e for e in order if e.startswith(first + ".")]
        else:
            last = canon(last) if dash else first
            for e in (first, last):
                if e not in order:
                    raise ValueError(_("exercise {exercise} is not part of this course (see "
                                       "docs/teaching.md for the exercises of each notebook)").format(exercise=e))
            i, j = order.index(first), order.index(last)
            if j < i:
                raise ValueError(_("{item}: the range runs backwards").format(item=repr(what)))
            ids = order[i:j + 1]
        for e in ids:
            weights[e] = w
    return {e: weights[e] for e in order if e in weights}


def parse_learners(text: str | None) -> list[str] | None:
    """``"alice, Dana Lee"`` -> ``["alice", "Dana Lee"]`` (names as grades.csv has them)."""
    if not text or not text.strip():
        return None
    return [name.strip() for name in text.split(",") if name.strip()]


def resolve_learners(wanted: list[str], info: Mapping[str, Learner]) -> list[str]:
    """The keys of the learners named in ``wanted`` (each: a key as grades.csv has it, an LMS id,
    or a name only one of them has) among ``info`` (key -> learner). ValueError for a name two
    learners share; FileNotFoundError for one nobody has."""
    out, missing = [], []
    for text in wanted:
        hits = [key for key, learner in info.items() if key == text or learner.answers_to(text)]
        exact = [key for key in hits if key == text]
        if exact:
            hits = exact
        if not hits:
            missing.append(text)
        elif len(hits) > 1:
            raise ValueError(_("{name} names {n} learners ({learners}): give the one to regrade by its "
                               "id, as grades.csv's learner column has it").format(
                name=repr(text), n=len(hits), learners=", ".join(sorted(hits))))
        elif hits[0] not in out:
            out.append(hits[0])
    if missing:
        raise FileNotFoundError(_("no submissions of {missing} (learners found: {found})").format(
            missing=", ".join(missing), found=", ".join(sorted(info)) or _("none")))
    return out


#: The settings a grades folder remembers, with their value when none was given, and their name
#: in the error a regrade gives when one differs.
DEFAULTS = {"exercises": None, "late_penalty": 0.0, "moodle_max": 100.0, "canvas_points": None,
            "moodle_headers": "en", "assignment": None}
_LABELS = {"exercises": N_("exercises (--exercises/EXERCISES=)"), "late_penalty": N_("late penalty (--late-penalty)"),
           "moodle_max": N_("Moodle maximum grade (--moodle-max/MOODLE_MAX=)"),
           "canvas_points": N_("Canvas points possible (--canvas-points/CANVAS_POINTS=)"),
           "moodle_headers": N_("Moodle headers (--moodle-headers/MOODLE_HEADERS=)"),
           "assignment": N_("assignment name (--assignment/ASSIGNMENT=)")}


def _shown(key: str, value) -> str:
    if value is None:
        return _("not set") if key != "canvas_points" else _("not set (the exercises' points)")
    if key == "exercises":
        return ",".join(f"{e}:{w:g}" for e, w in value.items())
    return f"{value:g}" if isinstance(value, float) else repr(value)


def settle(given: Mapping[str, object], previous: Mapping[str, object] | None,
           new_settings: bool = False) -> dict:
    """The settings of this run. ``given``: setting -> the value given now, None when not given.
    ``previous``: the grades folder's (a regrade), None for a whole class. A regrade takes every
    setting not given from ``previous``; one given that differs is a ValueError naming each
    difference, unless ``new_settings`` (the new ones then apply to the whole class)."""
    out = {k: (v if v is not None else DEFAULTS.get(k)) for k, v in given.items()}
    if previous is None:
        return out
    diffs = []
    for key, value in given.items():
        old = previous.get(key, DEFAULTS.get(key))
        if value is None:
            out[key] = old
        elif isinstance(value, float) and isinstance(old, (int, float)) and float(old) == value:
            out[key] = float(old)
        elif value != old:
            diffs.append(_("{setting}: {old} when the class was graded, {new} now").format(
                setting=_(_LABELS[key]) if key in _LABELS else key, old=_shown(key, old), new=_shown(key, value)))
    if diffs and not new_settings:
        raise ValueError(_("this regrade's settings differ from the grades folder's, which would change "
                           "the other learners' grades too:\n  {differences}\nleave them out to keep the "
                           "class's settings, or give --new-settings (NEW_SETTINGS=1) to apply the new "
                           "ones to the whole class").format(differences="\n  ".join(diffs)))
    return out


def _same_learner(found: Learner, known: Learner, found_key: str) -> bool:
    """``found`` (named by a resubmission's file) is the class's ``known`` learner: the same
    key, the same LMS id, or (a plain folder, no id) a name ``known`` answers to."""
    if found_key == known.key:
        return True
    if found.lms_id:
        return (found.canvas_id, found.moodle_id, found.anonymous_id) == \
            (known.canvas_id, known.moodle_id, known.anonymous_id)
    return known.answers_to(found.name)


def match_regrade(wanted: list[str], class_info: Mapping[str, Learner], found,
                  add_new: bool = False) -> tuple[list[str], list[str]]:
    """The learners of a regrade, matched to the graded class (``class_info``: key -> learner),
    each by key, LMS id or a name only one of them has; ``found`` (:class:`Found`) is narrowed to
    their files, each file's learner made the class's (a plain folder ``mail/Dana Lee/`` takes
    ``Dana Lee_4711``'s identity, ids and all). Returns (class keys, new keys). A name that
    matches nobody in the class is an error unless ``add_new``: it is then a new learner, named
    as in the files. ValueError for a name that matches several learners, or a file that could
    be several; FileNotFoundError for a learner with no file in the submissions."""
    keys, new, unknown = [], [], []
    for text in wanted:
        hits = [k for k, ln in class_info.items() if k == text or ln.answers_to(text)]
        hits = [k for k in hits if k == text] or hits
        if len(hits) > 1:
            raise ValueError(_("{name} names {n} learners of the graded class ({learners}): give the one "
                               "to regrade by its id, as grades.csv's learner column has it").format(
                name=repr(text), n=len(hits), learners=", ".join(sorted(hits))))
        if hits:
            keys += [hits[0]] if hits[0] not in keys else []
        else:
            unknown.append(text)
    if unknown and not add_new:
        raise ValueError(_("{names} matches no learner of the graded class ({n} learners; give "
                           "grades.csv's learner, the LMS id, or a name only one of them has). A learner "
                           "who was not graded before: add them with --add-learners (ADD_LEARNERS=1)").format(
            names=", ".join(map(repr, unknown)), n=len(class_info)))
    owner: dict[str, str] = {}  # a found learner -> the class learner it is
    for fkey, fln in found.info.items():
        same = [k for k, ln in class_info.items() if _same_learner(fln, ln, fkey)]
        if len(same) > 1 and set(same) & set(keys):
            raise ValueError(_("the files of {name} could be any of {learners}: name their folder by the "
                               "learner's id, as grades.csv's learner column has it").format(
                name=repr(fkey), learners=", ".join(sorted(same))))
        if len(same) == 1:
            owner[fkey] = same[0]
    if unknown:  # new learners, as the files name them
        strangers = {k: v for k, v in found.info.items() if k not in owner}
        new = resolve_learners(unknown, strangers)
        clash = [k for k in new if k in class_info]
        if clash:
            raise ValueError(_("{learners} is already a learner of the graded class").format(learners=", ".join(clash)))
        owner.update({k: k for k in new})
    chosen = set(keys) | set(new)
    subs = []
    for s in found.submissions:
        who = owner.get(s.learner)
        if who in chosen:
            subs.append(replace(s, learner=who))
        else:
            found.ignored.append((s.source, _("not regraded (LEARNERS= names others)")))
    missing = [k for k in keys if not any(s.learner == k for s in subs)]
    if missing:
        raise FileNotFoundError(_("no submissions of {missing} in the folder given (learners found "
                                  "there: {found})").format(missing=", ".join(missing),
                                                            found=", ".join(sorted(found.info)) or _("none")))
    found.submissions = subs
    found.learners = keys + new
    found.info = {k: class_info.get(k) or found.info[k] for k in keys + new}
    return keys, new


#: The seed of the hidden cases when the teacher gives none (``--seed``, ``SEED=``).
DEFAULT_SEED = "0"


def seed_mismatch(out: Path, stored: str, seed: str | None, given: bool) -> str:
    """Why a regrade's seed is not the class's (the grades folder keeps only its digest)."""
    how = _("make grade ... SEED=<seed> (or --seed <seed>)")
    if not given:
        return _("the class in {out} was graded with a SEED and this regrade gives none: pass the same "
                 "seed, {how}; the grades folder keeps only a digest of it, so it cannot be read back").format(
            out=out, how=how)
    if stored == seed_digest(DEFAULT_SEED):
        return _("the class in {out} was graded without a SEED (the default) and this regrade gives one: "
                 "leave SEED out").format(out=out)
    return _("the class in {out} was graded with another SEED: pass the same one, {how} (the grades "
             "folder keeps only a digest of it)").format(out=out, how=how)


def result_info(previous, found, key: str):
    """The learner ``key`` of a regrade: as the graded class knows them, else as the files name them."""
    return previous.info.get(key) or found.info.get(key)
