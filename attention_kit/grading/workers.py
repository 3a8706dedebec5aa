"""Grade returned notebooks in worker processes: no syntax tree is ever built in two threads at once.

CPython 3.10 and 3.11 keep the AST constructor's recursion depth in state that all the threads of
a process share (python/cpython#106905): two threads that build syntax trees at the same time
(``ast.parse``; Python 3.11's traceback formatting; pytest rewriting a test module's asserts;
IPython reading a cell) can make either fail with ``SystemError: AST constructor recursion depth
mismatch``. The grader builds syntax trees of every returned notebook (``solutions.py``,
``check/registry.py``'s ``parse_cell``), so it never does that in a thread: each notebook is
graded in a worker process (``spawn``: a fresh interpreter, not a fork of this one's threads),
and inside it every tree is built on the worker's main thread, before the learner's kernel runs
and after it has stopped; the one other thread a worker starts (the checkers', ``execute.py``)
builds none. Whatever the process that called the grader does in its own threads, a pytest run,
a Jupyter kernel, cannot reach a worker's parse.

A worker that dies (killed from outside, out of memory) breaks the pool; the notebooks it had
not finished are graded again in a fresh pool, once, and a notebook that breaks a second pool
gets a clear row, like any failure of the grader. :func:`grade_in_processes` yields each
submission with its grade or the exception that stopped it. The class's own syntax trees (the
similar answers, ``similarity.py``) are built in a worker too: :func:`in_process`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Iterable, Iterator

from ..i18n import _

__all__ = ["grade_in_processes", "in_process"]


def _worker_start() -> None:
    """Run first in each worker process: leave out ``rfc3987_syntax`` (jupyter-events installs it
    for jsonschema's ``iri`` formats), whose grammar is compiled when jsonschema is imported, over
    a second of CPU in every process that reads a notebook (nbformat imports jsonschema). No schema
    the grader validates with (nbformat's) has an IRI format; jsonschema goes without that one
    check when the package is missing. (Under ``python -m attention_kit.grading`` a spawned worker
    imports the command's module first, and with it nbformat: there it is too late, and nothing changes.)"""
    sys.modules.setdefault("rfc3987_syntax", None)


def grade_in_processes(jobs: Iterable[tuple[object, Callable, tuple, dict]], workers: int,
                       ) -> Iterator[tuple[object, object | None, BaseException | None]]:
    """Run ``fn(*args, **kwargs)`` for each ``(key, fn, args, kwargs)`` in ``workers`` processes;
    yield ``(key, result, None)`` or ``(key, None, exception)`` as each one finishes."""
    pending = list(jobs)
    for attempt in (1, 2):
        broken = []
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max(1, min(workers, len(pending) or 1)), mp_context=ctx,
                                 initializer=_worker_start) as pool:
            futures = {pool.submit(fn, *args, **kwargs): (key, fn, args, kwargs)
                       for key, fn, args, kwargs in pending}
            for future in as_completed(futures):
                job = futures[future]
                try:
                    result = future.result()
                except BrokenProcessPool as exc:
                    if attempt == 1:
                        broken.append(job)
                    else:
                        yield job[0], None, RuntimeError(
                            _("its grading process stopped twice ({error}): the machine ran out of "
                              "memory, or the process was killed").format(error=exc))
                    continue
                except Exception as exc:  # the grader's own failure on this notebook
                    yield job[0], None, exc
                    continue
                yield job[0], result, None
        if not broken:
            return
        pending = broken


def in_process(fn: Callable, *args):
    """``fn(*args)`` computed in a fresh worker process (its exception raised here)."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_worker_start) as pool:
        return pool.submit(fn, *args).result()


def run_coroutine(fn, *args) -> None:
    """``asyncio.run(fn(*args))``, in a thread of its own when this thread already runs an event
    loop (inside Jupyter, or a test that left one running)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(fn(*args))
        return
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(lambda: asyncio.run(fn(*args))).result()
