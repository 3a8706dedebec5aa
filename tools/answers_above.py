"""Find exercises that the student copy answers above themselves (issue 46).

An exercise that asks the learner to retype a line shown above teaches typing. For each exercise
of the registry (``attention_kit/check/registry.py``), :func:`answers_above` looks at the cells a
student copy keeps above the exercise's answer cell and reports

* code: an expression of the worked solution (a ``return`` value, or the value given to an answer
  name) that a kept cell above computes too, compared after renaming every variable in order of
  appearance (``ak.softmax(K_row @ q)`` is ``ak.softmax(K @ q)``); modules (``np``, ``ak``) and
  builtins keep their names, and expressions of fewer than :data:`MIN_NODES` nodes are too common
  to tell anything;
* outputs: a value answer (a literal in the worked solution: a list or set of numbers, or a number
  of four characters or more) printed by a kept cell above in the full notebook's stored outputs
  (a learner who runs the cells sees them).

A cell tagged ``given`` (the code an exercise hands over, as 02's code to repair) is not looked
at. ``tools/make_student.py`` fails the build on any of them.
"""

from __future__ import annotations

import ast
import builtins
import re

#: Expressions smaller than this (syntax nodes, operators and contexts not counted) are not compared.
MIN_NODES = 7
#: ...and a step on the way to it (an assignment inside the solution's function) smaller than this
#: (``c, s = np.cos(a), np.sin(a)`` is a step any demonstration takes).
MIN_STEP_NODES = 10
KEEP = {"np", "ak", "math", "numpy", "check", "self"} | set(dir(builtins))
_SKIP = (ast.expr_context, ast.operator, ast.cmpop, ast.boolop, ast.unaryop)


class _Rename(ast.NodeTransformer):
    def __init__(self):
        self.names: dict[str, str] = {}

    def visit_Name(self, node):
        if node.id not in KEEP:
            node.id = self.names.setdefault(node.id, f"v{len(self.names)}")
        return node


def _size(node: ast.AST) -> int:
    return sum(1 for n in ast.walk(node) if not isinstance(n, _SKIP))


def normalised(node: ast.AST) -> str:
    """``node`` with its variables renamed in order of appearance, as a string."""
    import copy

    return ast.dump(_Rename().visit(copy.deepcopy(node)), annotate_fields=False)


def _parse(source: str) -> ast.Module | None:
    from attention_kit.check.registry import parse_cell

    return parse_cell(source)


def solution_expressions(source: str, answers) -> list[ast.expr]:
    """The expressions of a worked solution that give an answer: the ``return`` values of the
    functions named in ``answers`` and the values assigned to those names (or in those functions)."""
    tree = _parse(source)
    if tree is None:
        return []
    found = []  # (expression, the smallest size that tells something)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in answers:
            for sub in ast.walk(node):
                if isinstance(sub, ast.Return) and sub.value is not None:
                    found.append((sub.value, MIN_NODES))
                elif isinstance(sub, ast.Assign) and sub is not node:  # a step on the way
                    found.append((sub.value, MIN_STEP_NODES))
        elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id in answers for t in node.targets):
            found.append((node.value, MIN_NODES))
    out = []
    while found:  # a tuple of results (``Q, K, V = X @ W_q, ...``) is several steps, each judged alone
        e, least = found.pop(0)
        if isinstance(e, ast.Tuple):
            found += [(x, least) for x in e.elts]
        elif _size(e) >= least:
            out.append(e)
    return out


def literal_answers(source: str, answers) -> list:
    """Values the worked solution gives an answer name as a literal (``answer = [3, 4, 5]``)."""
    tree = _parse(source)
    out = []
    for node in (tree.body if tree else []):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in answers for t in node.targets):
            try:
                out.append(ast.literal_eval(node.value))
            except ValueError:
                pass
    return out


def _printed(value) -> re.Pattern | None:
    """A pattern for ``value`` as print() or numpy would show it, or None if too common to tell."""
    if isinstance(value, (list, tuple, set, frozenset)) and len(value) >= 2 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        items = sorted(value) if isinstance(value, (set, frozenset)) else list(value)
        body = r"[,\s]+".join(re.escape(repr(v)) for v in items)
        return re.compile(r"[\[\({]\s*" + body + r"\s*[\]\)}]")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and len(repr(value)) >= 4:
        return re.compile(r"(?<![\d.])" + re.escape(repr(value)) + r"(?![\d])")
    return None


def _outputs_text(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if "text" in out:
            parts.append("".join(out["text"]))
        data = out.get("data", {})
        if "text/plain" in data:
            parts.append("".join(data["text/plain"]))
    return "\n".join(parts)


def answers_above(nb, file_name: str, *, is_dropped) -> list[str]:
    """Problems: exercises of ``file_name`` whose answer a kept cell above shows (see the module)."""
    from attention_kit.check import registry

    entry = next((n for n in registry.NOTEBOOKS if n.file == file_name), None)
    if entry is None:
        return []
    code = [c for c in nb.cells if c.cell_type == "code"]
    kept = [i for i, c in enumerate(code) if not is_dropped(c)]
    theirs = registry.answer_cells([c.source for c in code], entry)
    mine = registry.answer_cells([code[i].source for i in kept], entry)
    problems = []
    for ex_id, ex in entry.numbered():
        if not mine[ex_id]:
            continue
        at = kept[mine[ex_id][0]]  # the exercise's cell, in the full notebook's code cells
        solutions = [code[k].source for k in theirs[ex_id] if is_dropped(code[k])]
        wanted = {normalised(e): ast.unparse(e) for s in solutions for e in solution_expressions(s, ex.answers)}
        own = _parse(code[at].source)  # what the exercise's own cell gives (a repair's buggy code)
        for node in (ast.walk(own) if own else ()):
            if isinstance(node, ast.expr):
                wanted.pop(normalised(node), None)
        literals = [p for s in solutions for v in literal_answers(s, ex.answers) if (p := _printed(v))]
        for i in kept:
            if i >= at:
                break
            if "given" in code[i].get("metadata", {}).get("tags", []):
                continue  # the code an exercise hands over to repair (02's source code), not an answer
            tree = _parse(code[i].source)
            for node in (ast.walk(tree) if tree else ()):
                if isinstance(node, ast.expr) and _size(node) >= MIN_NODES and normalised(node) in wanted:
                    problems.append(f"{file_name}: exercise {ex_id} ({ex.title}) is answered above it: "
                                    f"{ast.unparse(node)!r} computes the solution's "
                                    f"{wanted[normalised(node)]!r}")
                    break
            text = _outputs_text(code[i])
            for pattern in literals:
                if m := pattern.search(text):
                    problems.append(f"{file_name}: exercise {ex_id} ({ex.title}): a cell above prints "
                                    f"its answer {m.group(0)!r}")
    return problems
