"""Exercises that ask for plain numpy: reject an answer that calls ``attention_kit``.

An exercise such as "write ``my_causal_mask(n)``" teaches by writing the computation; an answer
that returns ``ak.causal_mask(n)`` is right but has learned nothing. A checker decorated with
:func:`plain_numpy` looks at the learner's function before calling it: its code, the functions
it calls that the learner wrote too, its closure and defaults, and what each global name it
reads is bound to. Any ``attention_kit`` module, function or class met on the way, whatever its
name in the notebook (``ak.softmax``, ``from attention_kit import softmax as f``, ``import
attention_kit.mechanism.masks`` inside the function), fails the exercise with a hint that says so.
``allow`` names the few package functions an exercise may use (notebook 02's "self-attention in
one line" may call ``ak.softmax``, not ``ak.self_attention``).

Under the grader (the teacher's, which grades returned notebooks) the answer is the grader's
stand-in for a function in the learner's kernel: there the package's functions refuse to run
while the answer runs, whatever route reaches them, and the stand-in names what was called.

The registry (``attention_kit.check.registry``) reads the mark from the checker
(``Exercise.plain``); the course repository's teaching guide shows it in its exercise table. Only the learner's own code
is followed: numpy and other libraries are not looked into.
"""

from __future__ import annotations

import dis
import functools
import inspect
import types
from typing import Any, Callable, Iterable

from ..i18n import _

__all__ = ["library_use", "plain_numpy", "PACKAGE"]

PACKAGE = "attention_kit"
_DEPTH = 8  # learner functions followed through calls, at most


def _ours(obj: Any) -> str | None:
    """``attention_kit``'s dotted name for ``obj`` when it belongs to the package, else None."""
    if isinstance(obj, types.ModuleType):
        name = getattr(obj, "__name__", "") or ""
        return name if name == PACKAGE or name.startswith(PACKAGE + ".") else None
    try:
        module = getattr(obj, "__module__", None)
    except Exception:  # an odd object whose attribute lookup raises: not ours
        return None
    if isinstance(module, str) and (module == PACKAGE or module.startswith(PACKAGE + ".")):
        return f"{module}.{getattr(obj, '__qualname__', getattr(obj, '__name__', type(obj).__name__))}"
    return None


def _short(dotted: str) -> str:
    """``attention_kit.mechanism.masks.causal_mask`` -> ``ak.causal_mask`` (as the notebooks write it);
    ``=text``: the learner's own words, kept."""
    if dotted.startswith("="):
        return dotted[1:]
    parts = dotted.split(".")
    return "ak." + parts[-1] if len(parts) > 1 else "attention_kit"


