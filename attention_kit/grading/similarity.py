"""Pairs of learners whose answers are the same beyond what the worked solution explains.

Two honest learners converge on the textbook form of a short answer (and on the teacher's), so
sameness with the solution, or with a form many learners share, says nothing. What does say
something is two learners who share, exercise after exercise, a form that nobody else and not
the worked solution uses. :func:`answer_print` reduces a learner's answer to an exercise to its
shape: the functions that define the answer (value answers such as ``variance, std = 32,
np.sqrt(32)`` are short, and two honest learners write them alike: they are left out), with
comments, docstrings and layout dropped and
every name the answer binds itself (arguments, local variables) renamed in order of appearance;
names it only reads (``np``, ``len``) are kept. :func:`similar_pairs` then counts, for each pair,
the exercises whose prints are equal, not the teacher's, and shared by at most two learners; a
pair with two such exercises or more in one notebook is flagged. Nothing is taken off: the
summary and the CSV's notes ask the teacher to read the two notebooks side by side.
"""

from __future__ import annotations

import ast
from collections import Counter
from itertools import combinations
from typing import Iterable, Mapping, Sequence

from ..check import registry

__all__ = ["answer_print", "similar_pairs", "find_similar", "note_similar", "flag_similar", "MIN_NODES", "MIN_SHARED"]

#: An answer smaller than this (syntax-tree nodes) is too short to tell anything: ``answer = [3]``.
MIN_NODES = 12
#: Exercises of one notebook whose rare prints a pair must share to be flagged.
MIN_SHARED = 2


class _Normalise(ast.NodeTransformer):
    def __init__(self, bound: set[str], keep: set[str]):
        self.names: dict[str, str] = {}
        self.bound, self.keep = bound, keep

    def _rename(self, name: str) -> str:
        if name in self.keep or name not in self.bound:
            return name
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_Name(self, node):
        node.id = self._rename(node.id)
        return node

    def visit_arg(self, node):
        node.arg = self._rename(node.arg)
        node.annotation = None
        return node

    def _body(self, node):
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
        self.generic_visit(node)
        return node

    def visit_FunctionDef(self, node):
        node.returns = None
        node.decorator_list = []
        return self._body(node)


def _bound(nodes: Sequence[ast.AST]) -> set[str]:
    out = set()
    for node in nodes:
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                out.add(n.id)
            elif isinstance(n, ast.arg):
                out.add(n.arg)
            elif isinstance(n, (ast.FunctionDef, ast.ClassDef)):
                out.add(n.name)
    return out


def answer_print(sources: Sequence[str], ex: registry.Exercise, cells: Sequence[int]) -> str | None:
    """The shape of the answer to ``ex`` in the code cells ``cells`` of ``sources``, or None when
    there is none, or it is too short to tell anything."""
    nodes: list[ast.stmt] = []
    for k in cells:
        tree = registry.parse_cell(sources[k])
        if tree is None:
            continue
        for node in tree.body:  # functions only: short value answers coincide between honest learners
            if isinstance(node, ast.FunctionDef) and node.name in ex.answers:
                nodes.append(node)
    if not nodes:
        return None
    helper_calls = {n.func.id for node in nodes for n in ast.walk(node)
                    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    for k in cells:  # helper functions the learner wrote in the same cells and the answer calls
        tree = registry.parse_cell(sources[k])
        for node in (tree.body if tree else []):
            if isinstance(node, ast.FunctionDef) and node.name in helper_calls and node not in nodes:
                nodes.insert(0, node)
    if sum(1 for node in nodes for _ in ast.walk(node)) < MIN_NODES:
        return None
    module = ast.Module(body=nodes, type_ignores=[])
    module = _Normalise(_bound(nodes), set(ex.answers)).visit(module)
    return ast.dump(module, annotate_fields=False)


def _prints(sources: Sequence[str], number: str) -> dict[str, str]:
    entry = registry.notebook(number)
    cells = registry.answer_cells(sources, entry)
    out = {}
    for ex_id, ex in entry.numbered():
        p = answer_print(sources, ex, cells[ex_id])
        if p is not None:
            out[ex_id] = p
    return out


def similar_pairs(notebooks: Mapping[str, Sequence[str]], number: str,
                  teacher: Sequence[str] | None = None) -> list[tuple[str, str, list[str]]]:
    """``[(learner a, learner b, [exercise ids])]``: the pairs of learners whose answers to
    notebook ``number`` (``{learner: code cell sources}``) share :data:`MIN_SHARED` rare prints or
    more. ``teacher``: the code cells of the full notebook (its solutions' prints explain nothing)."""
    prints = {learner: _prints(src, number) for learner, src in notebooks.items()}
    theirs = set(_prints(teacher, number).values()) if teacher else set()
    counts: Counter = Counter()
    for per in prints.values():
        counts.update(set(per.values()))
    pairs = []
    for a, b in combinations(sorted(prints), 2):
        shared = [ex_id for ex_id, p in prints[a].items()
                  if prints[b].get(ex_id) == p and p not in theirs and counts[p] <= 2]
        if len(shared) >= MIN_SHARED:
            pairs.append((a, b, sorted(shared)))
    return pairs


def find_similar(sources: Mapping[tuple[str, str], Sequence[str]],
                 teacher: Mapping[str, Sequence[str]] | None = None) -> list[tuple[str, str, str, list[str]]]:
    """The similar pairs of a class as ``(notebook, a, b, exercises)``; ``sources``:
    ``{(learner, notebook number): code cell sources}``, ``teacher``: ``{number: code cell
    sources}`` of the full notebooks."""
    found = []
    numbers: Iterable[str] = sorted({number for _, number in sources})
    for number in numbers:
        if number not in {nb.number for nb in registry.NOTEBOOKS}:
            continue
        per = {learner: src for (learner, nb), src in sources.items() if nb == number}
        for a, b, shared in similar_pairs(per, number, (teacher or {}).get(number)):
            found.append((number, a, b, shared))
    return found


def note_similar(grades, found: Iterable[tuple[str, str, str, list[str]]]) -> None:
    """Add a note for the teacher to both learners of every pair :func:`find_similar` found
    (``grades.flags``)."""
    for number, a, b, shared in found:
        note = (f"{a} and {b}: notebook {number}, exercises {', '.join(shared)} are the same up to "
                "names, comments and layout, in a form no other learner and not the worked "
                "solution uses: read them side by side")
        for learner in (a, b):
            grades.flags.setdefault(learner, []).append(note)


def flag_similar(grades, sources: Mapping[tuple[str, str], Sequence[str]],
                 teacher: Mapping[str, Sequence[str]] | None = None) -> list[tuple[str, str, str, list[str]]]:
    """:func:`find_similar`, then :func:`note_similar`; returns the pairs found."""
    found = find_similar(sources, teacher)
    note_similar(grades, found)
    return found
