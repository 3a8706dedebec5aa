"""Every notebook's exercises, in course order: the one list the grader, the student copies and
the teaching guide read.

Each :class:`Exercise` names the answer(s) the learner leaves in the kernel (a function or a
value, by its variable name in the notebook) and the checker that judges them. The grader
calls ``checker(*answers, **kwargs)`` on the learner's objects; the student-edition builder warns
when a student copy has no cell that defines an answer; the teaching guide shows
:func:`markdown_table` (a test keeps it in step).

An exercise is a checker in ``attention_kit.check``, its cells in the notebook (the exercise, and
in the teacher's copy only, its worked answer) and an ``Exercise(...)`` in its notebook's tuple
here, in the order of the notebook (the teacher's guide to adding an exercise has a template and a
worked example). A new notebook is one ``Notebook(...)`` entry in ``NOTEBOOKS``. Exercise ids
(``"02.3"``) are the notebook number and the position in that tuple; they head the grade
columns, so append rather than reorder once a class has been graded.
"""

from __future__ import annotations

import ast
import os
import re
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from . import (
    at_scale,
    backprop,
    general,
    heads,
    long_context,
    masks_positions,
    multi_head,
    self_attention,
    tiny_lm,
)

__all__ = ["Exercise", "Notebook", "NOTEBOOKS", "notebook", "exercises", "answer_cells",
           "call_settings", "settings_differ", "markdown_table", "parse_cell"]


@dataclass(frozen=True)
class Exercise:
    """One exercise: a short title, the names of its answers in the kernel, and its checker.

    The checker is called as ``checker(*answers, **kwargs)``; ``kwargs`` holds fixed inputs that
    the notebook passes too (the grader never takes them from the learner's kernel).
    """

    title: str
    answers: tuple[str, ...]
    checker: Callable[..., bool]
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def checker_name(self) -> str:
        """``module.function`` under ``attention_kit.check``, e.g. ``general.dot_scores``."""
        return f"{self.checker.__module__.rsplit('.', 1)[-1]}.{self.checker.__name__}"

    @property
    def plain(self) -> tuple[str, ...] | None:
        """None, or the ``attention_kit`` names the answer may use (``()``: plain numpy only).

        Marked on the checker by :func:`attention_kit.check.plain.plain_numpy`.
        """
        return getattr(self.checker, "plain_numpy", None)


@dataclass(frozen=True)
class Notebook:
    """A notebook of the course: its number ``"NN"``, file name, title and exercises in order."""

    number: str
    file: str
    title: str
    exercises: tuple[Exercise, ...]

    def numbered(self) -> list[tuple[str, Exercise]]:
        """``[("01.1", exercise), ("01.2", exercise), ...]``."""
        return [(f"{self.number}.{i}", ex) for i, ex in enumerate(self.exercises, start=1)]


# Notebook 02, exercise 3: X_ex, the toy sentence of three 2-D vectors with x3 moved, and
# identity projections (a test compares X_ex with the exercise cell).
_X_EX = np.array([[0.1, 0.5],   # x1
                  [0.3, 0.4],   # x2
                  [0.6, 0.3]])  # x3, moved
_I2 = np.eye(2)

