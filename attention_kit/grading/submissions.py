"""Find the returned notebooks in a submissions folder (or a zip of one).

These layouts are understood, and may be mixed:

* one folder per learner: ``SUBMISSIONS/alice/02_self_attention.ipynb``; the folder's name is
  the learner. Notebooks in folders inside it are found too (``alice/week2/02_...``);
* flat files: ``SUBMISSIONS/alice__02_self_attention.ipynb``; the part before ``__`` (two
  underscores) is the learner;
* a Canvas download ("Download Submissions"): ``smithjohn_123456_7890123_02_self_attention.ipynb``
  (sortable name, Canvas user id, attachment id, the learner's file name; ``smithjohn_LATE_123456_...``
  for a late one). The learner is ``smithjohn`` with Canvas id ``123456``. Names keep their
  Unicode letters (``müllerjürgen_1007_...``). With anonymous grading Canvas writes
  ``anon_<id>_7890123_02_...`` (``LATE_anon_<id>_...`` when late): the learner is ``anon_<id>``;
* a Moodle download: a folder per learner, ``Dana Lee_4711_assignsubmission_file_/`` (Moodle
  3.1 to 4.0) or ``Dana Lee_4711_assignsubmission_file/`` (4.1 and later, no trailing ``_``),
  or flat files ``Dana Lee_4711_assignsubmission_file_02_self_attention.ipynb``; with blind
  marking ``Participant_4715_assignsubmission_file/``. The learner is participant ``4711``
  (Moodle's "Participant 4711" in its grading worksheet), named ``Dana Lee``. Moodle writes
  the name with ``_`` made a space, then ``_``, the participant's unique id, ``_``, the plugin
  (moodle/moodle mod/assign/classes/downloader.php, ``get_student_prefix`` and
  ``load_submissionplugin_filelist``; locallib.php before 4.1);
* zip files: the download itself (``SUBMISSIONS`` may be a ``.zip``), a zip in the folder, or a
  learner's own zip; their notebooks are unpacked into a temporary folder.

Every learner is known by the id the LMS gave (:attr:`Learner.key`): ``smithjohn_123456`` (Canvas
user 123456), ``Dana Lee_4711`` (Moodle participant 4711), ``anon_Ab3xZ``; two learners with the
same name and different ids are two learners. A plain folder's learner is its name.

A notebook is recognised by its two-digit number at the start of its name (``02_...``, so
``02_self_attention (1).ipynb`` and Canvas's ``02_self_attention-1.ipynb`` are notebook 02 too).
Anything else (other files, notebooks without a number, a second copy of the same notebook) is
listed in ``ignored`` with the reason, and never stops the run. ``.ipynb_checkpoints``,
``__MACOSX`` and hidden files are skipped silently.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..i18n import _

__all__ = ["Learner", "Submission", "Found", "find_submissions", "CANVAS", "CANVAS_ANONYMOUS", "MOODLE"]

_NUMBER = re.compile(r"^(\d\d)[_\-\s.]")
FLAT_SEPARATOR = "__"
#: Canvas: the learner's sortable name (lower case, any Unicode letters: Canvas keeps
#: ``[[:word:]]``), LATE, user id, attachment id, then the learner's own file name; as Canvas's
#: ``ContentZipper#get_filename`` writes them (instructure/canvas-lms, lib/content_zipper.rb).
CANVAS = re.compile(r"^(?P<login>\w+?)_(?P<late>LATE_)?(?P<id>\d+)_(?P<submission>\d+)_(?P<rest>.+)$")
#: Canvas with anonymous grading: ``anon_<anonymous id>`` instead of name and user id, and a late
#: mark before it (``LATE_anon_Ab3xZ_70017_02_self_attention.ipynb``).
CANVAS_ANONYMOUS = re.compile(r"^(?P<late>LATE_)?anon_(?P<anon>[^\W_]+)_(?P<submission>\d+)_(?P<rest>.+)$")
#: Moodle: full name, participant id, the plugin ("file" or "onlinetext"), then the file name.
#: The folder is ``<prefix>_assignsubmission_file`` from 4.1 on, ``..._file_`` before.
MOODLE = re.compile(r"^(?P<name>.+?)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z]+)(?:_(?P<rest>.*))?$")
_SKIP = {"__pycache__", ".ipynb_checkpoints", "__MACOSX"}
_ZIP_LIMIT = 500 * 1024 * 1024  # bytes unpacked from all zips together, at most


@dataclass
class Learner:
    """A learner as the submissions name them: ``name``, and the ids a learning-management
    system gave (``canvas_id``, the Canvas user id; ``moodle_id``, the Moodle participant)."""

    name: str
    canvas_id: str = ""
    moodle_id: str = ""
    late: bool = False
    anonymous_id: str = ""  # Canvas's anonymous grading: the learner is known by this id only

    @property
    def lms_id(self) -> str:
        return self.canvas_id or self.moodle_id or self.anonymous_id

    @property
    def key(self) -> str:
        """Who the learner is in every file: the name and the LMS's id (``smithjohn_123456``,
        ``Dana Lee_4711``), ``anon_<id>`` when anonymous, the name alone when there is no id."""
        if self.anonymous_id:
            return f"anon_{self.anonymous_id}"
        return f"{self.name}_{self.lms_id}" if self.lms_id else self.name

    def answers_to(self, text: str) -> bool:
        """``text`` is this learner's key, LMS id or name."""
        return text in (self.key, self.lms_id, self.name) and bool(text)


