"""The student editions the tests look at (``tools/make_student.py``), built once per test run.

Ten tests or fixtures need a student edition (the default one, or ``--record-predictions``'s),
in the unit tests' xdist workers and in the browser tests' process. Each used to build its own.
Now the first to ask builds it, under a lock (the others wait for it), into a folder the whole
run shares; every caller gets a copy of its own, made from that build, so what it runs or writes
there stays its own, as when it built its own. The build is checked as before: ``make_student``
must return 0 and leave the committed notebooks as they were (``Build.returncode``,
``Build.modified``: the callers assert on them).

The shared folder: ``$AK_TEST_EDITIONS`` when set (``make test`` gives the unit and browser tests
one, and removes it after), else this pytest run's base temporary folder (the one xdist's
workers share).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_student  # noqa: E402


@dataclass(frozen=True)
class Build:
    path: Path  # this caller's copy of the edition
    returncode: int  # what make_student.main returned
    modified: list[str]  # committed notebooks whose bytes the build changed (must be none)
    output: str  # what the build printed


def _shared_folder(tmp_path_factory) -> Path:
    env = os.environ.get("AK_TEST_EDITIONS")
    if env:
        return Path(env)
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _digests() -> dict[str, str]:
    paths = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")) + \
        sorted((ROOT / "notebooks").glob("*/[0-9][0-9]_*.ipynb"))
    return {str(p.relative_to(ROOT)): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


def _build(folder: Path, args: list[str]) -> dict:
    before = _digests()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        rc = make_student.main(["-o", str(folder), *args])
    after = _digests()
    return {"returncode": rc, "output": printed.getvalue(),
            "modified": sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))}


def student_edition(tmp_path_factory, *, record_predictions: bool = False, into: Path | None = None) -> Build:
    """A copy of the student edition (``make student``; ``make student PREDICTIONS=record`` with
    ``record_predictions``) at ``into`` (default: a new temporary folder, ``.../student``)."""
    kind = "record" if record_predictions else "default"
    shared = _shared_folder(tmp_path_factory) / "student-editions"
    shared.mkdir(parents=True, exist_ok=True)
    built, result = shared / kind / "student", shared / f"{kind}.json"
    with open(shared / f"{kind}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process building it: wait for its build
        try:
            if not result.exists():
                shutil.rmtree(built.parent, ignore_errors=True)  # a build that was cut short
                info = _build(built, ["--record-predictions"] if record_predictions else [])
                result.write_text(json.dumps(info), encoding="utf-8")
            info = json.loads(result.read_text(encoding="utf-8"))
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    if into is None:
        into = tmp_path_factory.mktemp(f"student-{kind}") / "student"
    if built.exists():
        shutil.copytree(built, into, symlinks=True)
    return Build(path=into, **info)


def check(build: Build) -> Path:
    """``build``'s folder, after the checks every caller makes: ``make_student`` returned 0 and
    left the committed notebooks alone."""
    assert build.returncode == 0, build.output
    assert build.modified == [], f"make student modified {build.modified}"
    return build.path
