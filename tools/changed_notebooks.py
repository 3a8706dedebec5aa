"""The notebooks a change touches, for ``make check``'s nbval.

    python tools/changed_notebooks.py            # against HEAD: what is not committed yet
    python tools/changed_notebooks.py main       # against the commit where this branch left main

Prints the notebooks, one path a line. A notebook is touched when

* its ``.ipynb`` changed, or
* a module of ``attention_kit`` changed whose docstring's first line names it ("Notebook 06",
  "Notebooks 01-07", "Exercise checkers for notebook 04", ...; tests/test_package_layout.py keeps
  those lines true).

A changed module whose first line names no notebook (``errors.py``, the package's ``__init__``,
``widgets/base.py``, ``grading/``, ...) serves every notebook: it is named on standard error with
the advice to run ``make nbval``, and adds no notebook here, so that the loop stays short.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NUMBERS = re.compile(r"\b(0[1-9])(?:\s*[-–]\s*(0[1-9]))?\b")


def changed_files(base: str = "HEAD") -> list[str]:
    """Paths changed against ``base`` (``main``: against where this branch left it), the work
    tree's uncommitted and untracked files included."""
    git = ["git", "-C", str(ROOT)]
    if base != "HEAD":
        base = subprocess.run(git + ["merge-base", "HEAD", base], capture_output=True, text=True,
                              check=True).stdout.strip()
    diff = subprocess.run(git + ["diff", "--name-only", base], capture_output=True, text=True, check=True)
    new = subprocess.run(git + ["ls-files", "--others", "--exclude-standard"], capture_output=True, text=True,
                         check=True)
    return sorted(set(diff.stdout.split()) | set(new.stdout.split()))


def notebooks_of(module: Path) -> list[str]:
    """The two-digit numbers of the notebooks a module's docstring names in its first line."""
    try:
        doc = ast.get_docstring(ast.parse(module.read_text(encoding="utf-8"))) or ""
    except (OSError, SyntaxError):
        return []
    first = doc.splitlines()[0] if doc else ""
    out: list[str] = []
    for low, high in NUMBERS.findall(first):
        out += [f"{n:02d}" for n in range(int(low), int(high or low) + 1)]
    return out


def touched(base: str = "HEAD") -> tuple[list[Path], list[str]]:
    """``(notebooks to run, changed modules that serve every notebook)``."""
    numbers, shared, direct = set(), [], set()
    for name in changed_files(base):
        path = ROOT / name
        if name.startswith("notebooks/") and name.endswith(".ipynb") and path.exists():
            direct.add(path)
        elif name.startswith("attention_kit/") and name.endswith(".py") and path.exists():
            found = notebooks_of(path)
            numbers |= set(found)
            if not found:
                shared.append(name)
    by_number = {p.name[:2]: p for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")}
    return sorted(direct | {by_number[n] for n in numbers if n in by_number}), shared


def main(argv: list[str]) -> int:
    notebooks, shared = touched(argv[0] if argv else "HEAD")
    if shared:
        print(f"changed modules that serve every notebook ({', '.join(shared)}): "
              "make nbval runs them all", file=sys.stderr)
    for path in notebooks:
        print(path.relative_to(ROOT).as_posix())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
