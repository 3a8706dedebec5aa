"""Grade one returned notebook: run it in a limited kernel, then call the checkers in it.

:func:`grade_notebook` copies the notebook into a fresh temporary folder (the teacher's file is
only read), starts a kernel there (``kernel.py``: memory and file-size limits; ``HOME`` is a
temporary folder too), runs every code cell in order with a time limit per cell (a cell that
runs over is interrupted and the next one runs, as in "Run All" after a stop) and a limit for
the whole notebook (past it the kernel is killed). Errors in cells do not stop the run. Then it
runs the grading cell of ``in_kernel.py`` in the same kernel and turns its lines into an
:class:`~attention_kit.grading.ExerciseGrade` per exercise of the registry. An exercise whose
worked solution is still in the notebook (``solutions.py``) gets "contains the worked solution"
and scores nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import nbformat

from ..check import registry
from ..i18n import N_, _
from . import COULD_NOT_RUN, MISSING, ExerciseGrade, NotebookGrade
from .in_kernel import ready_reply, replaced_names, replaced_note, setup_cell
from .kernel import KERNEL_NAME, write_kernel_spec
from .remote import Link, check_notebook
from .sockets import socket_options
from .solutions import copied_exercises, mark_copies
from .workers import run_coroutine

__all__ = ["Limits", "prepared", "grade_notebook"]

_QUIET = logging.getLogger("attention_kit.grading.nbclient")
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False


@dataclass(frozen=True)
class Limits:
    """Time and memory limits for one notebook (seconds and megabytes)."""

    cell_s: float = 60.0
    notebook_s: float = 300.0
    exercise_s: float = 10.0
    memory_mb: int = 2048
    file_mb: int = 100


def _all_could_not_run(nb_entry, message: str) -> list[ExerciseGrade]:
    return [ExerciseGrade(ex_id, ex.title, COULD_NOT_RUN, message) for ex_id, ex in nb_entry.numbered()]


def _first_line(source: str) -> str:
    lines = [ln.strip() for ln in source.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    text = lines[0] if lines else ""
    return text if len(text) <= 60 else text[:57] + "..."


def _cell_error(cell, limits: Limits) -> str | None:
    """What went wrong in an executed code cell, in one sentence, or None."""
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            if out.get("ename") == "KeyboardInterrupt":
                return _("did not finish within {seconds:g} s and was stopped (an endless loop?)").format(seconds=limits.cell_s)
            value = str(out.get("evalue", "")).strip().splitlines()
            value = re.sub(r"\(\S+\.py, line (\d+)\)", r"(line \1)", value[0]) if value else ""
            value = value if len(value) <= 160 else value[:157] + "..."
            limit = (_(" (the limit is {mb} MB per notebook)").format(mb=limits.memory_mb)
                     if out.get("ename") == "MemoryError" else "")
            return _("raised {error}").format(error=out.get("ename", _("an error"))) + (f": {value}" if value else "") + limit
    return None


class _Run:
    """One notebook's kernel session: run the cells, then the grading cell, within the limits."""

    def __init__(self, nb, number: str, workdir: Path, home: Path, spec_dir: Path, limits: Limits,
                 learner: str = "", seed: str | None = "0"):
        from jupyter_client.kernelspec import KernelSpecManager
        from jupyter_client.manager import AsyncKernelManager
        from nbclient import NotebookClient

        self.nb, self.number, self.limits = nb, number, limits
        self.learner, self.seed = learner, seed
        self.workdir, self.home = workdir, home
        specs = KernelSpecManager(kernel_dirs=[str(spec_dir)])  # sockets: files, not TCP ports
        self.km = AsyncKernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=specs, **socket_options())
        self.deadline = 0.0
        # iopub_timeout: a cell's outputs may trail its reply by seconds on a busy machine (lost: no verdict)
        self.client = NotebookClient(
            nb, km=self.km, timeout=int(limits.cell_s), interrupt_on_timeout=True,
            allow_errors=True, shutdown_kernel="immediate", store_widget_state=False,
            record_timing=False, iopub_timeout=10, startup_timeout=120, log=_QUIET,
            timeout_func=self._cell_timeout, resources={"metadata": {"path": str(workdir)}})
        n_ex = len(registry.notebook(number).exercises)
        self.grading_s = n_ex * (limits.exercise_s + 2) + 20  # each exercise also has its own limit
        self.killed: str | None = None  # "notebook" or "grading": that part ran out of time
        self.died = False  # the kernel stopped by itself (out of memory, os._exit, a crash)
        self.reached = -1  # index of the last cell started
        self.pgid: int | None = None
        self.verdicts: dict[str, dict] = {}
        self.calls = 0
        self.check_seconds = 0.0
        self.setup_failed = False
        self.replaced: list[str] = []  # numpy functions the notebook replaced (for the teacher)

    def _cell_timeout(self, cell) -> int:
        if cell.get("metadata", {}).get("grading"):
            return max(1, int(cell["metadata"].get("grading_timeout", self.grading_s)) + 1)
        return max(1, int(min(self.limits.cell_s, self.deadline - time.monotonic() + 1)))

    def _env(self) -> dict:
        env = dict(os.environ)
        for key in [k for k in env if k.startswith(("JPY_", "JUPYTER_", "IPYTHON"))]:
            del env[key]
        env.update({
            "HOME": str(self.home), "MPLCONFIGDIR": str(self.home / ".mplconfig"),
            "MPLBACKEND": "Agg",  # nothing is shown, so figures are not rendered to PNG
            "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
            "PYDEVD_DISABLE_FILE_VALIDATION": "1", "TMPDIR": str(self.home),
        })
        return env

    def _kill(self, part: str | None = None) -> None:
        """Kill the kernel's process group (the kernel and anything it started)."""
        if part:
            self.killed = part
        if self.pgid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pgid, signal.SIGKILL)

    async def execute_request(self, source: str, timeout: float) -> list:
        """Execute one of the grader's request cells in the kernel; return its outputs."""
        cell = nbformat.v4.new_code_cell(source)
        cell.metadata["grading"] = True
        cell.metadata["grading_timeout"] = float(timeout)
        self.nb.cells.append(cell)  # nbclient files outputs by the cell's index
        try:
            await self.client.async_execute_cell(cell, len(self.nb.cells) - 1)
        finally:
            self.nb.cells.pop()
        return cell.outputs

    async def _setup(self, nonce: str) -> bool:
        """Load a fresh attention_kit in the kernel, with the grader's side door; True when ready."""
        from nbclient.exceptions import DeadKernelError

        try:
            outputs = await self.execute_request(setup_cell(nonce), 60)
        except DeadKernelError:
            self.died = self.killed is None
            return False
        reply = ready_reply(outputs, nonce)
        ready = reply is not None
        self.replaced = replaced_names(reply)
        if not ready:
            self.setup_failed = True
        return ready

    async def run(self, nonce: str) -> None:
        from nbclient.exceptions import DeadKernelError

        loop = asyncio.get_running_loop()
        self.deadline = time.monotonic() + self.limits.notebook_s
        try:
            async with self.client.async_setup_kernel(
                    env=self._env(), cwd=str(self.workdir), cleanup_kc=True,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
                self.pgid = getattr(self.km.provisioner, "pgid", None)
                watchdog = loop.call_later(self.limits.notebook_s + 2, self._kill, "notebook")
                try:
                    for index, cell in enumerate(self.nb.cells):
                        if time.monotonic() >= self.deadline:
                            self.killed = "notebook"
                            break
                        self.reached = index
                        await self.client.async_execute_cell(
                            cell, index, execution_count=self.client.code_cells_executed + 1)
                except DeadKernelError:
                    self.died = self.killed is None
                    return
                finally:
                    watchdog.cancel()
                if self.killed:
                    return
                if not await self._setup(nonce):
                    return
                link = Link(self, loop, nonce)
                watchdog = loop.call_later(self.grading_s + 5, self._kill, "grading")
                started = time.monotonic()
                try:  # the checkers run in a thread of this process; only data comes from the kernel
                    self.verdicts = await loop.run_in_executor(
                        None, check_notebook, link, registry.notebook(self.number), self.limits.exercise_s,
                        self.learner, self.seed)
                finally:
                    watchdog.cancel()
                    self.calls = link.calls
                    self.check_seconds = time.monotonic() - started
        finally:
            self._kill()  # anything the learner's code left running in the kernel's process group


#: The teacher's note (grades.csv, summary.md; never the feedback) when the grader's checking code
#: could not be loaded after the notebook ran.
INTERFERED = N_("the notebook interfered with the grader: after it ran, the grader's checking code could "
                "not be loaded into its kernel, so nothing was checked (an IPython input transformer, or "
                "replaced builtins or modules, can do this). Read the notebook: grade it by hand, or ask "
                "the learner to remove that code and regrade")


def _grades(run: _Run, nb_entry, verdicts: dict, limits: Limits) -> tuple[list[ExerciseGrade], list[str]]:
    """Turn the kernel's verdicts into grades; trace a missing answer to its cell's error."""
    code = [(i, c) for i, c in enumerate(run.nb.cells)
            if c.cell_type == "code" and not c.metadata.get("grading")]
    cells = registry.answer_cells([c.source for _, c in code], nb_entry)
    grades, notes = [], []
    explained: set[int] = set()  # code cells whose error an exercise's verdict already names
    if run.killed == "notebook":
        reason = _("the notebook did not finish within {seconds:g} s, so it could not be graded: look for a loop that "
                   "never ends").format(seconds=limits.notebook_s)
    elif run.killed == "grading":
        reason = _("the grader's calls to your answers did not finish in time")
    elif run.setup_failed:  # the teacher is told why (INTERFERED); the learner is not blamed
        reason = _("the grader could not check this notebook: after it ran, the grader's checking "
                   "code could not be loaded into its kernel. Your teacher has been told and will look at it")
    elif run.died:
        reason = _("the Python kernel stopped while running the notebook (out of memory, or the notebook ended Python itself)")
    else:
        reason = _("the grader got no verdict for this exercise")
    for ex_id, ex in nb_entry.numbered():
        verdict = verdicts.get(ex_id)
        if verdict is None:
            grades.append(ExerciseGrade(ex_id, ex.title, COULD_NOT_RUN, reason))
            continue
        status, message = verdict.get("status", COULD_NOT_RUN), str(verdict.get("message", ""))
        if status == MISSING:
            names = ", ".join(f"`{a}`" for a in ex.answers)
            errors = [(k, _cell_error(code[k][1], limits)) for k in cells[ex_id]]
            errors = [(k, e) for k, e in errors if e]
            if errors:
                k, err = errors[-1]
                explained.add(k)
                status = COULD_NOT_RUN
                message = _("the exercise cell (code cell {cell}) {error}, so {names} was never defined").format(cell=k + 1, error=err, names=names)
            elif cells[ex_id]:
                message = _("{names} is not defined after running the notebook").format(names=names)
            else:
                message = _("no cell defines {names}: the exercise cell was deleted or renamed, or "
                            "this is an old version of the notebook").format(names=names)
        grades.append(ExerciseGrade(ex_id, ex.title, status, message))
    changed = [ex_id for ex_id, ex in nb_entry.numbered()
               if any(registry.settings_differ(code[k][1].source, ex) for k in cells[ex_id])]
    if changed:
        notes.append(_("exercise(s) {exercises} call their checker with other settings than the current "
                       "course: an old version of the notebook? They were graded as the course asks "
                       "now").format(exercises=", ".join(changed)))
    missing = [g.id for g in grades if g.status == MISSING]
    if missing and len(missing) == len(grades):
        notes.append(_("none of the exercises of notebook {number} were found: is this a notebook of "
                       "another course, or an old version of this one?").format(number=nb_entry.number))
    elif missing:
        notes.append(_("exercise(s) {exercises} not found: an old version of the notebook, "
                       "or deleted exercise cells").format(exercises=", ".join(missing)))
    errors = []
    for k, (index, cell) in enumerate(code):
        if index > run.reached or k in explained:
            continue
        if "raises-exception" in cell.get("metadata", {}).get("tags", []):
            continue
        err = _cell_error(cell, limits)
        if err:
            errors.append(_("code cell {cell} (`{line}`) {error}").format(cell=k + 1, line=_first_line(cell.source), error=err))
    if errors:
        more = _(" (and {n} more)").format(n=len(errors) - 3) if len(errors) > 3 else ""
        notes.append(_("errors while running the notebook: ") + "; ".join(errors[:3]) + more)
    return grades, notes


def _read(path: Path):
    """The notebook at ``path``, or a sentence saying why it cannot be read."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return None, _("the file could not be read: {error}").format(error=exc.strerror or exc)
    if not raw.strip():
        return None, _("the file is empty: there is no notebook in it")
    try:
        text = raw.decode("utf-8")
        json.loads(text)
    except UnicodeDecodeError:
        return None, _("the file is not a notebook: it is not text (UTF-8)")
    except ValueError as exc:
        where = (_(" (line {line}, column {column}: {error})").format(line=exc.lineno, column=exc.colno, error=exc.msg)
                 if hasattr(exc, "lineno") else "")
        return None, _("the file is not valid notebook JSON{where}: it may have been cut short, "
                       "or edited outside Jupyter").format(where=where)
    try:
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # missing keys, a schema violation, a format from the future
        first = " ".join(str(exc).split())[:160] or type(exc).__name__
        return None, _("the file is JSON but not a Jupyter notebook ({error})").format(error=first)
    return nb, None


@contextlib.contextmanager
def prepared(limits: Limits) -> Iterator[tuple[Path, Path]]:
    """A temporary folder with the grading kernelspec and a warm matplotlib cache to copy into
    each notebook's ``HOME``: yields ``(spec_dir, mpl_template)``."""
    root = Path(tempfile.mkdtemp(prefix="ak-grade-setup-"))
    try:
        spec_dir = write_kernel_spec(root / "kernels", memory_mb=limits.memory_mb,
                                     file_mb=limits.file_mb)
        template = root / "mplconfig"
        template.mkdir()
        subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"],
                       env={**os.environ, "MPLCONFIGDIR": str(template), "MPLBACKEND": "Agg"},
                       check=False, capture_output=True, timeout=300)
        yield spec_dir, template
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _new_home(root: Path, mpl_template: Path | None) -> Path:
    home = root / "home"
    home.mkdir()
    if mpl_template is not None and mpl_template.is_dir():
        shutil.copytree(mpl_template, home / ".mplconfig")
    return home


