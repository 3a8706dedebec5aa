"""Groups of learners whose answers are the same beyond what the worked solution explains.

Two honest learners converge on the textbook form of a short answer (and on the teacher's), so
sameness with the solution, or with a form many learners share, says nothing. What does say
something is a few learners who share, exercise after exercise, a form that nobody else and not
the worked solution uses. :func:`answer_print` reduces a learner's answer to an exercise to its
shape: the functions that define the answer (value answers such as ``variance, std = 32,
np.sqrt(32)`` are short, and two honest learners write them alike: they are left out), with
comments, docstrings and layout dropped and
every name the answer binds itself (arguments, local variables) renamed in order of appearance;
names it only reads (``np``, ``len``) are kept.

The rule (:func:`similar_groups`), for one notebook and a class of N learners who returned it:

- a print is *rare* when it is not the teacher's (the worked solution's prints explain nothing:
  :func:`teacher_prints`, each solution cell's print alone, for the natural form the solution
  writes is one honest learners write too) and the learners who wrote it, all of them, number from 2 to :func:`rare_limit` (N): two in
  any class; in a class of 7 or more, up to a tenth of the class (:data:`GROUP_SHARE`) but at
  least three, and always fewer than half of it (a form half the class writes is the textbook's);
- a *group* is the set of all the learners of one rare print; its exercises are those where
  every member wrote the same rare print (others in a rare print's set allowed: a pair inside
  a group of three keeps the exercises the three share);
- a group with :data:`MIN_SHARED` exercises or more is flagged. A group of three or more is
  flagged as one, a note naming every member; a pair within it is flagged too when the pair
  alone shares a further rare print (it then has more exercises than the group).

Honest convergence on a textbook form is a form many learners write (not rare), or a rare form
written by different learners from one exercise to the next (no group with two exercises).
Nothing is taken off: the summary and the CSV's notes ask the teacher to read the answers side by
side.
"""

from __future__ import annotations

import ast
import hashlib
from typing import Iterable, Mapping, Sequence

from ..check import registry
from ..i18n import _

__all__ = ["answer_print", "answer_prints", "teacher_prints", "similar_groups", "similar_pairs", "find_similar", "note_similar",
           "flag_similar", "print_digest", "groups_in_prints", "class_prints", "similar_in_prints", "rare_limit",
           "MIN_NODES", "MIN_SHARED", "GROUP_SHARE"]

#: An answer smaller than this (syntax-tree nodes) is too short to tell anything: ``answer = [3]``.
MIN_NODES = 12
#: Exercises of one notebook whose rare prints a pair must share to be flagged.
MIN_SHARED = 2
#: A group may be up to one learner in this many of the class (at least three, fewer than half).
GROUP_SHARE = 10


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


def answer_prints(sources: Sequence[str], number: str) -> dict[str, str]:
    """``{exercise id: print}`` of one learner's notebook ``number`` (its code cell sources)."""
    entry = registry.notebook(number)
    cells = registry.answer_cells(sources, entry)
    out = {}
    for ex_id, ex in entry.numbered():
        p = answer_print(sources, ex, cells[ex_id])
        if p is not None:
            out[ex_id] = p
    return out


def teacher_prints(sources: Sequence[str], number: str) -> set[str]:
    """The prints of the full notebook's answers (code cell sources ``sources``): each exercise's
    worked solution cell alone, and every cell that binds an answer alone, as well as all of
    them together. The full notebook also holds the exercise cell's stub, so the print of all
    its cells together is no learner's: a learner who writes the solution's form (the natural
    form, which honest learners write too) shares the print of the solution cell alone."""
    entry = registry.notebook(number)
    cells = registry.answer_cells(sources, entry)
    out = set()
    for ex_id, ex in entry.numbered():
        for group in [cells[ex_id], *([k] for k in cells[ex_id])]:
            p = answer_print(sources, ex, group)
            if p is not None:
                out.add(p)
    return out


