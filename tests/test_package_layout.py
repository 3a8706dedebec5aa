"""attention_kit is grouped by the course's arc (issues 22 and 37): mechanism/ (notebooks 01-04),
learn/ (05-06), scale/ (07), relative/ (09), then decoder/ (06-09) above the pieces it assembles, then
heads/ (08) and long/ (09). Imports run one way, down the floors and never from an earlier notebook's
folder to a later one's; no two folders import each other; each module says which notebook teaches
it, stays short enough to read in one sitting (the scripts of benchmarks/ and tools/ too), and uses
only the public names and public modules of the others, in the package, the tests, the tools and the
benchmarks alike (a ``_module`` serves its own folder only).

One arrow looks backwards and is meant: decoder/ (notebooks 06-09) imports relative/ (notebook 09).
The one decoder block serves notebooks 06 to 09: beside notebook 06's sinusoidal positions it
offers notebook 09's relative schemes (RoPE, ALiBi; ``decoder/block.py``'s ``POSITIONS``), so
notebook 09 trains the same block with them instead of a second copy. decoder/ sits on a floor above relative/, so the import runs down the floors,
and along the course it is not backwards: relative/'s first notebook (09) is not after decoder/'s
last (09). test_the_layout_checks_see_what_they_check keeps this arrow in sight."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

import attention_kit as ak

PACKAGE = Path(ak.__file__).parent
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
MAX_LINES = 420  # "about 400"
# path under attention_kit/ -> why it is not split yet
TOO_LONG_FOR_NOW: dict[str, str] = {}
GROUPS = {"mechanism": ("01", "02", "03", "04"), "learn": ("05", "06"), "scale": ("07",),
          "relative": ("09",), "decoder": ("06", "07", "08", "09"), "heads": ("08",), "long": ("09",)}
# The floors, from the ground up: a room imports only rooms on floors below its own (its own folder
# aside). A room is a folder of attention_kit/ or a module at its top; __init__.py is the package's
# face, which hands the math's public names on.
FLOORS = ["i18n.py", "errors.py", "plotting", "mechanism", "learn", "scale", "relative", "decoder", "heads", "long",
          "accessible.py", "__init__.py", "widgets", "check", "grading"]
# the notebooks of each folder, as numbers: an import from A to B with B's first notebook after
# A's last runs backwards along the course
NOTEBOOKS = {room: tuple(int(n) for n in nbs) for room, nbs in GROUPS.items()} | {"plotting": tuple(range(1, 8))}
ROOT = PACKAGE.parent
# the repository's Python outside the package: what it may not do is import a private name
ELSEWHERE = sorted(p for d in ("tests", "tools", "benchmarks") for p in (ROOT / d).rglob("*.py")
                   if "__pycache__" not in p.parts)
# names a protocol outside the project makes private: Jupyter calls these on a server extension
PROTOCOL_NAMES = {"_load_jupyter_server_extension", "_jupyter_server_extension_points", "_repr_html_",
                  "_repr_png_", "_repr_mimebundle_", "_ipython_display_", "_esm", "_css",
                  "_"}  # gettext's name for "translate this" (attention_kit/i18n.py)
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


@pytest.mark.parametrize("path", [p for p in ELSEWHERE if p.relative_to(ROOT).parts[0] in ("benchmarks", "tools")],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_benchmark_and_tool_is_small(path):
    """The scripts are held to the package's length too: a maintainer reads them as often."""
    n = len(path.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, f"{path.relative_to(ROOT)} has {n} lines; split it by concept (about 400 at most)"


@functools.cache
def _ours() -> frozenset[str]:
    """Top-level names of the repository's own modules: the package, and the scripts and test helpers
    that import each other (tests/ and tools/ are on sys.path for their own files)."""
    return frozenset({"attention_kit", "tools", "benchmarks", "tests"} | {p.stem for p in ELSEWHERE})


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in PROTOCOL_NAMES


def _private_imports(path: Path, *, attributes: bool = True) -> list[str]:
    """``from <one of our modules> import _name`` in ``path``, and (``attributes``) ``module._name``
    where ``module`` is a name it imported from our modules (dunders and protocol names aside)."""
    ours, bad, imported = _ours(), [], set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").split(".")[0] in ours):
            for alias in node.names:
                if _private(alias.name):
                    bad.append(f"line {node.lineno}: from {'.' * node.level}{node.module or ''} import {alias.name}")
                imported.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            imported |= {a.asname or a.name.split(".")[0] for a in node.names if a.name.split(".")[0] in ours}
    for node in ast.walk(tree) if attributes else ():
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in imported:
                bad.append(f"line {node.lineno}: {ast.unparse(node)}")
    return bad


def _private_modules(path: Path, here: list[str] | None = None) -> list[str]:
    """Imports in ``path`` of a private *module* of ours (a ``_name`` segment of its dotted path, as
    ``attention_kit.mechanism._kernels``) that lives in another folder than ``path`` (``here``: its
    folder as a package path, by default from its place in the repository): a module that another
    folder uses gets a public name."""
    ours, bad = _ours(), []
    if here is None:
        here = list(path.relative_to(ROOT).with_suffix("").parts[:-1])
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            dotted = [base + (node.module.split(".") if node.module else [])]
        elif isinstance(node, ast.Import):
            dotted = [a.name.split(".") for a in node.names]
        else:
            continue
        for parts in dotted:
            if not parts or parts[0] not in ours:
                continue
            for i, part in enumerate(parts):
                if _private(part) and parts[:i] != here:
                    bad.append(f"line {node.lineno}: {'.'.join(parts)} (private module {part} of "
                               f"{'/'.join(parts[:i]) or 'the top'}, used from {'/'.join(here) or 'the top'})")
                    break
    return bad


@pytest.mark.parametrize("path", MODULES, ids=_rel)
def test_no_module_imports_another_modules_private_names(path):
    assert not _private_imports(path), _private_imports(path)


@pytest.mark.parametrize("path", MODULES + ELSEWHERE, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_private_module_is_used_from_another_folder(path):
    """A ``_module`` serves its own folder only; what another folder (or a test, tool or benchmark)
    imports has a public name."""
    bad = _private_modules(path)
    assert not bad, f"{path.relative_to(ROOT)}: {bad}; give the module a public name"


@pytest.mark.parametrize("path", ELSEWHERE, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_test_tool_or_benchmark_imports_a_private_name(path):
    """Tools and benchmarks use public names only; a test may read the private attributes of the
    module it tests (white-box), but imports no private name."""
    bad = _private_imports(path, attributes=path.relative_to(ROOT).parts[0] != "tests")
    assert not bad, f"{path.relative_to(ROOT)}: {bad}; give the name a public spelling where it is defined"


def _room(module: str) -> str | None:
    """The room of a dotted module name of the package: its folder, or ``name.py`` at the top."""
    parts = module.split(".")
    if parts[0] != "attention_kit":
        return None
    if len(parts) == 1:
        return "__init__.py"
    return parts[1] if (PACKAGE / parts[1]).is_dir() else f"{parts[1]}.py"


def _imports(path: Path) -> set[str]:
    """The package's modules that ``path`` imports: relative imports resolved, and ``from pkg import
    module`` counted as that module."""
    here = list(path.relative_to(ROOT).with_suffix("").parts[:-1])  # the package path is in
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            base = base + (node.module.split(".") if node.module else [])
            for alias in node.names:
                sub = ROOT.joinpath(*base, alias.name)
                is_module = sub.with_suffix(".py").exists() or sub.is_dir()
                out.add(".".join(base + [alias.name]) if is_module else ".".join(base))
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return {m for m in out if m.split(".")[0] == "attention_kit"}


@functools.cache
def _arrows() -> dict[tuple[str, str], list[str]]:
    """(room A, room B) -> the files of A that import B, for every import between two rooms."""
    arrows: dict[tuple[str, str], list[str]] = {}
    for path in MODULES:
        a = _rel(path).split("/")[0] if "/" in _rel(path) else _rel(path)
        for module in _imports(path):
            b = _room(module)
            if b is not None and b != a:
                arrows.setdefault((a, b), []).append(_rel(path))
    return arrows


def test_every_room_has_a_floor():
    rooms = {p.split("/")[0] if "/" in p else p for p in map(_rel, MODULES)}
    assert rooms <= set(FLOORS), f"give {sorted(rooms - set(FLOORS))} a floor in FLOORS"


def test_imports_run_down_the_floors():
    up = [f"{a} -> {b} ({', '.join(files)})" for (a, b), files in sorted(_arrows().items())
          if FLOORS.index(b) > FLOORS.index(a)]
    assert not up, "imports that run back up: " + "; ".join(up)


def test_no_folder_of_an_earlier_notebook_imports_a_later_ones():
    back = [f"{a} (notebooks {NOTEBOOKS[a]}) -> {b} (notebooks {NOTEBOOKS[b]}): {', '.join(files)}"
            for (a, b), files in sorted(_arrows().items())
            if a in NOTEBOOKS and b in NOTEBOOKS and min(NOTEBOOKS[b]) > max(NOTEBOOKS[a])]
    assert not back, "backwards along the course (pass the later piece in as an argument): " + "; ".join(back)


def test_no_two_folders_import_each_other():
    arrows = _arrows()
    both = sorted({tuple(sorted((a, b))) for a, b in arrows if (b, a) in arrows})
    assert not both, [f"{a} <-> {b}: {arrows[(a, b)]} / {arrows[(b, a)]}" for a, b in both]


def test_the_layout_checks_see_what_they_check(tmp_path):
    """The checks above find a backward import, a pair and a private name when there is one."""
    assert ("decoder", "relative") in _arrows() and ("heads", "decoder") in _arrows()
    assert ("plotting", "widgets") not in _arrows() and ("mechanism", "relative") not in _arrows()
    bad = tmp_path / "bad.py"
    bad.write_text("from attention_kit.check import registry\nfrom attention_kit.x import _y\n"
                   "registry._bound('a')\n")
    assert [b.split(":")[0] for b in _private_imports(bad)] == ["line 2", "line 3"]
    assert len(_private_imports(bad, attributes=False)) == 1
    other = tmp_path / "other.py"
    other.write_text("from attention_kit.mechanism._kernels import sdpa_core\nimport attention_kit._x.y\n"
                     "from ..mechanism._fast import f\nfrom ._own import g\nfrom .kernels import h\n")
    found = _private_modules(other, here=["attention_kit", "scale"])
    assert [b.split(":")[0] for b in found] == ["line 1", "line 2", "line 3"]
    assert _private_modules(other, here=["attention_kit", "mechanism"]) == [
        found[1].replace("scale)", "mechanism)")]  # in its own folder a private module is fine


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
