"""Tell a returned worked solution from the learner's own work, with evidence honest work cannot give.

The full notebooks (``notebooks/NN_topic.ipynb``, the teacher's edition) hold a worked solution
after each exercise: a cell tagged ``solution`` or collapsed (``source_hidden``). A short
canonical answer *is* the solution (the numerically stable softmax, ``Q @ K.T / np.sqrt(d_k)``):
an honest learner writes the same code, so the same code is never evidence by itself.
:func:`copied_exercises` says which exercises of a returned notebook contain their worked solution
only when one of these is there:

* **the solution cell itself**: a code cell with the solution cell's id, or tagged ``solution``,
  that binds the exercise's answer (a cell copied from the teacher's notebook keeps them);
* **its words**: a comment of the solution cell (24 characters or more, and not in the student
  edition's text) verbatim in the learner's cell, or the solution's silent check
  (``with check.quietly(): assert check...``), which no exercise asks a learner to write;
* **a whole stretch**: three exercises or more whose code is the teacher's statement for statement
  (syntax trees equal: names kept, comments and layout dropped), ten statements or more in all.

Answers that are the same as the teacher's up to names, or as another learner's, are a question
for the teacher, not a verdict: ``similarity.py`` flags pairs of learners for the summary.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path
from typing import Sequence

import nbformat

from ..check import registry
from ..i18n import _
from . import SOLUTION, NotebookGrade

__all__ = ["NOTEBOOK_DIR", "is_solution_cell", "copied_exercises", "solution_cells", "Evidence", "mark_copies"]

#: The full notebooks, next to the package in the course's repository.
NOTEBOOK_DIR = Path(__file__).resolve().parents[2] / "notebooks"
SOLUTION_TAGS = {"solution", "solutions"}
_MIN_COMMENT = 24
_STRETCH_EXERCISES = 3
_STRETCH_STATEMENTS = 10


def is_solution_cell(cell) -> bool:
    """A worked solution: tagged ``solution`` or collapsed (``jupyter.source_hidden``)."""
    meta = cell.get("metadata", {})
    tags = {str(t).lower() for t in meta.get("tags", [])}
    return bool(SOLUTION_TAGS & tags) or bool(meta.get("jupyter", {}).get("source_hidden"))


def _tagged(cell) -> bool:
    return bool(SOLUTION_TAGS & {str(t).lower() for t in cell.get("metadata", {}).get("tags", [])})


def _comments(source: str) -> set[str]:
    out = set()
    for line in source.splitlines():
        if "#" in line:
            text = " ".join(line.split("#", 1)[1].split())
            if len(text) >= _MIN_COMMENT:
                out.add(text)
    return out


def _quiet_checks(tree: ast.Module | None) -> list[str]:
    if tree is None:
        return []
    return [ast.dump(node) for node in tree.body if isinstance(node, ast.With) and any(
        isinstance(i.context_expr, ast.Call) and getattr(i.context_expr.func, "attr", "") == "quietly"
        for i in node.items)]


def _count(nodes) -> int:
    return sum(1 for node in nodes for n in ast.walk(node) if isinstance(n, ast.stmt))


class Evidence:
    """What the teacher's solution cell of one exercise leaves in a copy."""

    def __init__(self, cell, student_text: str):
        self.id = cell.get("id")
        tree = registry.parse_cell(cell.source)
        self.comments = {c for c in _comments(cell.source) if c not in student_text}
        self.quiet = set(_quiet_checks(tree))
        body = [n for n in (tree.body if tree else []) if ast.dump(n) not in self.quiet]
        self.code = tuple(ast.dump(n) for n in body)
        self.size = _count(body)


@functools.lru_cache(maxsize=None)
def solution_cells(number: str, folder: str | None = None) -> dict[str, Evidence]:
    """``{exercise id: Evidence}`` for notebook ``number`` (read once per process). Empty when
    the full notebook is not there (a copy of the package without the notebooks)."""
    entry = registry.notebook(number)
    path = Path(folder or NOTEBOOK_DIR) / entry.file
    if not path.is_file():
        return {}
    nb = nbformat.read(path, as_version=4)
    student_text = "\n".join(c.source for c in nb.cells if not is_solution_cell(c))
    student_text = " ".join(re.sub(r"#", " ", student_text).split())
    code = [c for c in nb.cells if c.cell_type == "code"]
    cells = registry.answer_cells([c.source for c in code], entry)
    out = {}
    for ex_id, _ex in entry.numbered():
        for k in cells[ex_id]:
            if is_solution_cell(code[k]):
                out[ex_id] = Evidence(code[k], student_text)
                break
    return out


def _contains_run(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    n = len(needle)
    return n > 0 and any(tuple(haystack[i:i + n]) == tuple(needle) for i in range(len(haystack) - n + 1))


def copied_exercises(cells: Sequence, number: str, folder: str | None = None) -> dict[str, str]:
    """``{exercise id: what was seen}`` for the exercises of notebook ``number`` whose worked
    solution is in ``cells`` (the code cells of a returned notebook: dicts with ``source``,
    ``metadata`` and maybe ``id``), by the evidence of the module's docstring."""
    evidence = solution_cells(number, folder)
    if not evidence:
        return {}
    entry = registry.notebook(number)
    sources = [c.get("source", "") for c in cells]
    trees = [registry.parse_cell(src) for src in sources]
    statements = [[ast.dump(n) for n in t.body] if t else [] for t in trees]
    binds = registry.answer_cells(sources, entry)
    found: dict[str, str] = {}
    identical: list[str] = []
    for ex_id, _ex in entry.numbered():
        ev = evidence.get(ex_id)
        if ev is None:
            continue
        own = binds.get(ex_id, [])
        for k in own:
            cell = cells[k]
            if ev.id and cell.get("id") == ev.id:
                found[ex_id] = _("a cell with the id of the teacher's solution cell")
            elif _tagged(cell):
                found[ex_id] = _("a cell tagged as the teacher's solution")
            elif ev.quiet & set(statements[k]):
                found[ex_id] = _("the worked solution's silent check (with check.quietly(): assert ...)")
            else:
                text = " ".join(sources[k].split())
                same = [c for c in ev.comments if c in text]
                if same:
                    found[ex_id] = _("the worked solution's comment \"{comment}\"").format(comment=same[0][:60])
            if ex_id in found:
                break
        if ex_id not in found and ev.code and any(_contains_run(statements[k], ev.code) for k in own):
            identical.append(ex_id)
    size = sum(evidence[e].size for e in identical)
    if len(identical) >= _STRETCH_EXERCISES and size >= _STRETCH_STATEMENTS:
        for ex_id in identical:
            found[ex_id] = _("exercises {exercises} are the worked solutions statement for "
                             "statement").format(exercises=", ".join(identical))
    return dict(sorted(found.items()))


def mark_copies(grade: NotebookGrade, copied: dict[str, str]) -> None:
    """Exercises whose worked solution is in the notebook score nothing, whatever they ran to;
    the verdict says what was seen (``solutions.py``)."""
    if not copied:
        return
    for g in grade.exercises:
        if g.id in copied:
            g.status = SOLUTION
            g.message = _("this notebook contains the course's worked solution of this exercise "
                          "({evidence}), so it scores nothing: hand in your own answer").format(
                evidence=copied[g.id])
    every = len(copied) == len(grade.exercises)
    grade.notes.append(_("every exercise's worked solution is in this notebook: the full (teacher's) "
                         "notebook, or all its solution cells pasted in") if every else
                       _("exercise(s) {evidence}: the course's worked solution").format(
                           evidence="; ".join(f"{k}: {v}" for k, v in copied.items())))
