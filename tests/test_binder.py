"""Binder: environment.yml is what repo2docker reads. Checked here without conda or Docker.

The last test runs ``jupyter-repo2docker --no-build --no-run`` when it is installed (it is not a
project dependency: ``pip install jupyter-repo2docker`` in any venv and put it on PATH, or point
``$REPO2DOCKER`` at the executable) and checks the Dockerfile Binder would build.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import requires, version
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
ENV_FILE = ROOT / "environment.yml"
# repo2docker's own pattern for the python version (repo2docker/buildpacks/conda/__init__.py):
# a spec it cannot read ("python>=3.10") silently falls back to its default Python.
R2D_PYTHON = re.compile(r"python\s*=+\s*([\d\.]*)")


@pytest.fixture(scope="module")
def env() -> dict:
    data = yaml.safe_load(ENV_FILE.read_text())
    assert isinstance(data, dict), "environment.yml must be a mapping"
    return data


@pytest.fixture(scope="module")
def conda_deps(env) -> dict[str, str]:
    """name -> full spec line, for the conda (non-pip) dependencies."""
    out = {}
    for dep in env["dependencies"]:
        if isinstance(dep, str):
            out[Requirement(dep.replace("=", "==", 1) if re.fullmatch(r"[\w.-]+=[\d.*]+", dep)
                            else dep).name.lower().replace("_", "-")] = dep
    return out


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_environment_yml_parses_and_has_the_expected_sections(env):
    assert set(env) >= {"channels", "dependencies"}
    assert isinstance(env["dependencies"], list) and env["dependencies"]


def test_conda_forge_is_the_only_channel(env):
    assert env["channels"] == ["conda-forge"], (
        "use conda-forge alone: mixing in 'defaults' makes the solve slow and the licence unclear")


def test_python_is_pinned_to_a_minor_version(conda_deps):
    spec = conda_deps.get("python")
    assert spec is not None, "environment.yml must name python"
    assert re.fullmatch(r"python=3\.\d+", spec), (
        f"{spec!r}: pin the minor version as python=3.X (Binder builds that Python)")
    m = R2D_PYTHON.match(spec)
    assert m and re.fullmatch(r"3\.\d+", m.group(1)), "repo2docker cannot read the python pin"
    minor = int(m.group(1).split(".")[1])
    requires_python = SpecifierSet(_project()["requires-python"])
    assert f"3.{minor}.0" in requires_python, (
        f"Binder's python 3.{minor} is outside requires-python {requires_python}")


def _locked(name: str) -> list[str]:
    """The versions requirements/lab.txt pins for ``name`` (one per Python range it forks on)."""
    text = (ROOT / "requirements" / "lab.txt").read_text()
    return re.findall(rf"^{re.escape(name)}==([^\s;]+)", text, re.M)


def test_conda_brings_python_and_pip_and_pip_installs_the_lock(env, conda_deps):
    # Binder installs what make lab installs: the lock, then the course's package
    assert set(conda_deps) == {"python", "pip"}, (
        f"conda packages besides python and pip: {sorted(set(conda_deps) - {'python', 'pip'})}; "
        "a package belongs in pyproject.toml (then make lock)")
    pip_sections = [d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert pip_sections == [["-r requirements/lab.txt", "-e ."]], pip_sections
    for req in _project()["dependencies"]:
        name = Requirement(req).name.lower().replace("_", "-")
        assert _locked(name), f"{name} is not pinned in requirements/lab.txt: run make lock"


def test_pip_section_installs_the_course_package(env, conda_deps):
    assert "pip" in conda_deps, "name pip among the conda packages, or the pip section is ignored"
    pip_sections = [d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(pip_sections) == 1
    assert "-e ." in pip_sections[0] or "." in pip_sections[0]


def test_ipywidgets_8_and_jupyterlab_4_agree():
    project = {Requirement(r).name: Requirement(r).specifier for r in _project()["dependencies"]}
    widgets, lab = project["ipywidgets"], project["jupyterlab"]
    assert "8.1.0" in widgets and "7.8.0" not in widgets and "9.0.0" not in widgets, widgets
    assert "4.1.1" in lab and "3.6.0" not in lab and "5.0.0" not in lab, lab
    # The lock pins one such pair, with the widget frontend packages that go with ipywidgets 8.
    assert all(v in widgets for v in _locked("ipywidgets")), _locked("ipywidgets")
    assert all(v in lab for v in _locked("jupyterlab")), _locked("jupyterlab")
    assert all(v.startswith("3.") for v in _locked("jupyterlab-widgets"))
    assert all(v.startswith("4.") for v in _locked("widgetsnbextension"))
    # The installed environment is one such pair, and the widget manager is built for it.
    assert version("ipywidgets") in widgets and version("jupyterlab") in lab
    lab_widgets = [r for r in requires("ipywidgets") if r.startswith("jupyterlab_widgets")]
    assert lab_widgets and version("jupyterlab_widgets") in Requirement(lab_widgets[0]).specifier
    pkg = (Path(sys.prefix) / "share/jupyter/labextensions/@jupyter-widgets/jupyterlab-manager"
           / "package.json")
    deps = json.loads(pkg.read_text())["dependencies"]
    assert deps["@jupyterlab/application"].startswith("^4"), deps["@jupyterlab/application"]


@pytest.mark.slow
def test_jupyterlab_lists_the_widget_manager_as_enabled_and_ok():
    out = subprocess.run([sys.executable, "-m", "jupyter", "labextension", "list"],
                         capture_output=True, text=True, timeout=120)
    text = out.stdout + out.stderr
    line = next((ln for ln in text.splitlines() if "@jupyter-widgets/jupyterlab-manager" in ln),
                None)
    assert line is not None, text
    assert "enabled" in line and "OK" in line, line


def test_no_binder_folder_hides_the_root_environment_yml():
    for folder in ("binder", ".binder"):
        if (ROOT / folder).is_dir():
            assert (ROOT / folder / "environment.yml").exists(), (
                f"repo2docker reads only {folder}/ when it exists: the root environment.yml "
                "would be ignored")


def _repo2docker() -> str | None:
    return os.environ.get("REPO2DOCKER") or shutil.which("jupyter-repo2docker")


@pytest.mark.skipif(_repo2docker() is None,
                    reason="jupyter-repo2docker is not installed (optional: pip install "
                           "jupyter-repo2docker in a separate venv, set $REPO2DOCKER)")
def test_repo2docker_would_build_the_conda_environment_after_copying_the_repo(tmp_path):
    src = tmp_path / "repo"  # the tracked files only, as Binder clones them
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        if (ROOT / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src / rel)
    out = subprocess.run([_repo2docker(), "--no-build", "--no-run", "--debug", str(src)],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-3000:]
    python = R2D_PYTHON.search(ENV_FILE.read_text()).group(1)
    assert f"Building conda environment for python={python}" in text, text[:2000]
    copy = text.find("COPY --chown=0:0 src/ ${REPO_DIR}/")
    install = text.find('--file "environment.yml"')
    assert copy != -1 and install != -1, text[-3000:]
    assert copy < install, "environment.yml is installed before the repo is copied: -e . fails"
