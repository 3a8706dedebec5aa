"""Find the returned notebooks in a submissions folder.

Two layouts are understood, and may be mixed:

* one folder per learner: ``SUBMISSIONS/alice/02_self_attention.ipynb``; the folder's name is
  the learner;
* flat files: ``SUBMISSIONS/alice__02_self_attention.ipynb``; the part before ``__`` (two
  underscores) is the learner.

A notebook is recognised by its two-digit number at the start of its name (``02_...``, so
``02_self_attention (1).ipynb`` is notebook 02 too). Anything else (other files, notebooks
without a number, a second copy of the same notebook) is listed in ``ignored`` with the
reason, and never stops the run. ``.ipynb_checkpoints`` and hidden files are skipped silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Submission", "Found", "find_submissions"]

_NUMBER = re.compile(r"^(\d\d)[_\-\s.]")
FLAT_SEPARATOR = "__"


@dataclass(frozen=True)
class Submission:
    """One returned notebook: ``learner``, the notebook's number ``"NN"`` and its path."""

    learner: str
    number: str
    path: Path


@dataclass
class Found:
    """The result of :func:`find_submissions`."""

    submissions: list[Submission] = field(default_factory=list)
    learners: list[str] = field(default_factory=list)
    ignored: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)


def _visible(path: Path) -> bool:
    return not path.name.startswith(".") and path.name != "__pycache__"


def find_submissions(folder: Path, course_files: dict[str, str] | None = None) -> Found:
    """Every returned notebook under ``folder`` by learner, in a stable order.

    Parameters
    ----------
    folder : Path
        The submissions folder (either layout, or both).
    course_files : dict, optional
        ``{"02": "02_self_attention.ipynb", ...}``. When a learner returned two files for the
        same notebook, the one with the course's file name is graded, else the newest.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"submissions folder {folder} does not exist or is not a folder")
    candidates: list[tuple[str, Path, str]] = []  # (learner, path, name without the learner)
    found = Found()
    for entry in sorted(folder.iterdir()):
        if not _visible(entry):
            continue
        if entry.is_dir():
            files = sorted(p for p in entry.iterdir() if _visible(p))
            if not files:  # a learner who returned nothing: a row of "not submitted"
                found.ignored.append((str(entry.relative_to(folder)), "an empty folder"))
                candidates.append((entry.name, entry, ""))
            for path in files:
                candidates.append((entry.name, path, path.name))
        elif FLAT_SEPARATOR in entry.name:
            learner, _, rest = entry.name.partition(FLAT_SEPARATOR)
            candidates.append((learner.strip(), entry, rest))
        else:
            found.ignored.append((entry.name, "not in a learner's folder and not named "
                                              "<learner>__NN_topic.ipynb"))
    course_files = course_files or {}
    by_key: dict[tuple[str, str], list[Path]] = {}
    learners: list[str] = []
    for learner, path, name in candidates:
        rel = str(path.relative_to(folder))
        if not learner:
            found.ignored.append((rel, "no learner name before '__'"))
            continue
        if learner not in learners:
            learners.append(learner)
        if path == folder / learner:  # the learner's own (empty) folder
            continue
        if path.is_dir():
            found.ignored.append((rel, "a folder inside a learner's folder"))
            continue
        match = _NUMBER.match(name)
        if not path.name.lower().endswith(".ipynb"):
            found.ignored.append((rel, "not a notebook (.ipynb)"))
        elif not match:
            found.ignored.append((rel, "the name does not start with a notebook number such as 02_"))
        else:
            by_key.setdefault((learner, match.group(1)), []).append(path)
    for (learner, number), paths in by_key.items():
        exact = [p for p in paths if p.name.endswith(course_files.get(number, "\0"))]
        best = exact[0] if exact else max(paths, key=lambda p: (p.stat().st_mtime, p.name))
        found.submissions.append(Submission(learner, number, best))
        for other in paths:
            if other != best:
                found.ignored.append((str(other.relative_to(folder)),
                                      f"a second notebook {number} for {learner}; graded "
                                      f"{best.relative_to(folder)}"))
    found.learners = sorted(learners)
    found.submissions.sort(key=lambda s: (s.learner, s.number))
    return found
