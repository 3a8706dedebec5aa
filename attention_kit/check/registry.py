"""Every notebook's exercises, in course order: the one list the grader, the student copies and
the course repository's teaching guide read.

Each exercise is declared once, in a module ``attention_kit/check/exercises_*.py`` (``declare.py``
says how): an :class:`Exercise` in the module's ``EXERCISES`` (its id, the answer(s) the learner
leaves in the kernel, by their variable names in the notebook, and the checker that judges them)
and, in the teacher's copy only, its grader's part (hidden cases, samples, honest styles). This
module finds every such module by itself and orders the exercises by id; it is not edited to add
one. The grader calls ``checker(*answers, **kwargs)`` on the learner's objects; the student-edition
builder warns when a student copy has no cell that defines an answer; the course repository's teaching guide shows
:func:`markdown_table` (a test keeps it in step).

A new notebook is one entry of :data:`COURSE`. Exercise ids (``"02.3"``) are the notebook number and
the position in the notebook, 1, 2, ... without a gap; they head the grade columns, so append
rather than renumber once a class has been graded (the course repository's guide to adding an exercise
has a template and a worked example).
"""

from __future__ import annotations

import ast
import importlib
import os
import pkgutil
import re
import threading
import time
import warnings
from typing import Any, Iterator, Sequence

import numpy as np

from .declare import Exercise, Grading, Notebook
from .declare import grading as _grading_of

__all__ = ["Exercise", "Notebook", "NOTEBOOKS", "COURSE", "notebook", "exercises", "answer_cells",
           "call_settings", "settings_differ", "markdown_table", "parse_cell", "grading",
           "declaration_modules"]

#: The notebooks of the course, in order: number, file, title. Their exercises are declared in the
#: ``exercises_*`` modules.
COURSE: tuple[tuple[str, str, str], ...] = (
    ("01", "01_general_attention_model.ipynb", "The general attention model"),
    ("02", "02_self_attention.ipynb", "Self-attention"),
    ("03", "03_multi_head_attention.ipynb", "Multi-head attention"),
    ("04", "04_masks_and_positions.ipynb", "Masks and positions"),
    ("05", "05_how_attention_learns.ipynb", "How attention learns"),
    ("06", "06_tiny_language_model.ipynb", "A tiny language model"),
    ("07", "07_attention_at_scale.ipynb", "Attention at scale"),
    ("08", "08_what_heads_learn.ipynb", "What trained heads do"),
    ("09", "09_long_context.ipynb", "Positions for long texts"),
)


def declaration_modules() -> list[str]:
    """The names of the modules that declare exercises: ``attention_kit.check.exercises_*``."""
    here = os.path.dirname(__file__)
    return sorted(f"{__package__}.{info.name}" for info in pkgutil.iter_modules([here])
                  if info.name.startswith("exercises_"))


def _assemble() -> tuple[Notebook, ...]:
    declared: dict[str, list[Exercise]] = {number: [] for number, _, _ in COURSE}
    seen: dict[str, str] = {}
    for name in declaration_modules():
        for ex in importlib.import_module(name).EXERCISES:
            if not re.fullmatch(r"\d\d\.\d+", ex.id) or ex.notebook not in declared:
                raise ValueError(f"{name}: exercise id {ex.id!r} is not NN.k of a notebook of COURSE")
            if ex.id in seen:
                raise ValueError(f"exercise {ex.id} is declared twice: in {seen[ex.id]} and {name}")
            seen[ex.id] = name
            declared[ex.notebook].append(ex)
    out = []
    for number, file, title in COURSE:
        found = tuple(sorted(declared[number], key=lambda e: e.position))
        if [e.position for e in found] != list(range(1, len(found) + 1)):
            raise ValueError(f"notebook {number}'s exercises are {[e.id for e in found]}: "
                             "number them 1, 2, ... without a gap")
        out.append(Notebook(number, file, title, found))
    return tuple(out)


NOTEBOOKS: tuple[Notebook, ...] = _assemble()


def grading(ex_id: str) -> Grading:
    """Exercise ``ex_id``'s grader part (hidden cases, samples, honest styles): an empty
    :class:`~attention_kit.check.declare.Grading` when it declares none. Teacher's edition only:
    the student edition leaves every grader part out."""
    return _grading_of(ex_id)


def notebook(number: str) -> Notebook:
    """The registry entry of notebook ``number`` (``"02"``); KeyError if the course has none."""
    for nb in NOTEBOOKS:
        if nb.number == number:
            return nb
    raise KeyError(f"no notebook {number!r} in the registry; known: {[n.number for n in NOTEBOOKS]}")


def exercises() -> Iterator[tuple[str, Notebook, Exercise]]:
    """Every exercise of the course in order: ``(id, notebook, exercise)``."""
    for nb in NOTEBOOKS:
        for ex_id, ex in nb.numbered():
            yield ex_id, nb, ex


