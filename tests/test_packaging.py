"""The install files agree with each other."""

import re
from pathlib import Path

import yaml

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _name(req: str) -> str:
    return re.split(r"[<>=!~ \[;]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_environment_yml_names_the_same_packages_as_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    conda_names = {_name(d) for d in conda} - {"python", "pip"}
    assert conda_names == {_name(r) for r in project["dependencies"]}
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert "-e ." in pip_section or "." in pip_section
    assert env["channels"] == ["conda-forge"]
    python = next(d for d in conda if _name(d) == "python")
    assert re.fullmatch(r"python=3\.\d+", python), python
