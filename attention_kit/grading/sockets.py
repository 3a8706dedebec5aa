"""Where a kernel started by the grader or the tests listens: socket files in a private folder.

jupyter_client's default transport is TCP on 127.0.0.1: the manager asks the system for five free
ports, closes them, writes them into the connection file and starts the kernel, which binds them
about half a second later. A port that any other process takes in between (another kernel being
started, a browser's or a server's connection) makes the kernel exit with ``ZMQError: Address
already in use`` before it answers: "Kernel died before replying to kernel_info"
(jupyter/jupyter_client#154 and #487). ``make test`` starts kernels in four processes at once, and
the grader starts one per worker thread: a notebook then fails, or a learner's notebook "could not
run", at random.

:func:`socket_options` gives a kernel manager the ``ipc`` transport instead: the kernel binds Unix
socket files whose names start with a prefix unique to that kernel, in a folder that this process
made for itself (mode 0700, so other users cannot connect either). No other process picks those
names. :func:`folder` is removed when the process exits (:func:`remove_folder`; the project's
``conftest.py`` calls it at the end of every pytest process, xdist's workers included);
jupyter_client removes each kernel's socket files when it shuts the kernel down.

Windows has no ``ipc`` transport; there, and where the temporary folder's path is too long for a
socket's address, the options are empty and the TCP default stays.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import uuid
from pathlib import Path

__all__ = ["socket_options", "folder", "remove_folder", "start_new_kernel", "MAX_ADDRESS"]

# A Unix socket's path must fit sun_path: 108 bytes on Linux, 104 on macOS, with the final NUL.
MAX_ADDRESS = 103
_FOLDER: Path | None = None


def folder() -> Path:
    """This process's own folder for kernels' socket files (made on first use, mode 0700)."""
    global _FOLDER
    if _FOLDER is None or not _FOLDER.is_dir():
        _FOLDER = Path(tempfile.mkdtemp(prefix="ak-kernels-"))
        atexit.register(remove_folder)
    return _FOLDER


def remove_folder() -> None:
    """Remove this process's folder (at exit; pytest's workers end without running atexit)."""
    global _FOLDER
    if _FOLDER is not None:
        shutil.rmtree(_FOLDER, ignore_errors=True)
        _FOLDER = None


def socket_options() -> dict[str, str]:
    """Keyword arguments for a jupyter_client kernel manager: ``ipc`` sockets of its own.

    ``{"transport": "ipc", "ip": "<folder>/k<12 hex digits>"}``; the kernel's five sockets are
    that prefix followed by ``-1`` ... ``-5``. Empty (TCP stays) on Windows, or when the
    prefix would leave a socket's path longer than :data:`MAX_ADDRESS` bytes.
    """
    if os.name != "posix":
        return {}
    prefix = str(folder() / f"k{uuid.uuid4().hex[:12]}")
    if len(os.fsencode(prefix)) + len("-99") > MAX_ADDRESS:
        return {}
    return {"transport": "ipc", "ip": prefix}


def start_new_kernel(kernel_name: str = "python3", startup_timeout: float = 60,
                     kernel_spec_manager=None, **kwargs):
    """jupyter_client's ``start_new_kernel`` on :func:`socket_options`: (manager, ready client).

    The kernel's stderr goes to a file in :func:`folder` (unless ``stderr`` is given); a kernel
    that dies before it answers raises RuntimeError ending with what it wrote there."""
    from jupyter_client.manager import KernelManager

    options = socket_options()
    extra = {} if kernel_spec_manager is None else {"kernel_spec_manager": kernel_spec_manager}
    km = KernelManager(kernel_name=kernel_name, **extra, **options)
    log_path = folder() / f"kernel-{os.getpid()}-{id(km):x}.stderr"
    with open(log_path, "w") as stderr:  # the kernel's process keeps its own copy
        km.start_kernel(**{"stderr": stderr, **kwargs})
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=startup_timeout)
    except RuntimeError as exc:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
        tail = "".join(log_path.read_text(errors="replace").splitlines(True)[-12:]).strip()
        raise RuntimeError(f"{exc} (transport {options.get('transport', 'tcp')}); the kernel's "
                           f"stderr ended with:\n{tail or '(nothing)'}") from exc
    return km, kc
