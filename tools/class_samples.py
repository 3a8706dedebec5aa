"""Honest solved notebooks for testing and timing the grader (tests/test_grading_class.py,
benchmarks/grade_speed.py).

A learner who solved every exercise writes the answer in the exercise cell and keeps its checker
call; the grader gives "contains the worked solution" to a notebook that holds a worked solution
cell of the full notebook (``attention_kit.grading.solutions``). :func:`own_answer` turns a
worked solution into such an answer: the same code, with the solution's silent
``with check.quietly(): assert ...`` dropped and a docstring of the learner's own in each
function, so it is not the solution cell.
"""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat

from attention_kit.check import registry
from attention_kit.grading.solutions import NOTEBOOK_DIR, is_solution_cell

__all__ = ["solution_sources", "own_answer", "with_own_answers", "exercise_cell"]


def _code(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def solution_sources(number: str, folder: Path = NOTEBOOK_DIR) -> dict[str, str]:
    """The worked solution cell of each exercise of notebook ``number``, from the full notebook."""
    entry = registry.notebook(number)
    full = nbformat.read(Path(folder) / entry.file, as_version=4)
    code = _code(full)
    cells = registry.answer_cells([c.source for c in code], entry)
    return {ex_id: next(code[k].source for k in hits if is_solution_cell(code[k]))
            for ex_id, hits in cells.items()}


def _is_quiet_check(node: ast.stmt) -> bool:
    return isinstance(node, ast.With) and any(
        isinstance(item.context_expr, ast.Call) and getattr(item.context_expr.func, "attr", "") == "quietly"
        for item in node.items)


def own_answer(solution: str) -> str:
    """``solution`` as a learner's own answer: no silent check, a docstring in each function."""
    tree = ast.parse(solution)
    tree.body = [node for node in tree.body if not _is_quiet_check(node)]
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            node.body.insert(0, ast.Expr(ast.Constant("My answer.")))
    return ast.unparse(ast.fix_missing_locations(tree))


def exercise_cell(nb, number: str, ex_id: str):
    """The (first) cell of ``nb`` that binds the answer of ``ex_id``: the exercise cell."""
    code = _code(nb)
    hits = registry.answer_cells([c.source for c in code], registry.notebook(number))[ex_id]
    return code[hits[0]]


def with_own_answers(student, number: str):
    """A copy of the student notebook ``student`` with every exercise answered honestly: the
    answer written in the exercise cell, above its checker call."""
    solved = nbformat.from_dict(student)
    entry, solutions = registry.notebook(number), solution_sources(number)
    for ex_id, ex in entry.numbered():
        cell = exercise_cell(solved, number, ex_id)
        parts = [ast.get_source_segment(cell.source, node) or "" for node in ast.parse(cell.source).body]
        kept = [t for t in parts if not set(ex.answers) & registry.bound_names(t)]  # no stub
        call = next((i for i, t in enumerate(kept) if f".{ex.checker.__name__}(" in t), len(kept))
        cell.source = "\n\n".join([*kept[:call], own_answer(solutions[ex_id]), *kept[call:]])
    return solved
