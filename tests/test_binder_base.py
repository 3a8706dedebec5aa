"""Binder's mixture of packages is consistent: repo2docker's base environment
(requirements/repo2docker-base.txt) with requirements/lab.txt pip-installed over it.

Binder runs environment.yml's pip section as ``pip install -U -r requirements/lab.txt -e .`` in
repo2docker's conda environment. pip moves the packages lab.txt pins and keeps every other package
of the base as it is, without looking at what those kept packages require: a kept package whose
requirements the new versions break is left broken (repo2docker 2026.04.0's notebook 7.4.7 needs
jupyterlab<4.5 and lab.txt brought 4.6.6). Here each kept package's requirements, as recorded in
requirements/repo2docker-base.requires.json (tools/repo2docker_base.py), must hold for the combined
versions. No network and no venv: the lock, the base pins and the recorded metadata only.
``make binder-env`` builds the real mixture and runs pip check (docs/development.md).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import repo2docker_base as r2d  # noqa: E402

LAB = ROOT / "requirements" / "lab.txt"


@pytest.fixture(scope="module")
def marker_env() -> dict[str, str]:
    """The markers of Binder's Python: the lock's python version, on Linux x86_64."""
    m = re.search(r"^#\s+python\s+(3\.\d+\.\d+)", r2d.PINS.read_text(), re.M)
    assert m, f"{r2d.PINS.name}: no '#   python  3.x.y' line in its header"
    env = default_environment()
    env.update(python_full_version=m[1], python_version=".".join(m[1].split(".")[:2]),
               sys_platform="linux", platform_system="Linux", platform_machine="x86_64",
               os_name="posix", implementation_name="cpython",
               platform_python_implementation="CPython", extra="")
    return env


def lab_pins(env: dict[str, str], path: Path = LAB) -> dict[str, str]:
    """name -> version that ``path`` pins for the Python of ``env`` (its lines fork on markers)."""
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate(env):
            (spec,) = req.specifier
            assert spec.operator == "==", line
            pins[r2d.normalize(req.name)] = spec.version
    return pins


def broken(base: dict[str, str], requires: dict[str, dict], lab: dict[str, str],
           env: dict[str, str]) -> list[str]:
    """What pip leaves broken when it installs the pins ``lab`` over ``base``: each requirement
    of a kept base package (one ``lab`` does not pin) that the combined versions do not meet."""
    combined = {**base, **lab}
    out = []
    for name in sorted(set(base) - set(lab)):
        for text in requires[name]["requires"]:
            req = Requirement(text)
            if req.marker is not None and not req.marker.evaluate(env):
                continue
            have = combined.get(r2d.normalize(req.name))
            if have is None:
                out.append(f"{name} {base[name]} requires {text}: not installed")
            elif not req.specifier.contains(Version(have), prereleases=True):
                out.append(f"{name} {base[name]} requires {text}, but gets {have}")
    return out


def test_the_base_pins_name_where_they_come_from():
    head = r2d.PINS.read_text().split("\n\n", 1)[0]
    assert "https://github.com/jupyterhub/repo2docker" in head
    assert "repo2docker/buildpacks/conda/environment.py-3.11-linux-64.lock" in head
    assert re.search(r"release \S+ \(commit [0-9a-f]{40}\)", head), head
    assert "make binder-base" in head
    base = r2d.read_pins()
    # the Jupyter packages Binder's front end is made of are all there
    for name in ("jupyterlab", "notebook", "jupyter-server", "jupyterhub", "ipywidgets",
                 "jupyterlab-widgets", "widgetsnbextension", "ipykernel", "traitlets", "tornado"):
        assert name in base, f"{name} missing from {r2d.PINS.name}"


def test_the_recorded_requirements_are_those_of_the_base_pins():
    # refreshed together (make binder-base): the metadata of exactly these versions
    base = r2d.read_pins()
    requires = json.loads(r2d.REQUIRES.read_text())
    assert {n: d["version"] for n, d in requires.items()} == base


def test_pip_keeps_no_base_package_whose_requirements_the_lock_breaks(marker_env):
    base = r2d.read_pins()
    requires = json.loads(r2d.REQUIRES.read_text())
    problems = broken(base, requires, lab_pins(marker_env), marker_env)
    assert not problems, (
        "pip install -r requirements/lab.txt over repo2docker's base leaves these broken "
        "(pin the package in lab.txt too, through pyproject.toml and make lock):\n  "
        + "\n  ".join(problems))


def test_the_lock_moves_notebook_with_jupyterlab(marker_env):
    lab = lab_pins(marker_env)
    assert "notebook" in r2d.read_pins()
    assert "notebook" in lab, ("repo2docker's base has notebook 7 (Binder's /tree): lab.txt must "
                               "pin a notebook that accepts its jupyterlab")
    # the locked notebook's own requirement on jupyterlab, as installed by make install-test
    # (requirements/test.txt pins the same notebook)
    from importlib.metadata import requires, version

    assert version("notebook") == lab["notebook"], "run make install-test"
    (on_lab,) = [Requirement(r) for r in requires("notebook")
                 if Requirement(r).name == "jupyterlab" and "extra" not in r]
    assert Version(lab["jupyterlab"]) in on_lab.specifier, (lab["jupyterlab"], on_lab)


def test_the_check_finds_what_pip_check_found(marker_env):
    # repo2docker 2026.04.0 with lab.txt before it pinned notebook (make binder-env: pip check
    # "notebook 7.4.7 has requirement jupyterlab<4.5,>=4.4.9, but you have jupyterlab 4.6.6")
    base = r2d.read_pins()
    requires = json.loads(r2d.REQUIRES.read_text())
    lab = {n: v for n, v in lab_pins(marker_env).items() if n != "notebook"}
    lab["jupyterlab"] = "4.6.6"
    problems = broken(base, requires, lab, marker_env)
    assert any(p.startswith("notebook ") and "jupyterlab<4.5" in p for p in problems), problems