def rare_limit(n: int) -> int:
    """The most learners, in a class of ``n``, who may share a print for it to count as rare:
    two always; a tenth of the class, at least three, when that is fewer than half of it."""
    return max(2, min(max(3, n // GROUP_SHARE), (n - 1) // 2))


def print_digest(p: str) -> str:
    """A short digest of a print: the prints a grades folder keeps (``grades.json``), so that the
    shards of a class can be compared at merge time (only their equality matters)."""
    return hashlib.sha256(p.encode()).hexdigest()[:32]


def groups_in_prints(prints: Mapping[str, Mapping[str, str]], theirs: Iterable[str] = ()
                     ) -> list[tuple[tuple[str, ...], list[str]]]:
    """:func:`similar_groups` on prints already made: ``prints`` is ``{learner: {exercise id:
    print}}`` of every learner who returned the notebook (an empty dict for one with no
    answer to compare), ``theirs`` the teacher's prints (raw prints or digests, as long as both
    are the same kind)."""
    theirs = set(theirs)
    holders: dict[tuple[str, str], set[str]] = {}
    for learner, per in prints.items():
        for ex_id, p in per.items():
            if p not in theirs:
                holders.setdefault((ex_id, p), set()).add(learner)
    limit = rare_limit(len(prints))
    rare = {key: frozenset(who) for key, who in holders.items() if 2 <= len(who) <= limit}
    groups = []
    for group in set(rare.values()):  # every group that is, on some exercise, all of the print's users
        shared = sorted({ex_id for (ex_id, _), who in rare.items() if group <= who})
        if len(shared) >= MIN_SHARED:
            groups.append((tuple(sorted(group)), shared))
    return sorted(groups, key=lambda g: (-len(g[0]), g[0]))


def similar_groups(notebooks: Mapping[str, Sequence[str]], number: str,
                   teacher: Sequence[str] | None = None) -> list[tuple[tuple[str, ...], list[str]]]:
    """``[((learners, ...), [exercise ids])]``: the groups of two learners or more whose answers
    to notebook ``number`` (``{learner: code cell sources}``) share :data:`MIN_SHARED` rare
    prints or more (the rule: the module's docstring), largest groups first. ``teacher``: the
    code cells of the full notebook (its solutions' prints explain nothing)."""
    prints = {learner: answer_prints(src, number) for learner, src in notebooks.items()}
    return groups_in_prints(prints, teacher_prints(teacher, number) if teacher else ())


def similar_pairs(notebooks: Mapping[str, Sequence[str]], number: str,
                  teacher: Sequence[str] | None = None) -> list[tuple[str, str, list[str]]]:
    """``[(learner a, learner b, [exercise ids])]``: the groups of :func:`similar_groups` that
    are pairs (the larger groups are left out here)."""
    return [(*g, shared) for g, shared in similar_groups(notebooks, number, teacher) if len(g) == 2]


def class_prints(sources: Mapping[tuple[str, str], Sequence[str]],
                 teacher: Mapping[str, Sequence[str]] | None = None
                 ) -> tuple[dict[tuple[str, str], dict[str, str]], dict[str, list[str]]]:
    """The digests (:func:`print_digest`) of a class's answers and of the teacher's: ``({(learner,
    notebook number): {exercise id: digest}}, {number: sorted digests of the full notebook}``);
    ``sources``: ``{(learner, number): code cell sources}`` (notebooks outside the course are
    left out), ``teacher``: ``{number: code cell sources}`` of the full notebooks. They are all
    :func:`similar_in_prints` needs: a shard of a class keeps them, and the merge finds the
    groups across the whole class (``shards.py``)."""
    known = {nb.number for nb in registry.NOTEBOOKS}
    prints = {key: {ex_id: print_digest(p) for ex_id, p in answer_prints(src, key[1]).items()}
              for key, src in sources.items() if key[1] in known}
    theirs = {number: sorted({print_digest(p) for p in teacher_prints(src, number)})
              for number, src in (teacher or {}).items() if number in known and src}
    return prints, theirs


def similar_in_prints(prints: Mapping[tuple[str, str], Mapping[str, str]],
                      teacher: Mapping[str, Iterable[str]] | None = None
                      ) -> list[tuple[str, tuple[str, ...], list[str]]]:
    """:func:`find_similar` on the prints :func:`class_prints` made (no syntax tree is built)."""
    found = []
    for number in sorted({number for _learner, number in prints}):
        per = {learner: p for (learner, nb), p in sorted(prints.items()) if nb == number}
        for group, shared in groups_in_prints(per, (teacher or {}).get(number, ())):
            found.append((number, group, shared))
    return found


def find_similar(sources: Mapping[tuple[str, str], Sequence[str]],
                 teacher: Mapping[str, Sequence[str]] | None = None) -> list[tuple[str, tuple[str, ...], list[str]]]:
    """The similar groups of a class as ``(notebook, (learners, ...), exercises)``; ``sources``:
    ``{(learner, notebook number): code cell sources}``, ``teacher``: ``{number: code cell
    sources}`` of the full notebooks."""
    return similar_in_prints(*class_prints(sources, teacher))


def _names(group: Sequence[str]) -> str:
    return _("{first} and {last}").format(first=", ".join(group[:-1]), last=group[-1])


def note_similar(grades, found: Iterable[tuple[str, Sequence[str], list[str]]]) -> None:
    """Add a note for the teacher to every learner of every group :func:`find_similar` found
    (``grades.flags``)."""
    for number, group, shared in found:
        whom = (_("no other learner") if len(group) == 2 else
                _("only these {n} learners (nobody else in the class)").format(n=len(group)))
        note = _("{learners}: notebook {number}, exercises {exercises} are the same up to names, comments "
                 "and layout, in a form {whom} and not the worked solution uses: read them side by "
                 "side").format(learners=_names(group), number=number, exercises=", ".join(shared), whom=whom)
        for learner in group:
            grades.flags.setdefault(learner, []).append(note)


def flag_similar(grades, sources: Mapping[tuple[str, str], Sequence[str]],
                 teacher: Mapping[str, Sequence[str]] | None = None) -> list[tuple[str, tuple[str, ...], list[str]]]:
    """:func:`find_similar`, then :func:`note_similar`; returns the groups found."""
    found = find_similar(sources, teacher)
    note_similar(grades, found)
    return found
