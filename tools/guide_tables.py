"""The guide's tables and times, from the exercises' declarations and the notebooks: one command
after adding (or changing) an exercise, instead of editing them by hand.

    python tools/guide_tables.py            # what is out of step (exit status 1 if anything is)
    python tools/guide_tables.py --write    # rewrite it

What it writes:

* docs/teaching.md's table of the exercises by grade column, the registry's
  (``python -m attention_kit.check.registry`` prints it; ``attention_kit/check/exercises_*.py``
  declare the exercises);
* each notebook's table of "Exercises and what the checkers catch" in docs/teaching.md: a row per
  exercise, its declared ``task`` and ``catches`` (the heading above the table stays as written);
* the times (``tools/notebook_time.py --write``): each notebook's header, teaching.md's
  **Time:** lines and totals, the README's table.

``tests/test_guide_tables.py`` holds the repository to it.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_student  # noqa: E402
import notebook_time  # noqa: E402

GUIDE = ROOT / "docs" / "teaching.md"
TABLE_HEAD = "| column | exercise | the learner's answer |"


def with_registry_table(text: str) -> str:
    """``text`` (docs/teaching.md) with its table of exercises replaced by the registry's."""
    from attention_kit.check import registry

    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith(TABLE_HEAD)), None)
    if start is None:
        raise SystemExit(f"docs/teaching.md: no table starting with {TABLE_HEAD!r}")
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "\n".join(lines[:start] + registry.markdown_table().split("\n") + lines[end:])


CATCH_HEAD = "| # | task | ✗ hints for |\n|---|---|---|\n"


def with_catch_tables(text: str) -> str:
    """``text`` (docs/teaching.md) with each notebook's table of what the checkers catch rebuilt
    from the declarations (the first such table after the link to the notebook)."""
    from attention_kit.check import registry

    for nb in registry.NOTEBOOKS:
        link = text.find(f"(../notebooks/{nb.file})")
        head = text.find("**Exercises and what the checkers catch**", max(link, 0))
        table = text.find(CATCH_HEAD, max(head, 0))
        if min(link, head, table) < 0:
            raise SystemExit(f"docs/teaching.md: no table of what the checkers catch for {nb.file}")
        start = end = table + len(CATCH_HEAD)
        while text.startswith("|", end):
            end = text.index("\n", end) + 1
        rows = "".join(f"| {ex.position} | {registry.grading(ex_id).task} | {registry.grading(ex_id).catches} |\n"
                       for ex_id, ex in nb.numbered())
        text = text[:start] + rows + text[end:]
    return text


def new_texts() -> dict[Path, str]:
    """Every file this tool writes, as ``--write`` leaves it."""
    paths = make_student.course_notebooks()
    out = {path: notebook_time.header_text(path) for path in paths}
    guides = notebook_time.guide_texts(paths)
    guides[GUIDE] = with_catch_tables(with_registry_table(guides[GUIDE]))
    return out | guides


def outdated() -> list[Path]:
    """The files whose tables or times are out of step."""
    return [path for path, text in new_texts().items() if path.read_text(encoding="utf-8") != text]


def main(argv: list[str]) -> int:
    texts = new_texts()
    stale = [path for path, text in texts.items() if path.read_text(encoding="utf-8") != text]
    for path in stale:
        if "--write" in argv:
            path.write_text(texts[path], encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
        else:
            print(f"out of step: {path.relative_to(ROOT)} (python tools/guide_tables.py --write)")
    if not stale:
        print("the guide's tables and times are in step")
    return 1 if stale and "--write" not in argv else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