def _code_objects(code: types.CodeType) -> Iterable[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


class _Finder:
    def __init__(self, allow: Iterable[str]):
        self.allow = set(allow)
        self.seen: set[int] = set()
        self.home: dict | None = None  # the globals of the learner's answer: whose code we follow

    def learners(self, fn: types.FunctionType) -> bool:
        """True for code the learner wrote (the answer's namespace), not a library's."""
        if self.home is None:
            self.home = fn.__globals__
        return fn.__globals__ is self.home or fn.__module__ == "__main__"

    def allowed(self, obj: Any) -> bool:
        return getattr(obj, "__name__", None) in self.allow and not isinstance(obj, types.ModuleType)

    def value(self, obj: Any, depth: int) -> str | None:
        """What in ``obj`` (a value the learner's function reads) uses the package."""
        if id(obj) in self.seen or depth > _DEPTH:
            return None
        self.seen.add(id(obj))
        dotted = _ours(obj)
        if dotted is not None:
            return None if self.allowed(obj) else dotted
        if isinstance(obj, functools.partial):
            return self.value(obj.func, depth + 1) or next(
                (hit for a in (*obj.args, *obj.keywords.values()) if (hit := self.value(a, depth + 1))), None)
        if inspect.ismethod(obj):
            return self.value(obj.__func__, depth + 1)
        if isinstance(obj, types.FunctionType):
            return self.function(obj, depth) if self.learners(obj) else None
        if hasattr(obj, "pyfunc"):  # np.vectorize
            return self.value(obj.pyfunc, depth + 1)
        if isinstance(obj, type) and obj.__module__ == "__main__":  # a class the learner wrote
            for attr in vars(obj).values():
                hit = self.value(getattr(attr, "__func__", attr), depth + 1)
                if hit:
                    return hit
        elif callable(obj) and type(obj).__module__ == "__main__":  # an instance with __call__
            return self.value(type(obj), depth + 1)
        return None

    def function(self, fn: types.FunctionType, depth: int) -> str | None:
        env = dict(fn.__globals__)
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False):
            try:
                env[name] = cell.cell_contents
            except ValueError:  # an empty cell
                pass
        for code in _code_objects(fn.__code__):
            instructions = list(dis.get_instructions(code))
            for k, ins in enumerate(instructions):
                name = ins.argval if isinstance(ins.argval, str) else None
                if name is None:
                    continue
                if ins.opname == "IMPORT_NAME" and (name == PACKAGE or name.startswith(PACKAGE + ".")):
                    return f"=import {name}"
                if ins.opname not in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF"):
                    continue
                if name not in env:
                    continue
                obj = env[name]
                if isinstance(obj, types.ModuleType) and _ours(obj) is not None:
                    words, target = [name], obj  # follow ak.masks.causal_mask while it is a module
                    for nxt in instructions[k + 1:]:
                        if nxt.opname not in ("LOAD_ATTR", "LOAD_METHOD") or not isinstance(nxt.argval, str) \
                                or not isinstance(target, types.ModuleType):
                            break
                        words.append(nxt.argval)
                        target = getattr(target, nxt.argval, None)
                    if target is not None and not isinstance(target, types.ModuleType) \
                            and self.allowed(target):
                        continue
                    return "=" + ".".join(words)
                hit = self.value(obj, depth + 1)
                if hit:
                    return hit
        for default in (*(fn.__defaults__ or ()), *(fn.__kwdefaults__ or {}).values()):
            hit = self.value(default, depth + 1)
            if hit:
                return hit
        return None


def library_use(answer: Any, allow: Iterable[str] = ()) -> str | None:
    """The ``attention_kit`` name ``answer`` uses, as the notebooks write it (``ak.softmax``),
    or None when it uses none besides the names in ``allow``.

    ``answer`` is the learner's function (or any value); a value that is not code uses nothing.
    """
    try:
        hit = _Finder(allow).value(answer, 0)
    except Exception:  # never let an odd answer break the checker: judge it on its results
        return None
    return None if hit is None else _short(hit)


def _hint(used: str, allow: tuple[str, ...]) -> str:
    if allow:
        others = ", ".join(f"`ak.{a}`" for a in allow)
        return _("this exercise asks for numpy and, of attention_kit, only {others}: your answer "
                 "uses `{used}`. Write that part yourself; the checker compares with attention_kit"
                 ).format(others=others, used=used)
    return _("this exercise asks for plain numpy, without attention_kit: your answer uses "
             "`{used}`. Write the computation yourself; the checker compares with attention_kit"
             ).format(used=used)


def plain_numpy(*, allow: tuple[str, ...] = ()) -> Callable[[Callable], Callable]:
    """Decorate a checker whose answers must not call ``attention_kit`` (except ``allow``).

    Every callable positional answer is inspected before the checker runs; one that uses the
    package fails with a hint that names what it used. The checker gets ``plain_numpy``
    (``allow``, a tuple, possibly empty) as an attribute, which the registry reads.
    """
    def decorate(checker: Callable) -> Callable:
        @functools.wraps(checker)
        def wrapper(*answers, **kwargs):
            from . import report

            remote = [a for a in answers if hasattr(a, "watch_plain")]
            for answer in remote:  # the grader's stand-in: the kernel refuses the package's calls
                answer.watch_plain(tuple(allow))
            for answer in answers:
                if callable(answer) and not hasattr(answer, "watch_plain"):
                    used = library_use(answer, allow)
                    if used is not None:
                        return report(False, _hint(used, allow))
            ok = checker(*answers, **kwargs)
            for answer in remote:
                if answer.used is not None:
                    return report(False, _hint(answer.used, allow))
                if answer.tampered:
                    return report(False, _("your answer switched off the grader's check that it uses "
                                           "plain numpy while it ran, so it cannot be graded as plain numpy"))
            return ok

        wrapper.plain_numpy = tuple(allow)
        return wrapper

    return decorate
