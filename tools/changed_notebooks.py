"""The notebooks a change touches, for ``make check``'s nbval.

    python tools/changed_notebooks.py            # against HEAD: what is not committed yet
    python tools/changed_notebooks.py main       # against the commit where this branch left main

Prints the notebooks, one path a line. A notebook is touched when

* its ``.ipynb`` changed, or
* a module of ``attention_kit`` changed, or a module that imports it (directly or through others;
  the package's ``__init__`` files only gather names and are not followed), and that module's
  docstring names the notebook in its first line ("Notebook 06", "Notebooks 01-07", ...;
  tests/test_package_layout.py keeps those lines true) or the notebook's code uses one of its
  public names (``ak.causal_mask``, ``from attention_kit.widgets import MaskExplorer``), or
* a file of the package that is not Python changed (the explorers' ``.js``, the shipped weights
  in ``data/``): then every notebook. A deleted module touches nothing itself: the modules that
  imported it changed too.

So a change to ``errors.py``, which nearly every module imports, runs nearly every notebook: that
is what it touches.
"""

from __future__ import annotations

import ast
import json
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


PACKAGE = ROOT / "attention_kit"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> tuple[dict[str, set[str]], dict[str, set[str]], dict[str, Path]]:
    """``(imports, public names, path)`` per module of the package."""
    imports: dict[str, set[str]] = {}
    names: dict[str, set[str]] = {}
    paths: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        name = _module_name(path)
        paths[name] = path
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError):
            continue
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = package
                for _ in range(max(0, node.level - 1)):
                    base = base.rpartition(".")[0]
                mod = (f"{base}.{node.module}" if node.module else base) if node.level else (node.module or "")
                found.add(mod)
                found |= {f"{mod}.{a.name}" for a in node.names}  # `from . import masks`
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
        imports[name] = {m for m in found if m.startswith("attention_kit")}
        names[name] = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))
                       and not n.name.startswith("_")}
    return imports, names, paths


def _importers(changed: set[str], imports: dict[str, set[str]], paths: dict[str, Path]) -> set[str]:
    """The changed modules and every module that imports one of them, directly or through others
    (not through the gathering ``__init__`` files)."""
    seen, todo = set(changed), list(changed)
    while todo:
        target = todo.pop()
        for name, deps in imports.items():
            if name in seen or paths[name].name == "__init__.py" or target not in deps:
                continue
            seen.add(name)
            todo.append(name)
    return seen


_FROM = re.compile(r"^\s*from\s+attention_kit[\w.]*\s+import\s+\(?([^)\n]+)", re.M)


def package_names_used(notebook: Path) -> set[str]:
    """The package's names a notebook's code reaches: ``ak.x``, ``check.m.x``, ``attention_kit.m.x``
    (each part of the chain) and ``from attention_kit... import x, y``."""
    try:
        nb = json.loads(notebook.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    code = "\n".join("".join(c.get("source", "")) for c in nb.get("cells", []) if c.get("cell_type") == "code")
    used = set()
    for match in re.finditer(r"\b(?:ak|attention_kit|check)((?:\.\w+)+)", code):
        used |= set(match.group(1).strip(".").split("."))
    for match in _FROM.finditer(code):
        used |= {w.strip().split(" as ")[0].strip() for w in match.group(1).split(",")}
    return used


def touched(base: str = "HEAD") -> tuple[list[Path], list[str]]:
    """``(notebooks to run, changed package files that are not Python: every notebook)``."""
    notebooks = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    by_number = {p.name[:2]: p for p in notebooks}
    direct, changed, other = set(), set(), []
    for name in changed_files(base):
        path = ROOT / name
        if name.startswith("notebooks/") and name.endswith(".ipynb") and path.exists():
            direct.add(path)
        elif name.startswith("attention_kit/") and name.endswith(".py") and path.exists():
            changed.add(_module_name(path))
        elif name.startswith("attention_kit/") and name.endswith(".py"):
            continue  # a module deleted: what imported it changed too, and is counted
        elif name.startswith("attention_kit/") and "__pycache__" not in name:
            other.append(name)
    if other:
        return notebooks, other
    if not changed:
        return sorted(direct), []
    imports, names, paths = _graph()
    reached = _importers(changed, imports, paths)
    if any(paths[m].name == "__init__.py" and m in changed for m in reached):
        return notebooks, []  # the package's own names changed: any notebook may use them
    numbers = {n for m in reached for n in notebooks_of(paths[m])}
    words = {w for m in reached for w in names.get(m, set())}
    used = {p for p in notebooks if words & package_names_used(p)}
    return sorted(direct | used | {by_number[n] for n in numbers if n in by_number}), []


def main(argv: list[str]) -> int:
    notebooks, other = touched(argv[0] if argv else "HEAD")
    if other:
        print(f"changed package files that every notebook may use ({', '.join(other[:5])}): "
              "all notebooks", file=sys.stderr)
    for path in notebooks:
        print(path.relative_to(ROOT).as_posix())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
