"""The stored text outputs print only what is the same on every machine.

nbval compares a notebook's stored text outputs with a fresh run. A printed error against a
reference, a difference that is zero in exact arithmetic, or a -0.000 depends on the BLAS kernel,
the thread count and the SIMD width, so it passes on the machine that stored it and fails on the
next. The rule (docs/writing_notebooks.md, "Numbers in notebooks"): print the bound the cell asserts
("below 1e-7"), or round well inside the value's stability. `make test` also re-runs nbval under
another numerical setting (tools/nbval_elsewhere.py); this test catches the usual forms at once.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted(Path(__file__).resolve().parents[1].glob("notebooks/[0-9][0-9]_*.ipynb"))

# -0.000 or -0. (a negative zero) and a number of size 1e-5 or smaller in e-notation
NEGATIVE_ZERO = re.compile(r"(?<![\w.])-0\.0*(?![\d.])")
TINY = re.compile(r"(?<![\w.])\d(\.\d+)?e-(0[5-9]|[1-9]\d)\b")
# "below 1e-7", "to 1e-12", "< 1e-12": the bound a cell asserts is the same everywhere
BOUND = re.compile(r"(to|below|under|within|<|<=|≤)\s*\d(\.\d+)?e-\d+")


def noisy_lines(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        if NEGATIVE_ZERO.search(line):
            out.append(line)
        elif TINY.search(BOUND.sub("", line)):
            out.append(line)
    return out


def stored_texts(path: Path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code" or "nbval-ignore-output" in cell.get("metadata", {}).get("tags", []):
            continue
        for out in cell.get("outputs", []):
            text = out.get("text") or out.get("data", {}).get("text/plain") or ""
            yield i, "".join(text)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name[:2])
def test_no_stored_output_prints_rounding_noise(path):
    found = [f"cell {i}: {line.strip()}" for i, text in stored_texts(path) for line in noisy_lines(text)]
    assert not found, (f"{path.name} stores outputs that print rounding noise; print the bound the cell "
                       "asserts or round well inside the value's stability:\n" + "\n".join(found))


@pytest.mark.parametrize("line, noisy", [
    ("similarity  0.997   0.934  -0.000  -0.600   k1", True),
    ("weights [ 0.2 -0.   0.8]", True),
    ("in the queries Q   0.507   2.8e-16", True),
    ("29 parameter arrays; worst relative error 1e-09", True),
    ("29 parameter arrays; worst relative error below 1e-7", False),
    ("equal to 1e-12", False),
    ("in the queries Q   0.507    < 1e-12", False),
    ("layer 4:  1.6e-04   1.6e+77", False),           # a real value, stable at two digits
    ("bias -0.25 and -0.5 and -0.05", False),
    ("largest weight on a future key: 0.0", False),
])
def test_the_rule_itself(line, noisy):
    assert bool(noisy_lines(line)) is noisy


_IMG = re.compile(r"<img\b[^>]*>")
_ALT = re.compile(r'\balt="([^"]*)"')


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_stored_picture_has_a_text_alternative(path):
    """What GitHub, nbviewer and a notebook not yet run show: every stored picture is an <img>
    with alt text that says something (issue 34; a merge once left a bare PNG in 07)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    bare, unnamed = [], []
    for k, cell in enumerate(nb["cells"]):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "image/png" in data and "text/html" not in data:
                bare.append(k)
            html = data.get("text/html", "")
            html = "".join(html) if isinstance(html, list) else html
            for img in _IMG.findall(html):
                alt = _ALT.search(img)
                text = alt.group(1).strip() if alt else ""
                if len(text) < 20 or "no description could be made" in text:
                    unnamed.append(k)
    assert not bare, f"{path.name}: cells {bare} store a bare PNG (no alt): re-run make notebooks"
    assert not unnamed, f"{path.name}: cells {unnamed} store a picture without a text alternative"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_code_cell_compiles_without_a_warning(path):
    """An invalid escape ("$e_1 \\dots$" in a plain string) is silent on Python 3.11 and a
    SyntaxWarning in the learner's notebook on 3.12 and later (the lock's other Pythons)."""
    import warnings

    nb = json.loads(path.read_text(encoding="utf-8"))
    for k, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        source = "\n".join(ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!")))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            compile(source, f"{path.name} cell {k}", "exec")