@dataclass(frozen=True)
class Submission:
    """One returned notebook: ``learner``, the notebook's number ``"NN"`` and its path."""

    learner: str
    number: str
    path: Path
    source: str = ""  # where it came from, relative to the submissions (inside a zip: "a.zip/...")
    late: bool = False  # the LMS marked it late (Canvas's LATE_)


@dataclass
class Found:
    """The result of :func:`find_submissions`."""

    submissions: list[Submission] = field(default_factory=list)
    learners: list[str] = field(default_factory=list)
    ignored: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    info: dict[str, Learner] = field(default_factory=dict)


def _visible(path: Path) -> bool:
    return not path.name.startswith(".") and path.name not in _SKIP


def _hidden_files(paths, shown: str, ignored: list) -> None:
    """List hidden files (``.DS_Store``, ``._notes``) as not graded: every file is accounted for.
    Hidden folders and ``.ipynb_checkpoints``/``__MACOSX`` are skipped whole, silently."""
    for p in paths:
        if p.is_file() and p.name.startswith("."):
            ignored.append((f"{shown}/{p.name}" if shown else p.name, _("a hidden file (its name starts with a dot)")))


class _Unpacker:
    """Unpacks the notebooks (and inner zips) of a zip into a folder of its own."""

    def __init__(self, folder: Path | None):
        self.folder, self.count, self.total = folder, 0, 0

    def unpack(self, archive: Path, shown: str, ignored: list) -> Path | None:
        if self.folder is None:
            ignored.append((shown, _("a zip file: give make grade a folder to unpack it into")))
            return None
        self.count += 1
        target = self.folder / f"zip{self.count}"
        try:
            with zipfile.ZipFile(archive) as zf:
                for info in zf.infolist():
                    parts = PurePosixPath(info.filename.replace("\\", "/")).parts
                    if info.is_dir() or not parts or ".." in parts or parts[0] in ("", "/") \
                            or any(p in _SKIP or p.startswith(".") for p in parts):
                        continue
                    label = "/".join((shown, *parts) if shown else parts)
                    if not parts[-1].lower().endswith((".ipynb", ".zip")):
                        ignored.append((label, _("not a notebook (.ipynb)")))
                        continue
                    self.total += info.file_size
                    if self.total > _ZIP_LIMIT:
                        ignored.append((label, _("the zip files unpack to more than {mb} MB: not "
                                                 "unpacked").format(mb=_ZIP_LIMIT >> 20)))
                        continue
                    dest = target.joinpath(*parts)
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    dest.write_bytes(zf.read(info))
        except (zipfile.BadZipFile, OSError, RuntimeError) as exc:
            ignored.append((shown, _("a zip file that could not be read ({error})").format(error=exc)))
            return None
        target.mkdir(parents=True, exist_ok=True)
        return target


def _lms_name(name: str) -> tuple[Learner, str] | None:
    """``(learner, the rest of the name)`` for a Canvas or Moodle name, else None."""
    m = MOODLE.match(name)
    if m:
        return Learner(m.group("name").strip(), moodle_id=m.group("id")), m.group("rest") or ""
    m = CANVAS_ANONYMOUS.match(name)
    if m and _NUMBER.match(m.group("rest")):
        anon = m.group("anon")
        return Learner(f"anon_{anon}", anonymous_id=anon, late=bool(m.group("late"))), m.group("rest")
    m = CANVAS.match(name)
    if m and _NUMBER.match(m.group("rest")):
        return Learner(m.group("login"), canvas_id=m.group("id"), late=bool(m.group("late"))), m.group("rest")
    return None


def _files(folder: Path, shown: str, unpacker: _Unpacker, ignored: list) -> list[tuple[Path, str]]:
    """Every file under a learner's ``folder`` (zips unpacked): ``(path, shown path)``."""
    out = []
    _hidden_files(sorted(folder.iterdir()), shown, ignored)
    for path in sorted(folder.iterdir()):
        if not _visible(path):
            continue
        label = f"{shown}/{path.name}"
        if path.is_dir():
            out += _files(path, label, unpacker, ignored)
        elif path.suffix.lower() == ".zip":
            inner = unpacker.unpack(path, label, ignored)
            if inner is not None:
                out += _files(inner, label, unpacker, ignored)
        else:
            out.append((path, label))
    return out


