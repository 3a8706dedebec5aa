"""Issue 26: say in each plain-numpy exercise that attention_kit is not to be used.

    python tools/edits/issue26_plain.py          # edits notebooks/NN_*.ipynb in place

For every exercise the registry marks as plain numpy (``Exercise.plain``, from
``attention_kit.check.plain``), the exercise's Markdown cell (the last one before the cell that
defines its answer) gets "(in plain numpy, without attention_kit)" after "Write `name(...)`";
for an exercise that may use a few package functions, "(in numpy; of attention_kit, only
`ak.softmax`)". Only Markdown cells change, so the stored outputs stay valid. Safe to run
twice: a cell that already says it is left alone. Prints the notebooks it changed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from attention_kit.check import registry  # noqa: E402

PLAIN = "(in plain numpy, without attention_kit)"


def phrase(allow: tuple[str, ...]) -> str:
    if not allow:
        return PLAIN
    return "(in numpy; of attention_kit, only " + ", ".join(f"`ak.{a}`" for a in allow) + ")"


def edit(nb, entry: registry.Notebook) -> list[str]:
    """Edit ``nb`` in place; return the ids of the exercises whose text changed."""
    changed = []
    for ex_id, ex in entry.numbered():
        if ex.plain is None:
            continue
        code = next(i for i, c in enumerate(nb.cells)
                    if c.cell_type == "code" and set(ex.answers) & registry._bound_names(c.source))
        md = next(nb.cells[j] for j in range(code - 1, -1, -1) if nb.cells[j].cell_type == "markdown")
        text = phrase(ex.plain)
        if text in md.source:
            continue
        call = re.search(r"`%s\([^`]*\)`" % re.escape(ex.answers[0]), md.source)
        if call is None:
            raise SystemExit(f"{entry.file}: exercise {ex_id}: no `{ex.answers[0]}(...)` in its text")
        md.source = md.source[:call.end()] + " " + text + md.source[call.end():]
        changed.append(ex_id)
    return changed


def main() -> int:
    for entry in registry.NOTEBOOKS:
        path = ROOT / "notebooks" / entry.file
        nb = nbformat.read(path, as_version=4)
        changed = edit(nb, entry)
        if changed:
            nbformat.write(nb, path)
            print(f"{path.relative_to(ROOT)}: {', '.join(changed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
