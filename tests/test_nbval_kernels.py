"""Kernels started by nbval, the grader and the tests listen on socket files of their own.

On TCP, a port that another process takes between jupyter_client picking it and the kernel
binding it kills the kernel before it answers; that is how notebook 02 failed in CI, all 48 cells
"Kernel died before replying to kernel_info" (``attention_kit/grading/sockets.py``).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from attention_kit.grading import sockets

ROOT = Path(__file__).resolve().parents[1]
posix_only = pytest.mark.skipif(os.name != "posix", reason="Windows has no ipc transport")

TRANSPORT_CELL = """\
import json
from ipykernel.connect import get_connection_file
info = json.load(open(get_connection_file()))
print(info["transport"], info["ip"].startswith("/"), info["shell_port"])"""


@posix_only
def test_socket_options_give_each_kernel_its_own_prefix_in_a_private_folder():
    a, b = sockets.socket_options(), sockets.socket_options()
    assert a["transport"] == b["transport"] == "ipc"
    assert a["ip"] != b["ip"]
    assert Path(a["ip"]).parent == Path(b["ip"]).parent == sockets.folder()
    assert Path(a["ip"]).is_absolute()  # the kernel's working directory is not the manager's
    assert stat.S_IMODE(sockets.folder().stat().st_mode) == 0o700


@posix_only
def test_a_temporary_folder_too_long_for_a_socket_address_keeps_tcp(tmp_path, monkeypatch):
    deep = tmp_path / ("d" * 100)
    deep.mkdir()
    monkeypatch.setattr(sockets, "_FOLDER", deep)
    assert sockets.socket_options() == {}


@posix_only
@pytest.mark.slow  # starts a kernel
def test_nbvals_kernel_runs_on_ipc_through_the_projects_conftest(tmp_path):
    """The root conftest.py, beside a notebook, makes nbval's kernel use ipc; the stored output
    says so, and nbval compares it (the run fails if the kernel were on TCP)."""
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(TRANSPORT_CELL, execution_count=1)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="ipc True 1\n")]
    nb.cells = [cell]
    nbformat.write(nb, tmp_path / "transport.ipynb")
    (tmp_path / "conftest.py").write_text((ROOT / "conftest.py").read_text())
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "--nbval", "--nbval-current-env", "transport.ipynb"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "1 passed" in out.stdout


@posix_only
@pytest.mark.slow  # starts a kernel that dies
def test_a_kernel_that_dies_at_start_says_why(tmp_path, monkeypatch):
    """nbval sends the kernel's stderr to /dev/null; the conftest keeps it for the error."""
    import importlib.util

    spec_dir = tmp_path / "kernels" / "dies"
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-c",
                 "import sys; sys.stderr.write('port 4711 is taken\\n'); sys.exit(3)",
                 "{connection_file}"],
        "display_name": "dies", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
    root_conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(root_conftest)
    with pytest.raises(RuntimeError) as err:
        root_conftest._start_new_kernel(startup_timeout=30, kernel_name="dies")
    assert "Kernel died before replying to kernel_info" in str(err.value)
    assert "port 4711 is taken" in str(err.value)
    assert "(transport ipc)" in str(err.value)


@posix_only
@pytest.mark.slow  # starts a kernel
def test_the_tests_own_kernels_use_ipc():
    km, kc = sockets.start_new_kernel()
    try:
        info = km.get_connection_info()
        assert info["transport"] == "ipc"
        assert Path(f"{info['ip']}-{info['shell_port']}").exists()
        reply = kc.execute_interactive("1 + 1", timeout=30)
        assert reply["content"]["status"] == "ok"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert not Path(f"{info['ip']}-{info['shell_port']}").exists()  # jupyter_client removed it


def test_the_folder_goes_when_the_process_is_done(monkeypatch):
    monkeypatch.setattr(sockets, "_FOLDER", None)
    made = sockets.folder()
    assert made.is_dir()
    sockets.remove_folder()
    assert not made.exists()
    assert sockets.folder() != made  # a new one on the next use
    sockets.remove_folder()
