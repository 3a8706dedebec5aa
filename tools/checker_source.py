"""The check package's source as the student edition ships it (tools/make_student.py): no code
that computes a right answer. ``strip_references`` leaves out every ``@reference`` helper and
grader part (``@grades``) and stubs every ``@recorded`` function (its results ship as data,
``check/recorded.pkl``); ``record_only_checkers`` empties the ``@prediction`` checkers of an
edition that records predictions."""

from __future__ import annotations

import ast


def _decorated(node, name: str) -> bool:
    decorators = [d.func if isinstance(d, ast.Call) else d for d in node.decorator_list]
    return any((isinstance(d, ast.Name) and d.id == name)
               or (isinstance(d, ast.Attribute) and d.attr == name) for d in decorators)


def record_only_checkers(source: str) -> str:
    """``source`` (a module of ``attention_kit/check``) with the body of every ``@prediction``
    checker replaced by ``return record_only(<its answers>)``: a student edition that records
    predictions ships no code that judges them, so nothing a learner can reach (``__wrapped__``,
    ``graded_hints()``, the settings file, a reload) gives a verdict in class."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    found = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and _decorated(node, "prediction")]
    for node in sorted(found, key=lambda n: n.lineno, reverse=True):
        body = node.body
        if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]
        if not body:
            continue
        params = node.args.posonlyargs + node.args.args
        answers = [a.arg for a in params[: len(params) - len(node.args.defaults)]]
        indent = " " * body[0].col_offset
        stub = (f"{indent}from . import record_only\n\n"
                f"{indent}return record_only({', '.join(answers)})  # judged by the grader only\n")
        lines[body[0].lineno - 1: node.end_lineno] = [stub]
    return "".join(lines)


def strip_references(source: str, module: str = "?") -> str:
    """``source`` (a module of ``attention_kit/check``) without the code that computes right
    answers: every ``@reference`` helper and every grader part (``@grades``) is left out, and every
    ``@recorded`` function's body is replaced by a stub (the student edition reads its results from ``recorded.pkl``;
    ``attention_kit/check/recorded.py``). Raises ValueError when code left in the module still
    names a helper that was left out."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    dropped, stubbed = [], []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            if _decorated(node, "reference") or _decorated(node, "grades"):  # a grader's part too
                dropped.append(node)
            elif _decorated(node, "recorded"):
                stubbed.append(node)
    for node in sorted(dropped + stubbed, key=lambda n: n.lineno, reverse=True):
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        if node in dropped:
            lines[first - 1: node.end_lineno] = []
            continue
        indent = " " * node.body[0].col_offset
        stub = (f"{indent}return None  # the student edition holds this function's results as data "
                f"(check/recorded.pkl)\n")
        lines[node.body[0].lineno - 1: node.end_lineno] = [stub]
    out = "".join(lines)
    names = {n.name for n in dropped}
    used = {n.id for n in ast.walk(ast.parse(out)) if isinstance(n, ast.Name)} & names
    if used:
        raise ValueError(f"attention_kit/check/{module}: {sorted(used)} are marked @reference (left "
                         "out of the student edition) but code the student edition keeps calls "
                         "them; call them only from @recorded functions")
    return out