def find_submissions(folder: Path, course_files: dict[str, str] | None = None, *,
                     unpack_to: Path | None = None) -> Found:
    """Every returned notebook under ``folder`` by learner, in a stable order.

    Parameters
    ----------
    folder : Path
        The submissions folder (any of the layouts above), or a zip of it.
    course_files : dict, optional
        ``{"02": "02_self_attention.ipynb", ...}``. When a learner returned two files for the
        same notebook, the one with the course's file name is graded, else the newest.
    unpack_to : Path, optional
        An empty folder for the notebooks in zip files; without it zips are listed as ignored.
    """
    folder = Path(folder)
    found = Found()
    unpacker = _Unpacker(unpack_to)
    if folder.is_file() and folder.suffix.lower() == ".zip":
        # the zip's files are shown as the same download's folder would show them: without the
        # zip's name (every path in not_graded.csv is relative to the download)
        inner = unpacker.unpack(folder, "", found.ignored)
        if inner is None:
            raise FileNotFoundError(_("{folder} could not be unpacked: {why}").format(
                folder=folder, why=found.ignored[-1][1]))
        entries = [(p, p.name) for p in sorted(inner.iterdir()) if _visible(p)]
    elif folder.is_dir():
        entries = [(p, p.name) for p in sorted(folder.iterdir()) if _visible(p)]
        _hidden_files(sorted(folder.iterdir()), "", found.ignored)
    else:
        raise FileNotFoundError(_("submissions folder {folder} does not exist or is not a folder").format(folder=folder))
    candidates: list[tuple[Learner, Path, str, str]] = []  # (learner, path, name, shown path)

    def learner_folder(learner: Learner, path: Path, shown: str) -> None:
        files = _files(path, shown, unpacker, found.ignored)
        if not files:  # a learner who returned nothing: a row of "not submitted"
            found.ignored.append((shown, _("an empty folder")))
            candidates.append((learner, path, "", shown))
        for file, label in files:
            candidates.append((learner, file, file.name, label))

    pending = list(entries)
    while pending:
        entry, shown = pending.pop(0)
        lms = _lms_name(entry.name)
        if entry.is_dir():
            learner_folder(lms[0] if lms else Learner(entry.name), entry, shown)
        elif entry.suffix.lower() == ".zip" and not lms:  # the download zipped, or part of it
            inner = unpacker.unpack(entry, shown, found.ignored)
            if inner is not None:
                pending += [(p, f"{shown}/{p.name}") for p in sorted(inner.iterdir()) if _visible(p)]
        elif lms:
            learner, rest = lms
            if not rest:
                found.ignored.append((shown, _("a file named as a Moodle folder, with no file name after it")))
            elif entry.suffix.lower() == ".zip":
                inner = unpacker.unpack(entry, shown, found.ignored)
                if inner is not None:
                    learner_folder(learner, inner, shown)
            else:
                candidates.append((learner, entry, rest, shown))
        elif FLAT_SEPARATOR in entry.name:
            learner, _sep, rest = entry.name.partition(FLAT_SEPARATOR)
            candidates.append((Learner(learner.strip()), entry, rest, shown))
        elif entry.name.lower().endswith(".ipynb") and \
                (m := CANVAS_ANONYMOUS.match(entry.name) or CANVAS.match(entry.name)) is not None:
            who = (_("anonymous learner {id}").format(id=m.group('anon')) if "anon" in m.groupdict()
                   else _("{login} (Canvas user id {id})").format(login=m.group('login'), id=m.group('id')))
            found.ignored.append((shown, _("a Canvas download of {who}, but the learner's file name "
                                           "{name} does not start with a notebook number such as 02_, "
                                           "so it is no notebook of the course").format(
                who=who, name=repr(m.group('rest')))))
        else:
            found.ignored.append((shown, _("not recognised: not in a learner's folder, and not named "
                                           "<learner>__NN_topic.ipynb or as Canvas or Moodle name "
                                           "downloads")))
    course_files = course_files or {}
    by_key: dict[tuple[str, str], list[tuple[Path, str]]] = {}
    for learner, path, name, shown in candidates:
        if not learner.name:
            found.ignored.append((shown, _("no learner name before '__'")))
            continue
        known = found.info.setdefault(learner.key, learner)
        known.canvas_id = known.canvas_id or learner.canvas_id
        known.moodle_id = known.moodle_id or learner.moodle_id
        known.anonymous_id = known.anonymous_id or learner.anonymous_id
        if not name:  # the learner's own (empty) folder
            continue
        match = _NUMBER.match(name)
        if not path.name.lower().endswith(".ipynb"):
            found.ignored.append((shown, _("not a notebook (.ipynb)")))
        elif not match:
            found.ignored.append((shown, _("the name does not start with a notebook number such as 02_")))
        else:
            if learner.late:
                known.late = True
            by_key.setdefault((learner.key, match.group(1)), []).append((path, shown, learner.late))
    for (learner, number), paths in by_key.items():
        exact = [p for p in paths if p[0].name.endswith(course_files.get(number, "\0"))]
        best = exact[0] if exact else max(paths, key=lambda p: (p[0].stat().st_mtime, p[0].name))
        found.submissions.append(Submission(learner, number, best[0], best[1], late=best[2]))
        for other in paths:
            if other != best:
                found.ignored.append((other[1], _("a second notebook {number} for {learner}; graded "
                                                  "{graded}").format(number=number, learner=learner, graded=best[1])))
    found.learners = sorted(found.info)
    found.submissions.sort(key=lambda s: (s.learner, s.number))
    return found
