"""attention_kit's Jupyter server extension: the kernel's websocket without Nagle's delay."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attention_kit.widgets import server_extension as ext

pytestmark = pytest.mark.slow  # starts Jupyter servers: make check leaves it out


def _run(coroutine):
    """Run a coroutine that never waits (the stand-in's ``open``), without an event loop: the
    browser tests may leave one running in this process, where asyncio.run refuses to start."""
    with pytest.raises(StopIteration):
        coroutine.send(None)


class _Handler:
    """A stand-in for the kernel's websocket handler: records what happens, in order."""

    def __init__(self):
        self.calls = []

    def set_nodelay(self, value):
        self.calls.append(("nodelay", value))

    async def open(self, kernel_id):
        self.calls.append(("open", kernel_id))


def test_the_websocket_turns_nagle_off_before_it_opens():
    wrapped = ext.without_nagle(_Handler.open)
    h = _Handler()
    _run(wrapped(h, "k1"))
    assert h.calls == [("nodelay", True), ("open", "k1")]
    assert ext.without_nagle(wrapped) is wrapped  # loading the extension twice wraps once


def test_loading_the_extension_patches_the_kernel_websocket(monkeypatch):
    from jupyter_server.services.kernels.websocket import KernelWebsocketHandler

    original = KernelWebsocketHandler.open
    monkeypatch.setattr(KernelWebsocketHandler, "open", original)  # put back after the test
    logged = []

    class App:
        class log:  # noqa: N801
            info = staticmethod(logged.append)
            warning = staticmethod(logged.append)

    ext._load_jupyter_server_extension(App)
    assert KernelWebsocketHandler.open is not original
    assert getattr(KernelWebsocketHandler.open, "_ak_nodelay", False)
    assert any("Nagle" in m for m in logged)
    assert ext._jupyter_server_extension_points() == [{"module": ext.MODULE}]


def test_enable_writes_the_config_jupyter_reads(tmp_path):
    from jupyter_server.extension.config import ExtensionConfigManager

    path = ext.enable(tmp_path)
    assert path == tmp_path / "etc" / "jupyter" / "jupyter_server_config.d" / ext.CONFIG_NAME
    assert json.loads(path.read_text())["ServerApp"]["jpserver_extensions"] == {ext.MODULE: True}
    config = ExtensionConfigManager(read_config_path=[str(tmp_path / "etc" / "jupyter")])
    assert config.get_jpserver_extensions() == {ext.MODULE: True}
    assert ext.enable(tmp_path) == path  # twice: the same file


def test_the_course_environment_has_it_enabled():
    """``make lab`` / ``make test`` enable it in .venv; Binder's postBuild does the same."""
    if not (Path(sys.prefix) / "etc" / "jupyter" / "jupyter_server_config.d" / ext.CONFIG_NAME).exists():
        if os.environ.get("CI"):
            pytest.fail("make test did not enable the server extension in this environment")
        pytest.skip("not enabled here: run `make install-test` (or python -m "
                    "attention_kit.widgets.server_extension enable)")
    out = subprocess.run([sys.executable, "-m", "jupyter", "server", "extension", "list"],
                         capture_output=True, text=True, timeout=60)
    text = out.stdout + out.stderr
    line = next(ln for ln in text.splitlines() if ext.MODULE in ln and "enabled" in ln)
    assert line
    root = Path(__file__).resolve().parents[1]
    assert f"python -m {ext.MODULE} enable" in (root / "postBuild").read_text()
    assert os.access(root / "postBuild", os.X_OK)
