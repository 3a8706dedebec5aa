"""The install files agree with each other."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _name(req: str) -> str:
    return re.split(r"[<>=!~ \[;]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_environment_yml_installs_the_lock_and_the_package():
    """conda brings Python and pip only: every package comes from the lock, as in make lab."""
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    assert {_name(d) for d in conda} == {"python", "pip"}, conda
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert pip_section == ["-r requirements/lab.txt", "-e ."], pip_section
    assert (ROOT / "requirements" / "lab.txt").is_file()
    assert env["channels"] == ["conda-forge"]
    python = next(d for d in conda if _name(d) == "python")
    assert re.fullmatch(r"python=3\.\d+", python), python
