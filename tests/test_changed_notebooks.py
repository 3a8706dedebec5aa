"""tools/changed_notebooks.py: make check's nbval runs the notebooks a change really touches."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import changed_notebooks as cn  # noqa: E402


def _numbers(monkeypatch, changed: list[str]) -> list[str]:
    monkeypatch.setattr(cn, "changed_files", lambda base="HEAD": changed)
    notebooks, _ = cn.touched()
    return [p.name[:2] for p in notebooks]


@pytest.mark.parametrize("module,must", [
    ("attention_kit/widgets/masks.py", {"04"}),                    # its notebook, by its docstring
    ("attention_kit/mechanism/masks.py", {"04", "07", "08", "09"}),  # ak.causal_mask where it is used
    ("attention_kit/errors.py", {f"{n:02d}" for n in range(1, 10)}),  # imported by nearly everything
    ("attention_kit/decoder/block.py", {"06", "07", "08", "09"}),  # 08 and 09 load models through it
])
@pytest.mark.slow
def test_a_changed_module_runs_the_notebooks_that_use_it(monkeypatch, module, must):
    got = set(_numbers(monkeypatch, [module]))
    assert must <= got, (module, sorted(got))


def test_a_changed_file_that_is_not_python_runs_every_notebook(monkeypatch):
    for name in ("attention_kit/widgets/live_figure.js", "attention_kit/data/tiny_lm.npz"):
        assert _numbers(monkeypatch, [name]) == [f"{n:02d}" for n in range(1, 10)], name


def test_a_deleted_module_runs_nothing_itself(monkeypatch):
    assert _numbers(monkeypatch, ["attention_kit/grading/gone_module.py"]) == []


def test_a_changed_notebook_runs_itself_only(monkeypatch):
    nb = next((ROOT / "notebooks").glob("05_*.ipynb")).relative_to(ROOT).as_posix()
    assert _numbers(monkeypatch, [nb, "docs/teaching.md"]) == ["05"]