NOTEBOOKS: tuple[Notebook, ...] = (
    Notebook("01", "01_general_attention_model.ipynb", "The general attention model", (
        Exercise("softmax by hand", ("my_weights",), general.softmax_by_hand),
        Exercise("dot scores", ("my_dot_scores",), general.dot_scores),
        Exercise("dot and cosine winners", ("dot_winner", "cosine_winner"), general.predict_winners),
        Exercise("context vector", ("my_context",), general.context_vector),
        Exercise("output model", ("my_output_model",), general.output_model),
    )),
    Notebook("02", "02_self_attention.ipynb", "Self-attention", (
        Exercise("softmax row by row", ("my_softmax_rows",), self_attention.softmax_rows),
        Exercise("scaled scores", ("my_scaled_scores",), self_attention.scaled_scores),
        Exercise("one output row by hand", ("y3",), self_attention.output_row,
                 {"X": _X_EX, "W_q": _I2, "W_k": _I2, "W_v": _I2, "i": 2}),
        Exercise("variance of a dot product", ("variance", "std"), self_attention.dot_variance,
                 {"d_k": 16, "mean_q": 1.0, "var_q": 1.0, "mean_k": 0.0, "var_k": 1.0}),
        Exercise("self-attention in one line", ("my_self_attention",),
                 self_attention.full_self_attention),
        Exercise("repair the source's code", ("self_attention_fixed",),
                 self_attention.fixed_source_code),
    )),
    Notebook("03", "03_multi_head_attention.ipynb", "Multi-head attention", (
        Exercise("split and merge heads", ("my_split", "my_merge"), multi_head.split_merge),
        Exercise("one head", ("my_head",), multi_head.one_head),
        Exercise("concatenate and project", ("my_combine",), multi_head.concat_project),
        Exercise("count the parameters", ("answer",), multi_head.n_parameters,
                 {"d_model": 1024, "n_heads": 128, "d_head": 128}),
    )),
    Notebook("04", "04_masks_and_positions.ipynb", "Masks and positions", (
        Exercise("causal mask", ("my_causal_mask",), masks_positions.causal_mask),
        Exercise("masked softmax", ("my_masked_softmax",), masks_positions.masked_softmax),
        Exercise("sinusoidal positions", ("my_positions",), masks_positions.positions),
        Exercise("which rows change", ("answer",), masks_positions.future_unchanged),
    )),
    Notebook("05", "05_how_attention_learns.ipynb", "How attention learns", (
        Exercise("gradients of a general score", ("my_general_score_grads",), backprop.general_score_grads),
        Exercise("why the key bias learns nothing", ("my_bias_grads", "why"), backprop.key_bias),
        Exercise("gradient check", ("my_gradient_check",), backprop.gradient_check),
        Exercise("where each query looks", ("answer",), backprop.rotate_pattern),
    )),
    Notebook("06", "06_tiny_language_model.ipynb", "A tiny language model", (
        Exercise("layer norm", ("my_layer_norm",), tiny_lm.layer_norm),
        Exercise("the mask at inference", ("last_changes", "earlier_change"),
                 tiny_lm.mask_at_inference),
        Exercise("sampling with a temperature", ("my_sample",), tiny_lm.sample),
        Exercise("what head 2 looks at", ("head2_word",), tiny_lm.head_role,
                 {"context": "humpty dumpty had a"}),
    )),
    Notebook("07", "07_attention_at_scale.ipynb", "Attention at scale", (
        Exercise("online softmax update", ("my_online_update",), at_scale.online_update),
        Exercise("skipped tiles", ("my_skipped_tiles",), at_scale.skipped_tiles),
        Exercise("KV cache size", ("my_kv_cache_bytes",), at_scale.kv_cache_size),
    )),
    Notebook("08", "08_what_heads_learn.ipynb", "What trained heads do", (
        Exercise("prefix-matching score", ("my_prefix_matching",), heads.prefix_matching),
        Exercise("where the circuit fails", ("my_failing_queries",), heads.failing_queries),
        Exercise("a window that keeps the sinks", ("my_sink_window_mask",), heads.sink_window_mask),
    )),
    Notebook("09", "09_long_context.ipynb", "Positions for long texts", (
        Exercise("RoPE's matrix of the distance", ("my_rope_matrix",), long_context.rope_matrix),
        Exercise("how far back a sliding cache reaches", ("earliest_cached", "earliest_fresh"),
                 long_context.sliding_reach),
        Exercise("ALiBi's weights when the content is equal", ("my_alibi_weights", "my_ratio"),
                 long_context.alibi_weights),
        Exercise("what a cache with a sink keeps", ("answer",), long_context.cache_keeps),
    )),
)


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
# monotonic clock). CPython 3.10/3.11 cannot build trees in two threads at once (the grader's
# ``workers.py``); the grading-threads test reads this file while a class is graded.
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