# Where the syntax trees are built: ``AK_PARSE_TRACE=<file>`` appends one line per parse_cell
# call (process id, thread id, 1 if it is the process's main thread, start and end on the
# monotonic clock). CPython 3.10/3.11 cannot build trees in two threads at once, and the course's
# grader checks notebooks in threads: the trace shows that no two parses overlap.
_TRACE = os.environ.get("AK_PARSE_TRACE")


def parse_cell(source: str) -> ast.Module | None:
    """The cell's syntax tree, or None if it does not parse (quietly: a learner's ``"\\d"``
    in a string is not our warning to give)."""
    start = time.monotonic()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return ast.parse(source)
            except (SyntaxError, ValueError, MemoryError, RecursionError):
                return None
    finally:
        if _TRACE:
            main = threading.current_thread() is threading.main_thread()
            with open(_TRACE, "a", encoding="utf-8") as f:
                f.write(f"{os.getpid()} {threading.get_ident()} {int(main)} {start:.6f} "
                        f"{time.monotonic():.6f}\n")


_parse = parse_cell


def bound_names(source: str) -> set[str]:
    """Names a cell assigns or defines at its top level (``x = ...``, ``a, b = ...``, ``def f``).

    A cell that does not parse (a learner's syntax error) binds nothing.
    """
    tree = _parse(source)
    if tree is None:
        return set()
    names: set[str] = set()

    class Binder(ast.NodeVisitor):
        def visit_FunctionDef(self, node):  # the name is bound; the body's names are local
            names.add(node.name)

        visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

        def visit_Lambda(self, node):
            pass

        visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_Lambda

        def visit_Name(self, node):
            if isinstance(node.ctx, ast.Store):
                names.add(node.id)

    Binder().visit(tree)
    return names


def answer_cells(sources: Sequence[str], nb: Notebook) -> dict[str, list[int]]:
    """For each exercise id of ``nb``, the indices into ``sources`` (code cell sources) of the
    cells that bind one of its answer names, in order. An empty list: no cell defines it.

    Cells that do not parse are matched by a plain ``name =`` or ``def name`` in their text, so
    that a learner's syntax error is still traced to its exercise.
    """
    out: dict[str, list[int]] = {}
    bound = [bound_names(src) for src in sources]
    for ex_id, ex in nb.numbered():
        hits = []
        for i, src in enumerate(sources):
            if set(ex.answers) & bound[i] or (not bound[i] and _mentions_binding(src, ex.answers)):
                hits.append(i)
        out[ex_id] = hits
    return out


def _mentions_binding(source: str, names: Sequence[str]) -> bool:
    return any(re.search(rf"(^|\n)\s*(def\s+{re.escape(n)}\b|{re.escape(n)}\s*[,=])", source)
               for n in names)


def call_settings(source: str, ex: Exercise) -> dict[str, Any] | None:
    """The literal keyword arguments with which ``source`` calls ``ex``'s checker
    (``check.dot_variance(v, s, d_k=16)`` gives ``{"d_k": 16}``), or None when it does not call
    it. A keyword whose value is not a literal (``X=X``) maps to ``...``."""
    tree = _parse(source)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == ex.checker.__name__:
            settings: dict[str, Any] = {}
            for kw in node.keywords:
                try:
                    settings[kw.arg] = ast.literal_eval(kw.value)
                except ValueError:
                    settings[kw.arg] = ...
            return settings
    return None


def settings_differ(source: str, ex: Exercise) -> bool:
    """True when ``source`` calls ``ex``'s checker with literal settings other than the
    registry's (an old version of the exercise, or a registry entry to update)."""
    got = call_settings(source, ex)
    if got is None:
        return False
    literal = {k: v for k, v in got.items() if v is not ...}
    registered = {k: v for k, v in ex.kwargs.items() if not isinstance(v, np.ndarray)}
    return literal != registered or not set(got) <= set(ex.kwargs)


def markdown_table() -> str:
    """The registry as a Markdown table: grade column, exercise, answers, checker, and whether the
    answer may call attention_kit (plain-numpy exercises)."""
    rows = ["| column | exercise | the learner's answer | checker (`attention_kit.check.`) | attention_kit |",
            "|---|---|---|---|---|"]
    for ex_id, _nb, ex in exercises():
        answers = ", ".join(f"`{a}`" for a in ex.answers)
        allowed = ("" if ex.plain is None else "not allowed" if not ex.plain
                   else "only " + ", ".join(f"`ak.{a}`" for a in ex.plain))
        rows.append(f"| {ex_id} | {ex.title} | {answers} | `{ex.checker_name}` | {allowed} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(markdown_table())
