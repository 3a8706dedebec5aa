"""Tell a returned worked solution from the learner's own work.

The full notebooks (``notebooks/NN_topic.ipynb``, the teacher's edition) hold a worked solution
after each exercise: a cell tagged ``solution`` or collapsed (``source_hidden``). A learner who
returns the full notebook, or pastes a solution cell into theirs, would pass every exercise.

:func:`solution_prints` reads each exercise's solution cell and keeps its *print*: the syntax
tree of each top-level statement (``ast.dump``), so comments, blank lines, spacing and quotes do
not matter. :func:`copied_exercises` then says which exercises of a returned notebook contain
their worked solution: a code cell whose statements include the whole solution cell as a run,
or, for a longer solution function (two statements or more), that function exactly. A one-line
answer such as ``answer = [3, 4, 5]`` is never a copy by itself: an honest learner writes the
same line.
"""

from __future__ import annotations

import ast
import functools
import threading
from pathlib import Path
from typing import Sequence

import nbformat

from ..check import registry

__all__ = ["NOTEBOOK_DIR", "is_solution_cell", "solution_prints", "copied_exercises"]

#: The full notebooks, next to the package in the course's repository.
NOTEBOOK_DIR = Path(__file__).resolve().parents[2] / "notebooks"
SOLUTION_TAGS = {"solution", "solutions"}


def is_solution_cell(cell) -> bool:
    """A worked solution: tagged ``solution`` or collapsed (``jupyter.source_hidden``)."""
    meta = cell.get("metadata", {})
    tags = {str(t).lower() for t in meta.get("tags", [])}
    return bool(SOLUTION_TAGS & tags) or bool(meta.get("jupyter", {}).get("source_hidden"))


def _statements(source: str) -> list[str] | None:
    tree = registry.parse_cell(source)  # thread-safe: the grader reads two notebooks at once
    return None if tree is None else [ast.dump(node) for node in tree.body]


def _long_functions(source: str, names: Sequence[str]) -> list[str]:
    """Prints of the ``def`` statements of ``names`` whose body has two statements or more."""
    tree = registry.parse_cell(source)
    if tree is None:
        return []
    return [ast.dump(node) for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name in names and len(node.body) >= 2]


_CACHE_LOCK = threading.Lock()


def solution_prints(number: str, folder: str | None = None) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """As :func:`_solution_prints`, read once per notebook, safe to call from several threads."""
    with _CACHE_LOCK:
        return _solution_prints(number, folder)


@functools.lru_cache(maxsize=None)
def _solution_prints(number: str, folder: str | None = None) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """``{exercise id: (statements of the solution cell, prints of its longer functions)}`` for
    notebook ``number``, from the full notebook in ``folder`` (default :data:`NOTEBOOK_DIR`).
    Empty when the full notebook is not there (a copy of the package without the notebooks)."""
    entry = registry.notebook(number)
    path = Path(folder or NOTEBOOK_DIR) / entry.file
    if not path.is_file():
        return {}
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    cells = registry.answer_cells([c.source for c in code], entry)
    out = {}
    for ex_id, ex in entry.numbered():
        for k in cells[ex_id]:
            if is_solution_cell(code[k]):
                statements = _statements(code[k].source) or []
                out[ex_id] = (tuple(statements), tuple(_long_functions(code[k].source, ex.answers)))
                break
    return out


def _contains_run(haystack: list[str], needle: tuple[str, ...]) -> bool:
    n = len(needle)
    return n > 0 and any(tuple(haystack[i:i + n]) == needle for i in range(len(haystack) - n + 1))


def copied_exercises(sources: Sequence[str], number: str, folder: str | None = None) -> list[str]:
    """The exercise ids of notebook ``number`` whose worked solution is in ``sources`` (the code
    cells of a returned notebook), in the course's order."""
    prints = solution_prints(number, folder)
    if not prints:
        return []
    cells = [s for s in (_statements(src) for src in sources) if s]
    found = set().union(*cells) if cells else set()
    copied = []
    for ex_id, (whole, functions) in prints.items():
        if any(_contains_run(stmts, whole) for stmts in cells) or any(f in found for f in functions):
            copied.append(ex_id)
    return copied