def grade_notebook(learner: str, number: str, path: Path | None, *, spec_dir: Path,
                   limits: Limits = Limits(), mpl_template: Path | None = None,
                   source: str | None = None, seed: str | None = "0") -> NotebookGrade:
    """Grade ``path`` (notebook ``number`` of ``learner``); never raises for a bad notebook.

    ``seed``: the teacher's seed of the hidden cases (``hidden.py``); None tries none."""
    start = time.monotonic()
    try:
        nb_entry = registry.notebook(number)
    except KeyError:
        known = ", ".join(n.number for n in registry.NOTEBOOKS)
        return NotebookGrade(learner, number, source, [],
                             [_("{source}: notebook {number} is not part of this course (it has {known})").format(
                                 source=source, number=number, known=known)])
    grade = NotebookGrade(learner, number, source, [])
    nb, problem = _read(Path(path))
    if nb is None:
        grade.exercises = _all_could_not_run(nb_entry, problem)
        grade.notes.append(f"{source}: {problem}")
        return grade
    if not nb.cells:
        grade.notes.append(_("the notebook has no cells"))
    root = Path(tempfile.mkdtemp(prefix="ak-grade-"))
    try:
        workdir = root / "work"
        workdir.mkdir()
        shutil.copyfile(path, workdir / nb_entry.file)
        copied = copied_exercises([c for c in nb.cells if c.cell_type == "code"], number)
        if len(copied) == len(nb_entry.exercises):  # nothing of the learner's own to run
            grade.exercises = [ExerciseGrade(ex_id, ex.title, COULD_NOT_RUN) for ex_id, ex in nb_entry.numbered()]
            mark_copies(grade, copied)
            return grade
        home = _new_home(root, mpl_template)
        nonce = secrets.token_hex(16)
        for attempt in (1, 2):  # a kernel that dies while starting (a busy machine) gets a second try
            run = _Run(nbformat.from_dict(nb), number, workdir, home, spec_dir, limits, learner, seed)
            try:
                run_coroutine(run.run, nonce)
                break
            except RuntimeError as exc:
                if attempt == 2 or "before replying to kernel_info" not in str(exc) or run.reached >= 0:
                    raise
        verdicts = run.verdicts
        grade.requests, grade.check_seconds = run.calls, run.check_seconds
        grade.exercises, notes = _grades(run, nb_entry, verdicts, limits)
        grade.notes.extend(notes)
        if run.setup_failed:
            grade.teacher_notes.append(_(INTERFERED))
        if run.replaced:
            grade.notes.append(replaced_note(run.replaced))
        mark_copies(grade, copied)
    except Exception as exc:  # the grader's own failure on this notebook: a clear row, not a crash
        grade.exercises = _all_could_not_run(nb_entry, _("the grader failed on this notebook: {error}").format(
            error=f"{type(exc).__name__}: {exc}"))
        grade.notes.append(grade.exercises[0].message)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        grade.seconds = time.monotonic() - start
    return grade
