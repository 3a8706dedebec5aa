"""repo2docker's base environment as pip sees it: requirements/repo2docker-base.txt and the
requirements each of its packages declares (requirements/repo2docker-base.requires.json).

Binder builds this repository with repo2docker: a conda environment from repo2docker's own lock
for our Python (repo2docker/buildpacks/conda/environment.py-3.11-linux-64.lock), then `mamba env
update` with environment.yml, whose pip section installs requirements/lab.txt and the course on
top. `make binder-env` rebuilds that mixture in a venv from the pins this tool writes.

    python tools/repo2docker_base.py pins --repo <repo2docker git dir> --ref <release tag>
        writes requirements/repo2docker-base.txt from that release's conda lock: every Python
        package (conda build string py*) as a PyPI name==version line
    python tools/repo2docker_base.py requires --python <a venv's python>
        run in a venv where only those pins are installed (pip install --no-deps -r ...):
        writes each package's Requires-Dist to requirements/repo2docker-base.requires.json,
        which tests/test_binder_base.py reads (no network, no venv needed there)

`make binder-base R2D=<repo2docker git dir> R2D_REF=<tag>` does both (docs/development.md).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PINS = ROOT / "requirements" / "repo2docker-base.txt"
REQUIRES = ROOT / "requirements" / "repo2docker-base.requires.json"
PYTHON = "3.11"  # environment.yml's python=3.11 (tests/test_binder.py checks that pin)
LOCK = "repo2docker/buildpacks/conda/environment.py-{python}-linux-64.lock"
URL = "https://github.com/jupyterhub/repo2docker"

# conda-forge names whose PyPI distribution is called otherwise
CONDA_TO_PYPI = {
    "jupyterhub-base": "jupyterhub",
    "nbconvert-core": "nbconvert",
    "python-fastjsonschema": "fastjsonschema",
    "brotli-python": "brotli",
}
# a line of an explicit conda lock: .../<name>-<version>-<build>.conda#<md5>
LOCK_LINE = re.compile(r"/(?P<name>[^/]+)-(?P<version>[^-/]+)-(?P<build>[^-/]+)"
                       r"\.(?:conda|tar\.bz2)(?:#\w+)?$")


def normalize(name: str) -> str:
    """PEP 503: the name pip compares."""
    return re.sub(r"[-_.]+", "-", name).lower()


def python_packages(lock_text: str) -> tuple[dict[str, str], list[str]]:
    """(PyPI name -> version, the conda metapackages left out) from an explicit conda lock.

    A Python package has a build string starting with "py" (noarch "pyh..." or "py311h...");
    python itself, nodejs, the C libraries and the metapackages (jupyterhub-singleuser,
    bleach-with-css, ...: no files of their own, h... builds) are left out."""
    pins: dict[str, str] = {}
    meta: list[str] = []
    for line in lock_text.splitlines():
        m = LOCK_LINE.search(line.strip())
        if not m or line.startswith("#"):
            continue
        name, version, build = m["name"], m["version"], m["build"]
        if name in ("python", "python_abi"):
            continue
        if not build.startswith("py"):
            if (build.startswith("h") and "conda-forge/noarch/" in line
                    and name not in ("tzdata", "ca-certificates")):
                meta.append(f"{name}-{version}")
            continue
        pins[normalize(CONDA_TO_PYPI.get(name, name))] = version
    return dict(sorted(pins.items())), meta


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout


def write_pins(repo: str, ref: str, out: Path = PINS) -> None:
    path = LOCK.format(python=PYTHON)
    text = git(repo, "show", f"{ref}:{path}")
    commit = git(repo, "rev-parse", f"{ref}^{{commit}}").strip()
    frozen = next((ln[2:].strip() for ln in text.splitlines() if ln.startswith("# Frozen on")),
                  "")
    pins, meta = python_packages(text)
    py = re.search(r"/python-(3\.[\d.]+)-", text)
    header = [
        f"# repo2docker's base environment for Python {PYTHON}, as pip sees it: Binder builds this",
        "# conda environment first, then environment.yml's pip section installs requirements/lab.txt",
        "# over it (make binder-env rebuilds that mixture in .venv-binder).",
        "#",
        f"# Source: {URL}",
        f"#   file    {path}",
        f"#   release {ref} (commit {commit})",
        f"#   python  {py[1] if py else '?'} (the lock's python: tests/test_binder_base.py reads it)",
        f"#   {frozen}" if frozen else "#",
        "# Every Python package of that lock (conda build string py*), as PyPI name==version;",
        "# conda names mapped to PyPI: "
        + ", ".join(f"{k} -> {v}" for k, v in CONDA_TO_PYPI.items()) + ".",
        "# Left out: python, nodejs, tzdata, ca-certificates, the C libraries, and the",
        "# metapackages (no files of their own) " + ", ".join(meta) + ".",
        "#",
        "# Refresh after a repo2docker release (written by tools/repo2docker_base.py, do not edit):",
        "#   make binder-base R2D=<a clone of jupyterhub/repo2docker> R2D_REF=<release tag>",
    ]
    out.write_text("\n".join(header) + "\n" + "".join(f"{n}=={v}\n" for n, v in pins.items()))
    print(f"{out.relative_to(ROOT)}: {len(pins)} pins from {ref}:{path}")


def read_pins(path: Path = PINS) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[normalize(name)] = version
    return pins


def write_requires(python: str, out: Path = REQUIRES) -> None:
    """Each pinned package's Requires-Dist, read from ``python``'s installed metadata."""
    pins = read_pins()
    code = ("import json, sys\nfrom importlib.metadata import distribution\n"
            "out = {}\nfor name in json.load(sys.stdin):\n"
            "    d = distribution(name)\n"
            "    out[name] = {'version': d.version, 'requires': d.requires or []}\n"
            "print(json.dumps(out))\n")
    got = json.loads(subprocess.run([python, "-c", code], input=json.dumps(list(pins)),
                                    check=True, capture_output=True, text=True).stdout)
    wrong = {n: (pins[n], got[n]["version"]) for n in pins if got[n]["version"] != pins[n]}
    if wrong:
        sys.exit(f"{python} does not hold the pins of {PINS.name}: {wrong}")
    out.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    print(f"{out.relative_to(ROOT)}: the requirements of {len(got)} packages")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pins", help="write requirements/repo2docker-base.txt")
    p.add_argument("--repo", required=True, help="a git clone of jupyterhub/repo2docker")
    p.add_argument("--ref", required=True, help="its release tag, e.g. 2026.04.0")
    r = sub.add_parser("requires", help="write requirements/repo2docker-base.requires.json")
    r.add_argument("--python", required=True, help="python of a venv holding only the pins")
    args = ap.parse_args(argv)
    if args.cmd == "pins":
        write_pins(args.repo, args.ref)
    else:
        write_requires(args.python)


if __name__ == "__main__":
    main()
