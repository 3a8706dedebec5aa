"""tools/find_python.py: `make nbval-lowest` builds on an installed Python 3.10 or says there is none.

The interpreters here are small shell scripts that answer the probe as a Python would (their
path, then their version), so no particular Python needs to be installed.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("find_python", ROOT / "tools" / "find_python.py")
fp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fp)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="shell scripts stand in for Pythons")


def fake_python(path: Path, version: str | None) -> Path:
    """A 'Python' that prints its path and ``version``; with None, one that fails as a pyenv shim
    does when pyenv has not selected that version."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = f'echo "{path}"; echo "{version}"' if version else \
        'echo "pyenv: python3.10: command not found" >&2; exit 127'
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def clean(monkeypatch, tmp_path):
    """A clean HOME, no PYENV_ROOT, no uv answer and no system Pythons: only what a test adds."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PYENV_ROOT", raising=False)
    monkeypatch.setattr(fp, "from_uv", lambda version: [])
    monkeypatch.setattr(fp, "SYSTEM_DIRS", ())
    monkeypatch.setenv("PATH", "")
    return tmp_path


def test_a_broken_pyenv_shim_does_not_hide_pyenvs_installs(clean, monkeypatch, capsys):
    """The shim on the PATH fails (3.10 not selected, HOME clean): the newest 3.10 of the pyenv
    that the shims folder belongs to is used, not another version."""
    root = clean / "pyenv"
    fake_python(root / "shims" / "python3.10", None)
    fake_python(root / "versions" / "3.10.9" / "bin" / "python3.10", "3.10.9")
    newest = fake_python(root / "versions" / "3.10.13" / "bin" / "python3.10", "3.10.13")
    fake_python(root / "versions" / "3.11.7" / "bin" / "python3.10", "3.11.7")
    monkeypatch.setenv("PATH", str(root / "shims"))
    assert fp.main(["3.10"]) == 0
    assert capsys.readouterr().out.strip() == str(newest)


def test_a_python_on_the_path_is_checked_for_its_version(clean, monkeypatch, capsys):
    wrong = fake_python(clean / "a" / "python3.10", "3.11.7")  # misnamed: not taken
    right = fake_python(clean / "b" / "python3.10", "3.10.13")
    monkeypatch.setenv("PATH", f"{wrong.parent}:{right.parent}")
    assert fp.main(["3.10"]) == 0
    assert capsys.readouterr().out.strip() == str(right)


def test_no_python_of_that_version_is_said_loudly(clean, monkeypatch, capsys):
    fake_python(clean / "bin" / "python3.11", "3.11.7")
    monkeypatch.setenv("PATH", str(clean / "bin"))
    assert fp.main(["3.10"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "NO PYTHON 3.10 FOUND" in err and "LOWEST_PYTHON=" in err


def test_a_named_python_of_another_version_is_refused(clean, capsys):
    other = fake_python(clean / "py" / "python3", "3.11.7")
    assert fp.main(["3.10", str(other)]) == 1
    assert "is Python 3.11.7, not 3.10" in capsys.readouterr().err
    assert fp.main(["3.11", str(other)]) == 0
    assert capsys.readouterr().out.strip() == str(other)


def test_make_nbval_lowest_builds_on_the_python_found_and_says_which():
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    lowest = re.search(r"^LOWEST_VERSION \?= (\S+)$", make, re.M).group(1)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert f'requires-python = ">={lowest}"' in pyproject  # the lowest the course says it supports
    rule = make[make.index("$(LOWEST_STAMP):"):make.index("nbval-lowest: $(LOWEST_STAMP)")]
    assert "tools/find_python.py $(LOWEST_VERSION) $(LOWEST_PYTHON))\" || exit 1" in rule
    assert '--no-python-downloads --python "$$py"' in rule
    assert "$(PYTHON)" not in rule  # no silent fallback to another Python
    recipe = make[make.index("nbval-lowest: $(LOWEST_STAMP)"):make.index("\ntest:")]
    assert "print('nbval-lowest: Python'" in recipe and "sys.exit(0 if v == '$(LOWEST_VERSION)'" in recipe
