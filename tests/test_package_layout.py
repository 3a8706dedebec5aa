"""attention_kit is grouped by the course's arc (issue 22): mechanism/ (notebooks 01-04), learn/
(05-06), scale/ (07); each module says which notebook teaches it, stays short enough to read in one
sitting, and uses only the public names of the others."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import attention_kit as ak

PACKAGE = Path(ak.__file__).parent
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
MAX_LINES = 420  # "about 400"
# path under attention_kit/ -> why it is not split yet
TOO_LONG_FOR_NOW: dict[str, str] = {}
GROUPS = {"mechanism": ("01", "02", "03", "04"), "learn": ("05", "06", "08"), "scale": ("07",),
          "heads": ("08",), "long": ("09",)}
OLD_FLAT = ("scores", "alignment", "attention", "masks", "positions", "multihead", "backward", "optim",
            "training", "layers", "tiny_lm", "corpus", "lm_training", "online", "tiled", "kvcache", "gqa",
            "sliding", "decoding", "parsing", "plotting")


def _rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


@pytest.mark.parametrize("path", MODULES, ids=_rel)
def test_every_module_is_small(path):
    n = len(path.read_text(encoding="utf-8").splitlines())
    if _rel(path) in TOO_LONG_FOR_NOW:
        pytest.skip(TOO_LONG_FOR_NOW[_rel(path)])
    assert n <= MAX_LINES, f"{_rel(path)} has {n} lines; split it by concept (about 400 at most)"


def _private_imports(path: Path) -> list[str]:
    """``from <a module of the package> import _name`` (other than dunders) in ``path``."""
    bad = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            ours = node.level > 0 or (node.module or "").startswith("attention_kit")
            for alias in node.names if ours else ():
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    bad.append(f"line {node.lineno}: from {'.' * node.level}{node.module or ''} import {alias.name}")
    return bad


@pytest.mark.parametrize("path", MODULES, ids=_rel)
def test_no_module_imports_another_modules_private_names(path):
    assert not _private_imports(path), _private_imports(path)


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_each_module_opens_with_the_notebook_that_teaches_it(group):
    for path in sorted((PACKAGE / group).glob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        first = doc.splitlines()[0] if doc else ""
        assert first.startswith(("Notebook ", "Notebooks ", "The fast paths behind notebooks")), \
            f"{_rel(path)}: its docstring should open with the notebook that teaches it, not {first!r}"
        if path.name != "__init__.py" and not path.name.startswith("_"):
            assert any(nb in first for nb in GROUPS[group]), f"{_rel(path)} is in {group}/: {first!r}"


def test_the_old_flat_modules_are_gone_and_every_public_name_is_flat():
    assert not [m for m in OLD_FLAT if (PACKAGE / f"{m}.py").exists() and m != "plotting"]
    assert not (PACKAGE / "plotting.py").exists() and (PACKAGE / "plotting" / "__init__.py").exists()
    for name in ak.__all__:
        assert getattr(ak, name) is not None
