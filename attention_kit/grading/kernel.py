"""A Python kernel of the course's environment with resource limits, for grading.

``python -m attention_kit.grading.kernel --memory-mb 2048 --file-mb 100 -f CONNECTION_FILE``
sets the limits on its own process, then starts ipykernel exactly as ``ipykernel_launcher``
does. The limits are inherited by anything the kernel starts:

* ``RLIMIT_AS`` (address space): a learner's huge array fails with ``MemoryError`` in that cell
  instead of pushing the teacher's machine into swap;
* ``RLIMIT_FSIZE``: no single file the notebook writes can grow past ``--file-mb``.

:func:`write_kernel_spec` writes the kernelspec the grader starts (the interpreter running the
grader, so the kernel has exactly the course's packages).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

KERNEL_NAME = "attention-kit-grading"


def write_kernel_spec(folder: Path, *, memory_mb: int, file_mb: int) -> Path:
    """Write ``folder/KERNEL_NAME/kernel.json`` and return ``folder`` (a kernelspec directory)."""
    spec_dir = Path(folder) / KERNEL_NAME
    spec_dir.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [sys.executable, "-m", "attention_kit.grading.kernel",
                 f"--memory-mb={int(memory_mb)}", f"--file-mb={int(file_mb)}",
                 "-f", "{connection_file}"],
        "display_name": "attention course (grading, limited)",
        "language": "python",
        "metadata": {"debugger": False},
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec, indent=1))
    return Path(folder)


def _limit(resource_name: str, megabytes: int) -> None:
    import resource

    which = getattr(resource, resource_name)
    soft, hard = resource.getrlimit(which)
    want = megabytes * 1024 * 1024
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    resource.setrlimit(which, (want, want if hard == resource.RLIM_INFINITY else hard))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--memory-mb", type=int, required=True)
    parser.add_argument("--file-mb", type=int, required=True)
    args, rest = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    _limit("RLIMIT_AS", args.memory_mb)
    _limit("RLIMIT_FSIZE", args.file_mb)
    # As ipykernel_launcher: the kernel puts the working directory on sys.path itself.
    if sys.path and sys.path[0] in ("", str(Path.cwd())):
        del sys.path[0]
    sys.argv = [sys.argv[0], *rest]
    from ipykernel import kernelapp

    kernelapp.launch_new_instance()


if __name__ == "__main__":
    main()
