"""The guide's tables and times follow from the declarations and the notebooks: ``python
tools/guide_tables.py --write`` writes them, and the repository is what it writes."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import guide_tables  # noqa: E402

from attention_kit.check import registry  # noqa: E402


def test_the_guide_is_what_the_tool_writes():
    stale = [str(p.relative_to(ROOT)) for p in guide_tables.outdated()]
    assert not stale, f"{stale}: run python tools/guide_tables.py --write"


def test_the_table_is_replaced_whole():
    text = "before\n\n" + guide_tables.TABLE_HEAD + " x |\n|---|\n| 01.1 | old |\n\nafter\n"
    out = guide_tables.with_registry_table(text)
    assert out == "before\n\n" + registry.markdown_table() + "\n\nafter\n"


def test_every_exercise_declares_its_row_of_the_guide():
    """Each declaration says its task and the mistakes its hints name (the guide's table of what
    the checkers catch is written from them)."""
    for ex_id, _nb, _ex in registry.exercises():
        part = registry.grading(ex_id)
        assert part.task and part.catches, f"{ex_id}: declare Grading(task=..., catches=...)"
        assert "|" not in part.task + part.catches and "\n" not in part.task + part.catches, ex_id
