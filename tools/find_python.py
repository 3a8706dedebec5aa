"""The Python that ``make nbval-lowest`` builds ``.venv-lowest`` on: an installed interpreter of one
minor version (3.10, the lowest the course supports), found without downloading any.

    python tools/find_python.py 3.10                      # prints its path, or fails
    python tools/find_python.py 3.10 /opt/py310/bin/python  # this one, checked to be 3.10

Where it looks, in order (the first that runs and says it is that version wins):

1. ``uv python find --system --no-python-downloads`` (uv's own discovery: the PATH and uv's
   managed Pythons, no virtual environment's); uv stops at the first ``python3.10`` on the PATH
   that does not run, such as a pyenv shim when pyenv has not selected 3.10, so it is not the only
   place looked;
2. every ``python3.10`` on the PATH;
3. pyenv's installs, ``versions/3.10.*/bin/python3.10`` under ``$PYENV_ROOT``, under the folder
   above each ``shims`` folder on the PATH and under ``~/.pyenv`` (so a clean ``HOME`` or an
   unselected version does not hide them), newest first;
4. the usual system places (``/usr/bin``, ``/usr/local/bin``, ``/opt/homebrew/bin``).

Prints the interpreter's path on stdout. When none is found it says where it looked, on stderr,
and exits 1: the lowest environment is never built on another version without saying so.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

SYSTEM_DIRS = ("/usr/bin", "/usr/local/bin", "/opt/homebrew/bin")
PROBE = "import sys; print(sys.executable); print('%d.%d.%d' % sys.version_info[:3])"


def probe(python: str) -> tuple[str, str] | None:
    """``(executable, "3.10.13")`` of a Python that runs, else None."""
    try:
        out = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, timeout=30,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.split()
    if out.returncode != 0 or len(lines) != 2:
        return None
    return lines[0], lines[1]


def _uv() -> str | None:
    uv = Path(sys.executable).with_name("uv")
    return str(uv) if uv.exists() else shutil.which("uv")


def from_uv(version: str) -> list[str]:
    uv = _uv()
    if uv is None:
        return []
    try:
        # --system: not a virtual environment's Python (uv would offer the project's .venv)
        out = subprocess.run([uv, "python", "find", "--system", "--no-project", "--no-python-downloads",
                              "--python-preference", "system", version], capture_output=True,
                             text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return []
    return [out.stdout.strip()] if out.returncode == 0 and out.stdout.strip() else []


def _pyenv_roots() -> list[str]:
    roots = [os.environ.get("PYENV_ROOT", "")]
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if Path(d).name == "shims":
            roots.append(str(Path(d).parent))
    roots.append(os.path.expanduser("~/.pyenv"))
    return [r for r in dict.fromkeys(roots) if r]


def _newest_first(paths: list[str]) -> list[str]:
    def key(p):
        m = re.search(r"versions/(\d+)\.(\d+)\.(\d+)", p)
        return tuple(int(g) for g in m.groups()) if m else (0, 0, 0)

    return sorted(paths, key=key, reverse=True)


def candidates(version: str) -> list[tuple[str, list[str]]]:
    """(where, [paths]) in the order they are tried."""
    exe = f"python{version}"
    on_path = [str(Path(d) / exe) for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    pyenv = []
    for root in _pyenv_roots():
        pyenv += _newest_first(glob.glob(os.path.join(root, "versions", f"{version}.*", "bin", exe)))
    system = [f"{d}/{exe}" for d in SYSTEM_DIRS]
    return [("uv python find", from_uv(version)),
            ("PATH", [p for p in on_path if os.access(p, os.X_OK)]),
            ("pyenv (" + ", ".join(_pyenv_roots()) + ")", pyenv),
            ("system", [p for p in system if os.access(p, os.X_OK)])]


def find(version: str) -> tuple[str, str] | None:
    for _, paths in candidates(version):
        for p in paths:
            got = probe(p)
            if got and got[1].rsplit(".", 1)[0] == version:
                return got
    return None


def main(argv: list[str]) -> int:
    if not argv or len(argv) > 2 or not re.fullmatch(r"\d+\.\d+", argv[0]):
        print(__doc__, file=sys.stderr)
        return 2
    version = argv[0]
    if len(argv) == 2 and argv[1]:
        got = probe(argv[1])
        if got is None:
            print(f"find_python: {argv[1]} does not run", file=sys.stderr)
            return 1
        if got[1].rsplit(".", 1)[0] != version:
            print(f"find_python: {argv[1]} is Python {got[1]}, not {version} (to build on it on "
                  f"purpose, name its version as well: LOWEST_VERSION={got[1].rsplit('.', 1)[0]})",
                  file=sys.stderr)
            return 1
        print(got[0])
        return 0
    got = find(version)
    if got is None:
        looked = "; ".join(f"{where}: {', '.join(paths) or 'none'}"
                           for where, paths in candidates(version))
        print(f"\n*** find_python: NO PYTHON {version} FOUND. Looked in {looked}.\n"
              f"*** Install one (pyenv install {version}, uv python install {version}, or your system's "
              f"python{version}) or name it: make nbval-lowest LOWEST_PYTHON=/path/to/python{version}\n",
              file=sys.stderr)
        return 1
    print(got[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
