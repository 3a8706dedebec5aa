"""Exercise checkers for the notebooks.

Each checker takes the learner's answer (a number, an array or a function), compares it with
``attention_kit``, prints one line, ``✓ ...`` or ``✗ ...`` with a hint aimed at the usual mistake,
and returns True or False. A checker never lets the learner's exception escape as a traceback:
it prints what went wrong instead.

Submodules by concept: ``check.general`` (notebook 01), ``check.self_attention`` (notebook 02),
``check.multi_head`` (notebook 03), ``check.masks_positions`` (notebook 04),
``check.backprop`` (notebook 05), ``check.at_scale`` (notebook 07).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np

__all__ = ["report", "try_call", "not_done", "close", "quietly"]

PASS = "✓"
FAIL = "✗"
_quiet = 0  # > 0 inside `with quietly():`


@contextmanager
def quietly() -> Iterator[None]:
    """Run checkers without printing; they still return True or False.

    The worked solutions use it (``with check.quietly(): assert check.x(answer)``), so that their
    cells store no output and the saved notebook gives no answer away before the learner tries.
    """
    global _quiet
    _quiet += 1
    try:
        yield
    finally:
        _quiet -= 1


def report(ok: bool, message: str) -> bool:
    """Print ``✓ message`` or ``✗ message`` (nothing inside ``quietly()``) and return ``ok``."""
    if not _quiet:
        print(f"{PASS if ok else FAIL} {message}")
    return bool(ok)


def not_done(answer: Any) -> bool:
    """True when the learner has not answered yet (``None``, ``...`` or a function returning None)."""
    return answer is None or answer is Ellipsis


def try_call(fn: Callable, *args, **kwargs) -> tuple[Any, str | None]:
    """Call the learner's function; return ``(result, None)`` or ``(None, 'what went wrong')``."""
    if not callable(fn):
        return None, f"expected a function, got {type(fn).__name__}"
    try:
        out = fn(*args, **kwargs)
    except Exception as exc:  # the learner's code: report it, never raise
        return None, f"your function raised {type(exc).__name__}: {exc}"
    if out is None:
        return None, "your function returned None: did you forget `return`?"
    return out, None


def close(a, b, *, atol: float = 1e-6) -> bool:
    """Shape-aware closeness test that never raises."""
    try:
        a = np.asarray(a, dtype=float)
        b = np.asarray(b, dtype=float)
    except (TypeError, ValueError):
        return False
    return a.shape == b.shape and bool(np.allclose(a, b, atol=atol, rtol=1e-6))
