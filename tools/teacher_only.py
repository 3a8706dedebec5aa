"""What the student edition's package must not name, for ``make_student.py``.

The shipped modules' docstrings and comments are what ``check.x??`` and ``help()`` show a learner.
They must not send a learner to the teacher's guides (docs/), the grader (``attention_kit.grading``
stays with the teacher) or the worked solutions (trial report of 2026-11-28, P1: check/registry.py
named docs/teaching.md and "the teacher's answer, tagged ``solution``"), nor at what only the course
repository has (trial 3: benchmarks/, "the teaching guide", "the teacher's key", ``make test`` and its
browser tests; "the course repository's teaching guide" says where it is). ``find_leaks`` rejects what
:data:`TEACHER_ONLY` finds (fix it where it is written); the teacher's ``make grade``, which a
comment may name, becomes "the grader" in the edition (:func:`strip_package`).
"""

from __future__ import annotations

import re
from pathlib import Path

TEACHER_ONLY = re.compile(r"(?<![\w/.-])docs/[\w./-]*\w|attention_kit\.grading\b|teacher's\s+answer"
                          r"|tagged\s+`*solutions?\b"
                          # the course repository's other parts (trial 3): its benchmarks, its guides,
                          # its tests; "the course repository's teaching guide" names where it lives
                          r"|(?<![\w/.-])benchmarks/[\w./-]*\w|(?<!repository's )teaching\s+guide"
                          r"|teacher's\s+(?:key|guide|class\s+grader)|browser\s+tests?|\bmake\s+test\b"
                          r"|\bhere,?\s+in\s+the\s+teacher's\s+edition", re.I)
TEACHER_COMMAND = re.compile(r"``make grade``|\bmake grade\b")


def strip_teacher_commands(text: str) -> str:
    """``text`` with the teacher's ``make grade`` named as the edition knows it, "the grader"."""
    return TEACHER_COMMAND.sub("the grader", text)


def strip_package(folder: Path) -> None:
    """Rewrite every module under ``folder`` (the edition's ``attention_kit``) that names ``make grade``."""
    for module in sorted(Path(folder).rglob("*.py")):
        text = module.read_text(encoding="utf-8")
        if TEACHER_COMMAND.search(text):
            module.write_text(strip_teacher_commands(text), encoding="utf-8")
